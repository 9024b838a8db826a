/* stacks_order.h - a bounded reorder window for the .stacks output: samples
 * reach jflame per CPU and through its late and deferred queues, out of time
 * order; their text is held until it is older than the newest sample seen
 * minus a window, then written in time order. */
#ifndef JFLAME_STACKS_ORDER_H
#define JFLAME_STACKS_ORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* How far behind the newest sample one may come and still be put in order:
 * past the late queue's wait for JIT names (300 ms) and the 100 ms reads. */
#define STACKS_ORDER_NS 1000000000ULL
/* Samples held at most, whatever their times (the oldest is written first). */
#define STACKS_ORDER_MAX 65536

struct stacks_order_entry {
	uint64_t ts_ns, seq; /* seq: arrival order among equal times */
	char *text;
	size_t len;
};

/* All zero is an empty window of STACKS_ORDER_NS. */
struct stacks_order {
	uint64_t window_ns;		 /* 0: STACKS_ORDER_NS */
	struct stacks_order_entry *heap; /* a min-heap on (ts_ns, seq) */
	size_t n, cap;
	uint64_t seq, newest_ns, written_ns; /* written_ns: the time of the last sample written */
	uint64_t stragglers;		     /* samples that came after a later one was written: written as they came */
	uint64_t lost;			     /* samples whose text could not be kept (out of memory) */
	FILE *text;			     /* the sample being composed (an open_memstream) */
	char *buf;
	size_t buflen;
	bool composing;
};

/* A stream to write one sample's text into, to be ended by stacks_order_end;
 * fallback (written as it is, unordered) when out of memory. */
FILE *stacks_order_begin(struct stacks_order *o, FILE *fallback);
/* Takes the sample composed since stacks_order_begin, taken at ts_ns, and
 * writes to out, in time order, every held sample the window has passed. */
void stacks_order_end(struct stacks_order *o, uint64_t ts_ns, FILE *out);
/* Writes every held sample to out, in time order (the end of the output). */
void stacks_order_flush(struct stacks_order *o, FILE *out);
/* Frees what is held, unwritten. */
void stacks_order_free(struct stacks_order *o);

#endif
