/* test_hsperf.c - reading a JVM's hsperfdata counters from its /tmp: one value
 * at a time, and a counter kept open and read again as the JVM updates it. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "hsperf.h"

#define DIR_PATH "/tmp/hsperfdata_jflame-unit-test"

static void put32(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

/* One entry: header (20 bytes), name, padding to 8, data. Returns its length;
 * *data_at is where its data begins in the image. */
static size_t entry(unsigned char *p, size_t at, const char *name, char type, const void *data, size_t len,
		    size_t *data_at)
{
	size_t noff = 20, nlen = strlen(name) + 1, doff = (noff + nlen + 7) & ~(size_t)7, elen = doff + len;
	elen = (elen + 7) & ~(size_t)7;
	memset(p + at, 0, elen);
	put32(p + at, (uint32_t)elen);
	put32(p + at + 4, (uint32_t)noff);
	put32(p + at + 8, type == 'B' ? (uint32_t)len : 0);
	p[at + 12] = (unsigned char)type;
	put32(p + at + 16, (uint32_t)doff);
	memcpy(p + at + noff, name, nlen);
	memcpy(p + at + doff, data, len);
	*data_at = at + doff;
	return elen;
}

/* A little-endian hsperfdata 2.0 image with a string and a long counter. */
static size_t image(unsigned char *p, int64_t unloaded, size_t *value_at)
{
	unsigned char v[8];
	size_t at = 32, skip;
	memset(p, 0, 32);
	p[0] = 0xca, p[1] = 0xfe, p[2] = 0xc0, p[3] = 0xc0;
	p[4] = 1; /* little-endian */
	p[5] = 2; /* major */
	p[7] = 1; /* accessible */
	put32(p + 24, 32);
	put32(p + 28, 2);
	at += entry(p, at, "sun.rt.jvmCapabilities", 'B', "1000000000", 11, &skip);
	put64(v, (uint64_t)unloaded);
	at += entry(p, at, "java.cls.unloadedClasses", 'J', v, 8, value_at);
	put32(p + 8, (uint32_t)at); /* used */
	return at;
}

int main(void)
{
	char path[128], s[64];
	unsigned char buf[512];
	size_t value_at;
	pid_t pid = getpid();
	int64_t v = -1;
	struct hsperf_counter c;

	mkdir(DIR_PATH, 0755);
	snprintf(path, sizeof(path), "%s/%d", DIR_PATH, (int)pid);
	size_t len = image(buf, 5, &value_at);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0);
	if (fd < 0)
		return check_report("test_hsperf");
	CHECK(pwrite(fd, buf, len, 0) == (ssize_t)len);

	/* read once, as attach does */
	CHECK_EQ_INT(hsperf_read_string(pid, pid, "sun.rt.jvmCapabilities", s, sizeof(s)), 0);
	CHECK_EQ_STR(s, "1000000000");
	CHECK_EQ_INT(hsperf_read_long(pid, pid, "java.cls.unloadedClasses", &v), 0);
	CHECK_EQ_INT(v, 5);
	CHECK_EQ_INT(hsperf_read_long(pid, pid, "sun.rt.jvmCapabilities", &v), -1); /* not a long */

	/* kept open: each read sees the JVM's updates in place */
	CHECK_EQ_INT(hsperf_counter_open(&c, pid, pid, "java.cls.unloadedClasses"), 0);
	CHECK_EQ_INT(hsperf_counter_read(&c, &v), 0);
	CHECK_EQ_INT(v, 5);
	unsigned char nv[8];
	put64(nv, 123456789012LL);
	CHECK(pwrite(fd, nv, 8, (off_t)value_at) == 8);
	CHECK_EQ_INT(hsperf_counter_read(&c, &v), 0);
	CHECK(v == 123456789012LL);

	/* the JVM exits and removes its file: the last value stays readable */
	unlink(path);
	CHECK_EQ_INT(hsperf_counter_read(&c, &v), 0);
	CHECK(v == 123456789012LL);
	/* cut short under the counter: read fails, not a stale or partial value */
	CHECK(ftruncate(fd, (off_t)value_at + 4) == 0);
	CHECK_EQ_INT(hsperf_counter_read(&c, &v), -1);
	hsperf_counter_close(&c);
	CHECK_EQ_INT(c.fd, -1);
	CHECK_EQ_INT(hsperf_counter_read(&c, &v), -1);
	close(fd);

	/* no file, or no such counter: -1 and nothing open */
	CHECK_EQ_INT(hsperf_counter_open(&c, pid, pid, "java.cls.unloadedClasses"), -1);
	CHECK_EQ_INT(c.fd, -1);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && pwrite(fd, buf, len, 0) == (ssize_t)len);
	CHECK_EQ_INT(hsperf_counter_open(&c, pid, pid, "java.cls.loadedClasses"), -1);
	CHECK_EQ_INT(c.fd, -1);
	CHECK_EQ_INT(hsperf_counter_open(&c, pid, pid, "sun.rt.jvmCapabilities"), -1); /* a string */
	CHECK_EQ_INT(c.fd, -1);
	if (fd >= 0)
		close(fd);
	unlink(path);
	rmdir(DIR_PATH);
	return check_report("test_hsperf");
}
