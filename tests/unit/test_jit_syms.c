/* test_jit_syms.c - unit tests for jit_syms: golden events logs and perf maps in
 * tests/data/jit_syms (*.expect queries), incremental reads, truncation. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "check.h"
#include "jit_syms.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *data_dir(void)
{
	static char path[4096];
	const char *dir = getenv("JFLAME_TEST_DATA");

	snprintf(path, sizeof(path), "%s/jit_syms", dir ? dir : "tests/data");
	return path;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' :
	       c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 :
				      -1;
}

/* The test's own decoder of the expect files (\\, \n, \xHH), independent of text_unescape. */
static void decode(const char *s, char *out, size_t len)
{
	size_t n = 0;
	while (*s && n + 1 < len) {
		if (s[0] == '\\' && s[1] == '\\') {
			out[n++] = '\\';
			s += 2;
		} else if (s[0] == '\\' && s[1] == 'n') {
			out[n++] = '\n';
			s += 2;
		} else if (s[0] == '\\' && s[1] == 'x' && hexval(s[2]) >= 0 && hexval(s[3]) >= 0) {
			out[n++] = (char)(hexval(s[2]) * 16 + hexval(s[3]));
			s += 4;
		} else {
			out[n++] = *s++;
		}
	}
	out[n] = '\0';
}

/* Printable form of a name for failure messages. */
static int same_name(const char *got, const char *want)
{
	return want ? got && strcmp(got, want) == 0 : got == NULL;
}

/* Runs the checks of one NAME.expect against the table read from input. */
static void run_expect(const char *input, const char *expect, int is_map)
{
	struct str_intern *si = str_intern_new();
	struct jit_syms *js = is_map ? jit_syms_open("/nonexistent/jflame-1.events", input, si) :
				       jit_syms_open(input, "/nonexistent/perf-1.map", si);
	FILE *f = fopen(expect, "r");
	char line[2048];
	int lineno = 0, lines_read;

	CHECK_MSG(js != NULL, "%s: jit_syms_open failed", input);
	CHECK_MSG(f != NULL, "%s: missing", expect);
	if (!js || !f) {
		if (f)
			fclose(f);
		jit_syms_free(js);
		str_intern_free(si);
		return;
	}
	CHECK_EQ_STR(jit_syms_path(js), input);
	lines_read = jit_syms_update(js);
	CHECK_MSG(jit_syms_update(js) == 0, "%s: a second update read more lines", input);
	while (fgets(line, sizeof(line), f)) {
		char want_buf[2048], *arrow, *nl = strchr(line, '\n');
		const char *want;
		unsigned long long a, t, off_want;
		long tid;
		int n = 0;

		lineno++;
		if (nl)
			*nl = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		if (sscanf(line, "lines %llu", &a) == 1) {
			CHECK_MSG(lines_read == (int)a, "%s:%d: update read %d lines, want %llu", expect, lineno,
				  lines_read, a);
			continue;
		}
		if (sscanf(line, "count %llu", &a) == 1) {
			CHECK_MSG(jit_syms_count(js) == a, "%s:%d: count %zu, want %llu", expect, lineno,
				  jit_syms_count(js), a);
			continue;
		}
		if (sscanf(line, "times %llu", &a) == 1) {
			CHECK_MSG(jit_syms_has_times(js) == (int)a, "%s:%d: has_times %d", expect, lineno,
				  jit_syms_has_times(js));
			continue;
		}
		arrow = strstr(line, "->");
		CHECK_MSG(arrow != NULL, "%s:%d: bad expect line '%s'", expect, lineno, line);
		if (!arrow)
			continue;
		*arrow = '\0';
		arrow += 2;
		if (*arrow == ' ')
			arrow++;
		decode(arrow, want_buf, sizeof(want_buf));
		want = strcmp(arrow, "NONE") == 0 ? NULL : want_buf;
		if (sscanf(line, "thread %ld", &tid) == 1) {
			const char *got = jit_syms_thread_name(js, (pid_t)tid);
			CHECK_MSG(same_name(got, want), "%s:%d: thread %ld is \"%s\", want \"%s\"", expect, lineno, tid,
				  check_show(got), check_show(want));
			continue;
		}
		if (sscanf(line, "%llx %llu %n", &a, &t, &n) < 2) {
			CHECK_MSG(0, "%s:%d: bad expect line '%s'", expect, lineno, line);
			continue;
		}
		uint64_t off = 0xdeadbeef;
		const char *got = jit_syms_lookup(js, a, t, &off);
		CHECK_MSG(same_name(got, want), "%s:%d: %llx at %llu is \"%s\", want \"%s\"", expect, lineno, a, t,
			  check_show(got), check_show(want));
		if (sscanf(line + n, "+%llx", &off_want) == 1 && got && want)
			CHECK_MSG(off == off_want, "%s:%d: offset %#" PRIx64 ", want %#llx", expect, lineno, off,
				  off_want);
		/* offsets are optional */
		CHECK(same_name(jit_syms_lookup(js, a, t, NULL), got));
	}
	fclose(f);
	jit_syms_free(js);
	str_intern_free(si);
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

static void test_golden(void)
{
	DIR *d = opendir(data_dir());
	struct dirent *e;
	int files = 0;

	CHECK_MSG(d != NULL, "cannot open %s", data_dir());
	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		int is_map = ends_with(e->d_name, ".map");
		if (!is_map && !ends_with(e->d_name, ".events"))
			continue;
		char input[4096 + 256 + 2], expect[sizeof(input)];
		snprintf(input, sizeof(input), "%s/%s", data_dir(), e->d_name);
		snprintf(expect, sizeof(expect), "%s", input);
		strcpy(strrchr(expect, '.'), ".expect");
		run_expect(input, expect, is_map);
		files++;
	}
	closedir(d);
	CHECK_MSG(files >= 7, "only %d golden inputs in %s", files, data_dir());
}

