/* stacks_order.c - the .stacks output's reorder window (see stacks_order.h). */
#include "stacks_order.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"

static bool before(const struct stacks_order_entry *a, const struct stacks_order_entry *b)
{
	return a->ts_ns < b->ts_ns || (a->ts_ns == b->ts_ns && a->seq < b->seq);
}

static void swap(struct stacks_order_entry *a, struct stacks_order_entry *b)
{
	struct stacks_order_entry t = *a;
	*a = *b;
	*b = t;
}

static void sift_up(struct stacks_order *o, size_t i)
{
	while (i > 0 && before(&o->heap[i], &o->heap[(i - 1) / 2])) {
		swap(&o->heap[i], &o->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
}

static void sift_down(struct stacks_order *o, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < o->n && before(&o->heap[l], &o->heap[m]))
			m = l;
		if (r < o->n && before(&o->heap[r], &o->heap[m]))
			m = r;
		if (m == i)
			return;
		swap(&o->heap[i], &o->heap[m]);
		i = m;
	}
}

static void write_entry(struct stacks_order *o, const struct stacks_order_entry *e, FILE *out)
{
	fwrite(e->text, 1, e->len, out);
	if (e->ts_ns > o->written_ns)
		o->written_ns = e->ts_ns;
}

/* Writes and removes the oldest held sample. */
static void write_oldest(struct stacks_order *o, FILE *out)
{
	struct stacks_order_entry e = o->heap[0];
	o->heap[0] = o->heap[--o->n];
	sift_down(o, 0);
	write_entry(o, &e, out);
	free(e.text);
}

FILE *stacks_order_begin(struct stacks_order *o, FILE *fallback)
{
	o->buf = NULL;
	o->buflen = 0;
	o->text = open_memstream(&o->buf, &o->buflen);
	o->composing = o->text != NULL;
	return o->composing ? o->text : fallback;
}

/* Room for one more held sample: false when the window holds STACKS_ORDER_MAX
 * or no more memory. */
static bool grow(struct stacks_order *o)
{
	return o->n < STACKS_ORDER_MAX && ARRAY_GROW(o->heap, o->cap, o->n + 1) == 0;
}

void stacks_order_end(struct stacks_order *o, uint64_t ts_ns, FILE *out)
{
	if (!o->composing)
		return; /* written to the fallback as it came */
	o->composing = false;
	bool ok = fclose(o->text) == 0;
	struct stacks_order_entry e = { ts_ns, o->seq++, o->buf, o->buflen };
	o->text = NULL;
	o->buf = NULL;
	if (!ok || !e.text) {
		free(e.text);
		o->lost++;
		return;
	}
	bool full = !grow(o);
	if (ts_ns < o->written_ns) {
		o->stragglers++; /* too late to be put in order: written now rather than lost */
		write_entry(o, &e, out);
		free(e.text);
	} else if (full && (o->n == 0 || before(&e, &o->heap[0]))) {
		write_entry(o, &e, out); /* older than all that is held: still in order */
		free(e.text);
	} else {
		if (full)
			write_oldest(o, out);
		o->heap[o->n] = e;
		sift_up(o, o->n++);
	}
	if (ts_ns > o->newest_ns)
		o->newest_ns = ts_ns;
	uint64_t window = o->window_ns ? o->window_ns : STACKS_ORDER_NS;
	while (o->n && o->heap[0].ts_ns + window <= o->newest_ns)
		write_oldest(o, out);
}

void stacks_order_flush(struct stacks_order *o, FILE *out)
{
	while (o->n)
		write_oldest(o, out);
}

void stacks_order_free(struct stacks_order *o)
{
	for (size_t i = 0; i < o->n; i++)
		free(o->heap[i].text);
	free(o->heap);
	if (o->text)
		fclose(o->text);
	free(o->buf);
	memset(o, 0, sizeof(*o));
}
