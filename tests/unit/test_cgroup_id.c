/* test_cgroup_id.c - unit tests for cgroup_id: every golden tests/data/cgroup/NAME.cgroup
 * against NAME.expected, then cut and unterminated buffers, long lines, short ids, /proc/self. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "cgroup_id.h"
#include "check.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MIN_CASES 20

static const char id_a[] = "d0f631ca1ddba8db3bcfcb9e057cdc98d0379f1bee00e75a545147a27dadd982";
static const char id_b[] = "9c0abe51c6e6655d81de2d044d4fb194931f058c0426c67c7285d8f5657ed64a";

static const char *data_dir(void)
{
	static char dir[4096];
	const char *root = getenv("JFLAME_TEST_DATA");

	snprintf(dir, sizeof(dir), "%s/cgroup", root ? root : "tests/data");
	return dir;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *p = NULL;
	size_t cap = 0;

	*len = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (*len + 4096 > cap) {
			cap = cap ? cap * 2 : 65536;
			p = realloc(p, cap);
			if (!p)
				exit(2);
		}
		size_t got = fread(p + *len, 1, cap - *len, f);
		if (!got)
			break;
		*len += got;
	}
	fclose(f);
	return p;
}

static void format_id(const struct cgroup_id *id, char *buf, size_t len)
{
	snprintf(buf, len, "pod=%s container=%s runtime=%s", id->pod, id->container, id->runtime);
}

/* Parses len bytes from an exact-size heap copy (no NUL after, so a read past
 * the end shows under ASan); checks the return value agrees with the fields. */
static int parse_exact(const char *text, size_t len, struct cgroup_id *id, const char *what)
{
	char *copy = malloc(len ? len : 1);
	int r;

	memcpy(copy, text, len);
	memset(id, 'x', sizeof(*id)); /* every field must be rewritten */
	r = cgroup_id_parse(copy, len, id);
	free(copy);
	CHECK_MSG(r == 0 || r == 1, "%s: returned %d", what, r);
	CHECK_MSG(memchr(id->pod, '\0', sizeof(id->pod)) && memchr(id->container, '\0', sizeof(id->container)) &&
			  memchr(id->runtime, '\0', sizeof(id->runtime)),
		  "%s: a field is not terminated", what);
	CHECK_MSG(r == (id->pod[0] || id->container[0]), "%s: returned %d with pod '%s' container '%s'", what, r,
		  id->pod, id->container);
	CHECK_MSG(!r == !id->runtime[0], "%s: returned %d with runtime '%s'", what, r, id->runtime);
	return r;
}

/* One golden case: NAME.cgroup parsed, compared with the line of NAME.expected. */
static void run_case(const char *dir, const char *name)
{
	char path[8192], want[512] = "", got[512];
	struct cgroup_id id, again;
	size_t len, wlen;
	char *text, *expected;

	snprintf(path, sizeof(path), "%s/%s.cgroup", dir, name);
	text = slurp(path, &len);
	CHECK_MSG(text != NULL, "cannot read %s", path);
	snprintf(path, sizeof(path), "%s/%s.expected", dir, name);
	expected = slurp(path, &wlen);
	CHECK_MSG(expected != NULL, "%s: missing", path);
	if (!text || !expected) {
		free(text);
		free(expected);
		return;
	}
	memcpy(want, expected, wlen < sizeof(want) - 1 ? wlen : sizeof(want) - 1);
	want[strcspn(want, "\n")] = '\0';
	CHECK_MSG(strncmp(want, "pod=", 4) == 0, "%s: not a pod=... line: '%s'", path, want);

	int r = parse_exact(text, len, &id, name);
	format_id(&id, got, sizeof(got));
	CHECK_MSG(strcmp(got, want) == 0, "%s:\n\tgot  %s\n\twant %s", name, got, want);
	CHECK_MSG(r == (strcmp(want, "pod= container= runtime=") != 0), "%s: returned %d", name, r);

	/* bytes after len are not read: the same text followed by more, not NUL-terminated */
	char *more = malloc(len + 200);
	memcpy(more, text, len);
	snprintf(more + len, 200, "0::/system.slice/docker-%s.scope\n", id_a);
	CHECK_EQ_INT(cgroup_id_parse(more, len, &again), r);
	format_id(&again, got, sizeof(got));
	CHECK_MSG(strcmp(got, want) == 0, "%s with bytes after len: %s", name, got);
	/* a NULL out is allowed */
	CHECK_EQ_INT(cgroup_id_parse(text, len, NULL), r);
	free(more);
	free(text);
	free(expected);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_golden(void)
{
	const char *dir = data_dir();
	DIR *d = opendir(dir);
	char *names[1024];
	size_t n = 0;
	struct dirent *e;

	CHECK_MSG(d != NULL, "cannot open %s", dir);
	if (!d)
		return;
	while ((e = readdir(d)) && n < sizeof(names) / sizeof(names[0])) {
		size_t l = strlen(e->d_name);
		if (e->d_name[0] == '.' || l <= 7 || strcmp(e->d_name + l - 7, ".cgroup") != 0)
			continue;
		names[n] = strndup(e->d_name, l - 7);
		if (!names[n])
			exit(2);
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), name_cmp);
	CHECK_MSG(n >= MIN_CASES, "%s: %zu .cgroup cases, want at least %d", dir, n, MIN_CASES);
	for (size_t i = 0; i < n; i++) {
		run_case(dir, names[i]);
		free(names[i]);
	}
	printf("test_cgroup_id: %zu golden cases\n", n);
}