static void test_open(void)
{
	struct str_intern *si = str_intern_new();
	char map[4096];
	struct jit_syms *js;

	snprintf(map, sizeof(map), "%s/perfmap.map", data_dir());
	CHECK(jit_syms_open(NULL, NULL, si) == NULL);
	CHECK(jit_syms_open("/nonexistent/a.events", "/nonexistent/perf-1.map", si) == NULL);
	/* not a regular file: the perf map is used */
	js = jit_syms_open(data_dir(), map, si);
	CHECK(js != NULL);
	if (js) {
		CHECK_EQ_STR(jit_syms_path(js), map);
		CHECK_EQ_INT(jit_syms_has_times(js), 0);
		CHECK_EQ_INT(jit_syms_count(js), 0); /* nothing read before the first update */
		CHECK(jit_syms_lookup(js, 0x7f1000001000ULL, 0, NULL) == NULL);
		CHECK(jit_syms_update(js) > 0);
		CHECK_EQ_STR(jit_syms_lookup(js, 0x7f1000001000ULL, 0, NULL), "Interpreter");
		jit_syms_free(js);
	}
	js = jit_syms_open(map, NULL, si); /* a map given as the events log is read with times */
	CHECK(js != NULL);
	CHECK_EQ_INT(jit_syms_has_times(js), 1);
	jit_syms_free(js);
	/* a link at the map's path (to a root-only file, say) and a FIFO are
	 * refused: neither is read, nor waited on */
	{
		char dir[] = "/tmp/jflame-js-XXXXXX", link[256], fifo[256];
		CHECK(mkdtemp(dir) != NULL);
		snprintf(link, sizeof(link), "%s/perf-1.map", dir);
		snprintf(fifo, sizeof(fifo), "%s/jflame-1.events", dir);
		CHECK(symlink(map, link) == 0 && mkfifo(fifo, 0600) == 0);
		CHECK(jit_syms_open(NULL, link, si) == NULL);
		CHECK(jit_syms_open(fifo, link, si) == NULL);
		unlink(link);
		unlink(fifo);
		rmdir(dir);
	}
	/* NULL tables are harmless */
	jit_syms_free(NULL);
	CHECK(jit_syms_lookup(NULL, 1, 1, NULL) == NULL);
	CHECK(jit_syms_thread_name(NULL, 1) == NULL);
	CHECK_EQ_INT(jit_syms_update(NULL), -1);
	CHECK_EQ_INT(jit_syms_count(NULL), 0);
	CHECK_EQ_INT(jit_syms_has_times(NULL), 0);
	str_intern_free(si);
}

