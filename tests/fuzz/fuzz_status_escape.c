/* fuzz_status_escape.c - libFuzzer target for status file escaping: escapes
 * into buffers of varied sizes, unescapes back, renders whole status files. */
/* module: jvmagent/agent_status.c */
#include "agent_status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prints the message and aborts, which the fuzzer reports as a crash. */
static __attribute__((noreturn, format(printf, 1, 2))) void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fuzz_status_escape: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static int hex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' :
	       c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 :
				      -1;
}

/* Reverses the escaping; -1 on a malformed escape. */
static int unescape(const char *s, char *out)
{
	while (*s) {
		if (*s != '\\') {
			*out++ = *s++;
			continue;
		}
		if (s[1] == '\\')
			*out++ = '\\', s += 2;
		else if (s[1] == 'n')
			*out++ = '\n', s += 2;
		else if (s[1] == 'x' && hex(s[2]) >= 0 && hex(s[3]) >= 0)
			*out++ = (char)(hex(s[2]) * 16 + hex(s[3])), s += 4;
		else
			return -1;
	}
	*out = '\0';
	return 0;
}

static void check_escape(const char *s, size_t len_sel, size_t pos_sel)
{
	size_t in = strlen(s), cap = 4 * in + 1;
	char *full = malloc(cap), *back = malloc(in + 1);
	size_t n = status_escape_append(full, cap, 0, s);

	if (n != strlen(full))
		fail("returned %zu, wrote %zu", n, strlen(full));
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)full[i];
		if (c < 0x20 || c == 0x7f)
			fail("control byte %#x left in the output", c);
	}
	if (unescape(full, back) != 0 || strcmp(back, s) != 0)
		fail("'%s' does not unescape back", full);

	/* at a position inside an exact-size buffer */
	size_t len = len_sel % (n + 8);
	size_t pos = len ? pos_sel % len : 0;
	char *buf = len ? malloc(len) : NULL;
	if (len) {
		memset(buf, 'p', pos);
		buf[pos] = '\0';
	}
	size_t got = status_escape_append(buf, len, pos, s);
	if (got != pos + n)
		fail("at %zu in %zu bytes: returned %zu, want %zu", pos, len, got, pos + n);
	if (len) {
		size_t want = pos + n < len - 1 ? pos + n : len - 1;
		if (!memchr(buf, '\0', len) || strlen(buf) != want)
			fail("at %zu in %zu bytes: not NUL-terminated at %zu", pos, len, want);
		for (size_t i = 0; i < pos; i++)
			if (buf[i] != 'p')
				fail("at %zu in %zu bytes: overwrote byte %zu before pos", pos, len, i);
		if (memcmp(buf + pos, full, want - pos) != 0)
			fail("at %zu in %zu bytes: not a prefix", pos, len);
	}
	free(buf);
	free(full);
	free(back);
}

/* The string as the error and as thread names: every value stays on its line. */
static void check_render(const char *s, size_t len_sel)
{
	struct agent_thread threads[3] = { { 1, (char *)s }, { 2, NULL }, { 3, (char *)s } };
	struct agent_status st = {
		.version = "0.1.0",
		.mode = "agentpath",
		.state = "running",
		.options = "",
		.jvm = NULL,
		.map_path = "/tmp/perf-1.map",
		.events_path = "/tmp/jflame-1.events",
		.samples_path = "/tmp/jflame-1.samples",
		.pid = 1,
		.preserve_frame_pointer = (int)(len_sel % 3) - 1,
		.debug_non_safepoints = (int)(len_sel / 3 % 3) - 1,
		.threads = threads,
		.nthreads = 3,
		.error = s,
	};
	size_t need = agent_status_render(&st, NULL, 0);
	char *full = malloc(need + 1);
	size_t lines = 0;

	if (agent_status_render(&st, full, need + 1) != need || strlen(full) != need)
		fail("render size %zu but wrote %zu", need, strlen(full));
	for (const char *p = full; *p; p++)
		lines += *p == '\n';
	if (lines != 30 + 3) /* keys, then a line per thread */
		fail("%zu lines, want 33", lines);
	size_t len = 1 + len_sel % (need + 1);
	char *buf = malloc(len);
	if (agent_status_render(&st, buf, len) != need || !memchr(buf, '\0', len) ||
	    strncmp(buf, full, strlen(buf)) != 0)
		fail("render into %zu bytes is not a prefix", len);
	free(buf);
	free(full);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	size_t len_sel = data[0], pos_sel = data[1];
	char *s = malloc(size - 1);
	memcpy(s, data + 2, size - 2);
	s[size - 2] = '\0'; /* an embedded NUL ends the string early, as in C */
	check_escape(s, len_sel, pos_sel);
	check_render(s, len_sel * 7 + pos_sel);
	free(s);
	return 0;
}