/* The length bounds the text, whatever follows; a last line without its newline is cut off. */
static void test_unterminated(void)
{
	char text[512];
	struct cgroup_id id;
	int n1, n;

	n1 = snprintf(text, sizeof(text), "0::/system.slice/docker-%s.scope\n", id_a);
	n = n1 + snprintf(text + n1, sizeof(text) - (size_t)n1,
			  "1:cpu:/kubepods/pod7c0b4f52-3c9e-4d6a-9b1e-2f5a8d0c6e13/%s\n", id_b);
	CHECK_EQ_INT(parse_exact(text, (size_t)n, &id, "both"), 1);
	CHECK_EQ_STR(id.container, id_b);
	CHECK_EQ_STR(id.pod, "7c0b4f52-3c9e-4d6a-9b1e-2f5a8d0c6e13");
	CHECK_EQ_INT(parse_exact(text, (size_t)n1, &id, "first line"), 1);
	CHECK_EQ_STR(id.container, id_a);
	CHECK_EQ_STR(id.runtime, "docker");
	CHECK_EQ_STR(id.pod, "");
	/* every cut before the first newline: nothing */
	for (int cut = 0; cut < n1; cut++) {
		CHECK_MSG(parse_exact(text, (size_t)cut, &id, "cut") == 0, "cut at %d: '%s'", cut, id.container);
	}
	/* every cut in the second line: the first line only */
	for (int cut = n1; cut < n; cut++) {
		parse_exact(text, (size_t)cut, &id, "cut");
		CHECK_MSG(strcmp(id.container, id_a) == 0 && !id.pod[0], "cut at %d: '%s' '%s'", cut, id.pod,
			  id.container);
	}

	/* no text at all */
	memset(&id, 'x', sizeof(id));
	CHECK_EQ_INT(cgroup_id_parse(NULL, 0, &id), 0);
	CHECK_EQ_STR(id.pod, "");
	CHECK_EQ_STR(id.container, "");
	CHECK_EQ_STR(id.runtime, "");
	CHECK_EQ_INT(cgroup_id_parse(NULL, 100, &id), 0);
	CHECK_EQ_INT(cgroup_id_parse("", 0, &id), 0);
	CHECK_EQ_INT(cgroup_id_parse("\n\n\n", 3, &id), 0);
}

/* "0::/aaa.../aaa/docker-<id>.scope\n": target bytes before the newline. */
static size_t long_line(char *text, size_t target, const char *id)
{
	const size_t tail = strlen("/docker-.scope") + 64;

	memcpy(text, "0::/", 4);
	for (size_t i = 4; i < target - tail; i++)
		text[i] = i % 100 == 99 ? '/' : 'a';
	snprintf(text + target - tail, tail + 2, "/docker-%s.scope\n", id);
	return target + 1;
}

/* A line over 64 KiB is skipped, one of 64 KiB is read; both before a good line. */
static void test_long_lines(void)
{
	size_t cap = 70000 + 1024;
	char *text = malloc(cap), got[512];
	struct cgroup_id id;
	size_t n;

	for (int over = 0; over <= 1; over++) {
		n = long_line(text, over ? 65537 : 65536, id_a);
		CHECK_EQ_INT(parse_exact(text, n, &id, over ? "65537-byte line" : "65536-byte line"), !over);
		format_id(&id, got, sizeof(got));
		CHECK_MSG(strcmp(id.container, over ? "" : id_a) == 0, "%zu-byte line: %s", n - 1, got);
		/* and a good line after it is still found */
		n += (size_t)snprintf(text + n, cap - n, "0::/docker/%s\n", id_b);
		CHECK_EQ_INT(parse_exact(text, n, &id, "after a long line"), 1);
		CHECK_EQ_STR(id.container, over ? id_b : id_a);
	}
	n = long_line(text, 70000, id_a);
	CHECK_EQ_INT(parse_exact(text, n, &id, "70000-byte line"), 0);
	/* a megabyte of one line without a newline */
	free(text);
	n = 1 << 20;
	text = malloc(n);
	memset(text, '/', n);
	CHECK_EQ_INT(parse_exact(text, n, &id, "1 MiB of slashes"), 0);
	memset(text, ':', n);
	CHECK_EQ_INT(parse_exact(text, n, &id, "1 MiB of colons"), 0);
	for (size_t i = 0; i < n; i++)
		text[i] = i % 4 == 3 ? '\n' : '0';
	CHECK_EQ_INT(parse_exact(text, n, &id, "short lines"), 0);
	free(text);
}

