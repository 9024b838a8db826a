/* target_file.c - opens the files a profiled process controls (its /tmp, perf
 * map, agent files, hsperfdata, ELF files) so that none can block, redirect or feed jflame. */
#include "target_file.h"
#include "str_intern.h"
#include "text_escape.h"
#include "msg.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef FUSE_SUPER_MAGIC
#define FUSE_SUPER_MAGIC 0x65735546
#endif

bool target_file_no_openat2;

enum path_kind { PATH_HOST, PATH_IN_ROOT, PATH_MAP_FILE, PATH_OWN_FD };

struct owner {
	uid_t uid[5];
	size_t n;
	bool root_ok; /* the target runs as root, or the file is jflame's own */
};

/* "/proc/PID/root/REST" and "/proc/PID/map_files/..." name a process. */
static enum path_kind path_kind(const char *path, pid_t *pid, const char **rest)
{
	char *end;
	long n;
	if (strncmp(path, "/proc/self/fd/", 14) == 0)
		return PATH_OWN_FD; /* a file jflame holds open already (a memfd in tests) */
	if (strncmp(path, "/proc/self/", 11) == 0) {
		n = getpid();
		end = (char *)path + 10;
	} else if (strncmp(path, "/proc/", 6) != 0 || path[6] < '1' || path[6] > '9') {
		return PATH_HOST;
	} else {
		n = strtol(path + 6, &end, 10);
	}
	if (n <= 0 || n > INT32_MAX)
		return PATH_HOST;
	*pid = (pid_t)n;
	if (strncmp(end, "/root", 5) == 0 && (end[5] == '/' || end[5] == '\0')) {
		*rest = end[5] ? end + 5 : "/";
		return PATH_IN_ROOT;
	}
	if (strncmp(end, "/map_files/", 11) == 0) {
		*rest = end;
		return PATH_MAP_FILE;
	}
	return PATH_HOST;
}

/* The process's real, effective, saved and file-system uids. */
static int owner_of(pid_t pid, struct owner *o)
{
	char path[64], line[256];
	unsigned long u[4];
	int rc = -1;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "Uid:", 4) == 0 &&
		    sscanf(line + 4, "%lu %lu %lu %lu", &u[0], &u[1], &u[2], &u[3]) == 4) {
			o->n = 0;
			o->root_ok = false;
			for (int i = 0; i < 4; i++) {
				o->uid[o->n++] = (uid_t)u[i];
				if (u[i] == 0)
					o->root_ok = true;
			}
			rc = 0;
			break;
		}
	fclose(f);
	return rc;
}

static bool owned_by(const struct owner *o, uid_t uid)
{
	if (uid == 0)
		return o->root_ok;
	for (size_t i = 0; i < o->n; i++)
		if (o->uid[i] == uid)
			return true;
	return false;
}

/* Resolves rest beneath dirfd one component at a time, never following a
 * link: for kernels without openat2. -1 with errno (ELOOP for a link). */
