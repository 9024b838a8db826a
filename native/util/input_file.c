/* input_file.c - whole-input reading for the readers (convert, svg, diff): zlib's gzFile for files
 * and pipes (plain data passes through), inflate() for gzip data in memory. */
#include "input_file.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

bool input_is_gzip(const void *p, size_t n)
{
	const unsigned char *b = p;
	return n >= 2 && b[0] == 0x1f && b[1] == 0x8b;
}

/* Makes room for more bytes after len in *buf (cap grows by doubling, one
 * byte kept for the NUL). 0, or -1 when out of memory. */
static int grow(char **buf, size_t *cap, size_t len, size_t max)
{
	if (len < *cap)
		return 0;
	size_t ncap = *cap ? *cap * 2 : 1u << 16;
	if (ncap > max)
		ncap = max;
	char *b = realloc(*buf, ncap + 1);
	if (!b)
		return -1;
	*buf = b;
	*cap = ncap;
	return 0;
}

int input_file_read(const char *path, size_t max, char **buf, size_t *len, char *err, size_t errlen)
{
	bool stdin_in = strcmp(path, "-") == 0;
	const char *name = stdin_in ? "standard input" : path;
	size_t cap = 0, n = 0;
	char *b = NULL;
	int rc = -1;
	gzFile in;
	bool defaulted = !max;

	if (!max)
		max = INPUT_MAX_BYTES;
	errno = 0;
	in = stdin_in ? gzdopen(0, "rb") : gzopen(path, "rb");
	if (!in) {
		snprintf(err, errlen, "failed to open %s: %s", name, strerror(errno ? errno : ENOMEM));
		return -1;
	}
	gzbuffer(in, 1u << 18);
	if (!gzdirect(in) && max > INPUT_MAX_GZIP && defaulted)
		max = INPUT_MAX_GZIP; /* gzip data: a bomb's unpacked size is capped lower */
	for (;;) {
		if (n == max) {
			/* one more byte tells a file of exactly max bytes from a bigger one */
			char probe;
			if (gzread(in, &probe, 1) > 0) {
				if (gzdirect(in))
					snprintf(err, errlen, "%s is larger than %zu MiB; cut it into parts", name,
						 max >> 20);
				else
					snprintf(err, errlen,
						 "%s unpacks to more than %zu MiB, the limit for gzip input; "
						 "give it unpacked (gunzip -k), or cut it into parts",
						 name, max >> 20);
				goto out;
			}
		} else if (grow(&b, &cap, n, max) != 0) {
			snprintf(err, errlen, "out of memory reading %s", name);
			goto out;
		}
		size_t want = cap - n > (1u << 30) ? (1u << 30) : cap - n;
		int got = want ? gzread(in, b + n, (unsigned)want) : 0;
		int zerr = Z_OK;
		const char *msg = gzerror(in, &zerr);
		if (got < 0 || zerr == Z_BUF_ERROR) {
			if (zerr == Z_BUF_ERROR)
				snprintf(err, errlen, "%s ends in the middle of its gzip data (truncated?)", name);
			else
				snprintf(err, errlen, "failed to read %s: %s%s", name,
					 zerr == Z_ERRNO ? strerror(errno) : msg,
					 zerr == Z_DATA_ERROR ? " (a damaged gzip file?)" : "");
			goto out;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	if (!b && grow(&b, &cap, 0, max) != 0) {
		snprintf(err, errlen, "out of memory reading %s", name);
		goto out;
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	b = NULL;
	rc = 0;
out:
	gzclose(in);
	free(b);
	return rc;
}

int input_gunzip(const void *in, size_t n, size_t max, const char *name, char **buf, size_t *len, char *err,
		 size_t errlen)
{
	z_stream z;
	size_t cap = 0, have = 0, left = n;
	char *b = NULL;
	int rc = -1;

	if (!max)
		max = INPUT_MAX_GZIP;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 15 + 16) != Z_OK) { /* 16: gzip wrapper */
		snprintf(err, errlen, "out of memory reading %s", name);
		return -1;
	}
	z.next_in = (Bytef *)(uintptr_t)in;
	for (;;) {
		if (z.avail_in == 0 && left > 0) {
			z.avail_in = left > (1u << 30) ? (1u << 30) : (unsigned)left;
			left -= z.avail_in;
		}
		if (have == max) {
			snprintf(err, errlen, "%s inflates to more than %zu MiB; cut it into parts", name, max >> 20);
			goto out;
		}
		if (grow(&b, &cap, have, max) != 0) {
			snprintf(err, errlen, "out of memory reading %s", name);
			goto out;
		}
		size_t room = cap - have > (1u << 30) ? (1u << 30) : cap - have;
		z.next_out = (Bytef *)b + have;
		z.avail_out = (unsigned)room;
		int zr = inflate(&z, Z_NO_FLUSH);
		have += room - z.avail_out;
		bool input_done = z.avail_in == 0 && left == 0;
		if (zr == Z_STREAM_END) {
			if (input_done)
				break;
			/* another gzip member follows, as `cat a.gz b.gz` makes */
			if (inflateReset(&z) != Z_OK) {
				snprintf(err, errlen, "out of memory reading %s", name);
				goto out;
			}
			continue;
		}
		if (zr != Z_OK && zr != Z_BUF_ERROR) {
			snprintf(err, errlen, "%s is not valid gzip data (%s)", name, z.msg ? z.msg : "damaged");
			goto out;
		}
		if (input_done && z.avail_out > 0) {
			snprintf(err, errlen, "%s ends in the middle of its gzip data (truncated?)", name);
			goto out;
		}
	}
	b[have] = '\0';
	*buf = b;
	*len = have;
	b = NULL;
	rc = 0;
out:
	inflateEnd(&z);
	free(b);
	return rc;
}
