/* test_collapse.c - golden tests for `jflame collapse`: every line of
 * tests/data/collapse/cases folds an input with options and compares the output. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "collapse.h"
#include "perf_script.h"
#include "recording.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0, got;
	if (!f)
		return NULL;
	do {
		if (len + 4096 > cap) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap + 1);
			if (!buf)
				exit(2);
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
	} while (got > 0);
	fclose(f);
	buf[len] = '\0';
	return buf;
}

static int parse_opts(char *s, struct collapse_opts *o)
{
	memset(o, 0, sizeof(*o));
	for (char *save = NULL, *t = strtok_r(s, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		if (strcmp(t, "--pid") == 0)
			o->pid = true;
		else if (strcmp(t, "--tid") == 0)
			o->tid = true;
		else if (strcmp(t, "--kernel") == 0)
			o->kernel = true;
		else if (strcmp(t, "--jit") == 0)
			o->jit = true;
		else if (strcmp(t, "--all") == 0)
			o->kernel = o->jit = true;
		else if (strcmp(t, "--addrs") == 0)
			o->addrs = true;
		else if (strcmp(t, "--from") == 0 && (t = strtok_r(NULL, " ", &save)))
			o->from = atof(t), o->has_from = true;
		else if (strcmp(t, "--to") == 0 && (t = strtok_r(NULL, " ", &save)))
			o->to = atof(t), o->has_to = true;
		else if (strcmp(t, "--event") == 0 && (t = strtok_r(NULL, " ", &save)))
			o->event = strdup(t);
		else
			return -1;
	}
	return 0;
}

static char *trim(char *s)
{
	while (*s == ' ')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\n'))
		s[--n] = '\0';
	return s;
}

static void run_case(const char *dir, char *line, int *ncases)
{
	char *input = line, *opts = strchr(input, '|'), *want, path[8400], err[512];
	struct collapse_opts o;
	struct recording rec;
	struct collapse c;
	struct ps_stats st;
	if (!opts || !(want = strchr(opts + 1, '|'))) {
		CHECK_MSG(0, "bad cases line '%s'", line);
		return;
	}
	*opts++ = '\0';
	*want++ = '\0';
	input = trim(input);
	want = trim(want);
	CHECK_MSG(parse_opts(trim(opts), &o) == 0, "options of %s", input);
	CHECK(recording_init(&rec) == 0);
	collapse_init(&c, &o, &rec);
	snprintf(path, sizeof(path), "%s/%s", dir, input);
	CHECK_MSG(perf_script_parse_file(path, collapse_sample, &c, &st, err, sizeof(err)) == 0, "%s: %s", input, err);
	size_t n;
	struct stack_count *s = recording_sorted(&rec, &n);
	size_t cap = 1 << 20, len = 0;
	char *got = malloc(cap);
	got[0] = '\0';
	for (size_t i = 0; s && i < n; i++) {
		int w = snprintf(got + len, cap - len, "%s %" PRIu64 "\n", s[i].stack, s[i].count);
		if (w > 0 && (size_t)w < cap - len)
			len += (size_t)w;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, want);
	char *expected = slurp(path);
	CHECK_MSG(expected != NULL, "missing %s", path);
	if (expected && strcmp(expected, got) != 0) {
		CHECK_MSG(0, "%s [%s] differs from %s; got:\n%s", input, opts, want, got);
	}
	(*ncases)++;
	free(expected);
	free(got);
	free(s);
	free((char *)o.event);
	collapse_free(&c);
	recording_free(&rec);
}

/* A sample split across reads, a line longer than the reader keeps, a
 * missing final newline: the buffer and the file paths agree. */
static int count_sample(void *ctx, const struct ps_sample *s)
{
	(*(size_t *)ctx) += s->nframes + 1;
	return 0;
}

