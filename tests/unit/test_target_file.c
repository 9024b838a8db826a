/* test_target_file.c - unit tests for the one opener of target files, against a
 * real process chrooted into a scratch root and running as nobody. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "check.h"
#include "target_file.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOBODY 65534
#define OTHER  12345

static char dir[256];
static pid_t child;

static const char *at(const char *name)
{
	static char paths[8][512];
	static int next;
	char *p = paths[next++ % 8];
	snprintf(p, sizeof(paths[0]), "%s/%s", dir, name);
	return p;
}

/* the path of name as jflame names it: through the process's root */
static const char *in_root(const char *name)
{
	static char paths[8][512];
	static int next;
	char *p = paths[next++ % 8];
	snprintf(p, sizeof(paths[0]), "/proc/%d/root/%s", (int)child, name);
	return p;
}

static void put(const char *name, const char *text, uid_t uid, mode_t mode)
{
	int fd = open(at(name), O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) || fchown(fd, uid, uid) != 0 ||
	    fchmod(fd, mode) != 0)
		CHECK_FAIL_("cannot make %s", name);
	if (fd >= 0)
		close(fd);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* opens as flags say; the result (-2 refused, -1 absent, 1 opened) and why */
static int try_open(const char *path, unsigned flags, uint64_t max, char *why)
{
	why[0] = '\0';
	double t0 = now_s();
	int fd = target_file_open(path, flags | TARGET_FILE_QUIET, max, NULL, why, 256);
	CHECK_MSG(now_s() - t0 < 1.0, "%s took %.1f s", path, now_s() - t0);
	if (fd >= 0) {
		close(fd);
		return 1;
	}
	return fd;
}

#define REFUSED(path, flags, max, words)                                                              \
	do {                                                                                          \
		char why_[256];                                                                       \
		int r_ = try_open(path, flags, max, why_);                                            \
		CHECK_MSG(r_ == -2, "%s: expected refused, got %d", path, r_);                        \
		CHECK_MSG(strstr(why_, words) != NULL, "%s: why '%s' lacks '%s'", path, why_, words); \
	} while (0)

