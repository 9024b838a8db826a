/* sample_ring.c - the allocation and lock sample ring file: the agent appends
 * records under a lock, jflame reads them with pread and moves the tail. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sample_ring.h"
#include "glibc_compat.h"
#include "tmp_file.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert(sizeof(struct sample_ring_header) <= SAMPLE_RING_HEADER, "header fits its page");
_Static_assert(sizeof(struct sample_record) % 8 == 0, "records stay 8-aligned");

#define ALIGN8(n) (((n) + 7) & ~(size_t)7)

static bool power_of_two(uint64_t n)
{
	return n && !(n & (n - 1));
}

/* ---- writer ------------------------------------------------------------ */

int sample_ring_create(struct sample_ring_writer *w, const char *path, size_t data_size, pid_t pid,
		       uint64_t process_start, char *err, size_t errlen)
{
	char tmp[4096];
	int fd = -1;

	memset(w, 0, sizeof(*w));
	w->fd = -1;
	if (!power_of_two(data_size) || data_size < 131072) {
		snprintf(err, errlen, "sample ring size %zu is not a power of two of at least 128 KiB", data_size);
		return -1;
	}
	/* an existing file is replaced by rename, never opened: no symlink is followed */
	fd = tmp_file_beside(path, true, tmp, sizeof(tmp), err, errlen);
	if (fd < 0)
		return -1;
	w->map_len = SAMPLE_RING_HEADER + data_size;
	if (ftruncate(fd, (off_t)w->map_len) != 0) {
		snprintf(err, errlen, "failed to size %s: %s", tmp, strerror(errno));
		goto fail;
	}
	void *m = mmap(NULL, w->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		snprintf(err, errlen, "failed to map %s: %s", tmp, strerror(errno));
		goto fail;
	}
	w->h = m;
	w->data = (unsigned char *)m + SAMPLE_RING_HEADER;
	w->h->version = SAMPLE_RING_VERSION;
	w->h->header_size = SAMPLE_RING_HEADER;
	w->h->data_size = data_size;
	w->h->process_start = process_start;
	w->h->pid = (int32_t)pid;
	memcpy(w->h->magic, SAMPLE_RING_MAGIC, sizeof(w->h->magic));
	if (rename(tmp, path) != 0) {
		snprintf(err, errlen, "failed to rename %s to %s: %s", tmp, path, strerror(errno));
		munmap(m, w->map_len);
		w->h = NULL;
		goto fail;
	}
	w->fd = fd;
	pthread_mutex_init(&w->lock, NULL);
	return 0;
fail:
	close(fd);
	unlink(tmp);
	return -1;
}

void sample_ring_destroy(struct sample_ring_writer *w)
{
	if (w->h) {
		munmap(w->h, w->map_len);
		pthread_mutex_destroy(&w->lock);
	}
	if (w->fd >= 0)
		close(w->fd);
	w->h = NULL;
	w->fd = -1;
}

int sample_ring_put(struct sample_ring_writer *w, enum sample_kind kind, int32_t tid, uint64_t ts_ns, uint64_t value,
		    uint64_t weight, uint32_t flags, const char *cls, const char *const *frames, size_t nframes)
{
	struct sample_record rec = {
		.kind = (uint16_t)kind,
		.tid = tid,
		.flags = flags,
		.ts_ns = ts_ns,
		.value = value,
		.weight = weight,
	};
	size_t cls_len = strlen(cls) + 1, need = sizeof(rec) + cls_len, n = 0;
	if (!w->h || (kind != SAMPLE_ALLOC && kind != SAMPLE_LOCK))
		return -1;
	if (need > SAMPLE_RING_MAX_RECORD) {
		__atomic_fetch_add(&w->h->dropped, 1, __ATOMIC_RELAXED);
		return -1;
	}
	/* the frames that fit; the rest (towards the root) cut and marked */
	for (; n < nframes && n < SAMPLE_RING_MAX_FRAMES; n++) {
		size_t len = strlen(frames[n]) + 1;
		if (ALIGN8(need + len) > SAMPLE_RING_MAX_RECORD)
			break;
		need += len;
	}
	if (n < nframes)
		rec.flags |= SAMPLE_TRUNCATED;
	rec.nframes = (uint16_t)n;
	need = ALIGN8(need);
	rec.size = (uint32_t)need;

	pthread_mutex_lock(&w->lock);
	uint64_t size = w->h->data_size, head = w->h->head;
	uint64_t tail = __atomic_load_n(&w->h->tail, __ATOMIC_ACQUIRE);
	uint64_t off = head & (size - 1), room = size - off, pad = need > room ? room : 0;
	/* a tail the reader cannot have written counts as a full ring */
	if (tail > head || head - tail > size || head + pad + need - tail > size) {
		pthread_mutex_unlock(&w->lock);
		__atomic_fetch_add(&w->h->dropped, 1, __ATOMIC_RELAXED);
		return -1;
	}
	if (pad) {
		if (pad >= sizeof(rec)) {
			struct sample_record filler = { .size = (uint32_t)pad, .kind = SAMPLE_PAD };
			memcpy(w->data + off, &filler, sizeof(filler));
		}
		off = 0;
	}
	unsigned char *p = w->data + off;
	memcpy(p, &rec, sizeof(rec));
	size_t at = sizeof(rec);
	memcpy(p + at, cls, cls_len);
	at += cls_len;
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(frames[i]) + 1;
		memcpy(p + at, frames[i], len);
		at += len;
	}
	memset(p + at, 0, need - at);
	__atomic_store_n(&w->h->head, head + pad + need, __ATOMIC_RELEASE);
	w->h->written[kind]++;
	pthread_mutex_unlock(&w->lock);
	return 0;
}