static void test_short(void)
{
	struct cgroup_id id;
	char buf[80];

	memset(&id, 0, sizeof(id));
	snprintf(id.container, sizeof(id.container), "%s", id_a);
	CHECK_EQ_STR(cgroup_id_short(&id, buf, sizeof(buf)), "d0f631ca1ddb");
	CHECK(cgroup_id_short(&id, buf, sizeof(buf)) == buf);
	/* cut to the buffer */
	CHECK_EQ_STR(cgroup_id_short(&id, buf, 5), "d0f6");
	CHECK_EQ_STR(cgroup_id_short(&id, buf, 1), "");
	CHECK_EQ_STR(cgroup_id_short(&id, buf, 0), "");
	/* 12 hex or fewer: whole */
	snprintf(id.container, sizeof(id.container), "0123456789ab");
	CHECK_EQ_STR(cgroup_id_short(&id, buf, sizeof(buf)), "0123456789ab");
	snprintf(id.container, sizeof(id.container), "abc");
	CHECK_EQ_STR(cgroup_id_short(&id, buf, sizeof(buf)), "abc");
	/* not hex: the id itself */
	snprintf(id.container, sizeof(id.container), "my-container-name-longer-than-12");
	CHECK_EQ_STR(cgroup_id_short(&id, buf, sizeof(buf)), "my-container-name-longer-than-12");
	snprintf(id.container, sizeof(id.container), "0123456789abcdef0123X");
	CHECK_EQ_STR(cgroup_id_short(&id, buf, sizeof(buf)), "0123456789abcdef0123X");
	/* no container */
	id.container[0] = '\0';
	memset(buf, 'x', sizeof(buf));
	CHECK_EQ_STR(cgroup_id_short(&id, buf, sizeof(buf)), "");
	CHECK_EQ_STR(cgroup_id_short(NULL, buf, sizeof(buf)), "");
	/* an unterminated field stays inside it */
	memset(id.container, 'z', sizeof(id.container));
	CHECK_EQ_INT(strlen(cgroup_id_short(&id, buf, sizeof(buf))), sizeof(buf) - 1);
	/* from a parsed file */
	char text[200];
	int n = snprintf(text, sizeof(text), "0::/machine.slice/libpod-%s.scope/container\n", id_b);
	CHECK_EQ_INT(cgroup_id_parse(text, (size_t)n, &id), 1);
	CHECK_EQ_STR(id.runtime, "podman");
	CHECK_EQ_STR(cgroup_id_short(&id, buf, sizeof(buf)), "9c0abe51c6e6");
}

/* The real file: readable here, whatever it holds; same answer as parsing it. */
static void test_read_self(void)
{
	struct cgroup_id id, parsed;
	size_t len;
	char *text = slurp("/proc/self/cgroup", &len);
	int r = cgroup_id_read(getpid(), &id);

	CHECK_MSG(r == 0 || r == 1, "cgroup_id_read(self) = %d", r);
	if (text) {
		CHECK_EQ_INT(cgroup_id_parse(text, len, &parsed), r);
		CHECK_EQ_STR(parsed.pod, id.pod);
		CHECK_EQ_STR(parsed.container, id.container);
		CHECK_EQ_STR(parsed.runtime, id.runtime);
		free(text);
	}
	CHECK_EQ_INT(cgroup_id_read(0, &parsed), r);
	CHECK_EQ_STR(parsed.container, id.container);
	printf("test_cgroup_id: /proc/self/cgroup: %d pod='%s' container='%s' runtime='%s'\n", r, id.pod, id.container,
	       id.runtime);

	memset(&id, 'x', sizeof(id));
	CHECK_EQ_INT(cgroup_id_read(-1, &id), 0);
	CHECK_EQ_STR(id.container, "");
	memset(&id, 'x', sizeof(id));
	CHECK_EQ_INT(cgroup_id_read(INT_MAX, &id), 0); /* above pid_max: no such process */
	CHECK_EQ_STR(id.pod, "");
	CHECK_EQ_STR(id.runtime, "");
	CHECK_EQ_INT(cgroup_id_read(1, NULL) >= 0, 1);
}

int main(void)
{
	test_golden();
	test_unterminated();
	test_long_lines();
	test_short();
	test_read_self();
	return check_report("test_cgroup_id");
}