static void test_buffer_edges(void)
{
	const char *text = "a 1/2 [000] 1.0: 3 cycles:\n\t1 f (/x)\n\t2 g (/x)\n\nb 3 1.5: cycles:\n\t1 h (/y)";
	struct ps_stats st;
	size_t frames = 0;
	CHECK(perf_script_parse_buffer(text, strlen(text), count_sample, &frames, &st) == 0);
	CHECK_EQ_INT((int)st.samples, 2);
	CHECK_EQ_INT((int)frames, 2 + 1 + 1 + 1);
	CHECK_EQ_INT((int)st.bad_lines, 0);
	/* garbage: counted, no samples */
	frames = 0;
	CHECK(perf_script_parse_buffer("\x01\x02garbage\n\xff\n", 13, count_sample, &frames, &st) == 0);
	CHECK_EQ_INT((int)st.samples, 0);
	CHECK(st.bad_lines >= 1);
}

/* An input several read chunks long: samples cut by a read are carried over. */
static void test_chunks(const char *dir)
{
	char path[4200], tmp[] = "/tmp/jflame-collapse-XXXXXX", err[512];
	snprintf(path, sizeof(path), "%s/sys.perf", dir);
	char *one = slurp(path);
	CHECK(one != NULL);
	if (!one)
		return;
	int fd = mkstemp(tmp);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	CHECK(f != NULL);
	size_t reps = (9u << 20) / (strlen(one) + 1) + 1; /* > 2 chunks of 4 MiB */
	for (size_t i = 0; f && i < reps; i++)
		fputs(one, f);
	if (f)
		fclose(f);
	struct ps_stats a, b;
	size_t fa = 0, fb = 0;
	CHECK(perf_script_parse_buffer(one, strlen(one), count_sample, &fa, &a) == 0);
	CHECK(perf_script_parse_file(tmp, count_sample, &fb, &b, err, sizeof(err)) == 0);
	CHECK_MSG(b.samples == a.samples * reps, "%" PRIu64 " samples, want %" PRIu64, b.samples, a.samples * reps);
	CHECK(fb == fa * reps);
	CHECK_EQ_INT((int)b.bad_lines, 0);
	unlink(tmp);
	free(one);
}

/* Periods that take the total to 2^63 stop the folding at that sample, with its
 * line: recording counts are uint64_t and would wrap a few samples later. */
static void test_total_overflow(void)
{
	static const char one[] = "java 1/2 [000] 1.000000: 999999999999 cpu-clock:\n\t1 f (/x)\n\n";
	size_t len = sizeof(one) - 1, reps = 1000;
	char *text = malloc(len * reps);
	struct recording rec;
	struct collapse c;
	struct collapse_opts o = { 0 };
	struct ps_stats st;
	CHECK(text != NULL && recording_init(&rec) == 0);
	if (!text)
		return;
	for (size_t i = 0; i < reps; i++)
		memcpy(text + i * len, one, len);
	collapse_init(&c, &o, &rec);
	/* 9223372 samples of 999999999999 stay below 2^63; the next is refused */
	uint64_t calls = 0;
	while (!c.oom && calls++ < 10000)
		perf_script_parse_buffer(text, len * reps, collapse_sample, &c, &st);
	CHECK(c.oom);
	CHECK_EQ_U64(calls, 9224);		   /* 9223 whole buffers, then 373 samples */
	CHECK_EQ_U64(c.too_big_line, 372 * 3 + 1); /* the 373rd sample's header */
	CHECK_EQ_U64(c.kept, 9223372);
	CHECK_EQ_U64(rec.total, UINT64_C(9223371999990776628));
	collapse_free(&c);
	recording_free(&rec);
	free(text);
}

int main(void)
{
	const char *root = getenv("JFLAME_TEST_DATA");
	char dir[4096], path[4200];
	int ncases = 0;
	snprintf(dir, sizeof(dir), "%s/collapse", root ? root : "tests/data");
	snprintf(path, sizeof(path), "%s/cases", dir);
	char *cases = slurp(path);
	CHECK_MSG(cases != NULL, "no %s", path);
	for (char *save = NULL, *l = cases ? strtok_r(cases, "\n", &save) : NULL; l; l = strtok_r(NULL, "\n", &save))
		if (l[0] != '#' && l[0])
			run_case(dir, l, &ncases);
	CHECK_MSG(ncases >= 10, "only %d cases", ncases);
	free(cases);
	test_buffer_edges();
	test_chunks(dir);
	test_total_overflow();
	return check_report("collapse");
}
