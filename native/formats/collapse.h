/* collapse.h - turns perf script samples into folded stacks the way
 * stackcollapse-perf.pl does, with its options, plus period weighting and a time range. */
#ifndef JFLAME_COLLAPSE_H
#define JFLAME_COLLAPSE_H

#include <stdbool.h>
#include <stdint.h>

#include "perf_script.h"
#include "recording.h"

struct collapse_opts {
	bool pid, tid;	  /* root frame comm-PID, comm-PID/TID */
	bool kernel, jit; /* _[k] and _[j] annotations (--all: both) */
	bool addrs;	  /* [dso <pc>] for unknown symbols */
	bool has_from, has_to;
	double from, to;   /* seconds from the first sample: keep [from, to) */
	const char *event; /* keep only this event; NULL: the first one seen */
};

#define COLLAPSE_DSO_CACHE 8
/* The sum of the weights stays below 2^63 (folded counts and pprof's int64). */
#define COLLAPSE_MAX_TOTAL (UINT64_C(1) << 63)

/* a dso seen lately and its annotation ('k', 'j' or 0) */
struct collapse_dso {
	char name[128];
	uint16_t len;
	char ann;
};

struct collapse {
	struct collapse_opts o;
	struct recording *rec;
	char *buf;
	size_t cap;
	double t0;
	bool have_t0;
	char event[64]; /* the event kept */
	bool have_event;
	uint64_t kept, other_event, out_of_range;
	bool oom;	       /* out of memory, or too_big_line set: stop */
	uint64_t too_big_line; /* collapse_sample: the sample whose weight took the
				   total to COLLAPSE_MAX_TOTAL (its header's line) */
	struct collapse_dso dsos[COLLAPSE_DSO_CACHE];
	unsigned ndsos, next_dso, last_dso;
};

void collapse_init(struct collapse *c, const struct collapse_opts *o, struct recording *rec);
void collapse_free(struct collapse *c);
/* Folds one sample as collapse_sample does, without adding it anywhere: 1 with
 * its stack in *stack and *len (c's buffer: valid until the next call, not
 * NUL-terminated; the caller may change it), 0 when the filters leave it out (another event, outside
 * --from/--to; counted in c), -1 when out of memory (c->oom set). Kept
 * samples are not counted in c->kept: the caller counts what it keeps. */
int collapse_fold(struct collapse *c, const struct ps_sample *s, char **stack, size_t *len);
/* A ps_sample_fn: adds one sample (weighted by its period when printed);
 * stops at a sample that would take the total to COLLAPSE_MAX_TOTAL. */
int collapse_sample(void *ctx, const struct ps_sample *s);

#endif
