/* test_tmp_file.c - unit tests for safe /tmp files, run in a private mkdtemp
 * directory: append, truncate, refusals (symlink, FIFO, links, owner), replace. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "check.h"
#include "tmp_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[256];

static const char *at(const char *name)
{
	static char paths[8][512];
	static int next;
	char *p = paths[next++ % 8];
	snprintf(p, sizeof(paths[0]), "%s/%s", dir, name);
	return p;
}

/* The whole file, NUL-terminated, in a static buffer; "(missing)" if absent. */
static const char *slurp(const char *path)
{
	static char buf[65536];
	int fd = open(path, O_RDONLY | O_NOFOLLOW);
	if (fd < 0)
		return "(missing)";
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static void spit(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, s, strlen(s)) != (ssize_t)strlen(s)) {
		perror(path);
		exit(2);
	}
	close(fd);
}

/* The number of entries in dir; *with_prefix gets how many start with prefix. */
static int entries(const char *prefix, int *with_prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	*with_prefix = 0;
	while (d && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		n++;
		*with_prefix += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
	}
	if (d)
		closedir(d);
	return n;
}

static void clean_dir(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		const char *p = at(e->d_name);
		if (unlink(p) != 0)
			rmdir(p);
	}
	if (d)
		closedir(d);
}