static void cases(void)
{
	char why[256];
	/* an ordinary file of the target's */
	CHECK_EQ_INT(try_open(in_root("tmp/perf-1.map"), 0, 1 << 20, why), 1);
	int fd = target_file_open(in_root("tmp/perf-1.map"), TARGET_FILE_WRITE, 1 << 20, NULL, why, sizeof(why));
	CHECK(fd >= 0);
	if (fd >= 0) {
		char buf[16] = "";
		CHECK(read(fd, buf, sizeof(buf)) == 7 && memcmp(buf, "1 2 a.b", 7) == 0);
		CHECK(!(fcntl(fd, F_GETFL) & O_NONBLOCK));
		CHECK((fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR);
		close(fd);
	}
	CHECK_EQ_INT(try_open(in_root("tmp/missing"), 0, 0, why), -1);
	/* what a hostile process plants */
	REFUSED(in_root("tmp/fifo"), 0, 0, "a FIFO");
	REFUSED(in_root("tmp/fifo"), TARGET_FILE_WRITE, 0, "a FIFO");
	REFUSED(in_root("tmp/fifo"), TARGET_FILE_READABLE, 0, "a FIFO");
	REFUSED(in_root("tmp/to-secret"), 0, 0, "symbolic link");
	REFUSED(in_root("tmp/to-zero"), 0, 0, "symbolic link");
	REFUSED(in_root("linkdir/perf-1.map"), 0, 0, "symbolic link");
	REFUSED(in_root("tmp/foreign"), 0, 0, "owned by uid 12345");
	REFUSED(in_root("tmp/rootowned"), 0, 0, "owned by uid 0");
	REFUSED(in_root("tmp/everyone"), 0, 0, "every user may write");
	REFUSED(in_root("tmp/hardlink"), 0, 0, "2 hard links");
	REFUSED(in_root("tmp/sparse"), 0, 512u << 20, "over the limit");
	REFUSED(in_root("tmp"), 0, 0, "a directory");
	/* a file the target reads: links stay inside its root, and it must be
	 * one its user may read (without openat2, links are not followed) */
	if (!target_file_no_openat2) {
		REFUSED(in_root("tmp/to-zero"), TARGET_FILE_READABLE, 0, "character device");
		REFUSED(in_root("tmp/to-secret"), TARGET_FILE_READABLE, 0, "not readable by every user");
		CHECK_EQ_INT(try_open(in_root("tmp/to-hostname"), TARGET_FILE_READABLE, 0, why),
			     -1); /* not the host's */
		CHECK_EQ_INT(try_open(in_root("tmp/to-lib"), TARGET_FILE_READABLE, 0, why), 1);
		CHECK_EQ_INT(try_open(in_root("../../etc/hostname"), TARGET_FILE_READABLE, 0, why), -1);
	} else {
		REFUSED(in_root("tmp/to-zero"), TARGET_FILE_READABLE, 0, "symbolic link");
		REFUSED(in_root("tmp/to-secret"), TARGET_FILE_READABLE, 0, "symbolic link");
		REFUSED(in_root("tmp/to-hostname"), TARGET_FILE_READABLE, 0, "symbolic link");
		REFUSED(in_root("../../etc/hostname"), TARGET_FILE_READABLE, 0, "leaves the process's root");
	}
	CHECK_EQ_INT(try_open(in_root("lib/libx.so"), TARGET_FILE_READABLE, 0, why), 1);
	CHECK_EQ_INT(try_open(in_root("tmp/rootowned"), TARGET_FILE_READABLE, 0, why), 1);
	/* a directory to list */
	fd = target_file_open(in_root("tmp"), TARGET_FILE_DIR, 0, NULL, why, sizeof(why));
	CHECK(fd >= 0);
	if (fd >= 0) {
		DIR *d = fdopendir(fd);
		int n = 0;
		for (struct dirent *e; d && (e = readdir(d));)
			n += strcmp(e->d_name, "perf-1.map") == 0;
		CHECK_EQ_INT(n, 1);
		if (d)
			closedir(d);
	}
	REFUSED(in_root("tmp/perf-1.map"), TARGET_FILE_DIR, 0, "not a directory");
}

static void host_paths(void)
{
	char why[256];
	/* jflame's own files (no /proc/PID/root): its user's or root's, as perf asks */
	CHECK_EQ_INT(try_open(at("tmp/rootowned"), 0, 0, why), 1);
	REFUSED(at("tmp/perf-1.map"), 0, 0, "owned by uid 65534");
	REFUSED(at("tmp/to-secret"), 0, 0, "symbolic link");
	REFUSED(at("tmp/fifo"), 0, 0, "a FIFO");
	/* the mapping itself: /proc/self/map_files names what is mapped */
	char line[512], path[600];
	FILE *f = fopen("/proc/self/maps", "re");
	int opened = 0;
	while (f && !opened && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (strstr(line, "test_target_file") && sscanf(line, "%lx-%lx", &lo, &hi) == 2) {
			snprintf(path, sizeof(path), "/proc/self/map_files/%lx-%lx", lo, hi);
			snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", (int)getpid(), lo, hi);
			opened = try_open(path, 0, 0, why);
		}
	}
	if (f)
		fclose(f);
	CHECK_EQ_INT(opened, 1);
}

static void warn_once(void)
{
	char log[] = "/tmp/jflame-tf-log-XXXXXX";
	int lfd = mkstemp(log), saved = dup(2);
	CHECK(lfd >= 0 && saved >= 0);
	dup2(lfd, 2);
	target_file_reset_warnings();
	for (int i = 0; i < 3; i++)
		CHECK_EQ_INT(target_file_open(in_root("tmp/fifo"), 0, 0, NULL, NULL, 0), -2);
	target_file_warn("/proc/1/root/tmp/x\x1b[31m", "test");
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	char buf[2048] = "";
	ssize_t n = pread(lfd, buf, sizeof(buf) - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	close(lfd);
	unlink(log);
	int lines = 0;
	for (char *p = buf; (p = strstr(p, "jflame: ignored ")); p++)
		lines++;
	CHECK_EQ_INT(lines, 2);
	CHECK(strstr(buf, "/tmp/fifo: it is a FIFO, not a regular file\n") != NULL);
	CHECK(strchr(buf, '\x1b') == NULL);
	CHECK(strstr(buf, "x\\x1b[31m: test") != NULL);
}

int main(void)
{
	int ready[2];
	if (geteuid() != 0) {
		fprintf(stderr, "test_target_file: needs root (chroot, chown)\n");
		return getenv("CI") ? 1 : 77;
	}
	snprintf(dir, sizeof(dir), "/tmp/jflame-tf-XXXXXX");
	if (!mkdtemp(dir) || chmod(dir, 0755) != 0 || mkdir(at("tmp"), 01777) != 0 || chmod(at("tmp"), 01777) != 0 ||
	    mkdir(at("lib"), 0755) != 0 || mkdir(at("dev"), 0755) != 0 || pipe(ready) != 0) {
		perror("setup");
		return 1;
	}
	put("tmp/perf-1.map", "1 2 a.b", NOBODY, 0644);
	put("tmp/foreign", "state=running\n", OTHER, 0644);
	put("tmp/rootowned", "1 2 Fake.method\n", 0, 0644);
	put("tmp/everyone", "1 2 a.b\n", NOBODY, 0666);
	put("tmp/hardlink", "1 2 a.b\n", NOBODY, 0644);
	put("secret", "CANARY\n", 0, 0600);
	put("lib/libx.so", "not really ELF\n", 0, 0644);
	CHECK(link(at("tmp/hardlink"), at("hardlink2")) == 0);
	CHECK(mkfifo(at("tmp/fifo"), 0644) == 0 && chown(at("tmp/fifo"), NOBODY, NOBODY) == 0);
	CHECK(symlink("/secret", at("tmp/to-secret")) == 0);
	CHECK(symlink("/dev/zero", at("tmp/to-zero")) == 0);
	CHECK(mknod(at("dev/zero"), S_IFCHR | 0666, makedev(1, 5)) == 0); /* the root's own /dev/zero */
	CHECK(symlink("/etc/hostname", at("tmp/to-hostname")) == 0);
	CHECK(symlink("../lib/libx.so", at("tmp/to-lib")) == 0);
	CHECK(symlink("tmp", at("linkdir")) == 0);
	int sfd = open(at("tmp/sparse"), O_WRONLY | O_CREAT, 0644);
	CHECK(sfd >= 0 && ftruncate(sfd, 1LL << 30) == 0 && fchown(sfd, NOBODY, NOBODY) == 0);
	if (sfd >= 0)
		close(sfd);

	child = fork();
	if (child == 0) {
		if (chroot(dir) != 0 || chdir("/") != 0 || setresgid(NOBODY, NOBODY, NOBODY) != 0 ||
		    setresuid(NOBODY, NOBODY, NOBODY) != 0)
			_exit(1);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	char c;
	CHECK(child > 0 && read(ready[0], &c, 1) == 1);

	cases();
	target_file_no_openat2 = true; /* as on kernels before 5.6 */
	cases();
	host_paths();
	target_file_no_openat2 = false;
	warn_once();

	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	/* nothing planted was changed */
	struct stat st;
	CHECK(lstat(at("tmp/fifo"), &st) == 0 && S_ISFIFO(st.st_mode));
	CHECK(lstat(at("tmp/perf-1.map"), &st) == 0 && st.st_size == 7);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return check_report("test_target_file");
}
