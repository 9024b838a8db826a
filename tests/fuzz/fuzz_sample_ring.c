/* fuzz_sample_ring.c - a hostile JVM's sample ring: any bytes as records (and
 * as the head the agent claims), read by jflame's reader; and one record parsed.
 * module: jvmagent/sample_ring.c jvmagent/tmp_file.c */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sample_ring.h"

static char path[64];

static void remove_ring(void)
{
	unlink(path);
}

static int on_sample(void *ctx, const struct sample_view *s)
{
	size_t *total = ctx;
	*total += strlen(s->cls);
	for (size_t i = 0; i < s->nframes; i++)
		*total += strlen(s->frames[i]);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sample_ring_writer w;
	struct sample_ring_reader r;
	char err[512];
	size_t total = 0;

	struct sample_view *v = malloc(sizeof(*v));
	if (v) {
		sample_record_parse(data, size, v);
		free(v);
	}
	if (!w.h) {
		snprintf(path, sizeof(path), "/tmp/jflame-fuzz-%d.samples", (int)getpid());
		if (sample_ring_create(&w, path, 131072, 1, 0, err, sizeof(err)) != 0)
			return 0;
		atexit(remove_ring);
	}
	if (sample_ring_open(&r, path, 0, err, sizeof(err)) != 0)
		return 0;
	uint64_t head = w.h->head, off = head & (w.h->data_size - 1);
	size_t n = size < 8 ? 0 : size - 8, room = (size_t)(w.h->data_size - off);
	for (size_t i = 0; i<n; i += room> n - i ? n - i : room) {
		size_t k = n - i < (size_t)(w.h->data_size - ((off + i) & (w.h->data_size - 1))) ?
				   n - i :
				   (size_t)(w.h->data_size - ((off + i) & (w.h->data_size - 1)));
		memcpy(w.data + ((off + i) & (w.h->data_size - 1)), data + 8 + i, k);
		room = k;
	}
	uint64_t claim = 0;
	if (size >= 8)
		memcpy(&claim, data, 8);
	/* the head the agent claims: mostly what it wrote, sometimes anything */
	w.h->head = (claim & 1) ? head + claim % (2 * w.h->data_size) : head + n;
	sample_ring_read(&r, on_sample, &total);
	head = w.h->head;
	sample_ring_close(&r);
	w.h->tail = w.h->head = head;
	return 0;
}