static void test_create_append(void)
{
	const char *p = at("perf-1.map");
	char err[512] = "";
	struct stat st;

	int fd = tmp_file_open_append(p, 0, err, sizeof(err));
	CHECK_MSG(fd >= 0, "%s", err);
	if (fd < 0)
		return;
	CHECK(lstat(p, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0644);
	int fl = fcntl(fd, F_GETFL);
	CHECK(fl >= 0 && (fl & O_APPEND) && !(fl & O_NONBLOCK) && (fl & O_ACCMODE) == O_WRONLY);
	CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	CHECK_EQ_INT(tmp_file_write_all(fd, "1000 10 a\n", 10), 0);
	close(fd);

	fd = tmp_file_open_append(p, 0, err, sizeof(err));
	CHECK_MSG(fd >= 0, "%s", err);
	/* appends even if someone moved the offset */
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	CHECK_EQ_INT(tmp_file_write_all(fd, "2000 20 b\n", 10), 0);
	close(fd);
	CHECK_EQ_STR(slurp(p), "1000 10 a\n2000 20 b\n");
}

static void test_truncate(void)
{
	const char *p = at("perf-2.map");
	char err[512] = "";

	spit(p, "stale lines from a previous JVM with this pid\n");
	int fd = tmp_file_open_append(p, 1, err, sizeof(err));
	CHECK_MSG(fd >= 0, "%s", err);
	if (fd < 0)
		return;
	CHECK_EQ_STR(slurp(p), "");
	CHECK_EQ_INT(tmp_file_write_all(fd, "new\n", 4), 0);
	close(fd);
	CHECK_EQ_STR(slurp(p), "new\n");
	/* truncate on a new file is fine too */
	fd = tmp_file_open_append(at("perf-3.map"), 1, err, sizeof(err));
	CHECK_MSG(fd >= 0, "%s", err);
	close(fd);
}

static void test_write_all(void)
{
	const char *p = at("big.map");
	char err[512] = "";
	size_t len = 3 << 20;
	char *big = malloc(len);
	struct stat st;

	for (size_t i = 0; i < len; i++)
		big[i] = (i % 64 == 63) ? '\n' : (char)('a' + i % 26);
	int fd = tmp_file_open_append(p, 1, err, sizeof(err));
	CHECK_MSG(fd >= 0, "%s", err);
	CHECK_EQ_INT(tmp_file_write_all(fd, big, len), 0);
	CHECK_EQ_INT(tmp_file_write_all(fd, big, 0), 0);
	close(fd);
	CHECK(stat(p, &st) == 0 && (size_t)st.st_size == len);
	free(big);
	errno = 0;
	CHECK_EQ_INT(tmp_file_write_all(-1, "x", 1), -1);
	CHECK_EQ_INT(errno, EBADF);
}

static void test_symlink(void)
{
	const char *target = at("victim"), *link = at("perf-4.map"), *dangling = at("perf-5.map");
	char err[512] = "";

	spit(target, "precious\n");
	CHECK(symlink(target, link) == 0);
	CHECK_EQ_INT(tmp_file_open_append(link, 1, err, sizeof(err)), -1);
	CHECK_HAS_STR(err, "symbolic link");
	CHECK_HAS_STR(err, link);
	CHECK_EQ_STR(slurp(target), "precious\n");

	/* a dangling link must not create its target */
	err[0] = '\0';
	CHECK(symlink(at("created-through-link"), dangling) == 0);
	CHECK_EQ_INT(tmp_file_open_append(dangling, 0, err, sizeof(err)), -1);
	CHECK_HAS_STR(err, "symbolic link");
	CHECK(access(at("created-through-link"), F_OK) != 0);
}

static void test_not_regular(void)
{
	const char *d = at("perf-6.map"), *fifo = at("perf-7.map");
	char err[512] = "";

	CHECK(mkdir(d, 0755) == 0);
	CHECK_EQ_INT(tmp_file_open_append(d, 0, err, sizeof(err)), -1);
	CHECK_HAS_STR(err, d);
	CHECK(strchr(err, '\n') == NULL);

	/* a FIFO nobody reads: refused at once, not blocked on (the alarm kills
	 * the test if it blocks) */
	CHECK(mkfifo(fifo, 0644) == 0);
	alarm(20);
	err[0] = '\0';
	CHECK_EQ_INT(tmp_file_open_append(fifo, 0, err, sizeof(err)), -1);
	CHECK_HAS_STR(err, fifo);
	/* and one with a reader, so the open itself succeeds */
	int rd = open(fifo, O_RDONLY | O_NONBLOCK);
	CHECK(rd >= 0);
	err[0] = '\0';
	CHECK_EQ_INT(tmp_file_open_append(fifo, 1, err, sizeof(err)), -1);
	CHECK_HAS_STR(err, "not a regular file");
	close(rd);
	alarm(0);
}

static void test_hard_links(void)
{
	const char *a = at("perf-8.map"), *b = at("other-name");
	char err[512] = "";

	spit(a, "x\n");
	CHECK(link(a, b) == 0);
	CHECK_EQ_INT(tmp_file_open_append(a, 1, err, sizeof(err)), -1);
	CHECK_HAS_STR(err, "2 hard links");
	CHECK_EQ_STR(slurp(b), "x\n"); /* not truncated through the other name */
}

/* A file owned by another user (uid 65534, nobody): needs root to make one. */
static void test_foreign_owner(void)
{
	const char *p = at("perf-9.map"), *q = at("jflame-9.status");
	char err[512] = "";

	if (geteuid() != 0) {
		if (getenv("CI") && *getenv("CI")) {
			CHECK_MSG(0, "CI is set but not running as root: cannot test refusing another user's file");
		} else {
			printf("tmp_file: skipping the foreign-owner checks (not root, CI not set)\n");
		}
		return;
	}
	spit(p, "theirs\n");
	CHECK(chown(p, 65534, 65534) == 0);
	CHECK_EQ_INT(tmp_file_open_append(p, 1, err, sizeof(err)), -1);
	CHECK_HAS_STR(err, "owned by");
	CHECK_EQ_STR(slurp(p), "theirs\n");

	spit(q, "theirs\n");
	CHECK(chown(q, 65534, 65534) == 0);
	err[0] = '\0';
	CHECK_EQ_INT(tmp_file_replace(q, "ours\n", 5, err, sizeof(err)), -1);
	CHECK_HAS_STR(err, "owned by");
	CHECK_EQ_STR(slurp(q), "theirs\n");
}

static void test_replace(void)
{
	const char *p = at("jflame-1.status");
	char err[512] = "";
	struct stat st1, st2;
	int tmps;

	CHECK_MSG(tmp_file_replace(p, "format=1\n", 9, err, sizeof(err)) == 0, "%s", err);
	CHECK_EQ_STR(slurp(p), "format=1\n");
	CHECK(lstat(p, &st1) == 0 && S_ISREG(st1.st_mode) && (st1.st_mode & 07777) == 0644 && st1.st_nlink == 1);
	/* a reader holding the old file keeps the old contents: it was replaced, not rewritten */
	int old = open(p, O_RDONLY);
	CHECK_MSG(tmp_file_replace(p, "format=1\nstate=running\n", 23, err, sizeof(err)) == 0, "%s", err);
	CHECK_EQ_STR(slurp(p), "format=1\nstate=running\n");
	char buf[32] = "";
	CHECK(read(old, buf, sizeof(buf) - 1) == 9);
	CHECK_EQ_STR(buf, "format=1\n");
	close(old);
	CHECK(lstat(p, &st2) == 0 && st2.st_ino != st1.st_ino);
	/* shorter contents leave nothing of the old; empty is allowed */
	CHECK_MSG(tmp_file_replace(p, "x", 1, err, sizeof(err)) == 0, "%s", err);
	CHECK_EQ_STR(slurp(p), "x");
	CHECK_MSG(tmp_file_replace(p, "", 0, err, sizeof(err)) == 0, "%s", err);
	CHECK_EQ_STR(slurp(p), "");
	entries("jflame-1.status.", &tmps);
	CHECK_EQ_INT(tmps, 0);
}

static void test_replace_refusals(void)
{
	const char *target = at("victim2"), *link = at("jflame-2.status"), *d = at("jflame-3.status");
	char err[512] = "";
	int before, after, tmps;

	spit(target, "precious\n");
	CHECK(symlink(target, link) == 0);
	before = entries("jflame-", &tmps);
	CHECK_EQ_INT(tmp_file_replace(link, "x\n", 2, err, sizeof(err)), -1);
	CHECK_HAS_STR(err, "symbolic link");
	CHECK_HAS_STR(err, link);
	CHECK_EQ_STR(slurp(target), "precious\n");
	struct stat st;
	CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));

	CHECK(mkdir(d, 0755) == 0);
	err[0] = '\0';
	CHECK_EQ_INT(tmp_file_replace(d, "x\n", 2, err, sizeof(err)), -1);
	CHECK_HAS_STR(err, "not a regular file");

	/* a directory that does not exist: fails, leaves nothing */
	err[0] = '\0';
	CHECK_EQ_INT(tmp_file_replace(at("no-such-dir/jflame-4.status"), "x\n", 2, err, sizeof(err)), -1);
	CHECK(err[0] != '\0');

	after = entries("jflame-", &tmps);
	CHECK_EQ_INT(after, before + 1); /* just the directory made above */
	entries("jflame-2.status.", &tmps);
	CHECK_EQ_INT(tmps, 0);
	entries("jflame-3.status.", &tmps);
	CHECK_EQ_INT(tmps, 0);
}