/* ---- files written while being read ------------------------------------ */

struct tmp {
	char path[64];
	int fd;
};

static void tmp_make(struct tmp *t)
{
	snprintf(t->path, sizeof(t->path), "/tmp/jflame-test-jit-XXXXXX");
	t->fd = mkstemp(t->path);
	if (t->fd < 0) {
		perror("mkstemp");
		exit(2);
	}
}

static void tmp_append(struct tmp *t, const char *s)
{
	size_t n = strlen(s);
	if (lseek(t->fd, 0, SEEK_END) < 0 || write(t->fd, s, n) != (ssize_t)n) {
		perror("write");
		exit(2);
	}
}

/* Empties the file in place (same inode, as the agent's tmp_file_open_append
 * with truncate does) and writes s. */
static void tmp_rewrite(struct tmp *t, const char *s)
{
	if (ftruncate(t->fd, 0) != 0) {
		perror("ftruncate");
		exit(2);
	}
	tmp_append(t, s);
}

static void tmp_remove(struct tmp *t)
{
	close(t->fd);
	unlink(t->path);
}

#define HEADER "# jflame-events 1 clock=CLOCK_MONOTONIC pid=4242\n"

static void test_incremental(void)
{
	struct str_intern *si = str_intern_new();
	struct tmp t;
	struct jit_syms *js;

	tmp_make(&t);
	tmp_append(&t, HEADER "1000 load 7f0000001000 100 Lp/A;::a\n");
	js = jit_syms_open(t.path, NULL, si);
	CHECK(js != NULL);
	if (!js) {
		tmp_remove(&t);
		str_intern_free(si);
		return;
	}
	CHECK_EQ_INT(jit_syms_has_times(js), 1);
	CHECK_EQ_INT(jit_syms_update(js), 2);
	CHECK_EQ_INT(jit_syms_update(js), 0);
	CHECK_EQ_STR(jit_syms_lookup(js, 0x7f0000001010ULL, 2000, NULL), "Lp/A;::a");
	CHECK(jit_syms_lookup(js, 0x7f0000002010ULL, 2000, NULL) == NULL);

	/* more lines, the last one without its newline: not read yet */
	tmp_append(&t, "2000 load 7f0000002000 100 Lp/B;::b\n"
		       "2100 thread 4300 worker-1\n"
		       "3000 load 7f0000003000 100 Lp/Partial;::x");
	CHECK_EQ_INT(jit_syms_update(js), 2);
	CHECK_EQ_STR(jit_syms_lookup(js, 0x7f0000002010ULL, 2500, NULL), "Lp/B;::b");
	CHECK_EQ_STR(jit_syms_thread_name(js, 4300), "worker-1");
	CHECK(jit_syms_lookup(js, 0x7f0000003010ULL, 3500, NULL) == NULL);
	CHECK_EQ_INT(jit_syms_count(js), 2);
	CHECK_EQ_INT(jit_syms_update(js), 0);
	CHECK(jit_syms_lookup(js, 0x7f0000003010ULL, 3500, NULL) == NULL);

	/* the line completed (its name was cut short before), then one cut in its time */
	tmp_append(&t, "yz\n"
		       "40");
	CHECK_EQ_INT(jit_syms_update(js), 1);
	CHECK_EQ_STR(jit_syms_lookup(js, 0x7f0000003010ULL, 3500, NULL), "Lp/Partial;::xyz");
	CHECK_EQ_INT(jit_syms_count(js), 3);
	tmp_append(&t, "00 unload 7f0000001000 100\n"
		       "4100 load 7f0000001000 80 Lp/C;::c\n");
	CHECK_EQ_INT(jit_syms_update(js), 2);
	/* the unload (at 4000, not 40) applies to a load read two updates ago */
	CHECK_EQ_STR(jit_syms_lookup(js, 0x7f0000001010ULL, 3999, NULL), "Lp/A;::a");
	CHECK_EQ_STR(jit_syms_lookup(js, 0x7f0000001010ULL, 4050, NULL), "Lp/C;::c");
	CHECK_EQ_STR(jit_syms_lookup(js, 0x7f0000001010ULL, 5000, NULL), "Lp/C;::c");
	CHECK_EQ_STR(jit_syms_lookup(js, 0x7f0000001010ULL, 50, NULL), "Lp/A;::a");

	/* many small appends, a byte at a time */
	const char *slow = "5000 load 7f0000005000 10 Lp/Slow;::bytewise\n";
	for (const char *p = slow; *p; p++) {
		char one[2] = { *p, '\0' };
		tmp_append(&t, one);
		int got = jit_syms_update(js);
		CHECK_EQ_INT(got, p[1] ? 0 : 1);
		if (p[1])
			CHECK(jit_syms_lookup(js, 0x7f0000005000ULL, 6000, NULL) == NULL);
	}
	CHECK_EQ_STR(jit_syms_lookup(js, 0x7f0000005000ULL, 6000, NULL), "Lp/Slow;::bytewise");
	CHECK_EQ_INT(jit_syms_count(js), 5);

	/* truncated and rewritten by a new JVM with the same pid: the table starts over */
	tmp_rewrite(&t, HEADER "10 load 7f0000001000 100 Lp/NewJvm;::n\n"
			       "20 thread 4400 new-main\n");
	CHECK_EQ_INT(jit_syms_update(js), 3);
	CHECK_EQ_INT(jit_syms_count(js), 1);
	CHECK_EQ_STR(jit_syms_lookup(js, 0x7f0000001010ULL, 100, NULL), "Lp/NewJvm;::n");
	CHECK_EQ_STR(jit_syms_lookup(js, 0x7f0000001010ULL, 5000, NULL), "Lp/NewJvm;::n");
	CHECK(jit_syms_lookup(js, 0x7f0000002010ULL, 2500, NULL) == NULL);
	CHECK(jit_syms_lookup(js, 0x7f0000003010ULL, 3500, NULL) == NULL);
	CHECK(jit_syms_thread_name(js, 4300) == NULL);
	CHECK_EQ_STR(jit_syms_thread_name(js, 4400), "new-main");
	tmp_append(&t, "30 load 7f0000002000 100 Lp/NewB;::b\n");
	CHECK_EQ_INT(jit_syms_update(js), 1);
	CHECK_EQ_STR(jit_syms_lookup(js, 0x7f0000002010ULL, 100, NULL), "Lp/NewB;::b");

	jit_syms_free(js);
	tmp_remove(&t);
	str_intern_free(si);
}