static int walk_beneath(int dirfd, const char *rest)
{
	char buf[4096], *save = NULL;
	int cur = dup(dirfd), e = 0;
	if (cur < 0)
		return -1;
	if (strlen(rest) >= sizeof(buf)) {
		close(cur);
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(buf, rest);
	for (char *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		struct stat st;
		if (strcmp(c, ".") == 0)
			continue;
		int next = strcmp(c, "..") == 0 ? (errno = EXDEV, -1) : openat(cur, c, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 || fstat(next, &st) != 0) {
			e = errno;
			if (next >= 0)
				close(next);
			break;
		}
		close(cur);
		cur = next;
		if (S_ISLNK(st.st_mode)) {
			e = ELOOP;
			break;
		}
	}
	if (e) {
		close(cur);
		errno = e;
		return -1;
	}
	return cur;
}

/* An O_PATH fd of the file, resolved as its kind and flags say. */
static int resolve(enum path_kind kind, pid_t pid, const char *path, const char *rest, unsigned flags)
{
	bool links = flags & TARGET_FILE_READABLE;
	int dirfd = AT_FDCWD, fd = -1, e;
	if (kind == PATH_MAP_FILE || kind == PATH_OWN_FD)
		return open(path, O_PATH | O_CLOEXEC); /* a kernel link to one file */
	if (kind == PATH_IN_ROOT) {
		char root[64];
		snprintf(root, sizeof(root), "/proc/%d/root", (int)pid);
		dirfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dirfd < 0)
			return -1;
		path = rest;
	}
	if (!target_file_no_openat2) {
		struct open_how how = {
			.flags = O_PATH | O_CLOEXEC | (links ? 0 : O_NOFOLLOW),
			.resolve = RESOLVE_NO_MAGICLINKS | (links ? 0 : RESOLVE_NO_SYMLINKS) |
				   (kind == PATH_IN_ROOT ? RESOLVE_IN_ROOT : 0),
		};
		fd = (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
		if (fd >= 0 || errno != ENOSYS)
			goto out;
		target_file_no_openat2 = true; /* not this kernel's (or emulator's): not asked again */
	}
	if (links && kind == PATH_HOST) {
		fd = open(path, O_PATH | O_CLOEXEC); /* the readable-by-its-user rule protects */
	} else if (kind == PATH_IN_ROOT) {
		fd = walk_beneath(dirfd, path); /* links inside a root are not followed here */
	} else {
		int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		fd = rootfd < 0 ? -1 : walk_beneath(rootfd, path);
		e = errno;
		if (rootfd >= 0)
			close(rootfd);
		errno = e;
	}
out:
	e = errno;
	if (dirfd >= 0)
		close(dirfd);
	errno = e;
	return fd;
}

static const char *kind_name(mode_t m)
{
	return S_ISFIFO(m) ? "a FIFO" :
	       S_ISSOCK(m) ? "a socket" :
	       S_ISCHR(m)  ? "a character device" :
	       S_ISBLK(m)  ? "a block device" :
	       S_ISDIR(m)  ? "a directory" :
	       S_ISLNK(m)  ? "a symbolic link" :
			     "not a regular file";
}

/* Whether st (the file at path, of the given kind) may be used; why when not. */
static bool acceptable(const struct stat *st, int fd, enum path_kind kind, pid_t pid, unsigned flags, uint64_t max_size,
		       char *why, size_t whylen)
{
	struct statfs sfs;
	struct owner o = { .uid = { geteuid() }, .n = 1, .root_ok = true };
	bool dir = flags & TARGET_FILE_DIR;
	if (dir ? !S_ISDIR(st->st_mode) : !S_ISREG(st->st_mode)) {
		snprintf(why, whylen, "it is %s, not a %s", kind_name(st->st_mode), dir ? "directory" : "regular file");
		return false;
	}
	if (fstatfs(fd, &sfs) == 0 && sfs.f_type == FUSE_SUPER_MAGIC) {
		snprintf(why, whylen, "it is on a FUSE file system, whose reads can wait forever");
		return false;
	}
	if (dir) /* a directory is only listed (/tmp is root's, and everyone's to write) */
		return true;
	if (max_size && (uint64_t)st->st_size > max_size) {
		snprintf(why, whylen, "it has %" PRIu64 " bytes, over the limit of %" PRIu64, (uint64_t)st->st_size,
			 max_size);
		return false;
	}
	if (kind == PATH_OWN_FD) /* jflame's own open file */
		return true;
	if ((kind == PATH_IN_ROOT || kind == PATH_MAP_FILE) && owner_of(pid, &o) != 0) {
		snprintf(why, whylen, "the owner of process %d cannot be read", (int)pid);
		return false;
	}
	if (flags & TARGET_FILE_READABLE) {
		if (!owned_by(&o, st->st_uid) && !(st->st_mode & S_IROTH) && !(st->st_uid == 0 && o.root_ok)) {
			snprintf(why, whylen,
				 "owned by uid %u and not readable by every user, so not a file the process's "
				 "user (uid %u) may read",
				 (unsigned)st->st_uid, (unsigned)o.uid[0]);
			return false;
		}
		return true;
	}
	if (!owned_by(&o, st->st_uid)) {
		snprintf(why, whylen, "owned by uid %u, not by the process's user (uid %u)%s", (unsigned)st->st_uid,
			 (unsigned)o.uid[o.n > 1 ? 1 : 0], o.root_ok ? " or root" : "");
		return false;
	}
	if (st->st_nlink != 1) {
		snprintf(why, whylen, "it has %ju hard links", (uintmax_t)st->st_nlink);
		return false;
	}
	if (st->st_mode & S_IWOTH) {
		snprintf(why, whylen, "every user may write it (mode %04o)", (unsigned)(st->st_mode & 07777));
		return false;
	}
	return true;
}

int target_file_open(const char *path, unsigned flags, uint64_t max_size, struct stat *st, char *why, size_t whylen)
{
	char reason[256] = "", self[64];
	struct stat st0, st1;
	pid_t pid = 0;
	const char *rest = path;
	int pfd, fd = -1, rc = -2, e = 0;
	if (!path || path[0] != '/') {
		errno = EINVAL;
		return -1;
	}
	enum path_kind kind = path_kind(path, &pid, &rest);
	if (kind == PATH_MAP_FILE)
		flags |= TARGET_FILE_READABLE;
	if (flags & TARGET_FILE_READABLE)
		flags &= ~TARGET_FILE_WRITE;
	pfd = resolve(kind, pid, path, rest, flags);
	if (pfd < 0) {
		if (errno != ELOOP && errno != EXDEV)
			return -1;
		snprintf(reason, sizeof(reason), "%s",
			 errno == ELOOP ? "a symbolic link is on its path" : "its path leaves the process's root");
		goto refused;
	}
	if (fstat(pfd, &st0) != 0) {
		e = errno;
		close(pfd);
		errno = e;
		return -1;
	}
	if (!acceptable(&st0, pfd, kind, pid, flags, max_size, reason, sizeof(reason)))
		goto refused;
	/* opened for reading only now that it is known to be a regular file (or
	 * directory): a FIFO or device is never opened, so nothing can block */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, (flags & TARGET_FILE_DIR   ? O_RDONLY | O_DIRECTORY :
			 flags & TARGET_FILE_WRITE ? O_RDWR :
						     O_RDONLY) |
				O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		e = errno;
		close(pfd);
		errno = e;
		return -1;
	}
	if (fstat(fd, &st1) != 0 || st1.st_dev != st0.st_dev || st1.st_ino != st0.st_ino ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0) {
		snprintf(reason, sizeof(reason), "it changed while it was opened");
		goto refused;
	}
	close(pfd);
	if (st)
		*st = st1;
	return fd;
refused:
	if (fd >= 0)
		close(fd);
	if (pfd >= 0)
		close(pfd);
	if (why && whylen)
		snprintf(why, whylen, "%s", reason);
	if (!(flags & TARGET_FILE_QUIET))
		target_file_warn(path, reason);
	errno = EPERM;
	return rc;
}