/* Errors fit a short err buffer (truncated, NUL-terminated). */
static void test_short_err(void)
{
	char err[16];

	memset(err, '#', sizeof(err));
	CHECK_EQ_INT(tmp_file_open_append(at("no-such-dir/x"), 0, err, 8), -1);
	CHECK(memchr(err, '\0', 8) != NULL);
	CHECK(check_filled(err + 8, sizeof(err) - 8, '#'));
}

/* Reading our own status file: a FIFO (no writer) is refused at once, a link
 * and another user's file are refused, our own regular file is read. */
static void test_open_read(void)
{
	const char *fifo = at("jflame-20.status"), *link = at("jflame-21.status"), *ok = at("jflame-22.status");
	char err[512] = "", buf[16] = "";

	CHECK(mkfifo(fifo, 0644) == 0);
	alarm(20);
	CHECK_EQ_INT(tmp_file_open_read(fifo, err, sizeof(err)), -1);
	CHECK_HAS_STR(err, "not a regular file");
	alarm(0);
	spit(ok, "state=running\n");
	CHECK(symlink(ok, link) == 0);
	CHECK_EQ_INT(tmp_file_open_read(link, err, sizeof(err)), -1);
	int fd = tmp_file_open_read(ok, err, sizeof(err));
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(read(fd, buf, sizeof(buf) - 1) == 14);
		CHECK(!(fcntl(fd, F_GETFL) & O_NONBLOCK));
		close(fd);
	}
	if (geteuid() == 0) {
		CHECK(chown(ok, 65534, 65534) == 0);
		CHECK_EQ_INT(tmp_file_open_read(ok, err, sizeof(err)), -1);
		CHECK_HAS_STR(err, "owned by");
	}
}

int main(void)
{
	const char *base = getenv("TMPDIR");

	umask(022);
	snprintf(dir, sizeof(dir), "%s/jflame-test-tmp_file-XXXXXX", base && *base ? base : "/tmp");
	if (!mkdtemp(dir)) {
		perror(dir);
		return 2;
	}
	test_create_append();
	test_truncate();
	test_write_all();
	test_symlink();
	test_not_regular();
	test_hard_links();
	test_foreign_owner();
	test_replace();
	test_replace_refusals();
	test_short_err();
	test_open_read();
	clean_dir();
	if (rmdir(dir) != 0)
		perror(dir);
	return check_report("tmp_file");
}
