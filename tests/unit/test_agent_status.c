/* test_agent_status.c - golden tests for the status file: value escaping and
 * the rendered key=value lines, sizing with len 0 and safe truncation. */
#include "agent_status.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>

struct escape_case {
	const char *in, *want;
};

static const struct escape_case escapes[] = {
	{ "", "" },
	{ "main", "main" },
	{ "pool-1-thread-2", "pool-1-thread-2" },
	{ "a\\b", "a\\\\b" },
	{ "\\", "\\\\" },
	{ "\\n", "\\\\n" }, /* a literal backslash-n stays distinguishable from a newline */
	{ "line1\nline2", "line1\\nline2" },
	{ "\n\n", "\\n\\n" },
	{ "cr\r", "cr\\x0d" },
	{ "tab\there", "tab\\x09here" },
	{ "\x01", "\\x01" },
	{ "\x1b[31mred", "\\x1b[31mred" },
	{ "\x1f", "\\x1f" },
	{ "del\x7f", "del\\x7f" },
	{ " ~=:#", " ~=:#" },
	{ "key=value", "key=value" },
	/* UTF-8 (and any byte >= 0x80) passes through */
	{ "Thread-\xc3\x84\xe4\xb8\xad\xf0\x9f\x99\x82", "Thread-\xc3\x84\xe4\xb8\xad\xf0\x9f\x99\x82" },
	{ "\x80\xff", "\x80\xff" },
	{ "a\\\n\x02z", "a\\\\\\n\\x02z" },
};
#define NESCAPES (sizeof(escapes) / sizeof(escapes[0]))

static void test_escape_table(void)
{
	for (size_t i = 0; i < NESCAPES; i++) {
		char buf[128];
		size_t n = status_escape_append(buf, sizeof(buf), 0, escapes[i].in);
		CHECK_MSG(strcmp(buf, escapes[i].want) == 0, "case %zu: '%s', want '%s'", i, buf, escapes[i].want);
		CHECK_MSG(n == strlen(escapes[i].want), "case %zu: returned %zu", i, n);
	}
}

static void test_escape_null_and_pos(void)
{
	char buf[64] = "error=";
	size_t n;

	n = status_escape_append(buf, sizeof(buf), 6, NULL);
	CHECK_EQ_INT(n, 6);
	CHECK_EQ_STR(buf, "error=");
	n = status_escape_append(buf, sizeof(buf), 6, "a\nb");
	CHECK_EQ_INT(n, 10);
	CHECK_EQ_STR(buf, "error=a\\nb");
	n = status_escape_append(buf, sizeof(buf), n, "\\");
	CHECK_EQ_INT(n, 12);
	CHECK_EQ_STR(buf, "error=a\\nb\\\\");
}

/* Into every short buffer: a NUL-terminated byte prefix of the full escape,
 * nothing past len, and the return is the full length (as snprintf does). */
static void test_escape_truncation(void)
{
	for (size_t i = 0; i < NESCAPES; i++) {
		size_t full = strlen(escapes[i].want);
		for (size_t len = 0; len <= full + 2; len++) {
			char mem[160];
			char *buf = mem + 8;
			memset(mem, '#', sizeof(mem));
			size_t n = status_escape_append(len ? buf : NULL, len, 0, escapes[i].in);
			CHECK_MSG(n == full, "case %zu len %zu: returned %zu, want %zu", i, len, n, full);
			CHECK_MSG(check_filled(mem, 8, '#'), "case %zu len %zu: wrote before buf", i, len);
			CHECK_MSG(check_filled(buf + len, sizeof(mem) - 8 - len, '#'),
				  "case %zu len %zu: wrote past len", i, len);
			if (len == 0)
				continue;
			size_t want = full < len - 1 ? full : len - 1;
			CHECK_MSG(memchr(buf, '\0', len) != NULL, "case %zu len %zu: not NUL-terminated", i, len);
			CHECK_MSG(strlen(buf) == want && memcmp(buf, escapes[i].want, want) == 0,
				  "case %zu len %zu: '%s' is not a prefix of '%s'", i, len, buf, escapes[i].want);
		}
	}
}

static const struct agent_thread threads[] = {
	{ 101, "main" },
	{ 102, "Thread with \\ and\nnewline" },
	{ 103, "C2 CompilerThread0" },
	{ 104, NULL },
};

static struct agent_status sample(void)
{
	return (struct agent_status){
		.version = "0.1.0",
		.mode = "agentpath",
		.state = "running",
		.options = "unfold,msig",
		.jvm = "OpenJDK 64-Bit Server VM 17.0.9",
		.map_path = "/tmp/perf-4242.map",
		.events_path = "/tmp/jflame-4242.events",
		.samples_path = "/tmp/jflame-4242.samples",
		.pid = 4242,
		.process_start = 123456789,
		.started_ns = 1000000000ULL,
		.updated_ns = 18446744073709551615ULL,
		.preserve_frame_pointer = 1,
		.debug_non_safepoints = 1,
		.lock_events = "on",
		.park_hook = "failed",
		.prologues_fp = 10,
		.prologues_no_fp = 2,
		.prologues_unknown = 1,
		.prologues_skipped = 5,
		.compiled_loads = 5000,
		.compiled_unloads = 300,
		.dynamic_code = 77,
		.map_lines = 5077,
		.map_bytes = 400000,
		.threads_unnamed = 3,
		.write_errors = 0,
		.threads = threads,
		.nthreads = sizeof(threads) / sizeof(threads[0]),
		.error = "write /tmp/perf-4242.map: No space\nleft",
	};
}