FILE *target_file_fopen(const char *path, unsigned flags, uint64_t max_size, struct stat *st, bool *refused)
{
	int fd = target_file_open(path, flags, max_size, st, NULL, 0);
	if (refused)
		*refused = fd == -2;
	if (fd < 0)
		return NULL;
	FILE *f = fdopen(fd, flags & TARGET_FILE_WRITE ? "r+e" : "re");
	if (!f)
		close(fd);
	return f;
}

int target_file_recheck(int fd, uint64_t max_size, char *why, size_t whylen)
{
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		snprintf(why, whylen, "it is no longer a regular file");
		return -2;
	}
	if (max_size && (uint64_t)st.st_size > max_size) {
		snprintf(why, whylen, "it has grown to %" PRIu64 " bytes, over the limit of %" PRIu64,
			 (uint64_t)st.st_size, max_size);
		return -2;
	}
	return 0;
}

/* ---- warnings, once per path ----------------------------------------------- */

#define WARN_SLOTS 4096
static pthread_mutex_t warn_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t warned[WARN_SLOTS];
static size_t nwarned;

/* true the first time path is seen (and while the table has room) */
static bool first_time(const char *path)
{
	uint64_t h = str_hash(path, strlen(path));
	h = h ? h : 1; /* 0 marks an empty slot */
	bool first = false;
	pthread_mutex_lock(&warn_lock);
	if (nwarned < WARN_SLOTS / 2) {
		size_t i = h & (WARN_SLOTS - 1);
		while (warned[i] && warned[i] != h)
			i = (i + 1) & (WARN_SLOTS - 1);
		if (!warned[i]) {
			warned[i] = h;
			nwarned++;
			first = true;
		}
	}
	pthread_mutex_unlock(&warn_lock);
	return first;
}

void target_file_warn(const char *path, const char *why)
{
	char safe[1024];
	if (!first_time(path))
		return;
	/* the path's tail can come from the target (its maps): target text is data */
	text_escape(safe, sizeof(safe), path, strlen(path));
	msg_say("ignored %s: %s\n", safe, why);
}

void target_file_reset_warnings(void)
{
	pthread_mutex_lock(&warn_lock);
	memset(warned, 0, sizeof(warned));
	nwarned = 0;
	pthread_mutex_unlock(&warn_lock);
}
