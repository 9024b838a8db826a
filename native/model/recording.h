/* recording.h - what record and collapse aggregate: the stack store (stack_table.h)
 * of their folded stacks, and what was recorded (target, time, rate, losses). */
#ifndef JFLAME_RECORDING_H
#define JFLAME_RECORDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "event_table.h"
#include "stack_table.h"

struct stack_count {
	const char *stack; /* folded: frames root first joined by ';' */
	uint64_t count;
	uint64_t weight; /* in weighted recordings (see ev below): nanoseconds, bytes or events */
};

struct recording {
	struct stack_table stacks; /* the stacks with their counts and weights: the one store */
	size_t nstacks;		   /* stacks.stacks.n, the number of distinct stacks */
	uint64_t total;		   /* sum of counts */
	uint64_t total_weight;	   /* sum of weights */
	/* what the counts and weights are: its row in event_table.c (the cpu row
	 * after recording_init): CPU samples without weights; off-CPU and wall
	 * samples weighing ns; alloc samples weighing bytes; lock waits weighing ns */
	const struct event_kind *ev;
	uint64_t interval;			       /* alloc: bytes between allocation samples */
	char note[256];				       /* alloc, lock: what the agents said went wrong ("" none) */
	uint64_t min_block_ns, short_blocks, short_ns; /* off-CPU: blocks under the threshold */
	/* what was recorded, for subtitles and summaries */
	char target[256];
	double seconds;
	int freq;
	char event[48];
	uint64_t samples, lost, truncated, stack_errors;
	uint64_t unwind_failed;	  /* JVM stacks whose walk stopped at a frame it could not read */
	char frame_pointers[512]; /* "frame pointers: on" or a warning, and the inlining notes */
	bool fp_warning;	  /* frame_pointers warns: a JVM's Java frames lost or not named */
};

int recording_init(struct recording *r);
void recording_free(struct recording *r);
/* Adds count to the stack (copied; up to a NUL byte in it, if any). 0, or -1
 * when out of memory. */
int recording_add(struct recording *r, const char *stack, size_t len, uint64_t count);
/* The same, with a weight added to the stack's (sums saturate). */
int recording_add_weighted(struct recording *r, const char *stack, size_t len, uint64_t count, uint64_t weight);
/* Whether the recording's stacks carry weights (all but the CPU rows'). */
static inline bool recording_weighted(const struct recording *r)
{
	return r->ev->weigh != EVENT_WEIGH_NONE;
}
/* dst (not initialized) as a copy of src whose frames carry no source lines
 * (stack_strip_lines(): stacks that differ only by lines become one). 0, or
 * -1 when out of memory (dst then holds nothing to free). */
int recording_copy_plain(struct recording *dst, const struct recording *src);
/* The stacks sorted by their text (for writers). Caller frees the array. */
struct stack_count *recording_sorted(const struct recording *r, size_t *n);

#endif
