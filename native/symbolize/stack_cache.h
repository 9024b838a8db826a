/* stack_cache.h - folded stacks kept by their raw sample stacks: a stack seen
 * again (most are, many times a second) is not named and folded again. */
#ifndef JFLAME_STACK_CACHE_H
#define JFLAME_STACK_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize.h"

/* What a raw stack folded to, below its roots (process and thread): text
 * begins with its ';' separator. plain is the text without source lines
 * (NULL when the same as text). */
struct stack_cache_value {
	const char *text;
	size_t len;
	const char *plain;
	size_t plain_len;
	unsigned flags; /* FOLDED_* of sample_pipeline.h */
	unsigned stack_errors;
};

struct stack_cache;

/* A cache holding at most max_bytes of keys and texts; when it is full it
 * starts over (empty). NULL when out of memory. */
struct stack_cache *stack_cache_new(size_t max_bytes);
void stack_cache_free(struct stack_cache *c);

/* A raw stack as it lies in a sample: a word of how it was walked, and two
 * runs of bytes (kernel pcs, user frames), hashed where they are. */
struct stack_cache_key {
	uint32_t pid;
	uint64_t gen;  /* the names generation of the process */
	uint64_t head; /* how the stacks were walked and ended */
	const void *part[2];
	size_t len[2];
	uint64_t hash; /* set by stack_cache_hash */
};

void stack_cache_hash(struct stack_cache_key *k);
/* The value kept for k (hashed), or NULL. Valid until the next put. */
const struct stack_cache_value *stack_cache_get(struct stack_cache *c, const struct stack_cache_key *k);
/* Keeps v (key and texts copied) for k (hashed); 0, or -1 when out of memory
 * or larger than the cache (then nothing is kept). */
int stack_cache_put(struct stack_cache *c, const struct stack_cache_key *k, const struct stack_cache_value *v);

struct stack_cache_stats {
	uint64_t hits, misses, flushes;
	size_t entries, bytes;
};
void stack_cache_stats(const struct stack_cache *c, struct stack_cache_stats *out);

/* Named frames kept by what names them: a stack seen for the first time
 * mostly has frames seen before (only its leaf pc is new). A fixed table (a
 * slot per hash; a newer frame takes the slot). Frames hold interned names. */
struct frame_key {
	uint64_t pc, method, gen; /* gen: the process's names generation (kernel frames: any constant) */
	uint32_t pid, cookie;	  /* pid 0: a kernel frame */
	uint16_t bci;
	uint8_t kind;	/* profile_frame kind + 1 for HotSpot frames, 0 for a pc */
	uint8_t caller; /* a return address (looked up at pc - 1) */
};

/* A kept frame and its folded text (fold_add_frame's, without a leading ';';
 * fold NULL when it was not kept), with the line marks it holds. */
struct frame_memo_entry {
	struct frame f;
	char *fold;
	size_t fold_len;
	unsigned fold_lines;
};

struct frame_memo;

struct frame_memo *frame_memo_new(size_t slots);
void frame_memo_free(struct frame_memo *m);
/* The entry kept for k, or NULL; valid until the next put. */
const struct frame_memo_entry *frame_memo_get(const struct frame_memo *m, const struct frame_key *k);
/* Keeps f and its folded text (copied; fold may be NULL) for k. */
void frame_memo_put(struct frame_memo *m, const struct frame_key *k, const struct frame *f, const char *fold,
		    size_t fold_len, unsigned fold_lines);

#endif
