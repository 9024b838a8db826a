/* tmp_file.h - creating and replacing files in a shared, world-writable /tmp safely:
 * never through a symlink, never over another user's file, whole lines only. */
#ifndef JFLAME_TMP_FILE_H
#define JFLAME_TMP_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Opens path for appending, creating it (mode 0644) if needed. Refuses a
 * symlink, anything but a regular file, a file with several links and a file
 * owned by another user than the effective uid. When truncate is set an
 * existing file of ours is emptied. Returns an fd, or -1 with a one-line
 * reason (naming path and the fix) in err. */
int tmp_file_open_append(const char *path, int truncate, char *err, size_t errlen);

/* Opens our own file at path for reading: never a link, FIFO, device, a
 * file with other hard links or another user's. fd, or -1 with err. */
int tmp_file_open_read(const char *path, char *err, size_t errlen);

/* Writes all of buf with one write() on an O_APPEND fd, retrying only the
 * remainder after a short write; 0 on success, -1 with errno set. */
int tmp_file_write_all(int fd, const void *buf, size_t len);

/* A private temporary file next to path (path.XXXXXX, mode 0600) that the
 * caller fills and renames over path: refuses when path is something other
 * than a regular file of ours (a symbolic link is allowed, to be replaced,
 * when replace_symlink is set). The fd, with its name in tmp; or -1 with err. */
int tmp_file_beside(const char *path, bool replace_symlink, char *tmp, size_t tmplen, char *err, size_t errlen);

/* Atomically replaces path with the given contents: writes a private
 * temporary file next to it, then renames it over path. Refuses when path is
 * something other than a regular file of ours. 0 or -1 with err set. */
int tmp_file_replace(const char *path, const void *buf, size_t len, char *err, size_t errlen);

#endif