uint32_t sample_ring_wanted(const struct sample_ring_writer *w, uint64_t now_ns, uint32_t *alloc_interval,
			    uint64_t *lock_min_ns)
{
	if (!w->h)
		return 0;
	uint64_t beat = __atomic_load_n(&w->h->reader_beat_ns, __ATOMIC_ACQUIRE);
	uint32_t interval = __atomic_load_n(&w->h->alloc_interval, __ATOMIC_RELAXED);
	*alloc_interval = interval ? interval : SAMPLE_RING_DEFAULT_ALLOC_INTERVAL;
	*lock_min_ns = __atomic_load_n(&w->h->lock_min_ns, __ATOMIC_RELAXED);
	if (!beat || (now_ns > beat && now_ns - beat > SAMPLE_RING_BEAT_NS))
		return 0;
	return __atomic_load_n(&w->h->want, __ATOMIC_RELAXED) & (SAMPLE_WANT_ALLOC | SAMPLE_WANT_LOCK);
}

uint64_t sample_ring_alloc_weight(uint64_t size, uint64_t interval)
{
	if (!interval)
		return size;
	if (!size)
		return interval;
	double x = (double)size / (double)interval;
	double w = (double)size / -expm1(-x);
	return w >= 1.8e19 ? UINT64_MAX : (uint64_t)(w + 0.5);
}

/* ---- reader ------------------------------------------------------------ */

static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
	size_t got = 0;
	while (got < len) {
		ssize_t n = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

static int write_u64(int fd, size_t field, uint64_t v)
{
	return pwrite(fd, &v, sizeof(v), (off_t)field) == (ssize_t)sizeof(v) ? 0 : -1;
}

static int write_u32(int fd, size_t field, uint32_t v)
{
	return pwrite(fd, &v, sizeof(v), (off_t)field) == (ssize_t)sizeof(v) ? 0 : -1;
}

int sample_ring_open(struct sample_ring_reader *r, const char *path, uint64_t process_start, char *err, size_t errlen)
{
	int fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		memset(r, 0, sizeof(*r));
		r->fd = -1;
		if (errno == ENOENT)
			return 1;
		snprintf(err, errlen, "failed to open %s: %s", path, strerror(errno));
		return -1;
	}
	return sample_ring_open_fd(r, fd, path, process_start, err, errlen);
}