/* A new JVM with the same pid that wrote more than the old one had before the
 * next update: the table must still start over. */
static void test_rewritten_longer(void)
{
	struct str_intern *si = str_intern_new();
	struct tmp t;
	struct jit_syms *js;
	char big[8192];
	size_t n = 0;

	tmp_make(&t);
	tmp_append(&t, HEADER "1000 load 7f0000001000 100 Lp/Old;::a\n");
	js = jit_syms_open(t.path, NULL, si);
	CHECK(js != NULL);
	if (!js) {
		tmp_remove(&t);
		str_intern_free(si);
		return;
	}
	CHECK_EQ_INT(jit_syms_update(js), 2);
	n += (size_t)snprintf(big + n, sizeof(big) - n, HEADER);
	for (int i = 0; i < 40; i++)
		n += (size_t)snprintf(big + n, sizeof(big) - n, "%d load 7f00000%02x000 100 Lp/New;::m%d\n", 10 + i,
				      0x10 + i, i);
	tmp_rewrite(&t, big);
	CHECK(jit_syms_update(js) > 0);
	CHECK_MSG(jit_syms_lookup(js, 0x7f0000001010ULL, 2000, NULL) == NULL,
		  "a load of the old JVM survived its log being rewritten longer: \"%s\"",
		  check_show(jit_syms_lookup(js, 0x7f0000001010ULL, 2000, NULL)));
	CHECK_EQ_STR(jit_syms_lookup(js, 0x7f0000010010ULL, 2000, NULL), "Lp/New;::m0");
	CHECK_EQ_STR(jit_syms_lookup(js, 0x7f0000037010ULL, 2000, NULL), "Lp/New;::m39");
	CHECK_EQ_INT(jit_syms_count(js), 40);
	jit_syms_free(js);
	tmp_remove(&t);
	str_intern_free(si);
}

