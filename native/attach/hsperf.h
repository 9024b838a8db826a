/* hsperf.h - reads one value from a HotSpot hsperfdata file (the shared memory
 * the JVM publishes for jps/jstat), e.g. whether its attach mechanism is on. */
#ifndef JFLAME_HSPERF_H
#define JFLAME_HSPERF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Finds the byte-array (string) counter `name` in an hsperfdata image and
 * copies it NUL-terminated into out. 0 when found, -1 when the image is not
 * hsperfdata or has no such counter. Never reads outside buf[0..len). */
int hsperf_find_string(const unsigned char *buf, size_t len, const char *name, char *out, size_t outlen);

/* The same for a long counter (type 'J'), e.g. sun.rt.createVmEndTime. */
int hsperf_find_long(const unsigned char *buf, size_t len, const char *name, int64_t *out);

/* The value of counter `name` in the hsperfdata of process pid (in its own
 * /tmp, any user's hsperfdata_<user>/<nspid>). 0 when found, -1 when not. */
int hsperf_read_string(pid_t pid, pid_t nspid, const char *name, char *out, size_t outlen);
int hsperf_read_long(pid_t pid, pid_t nspid, const char *name, int64_t *out);

/* A long counter read again and again (a few times a second): the file,
 * vetted as above, stays open and the value's place is found once (an entry
 * never moves in the JVM's hsperfdata). open: 0, or -1 when the process has
 * no such counter (c->fd is then -1). read: 0, or -1 when the file no longer
 * holds it (truncated). A file the JVM has removed at exit keeps its last value. */
struct hsperf_counter {
	int fd;
	off_t off;
	int little;
};
int hsperf_counter_open(struct hsperf_counter *c, pid_t pid, pid_t nspid, const char *name);
int hsperf_counter_read(const struct hsperf_counter *c, int64_t *out);
void hsperf_counter_close(struct hsperf_counter *c);

#endif