int sample_ring_open_fd(struct sample_ring_reader *r, int fd, const char *path, uint64_t process_start, char *err,
			size_t errlen)
{
	struct sample_ring_header h;
	struct stat st;

	memset(r, 0, sizeof(*r));
	r->fd = fd;
	if (compat_fstat(r->fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size < SAMPLE_RING_HEADER ||
	    read_at(r->fd, &h, sizeof(h), 0) != 0) {
		snprintf(err, errlen, "%s is not an agent's sample ring; remove it", path);
		goto fail;
	}
	if (memcmp(h.magic, SAMPLE_RING_MAGIC, sizeof(h.magic)) != 0 || h.header_size != SAMPLE_RING_HEADER ||
	    !power_of_two(h.data_size) || h.data_size < 131072 || h.data_size > SAMPLE_RING_MAX_DATA ||
	    (uint64_t)st.st_size < SAMPLE_RING_HEADER + h.data_size) {
		snprintf(err, errlen, "%s is not an agent's sample ring; remove it", path);
		goto fail;
	}
	if (h.version != SAMPLE_RING_VERSION) {
		snprintf(err, errlen, "%s has format %u, this jflame reads %u; use the agent of this jflame", path,
			 h.version, SAMPLE_RING_VERSION);
		goto fail;
	}
	if (process_start && h.process_start && h.process_start != process_start) {
		close(r->fd);
		r->fd = -1;
		return 1; /* left by an earlier process with this pid */
	}
	r->data_size = h.data_size;
	r->tail = h.head;
	r->buf = malloc(SAMPLE_RING_MAX_RECORD);
	r->view = malloc(sizeof(*r->view));
	if (!r->buf || !r->view) {
		snprintf(err, errlen, "out of memory reading %s", path);
		goto fail;
	}
	if (write_u64(r->fd, offsetof(struct sample_ring_header, tail), r->tail) != 0) {
		snprintf(err, errlen, "failed to write %s: %s", path, strerror(errno));
		goto fail;
	}
	r->accepted = true; /* only now is it ours to write to */
	return 0;
fail:
	sample_ring_close(r);
	return -1;
}

void sample_ring_close(struct sample_ring_reader *r)
{
	if (r->fd >= 0) {
		if (r->accepted) /* never a byte into a file that was not an agent's ring */
			write_u32(r->fd, offsetof(struct sample_ring_header, want), 0);
		close(r->fd);
	}
	free(r->buf);
	free(r->view);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

int sample_ring_ask(struct sample_ring_reader *r, uint32_t want, uint32_t alloc_interval, uint64_t lock_min_ns,
		    uint64_t now_ns)
{
	if (r->fd < 0)
		return -1;
	if (write_u32(r->fd, offsetof(struct sample_ring_header, alloc_interval), alloc_interval) != 0 ||
	    write_u64(r->fd, offsetof(struct sample_ring_header, lock_min_ns), lock_min_ns) != 0 ||
	    write_u32(r->fd, offsetof(struct sample_ring_header, want), want) != 0 ||
	    write_u64(r->fd, offsetof(struct sample_ring_header, reader_beat_ns), now_ns) != 0)
		return -1;
	return 0;
}

int sample_record_parse(const unsigned char *bytes, size_t len, struct sample_view *v)
{
	struct sample_record rec;
	if (len < sizeof(rec))
		return -1;
	memcpy(&rec, bytes, sizeof(rec));
	if (rec.size < sizeof(rec) || rec.size > len || (rec.kind != SAMPLE_ALLOC && rec.kind != SAMPLE_LOCK) ||
	    rec.nframes > SAMPLE_RING_MAX_FRAMES)
		return -1;
	const char *p = (const char *)bytes + sizeof(rec), *end = (const char *)bytes + rec.size;
	const char *z = memchr(p, '\0', (size_t)(end - p));
	if (!z)
		return -1;
	v->kind = (enum sample_kind)rec.kind;
	v->tid = rec.tid;
	v->flags = rec.flags;
	v->ts_ns = rec.ts_ns;
	v->value = rec.value;
	v->weight = rec.weight;
	v->cls = p;
	p = z + 1;
	for (size_t i = 0; i < rec.nframes; i++) {
		if (p >= end || !(z = memchr(p, '\0', (size_t)(end - p))))
			return -1;
		v->frames[i] = p;
		p = z + 1;
	}
	v->nframes = rec.nframes;
	return 0;
}

int sample_ring_read(struct sample_ring_reader *r, int (*fn)(void *ctx, const struct sample_view *s), void *ctx)
{
	uint64_t head;
	int n = 0;
	if (r->fd < 0 || read_at(r->fd, &head, sizeof(head), offsetof(struct sample_ring_header, head)) != 0)
		return -1;
	if (head < r->tail || head - r->tail > r->data_size) {
		r->bad++; /* not the ring this reader was reading */
		r->tail = head;
	}
	while (r->tail < head) {
		uint64_t off = r->tail & (r->data_size - 1), room = r->data_size - off;
		struct sample_record rec;
		if (room < sizeof(rec)) {
			r->tail += room;
			continue;
		}
		if (read_at(r->fd, &rec, sizeof(rec), SAMPLE_RING_HEADER + off) != 0)
			return -1;
		if (rec.size < sizeof(rec) || rec.size % 8 || rec.size > room || rec.size > SAMPLE_RING_MAX_RECORD ||
		    rec.size > head - r->tail) {
			r->bad++;
			r->tail = head;
			break;
		}
		if (rec.kind != SAMPLE_PAD) {
			if (read_at(r->fd, r->buf, rec.size, SAMPLE_RING_HEADER + off) != 0)
				return -1;
			if (sample_record_parse(r->buf, rec.size, r->view) != 0)
				r->bad++;
			else if (fn(ctx, r->view) == 0)
				n++;
		}
		r->tail += rec.size;
	}
	if (write_u64(r->fd, offsetof(struct sample_ring_header, tail), r->tail) != 0)
		return -1;
	return n;
}

int sample_ring_stats(struct sample_ring_reader *r, struct sample_ring_stats *st)
{
	struct sample_ring_header h;
	memset(st, 0, sizeof(*st));
	if (r->fd < 0 || read_at(r->fd, &h, sizeof(h), 0) != 0)
		return -1;
	st->dropped = h.dropped;
	memcpy(st->written, h.written, sizeof(st->written));
	st->lock_short = h.lock_short;
	st->active = h.active;
	st->alloc_interval_active = h.alloc_interval_active;
	memcpy(st->agent_error, h.agent_error, sizeof(st->agent_error));
	st->agent_error[sizeof(st->agent_error) - 1] = '\0';
	return 0;
}
