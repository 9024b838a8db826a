/* recording.h - the one model of a recording that every writer reads: folded
 * stacks with counts, and what was recorded (target, time, rate, losses). */
#ifndef JFLAME_RECORDING_H
#define JFLAME_RECORDING_H

#include <stddef.h>
#include <stdint.h>

struct stack_count {
	const char *stack; /* folded: frames root first joined by ';' */
	uint64_t count;
};

struct recording_chunk;

/* per slot: the stack's hash and length, so a probe compares text only on a match */
struct recording_key {
	uint64_t hash;
	size_t len;
};

struct recording {
	struct stack_count *slots; /* open addressing by stack string */
	struct recording_key *keys; /* beside slots */
	struct recording_chunk *chunks; /* where the stacks' text lives */
	size_t cap, nstacks;
	uint64_t total;            /* sum of counts */
	/* what was recorded, for subtitles and summaries */
	char target[256];
	double seconds;
	int freq;
	char event[32];
	uint64_t samples, lost, truncated, stack_errors;
	uint64_t unwind_failed; /* JVM stacks whose walk stopped at a frame it could not read */
	char frame_pointers[256]; /* "frame pointers: on" or a warning */
};

int recording_init(struct recording *r);
void recording_free(struct recording *r);
/* Adds count to the stack (copied; up to a NUL byte in it, if any). 0, or -1
 * when out of memory. */
int recording_add(struct recording *r, const char *stack, size_t len, uint64_t count);
/* The stacks sorted by their text (for writers). Caller frees the array. */
struct stack_count *recording_sorted(const struct recording *r, size_t *n);

#endif
