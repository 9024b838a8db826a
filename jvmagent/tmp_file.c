/* tmp_file.c - safe creation, appending and atomic replacement of files in /tmp.
 * O_NOFOLLOW plus fstat checks: no symlinks, no hard links, no foreign owners. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "tmp_file.h"
#include "glibc_compat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int check_ours(int fd, const char *path, char *err, size_t errlen)
{
	struct stat st;
	if (compat_fstat(fd, &st) != 0) {
		snprintf(err, errlen, "failed to stat %s: %s", path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "refusing %s: not a regular file; remove it", path);
		return -1;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, errlen, "refusing %s: owned by uid %u, not by us (uid %u); remove it or run as its owner",
			 path, (unsigned)st.st_uid, (unsigned)geteuid());
		return -1;
	}
	if (st.st_nlink > 1) {
		snprintf(err, errlen, "refusing %s: it has %lu hard links; remove it", path,
			 (unsigned long)st.st_nlink);
		return -1;
	}
	return 0;
}

int tmp_file_open_append(const char *path, int truncate, char *err, size_t errlen)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
	if (fd < 0) {
		if (errno == ELOOP)
			snprintf(err, errlen, "refusing %s: it is a symbolic link; remove it", path);
		else if (errno == EISDIR || errno == ENXIO)
			snprintf(err, errlen, "refusing %s: not a regular file; remove it", path);
		else
			snprintf(err, errlen, "failed to open %s: %s", path, strerror(errno));
		return -1;
	}
	if (check_ours(fd, path, err, errlen) != 0)
		goto fail;
	if (truncate && ftruncate(fd, 0) != 0) {
		snprintf(err, errlen, "failed to truncate %s: %s", path, strerror(errno));
		goto fail;
	}
	/* Back to blocking writes now that a FIFO could not have blocked the open. */
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
		snprintf(err, errlen, "failed to set flags on %s: %s", path, strerror(errno));
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

int tmp_file_open_read(const char *path, char *err, size_t errlen)
{
	/* O_NONBLOCK: a FIFO planted at the path never holds the JVM's thread */
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "failed to open %s: %s", path, strerror(errno));
		return -1;
	}
	int fl = fcntl(fd, F_GETFL);
	if (check_ours(fd, path, err, errlen) != 0 || fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int tmp_file_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int tmp_file_beside(const char *path, bool replace_symlink, char *tmp, size_t tmplen, char *err, size_t errlen)
{
	struct stat st;
	if (compat_lstat(path, &st) == 0) {
		bool link = S_ISLNK(st.st_mode);
		if ((link && !replace_symlink) || (!link && !S_ISREG(st.st_mode)) || st.st_uid != geteuid()) {
			snprintf(err, errlen, "refusing %s: %s; remove it", path,
				 link && !replace_symlink      ? "it is a symbolic link" :
				 !link && !S_ISREG(st.st_mode) ? "not a regular file" :
								 "owned by another user");
			return -1;
		}
	} else if (errno != ENOENT) {
		snprintf(err, errlen, "failed to stat %s: %s", path, strerror(errno));
		return -1;
	}
	if ((size_t)snprintf(tmp, tmplen, "%s.XXXXXX", path) >= tmplen) {
		snprintf(err, errlen, "path too long: %s", path);
		return -1;
	}
	int fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		snprintf(err, errlen, "failed to create %s: %s", tmp, strerror(errno));
	return fd;
}

int tmp_file_replace(const char *path, const void *buf, size_t len, char *err, size_t errlen)
{
	char tmp[4096];
	int rc = -1;
	int fd = tmp_file_beside(path, false, tmp, sizeof(tmp), err, errlen);
	if (fd < 0)
		return -1;
	if (fchmod(fd, 0644) != 0 || tmp_file_write_all(fd, buf, len) != 0) {
		snprintf(err, errlen, "failed to write %s: %s", tmp, strerror(errno));
		goto out;
	}
	if (rename(tmp, path) != 0) {
		snprintf(err, errlen, "failed to rename %s to %s: %s", tmp, path, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	close(fd);
	if (rc != 0)
		unlink(tmp);
	return rc;
}