/* A new JVM with the same pid whose log reached exactly the old one's length
 * by the next update, at once or after a while: an unchanged size is not taken
 * for an unchanged file (update skips a file not written since it was read to
 * its end). */
static void test_rewritten_same_size(void)
{
	struct str_intern *si = str_intern_new();
	struct tmp t;
	struct jit_syms *js;

	tmp_make(&t);
	tmp_append(&t, HEADER "1000 load 7f0000001000 100 Lp/Old;::a\n");
	js = jit_syms_open(t.path, NULL, si);
	CHECK(js != NULL);
	if (!js) {
		tmp_remove(&t);
		str_intern_free(si);
		return;
	}
	CHECK_EQ_INT(jit_syms_update(js), 2);
	CHECK_EQ_INT(jit_syms_update(js), 0);
	/* at once: within the file system's clock tick */
	tmp_rewrite(&t, HEADER "1000 load 7f0000003000 100 Lp/Mid;::a\n");
	CHECK_EQ_INT(jit_syms_update(js), 2);
	CHECK(jit_syms_lookup(js, 0x7f0000001010ULL, 2000, NULL) == NULL);
	CHECK_EQ_STR(jit_syms_lookup(js, 0x7f0000003010ULL, 2000, NULL), "Lp/Mid;::a");
	struct timespec pause = { 0, 60000000 }; /* the log read to its end and left alone for a while */
	nanosleep(&pause, NULL);
	CHECK_EQ_INT(jit_syms_update(js), 0);
	tmp_rewrite(&t, HEADER "1000 load 7f0000002000 100 Lp/New;::a\n");
	CHECK_EQ_INT(jit_syms_update(js), 2);
	CHECK(jit_syms_lookup(js, 0x7f0000001010ULL, 2000, NULL) == NULL);
	CHECK_EQ_STR(jit_syms_lookup(js, 0x7f0000002010ULL, 2000, NULL), "Lp/New;::a");
	CHECK_EQ_INT(jit_syms_update(js), 0);
	jit_syms_free(js);
	tmp_remove(&t);
	str_intern_free(si);
}

