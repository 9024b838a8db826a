/* input_file.h - reads a whole input (a file or standard input, plain or gzip)
 * into memory, and inflates gzip data already in memory, with a size limit. */
#ifndef JFLAME_INPUT_FILE_H
#define JFLAME_INPUT_FILE_H

#include <stdbool.h>
#include <stddef.h>

/* The most any reader takes into memory, after decompression: a small gzip
 * file can unpack to a thousand times its size. */
#define INPUT_MAX_BYTES ((size_t)4 << 30)
/* ... and of gzip data, unpacked: a 2 MB gzip bomb unpacks to 2 GB. A larger
 * profile can be given unpacked. */
#define INPUT_MAX_GZIP ((size_t)1 << 30)

/* Whether p[0..n) starts with gzip's magic bytes. */
bool input_is_gzip(const void *p, size_t n);
/* Reads path ("-" for standard input), gunzipping gzip data, into a malloc'd
 * buffer with a NUL after its len bytes. At most max bytes (0: INPUT_MAX_BYTES,
 * INPUT_MAX_GZIP unpacked for gzip data).
 * 0, or -1 with one line in err (unreadable, truncated gzip, too large). */
int input_file_read(const char *path, size_t max, char **buf, size_t *len, char *err, size_t errlen);
/* Inflates the gzip data in[0..n) (one or more members) into a malloc'd buffer
 * with a NUL after its len bytes, at most max (0: INPUT_MAX_GZIP); name is
 * for messages. 0, or -1 with err. */
int input_gunzip(const void *in, size_t n, size_t max, const char *name, char **buf, size_t *len, char *err,
		 size_t errlen);

#endif