static const char *const expected_lines[] = {
	"format=1",
	"agent_version=0.1.0",
	"pid=4242",
	"process_start=123456789",
	"mode=agentpath",
	"state=running",
	"options=unfold,msig",
	"jvm=OpenJDK 64-Bit Server VM 17.0.9",
	"map=/tmp/perf-4242.map",
	"events=/tmp/jflame-4242.events",
	"samples_path=/tmp/jflame-4242.samples",
	"started_ns=1000000000",
	"updated_ns=18446744073709551615",
	"preserve_frame_pointer=on",
	"debug_non_safepoints=on",
	"lock_events=on",
	"park_hook=failed",
	"prologues_with_fp=10",
	"prologues_without_fp=2",
	"prologues_unknown=1",
	"prologues_skipped=5",
	"compiled_loads=5000",
	"compiled_unloads=300",
	"dynamic_code=77",
	"map_lines=5077",
	"map_bytes=400000",
	"threads=4",
	"threads_unnamed=3",
	"write_errors=0",
	"error=write /tmp/perf-4242.map: No space\\nleft",
	"thread.101=main",
	"thread.102=Thread with \\\\ and\\nnewline",
	"thread.103=C2 CompilerThread0",
	"thread.104=",
};
#define NLINES (sizeof(expected_lines) / sizeof(expected_lines[0]))

/* 1 when text holds the whole line "line\n" (at the start or after a newline). */
static int has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, line, n) == 0 && p[n] == '\n')
			return 1;
	}
	return 0;
}

static void test_render(void)
{
	struct agent_status st = sample();
	char buf[4096];
	size_t n = agent_status_render(&st, buf, sizeof(buf));
	size_t lines = 0;

	CHECK_EQ_INT(n, strlen(buf));
	CHECK(strncmp(buf, "format=1\n", 9) == 0);
	CHECK(n > 0 && buf[n - 1] == '\n');
	for (size_t i = 0; i < NLINES; i++)
		CHECK_MSG(has_line(buf, expected_lines[i]), "missing line '%s' in:\n%s", expected_lines[i], buf);
	/* every line is key=value with a plain key */
	for (const char *p = buf; *p; p += strcspn(p, "\n"), p += *p == '\n') {
		size_t k = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_.");
		CHECK_MSG(k > 0 && p[k] == '=', "line without key=: '%.*s'", (int)strcspn(p, "\n"), p);
		lines++;
	}
	CHECK_EQ_INT(lines, NLINES);
	/* the threads come last, in order */
	CHECK(strstr(buf, "thread.101=") < strstr(buf, "thread.102=") &&
	      strstr(buf, "thread.103=") < strstr(buf, "thread.104="));
	CHECK(strstr(buf, "error=") < strstr(buf, "thread.101="));
}

static void test_render_variants(void)
{
	struct agent_status st = sample();
	char buf[4096];

	st.preserve_frame_pointer = 0;
	st.jvm = NULL;
	st.error = "";
	st.nthreads = 0;
	st.threads = NULL;
	st.samples_path = NULL;
	st.lock_events = NULL;
	st.park_hook = NULL;
	agent_status_render(&st, buf, sizeof(buf));
	CHECK_MSG(has_line(buf, "samples_path="), "%s", buf);
	CHECK_MSG(has_line(buf, "lock_events=off"), "%s", buf);
	CHECK_MSG(has_line(buf, "park_hook=off"), "%s", buf);
	CHECK_MSG(has_line(buf, "preserve_frame_pointer=off"), "%s", buf);
	CHECK_MSG(has_line(buf, "jvm="), "%s", buf);
	CHECK_MSG(has_line(buf, "error="), "%s", buf);
	CHECK_MSG(has_line(buf, "threads=0"), "%s", buf);
	CHECK(strstr(buf, "thread.") == NULL);
	st.preserve_frame_pointer = -1;
	agent_status_render(&st, buf, sizeof(buf));
	CHECK_MSG(has_line(buf, "preserve_frame_pointer=unknown"), "%s", buf);
	st.preserve_frame_pointer = 7;
	agent_status_render(&st, buf, sizeof(buf));
	CHECK_MSG(has_line(buf, "preserve_frame_pointer=on"), "%s", buf);
}

/* len 0 sizes the file; every shorter buffer gets a NUL-terminated prefix. */
static void test_render_sizes(void)
{
	struct agent_status st = sample();
	char full[4096];
	size_t need = agent_status_render(&st, NULL, 0);

	CHECK_EQ_INT(agent_status_render(&st, full, sizeof(full)), need);
	CHECK_EQ_INT(strlen(full), need);
	for (size_t len = 1; len <= need + 1; len++) {
		char *buf = malloc(len + 16);
		memset(buf, '#', len + 16);
		size_t n = agent_status_render(&st, buf, len);
		CHECK_MSG(n == need, "len %zu: returned %zu, want %zu", len, n, need);
		CHECK_MSG(memchr(buf, '\0', len) != NULL, "len %zu: not NUL-terminated", len);
		size_t got = strlen(buf), want = need < len - 1 ? need : len - 1;
		CHECK_MSG(got == want && memcmp(buf, full, got) == 0, "len %zu: not a %zu-byte prefix", len, want);
		CHECK_MSG(check_filled(buf + len, 16, '#'), "len %zu: wrote past len", len);
		free(buf);
	}
}

int main(void)
{
	test_escape_table();
	test_escape_null_and_pos();
	test_escape_truncation();
	test_render();
	test_render_variants();
	test_render_sizes();
	return check_report("agent_status");
}