/* A plain perf map growing: later lines (read in later updates) win. */
static void test_incremental_map(void)
{
	struct str_intern *si = str_intern_new();
	struct tmp t;
	struct jit_syms *js;

	tmp_make(&t);
	js = jit_syms_open("/nonexistent/jflame-1.events", t.path, si);
	CHECK(js != NULL);
	if (!js) {
		tmp_remove(&t);
		str_intern_free(si);
		return;
	}
	CHECK_EQ_INT(jit_syms_has_times(js), 0);
	CHECK_EQ_INT(jit_syms_update(js), 0);
	tmp_append(&t, "7f0000001000 100 Lp/A;::a\n7f0000002000 100 Lp/B;::b\n7f0000003000 1");
	CHECK_EQ_INT(jit_syms_update(js), 2);
	CHECK_EQ_STR(jit_syms_lookup(js, 0x7f0000001000ULL, 0, NULL), "Lp/A;::a");
	CHECK(jit_syms_lookup(js, 0x7f0000003000ULL, 0, NULL) == NULL);
	tmp_append(&t, "00 Lp/C;::c\n7f0000001000 100 Lp/A;::again\n");
	CHECK_EQ_INT(jit_syms_update(js), 2);
	CHECK_EQ_STR(jit_syms_lookup(js, 0x7f00000030ffULL, 0, NULL), "Lp/C;::c");
	CHECK_EQ_STR(jit_syms_lookup(js, 0x7f0000001000ULL, 0, NULL), "Lp/A;::again");
	CHECK_EQ_STR(jit_syms_lookup(js, 0x7f0000001000ULL, UINT64_MAX, NULL), "Lp/A;::again");
	jit_syms_free(js);
	tmp_remove(&t);
	str_intern_free(si);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Tens of thousands of methods, compiled and some flushed as a JVM warms up,
 * read in one update; every one found, in reasonable time. */
static void test_many(void)
{
	enum { N = 40000 };
	struct str_intern *si = str_intern_new();
	struct tmp t;
	struct jit_syms *js;
	FILE *f;

	tmp_make(&t);
	f = fdopen(dup(t.fd), "w");
	if (!f) {
		perror("fdopen");
		exit(2);
	}
	fputs(HEADER, f);
	for (int i = 0; i < N; i++) {
		uint64_t start = 0x7f0000000000ULL + (uint64_t)i * 0x1000;
		fprintf(f, "%d load %" PRIx64 " %x Lp/M%d;::m\n", 1000 + 2 * i, start, 0x100 + i % 0x700, i);
		/* every 8th method is flushed right after the next one is compiled */
		if (i % 8 == 1)
			fprintf(f, "%d unload %" PRIx64 " %x\n", 1001 + 2 * i, start - 0x1000, 0x100 + (i - 1) % 0x700);
	}
	fclose(f);
	js = jit_syms_open(t.path, NULL, si);
	CHECK(js != NULL);
	if (!js) {
		tmp_remove(&t);
		str_intern_free(si);
		return;
	}
	double t0 = now_s();
	CHECK_EQ_INT(jit_syms_update(js), 1 + N + N / 8);
	double took = now_s() - t0;
	CHECK_EQ_INT(jit_syms_count(js), N);
	int bad = 0;
	for (int i = 0; i < N && bad < 5; i++) {
		char want[32];
		uint64_t start = 0x7f0000000000ULL + (uint64_t)i * 0x1000, off = 0;
		uint64_t size = 0x100 + (uint64_t)(i % 0x700);
		snprintf(want, sizeof(want), "Lp/M%d;::m", i);
		const char *a = jit_syms_lookup(js, start, (uint64_t)(1000 + 2 * i), &off);
		const char *b = jit_syms_lookup(js, start + size - 1, UINT64_MAX / 2, NULL);
		const char *c = jit_syms_lookup(js, start + size, (uint64_t)(1000 + 2 * i), NULL);
		int ok = a && strcmp(a, want) == 0 && off == 0 && c == NULL &&
			 (i % 8 == 0 ? b == NULL || strcmp(b, want) == 0 /* see unload.expect */
				       :
				       b && strcmp(b, want) == 0);
		CHECK_MSG(ok, "method %d: \"%s\" \"%s\" \"%s\"", i, check_show(a), check_show(b), check_show(c));
		bad += !ok;
	}
	/* a warmed-up JVM's log, read whole when jflame attaches: well under a
	 * second even under sanitizers (sorting every entry again for each unload
	 * line takes seconds) */
	CHECK_MSG(took < 1.0, "reading %d loads with %d unloads interleaved took %.2f s", N, N / 8, took);
	fprintf(stderr, "test_many: read %d loads and %d unloads in %.3f s\n", N, N / 8, took);
	jit_syms_free(js);
	tmp_remove(&t);
	str_intern_free(si);
}

/* ---- unescaping --------------------------------------------------------- */

int main(void)
{
	test_golden();
	test_open();
	test_incremental();
	test_rewritten_longer();
	test_rewritten_same_size();
	test_incremental_map();
	test_many();
	return check_report("test_jit_syms");
}
