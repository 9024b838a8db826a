/* hsperf.c - a reader for HotSpot's hsperfdata format 2.0: a prologue (magic
 * 0xcafec0c0, byte order, entry offset and count) and self-describing entries. */
#include "hsperf.h"
#include "target_file.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HSPERF_MAX_FILE	 (64u << 20)
#define HSPERF_MAX_USERS 256 /* hsperfdata_<user> directories looked into, at most */

static uint32_t get32(const unsigned char *p, int little)
{
	return little ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24 :
			(uint32_t)p[3] | (uint32_t)p[2] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[0] << 24;
}

static int64_t get64(const unsigned char *p, int little)
{
	uint64_t lo = get32(p, little), hi = get32(p + 4, little);
	return (int64_t)(little ? hi << 32 | lo : lo << 32 | hi);
}

/* The entry called name: its type, data and length. 0, or -1 when absent. */
static int find_entry(const unsigned char *buf, size_t len, const char *name, char *type, const unsigned char **data,
		      size_t *size_out, int *little_out)
{
	/* prologue: magic[4] byte_order major minor accessible used[4] overflow[4]
	 * mod_time[8] entry_offset[4] num_entries[4] */
	if (len < 32 || buf[0] != 0xca || buf[1] != 0xfe || buf[2] != 0xc0 || buf[3] != 0xc0 || buf[5] != 2)
		return -1;
	int little = buf[4] == 1;
	size_t off = get32(buf + 24, little), n = get32(buf + 28, little), name_len = strlen(name);
	for (size_t i = 0; i < n && off <= len && len - off >= 20; i++) {
		/* entry: length[4] name_offset[4] vector_length[4] type flags units variability data_offset[4] */
		size_t elen = get32(buf + off, little), noff = get32(buf + off + 4, little);
		size_t vlen = get32(buf + off + 8, little), doff = get32(buf + off + 16, little);
		if (elen < 20 || elen > len - off)
			return -1;
		if (noff < elen && elen - noff > name_len && memcmp(buf + off + noff, name, name_len) == 0 &&
		    buf[off + noff + name_len] == '\0') {
			*type = (char)buf[off + 12];
			/* a scalar has vector_length 0: its size comes from the type */
			size_t size = *type == 'B' ? vlen : *type == 'J' ? 8 : 0;
			if (doff > elen || size > elen - doff)
				return -1;
			*data = buf + off + doff;
			*size_out = size;
			*little_out = little;
			return 0;
		}
		off += elen;
	}
	return -1;
}

int hsperf_find_string(const unsigned char *buf, size_t len, const char *name, char *out, size_t outlen)
{
	const unsigned char *v;
	size_t vlen, k = 0;
	char type;
	int little;
	if (outlen == 0 || find_entry(buf, len, name, &type, &v, &vlen, &little) != 0 || type != 'B')
		return -1;
	while (k < vlen && v[k] && k + 1 < outlen) {
		out[k] = (char)v[k];
		k++;
	}
	out[k] = '\0';
	return 0;
}

int hsperf_find_long(const unsigned char *buf, size_t len, const char *name, int64_t *out)
{
	const unsigned char *v;
	size_t vlen;
	char type;
	int little;
	if (find_entry(buf, len, name, &type, &v, &vlen, &little) != 0 || type != 'J' || vlen != 8)
		return -1;
	*out = get64(v, little);
	return 0;
}

/* A JVM's hsperfdata file: through target_file (the process's user's regular
 * file, no link, FIFO or device, at most HSPERF_MAX_FILE bytes). Its contents
 * in *buf; the file stays open in *fdp when fdp is given. */
static int read_file(const char *path, unsigned char **buf, size_t *len, int *fdp)
{
	struct stat st;
	int rc = -1, fd = target_file_open(path, 0, HSPERF_MAX_FILE, &st, NULL, 0);
	*buf = NULL;
	if (fd < 0)
		return -1;
	if (st.st_size <= 0)
		goto out;
	*buf = malloc((size_t)st.st_size);
	if (!*buf)
		goto out;
	ssize_t got = pread(fd, *buf, (size_t)st.st_size, 0);
	if (got <= 0) {
		free(*buf);
		*buf = NULL;
		goto out;
	}
	*len = (size_t)got;
	rc = 0;
	if (fdp) {
		*fdp = fd;
		fd = -1;
	}
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

/* The hsperfdata image of process pid: any user's hsperfdata_<user>/<nspid> in
 * its /tmp (the file kept open in *fdp when fdp is given). */
static int read_image(pid_t pid, pid_t nspid, unsigned char **image, size_t *image_len, int *fdp)
{
	char dir[64], path[PATH_MAX];
	int rc = -1;
	snprintf(dir, sizeof(dir), "/proc/%d/root/tmp", (int)pid);
	int dfd = target_file_open(dir, TARGET_FILE_DIR, 0, NULL, NULL, 0);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return -1;
	}
	/* a /tmp is looked through for at most HSPERF_MAX_USERS users' directories */
	int users = 0;
	for (struct dirent *e; rc != 0 && users < HSPERF_MAX_USERS && (e = readdir(d));) {
		unsigned char *buf;
		size_t len;
		if (strncmp(e->d_name, "hsperfdata_", 11) != 0)
			continue;
		users++;
		snprintf(path, sizeof(path), "%s/%s/%d", dir, e->d_name, (int)nspid);
		if (read_file(path, &buf, &len, fdp) != 0)
			continue;
		*image = buf;
		*image_len = len;
		rc = 0;
	}
	closedir(d);
	return rc;
}

int hsperf_read_string(pid_t pid, pid_t nspid, const char *name, char *out, size_t outlen)
{
	unsigned char *buf;
	size_t len;
	if (read_image(pid, nspid, &buf, &len, NULL) != 0)
		return -1;
	int rc = hsperf_find_string(buf, len, name, out, outlen);
	free(buf);
	return rc;
}

int hsperf_read_long(pid_t pid, pid_t nspid, const char *name, int64_t *out)
{
	unsigned char *buf;
	size_t len;
	if (read_image(pid, nspid, &buf, &len, NULL) != 0)
		return -1;
	int rc = hsperf_find_long(buf, len, name, out);
	free(buf);
	return rc;
}

int hsperf_counter_open(struct hsperf_counter *c, pid_t pid, pid_t nspid, const char *name)
{
	unsigned char *buf;
	const unsigned char *v;
	size_t len, vlen;
	char type;
	int little, fd = -1;
	c->fd = -1;
	if (read_image(pid, nspid, &buf, &len, &fd) != 0)
		return -1;
	if (find_entry(buf, len, name, &type, &v, &vlen, &little) == 0 && type == 'J' && vlen == 8) {
		c->fd = fd;
		c->off = (off_t)(v - buf);
		c->little = little;
		fd = -1;
	}
	free(buf);
	if (fd >= 0)
		close(fd);
	return c->fd >= 0 ? 0 : -1;
}

int hsperf_counter_read(const struct hsperf_counter *c, int64_t *out)
{
	unsigned char v[8];
	if (c->fd < 0 || pread(c->fd, v, sizeof(v), c->off) != (ssize_t)sizeof(v))
		return -1;
	*out = get64(v, c->little);
	return 0;
}

void hsperf_counter_close(struct hsperf_counter *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}
