/* str_index.h - numbers distinct strings 0, 1, 2, ... in the order they are first
 * seen: the stack store's stacks (model/stack_table.h), pprof's string table, speedscope's frames. */
#ifndef JFLAME_STR_INDEX_H
#define JFLAME_STR_INDEX_H

#include <stddef.h>
#include <stdint.h>

#define STR_INDEX_MAX 0x7fffffffu /* at most this many strings */

struct str_index_chunk;

/* a slot of the hash table: the string's index + 1 (0 empty), and the low 32
 * bits of its hash (a probe reads the text only on a likely match; growing
 * places strings by them without hashing again) */
struct str_index_slot {
	uint32_t idx1;
	uint32_t hash;
};

struct str_index {
	char **strs; /* strs[i] is string i (a NUL-terminated copy) */
	size_t *lens;
	size_t n, cap;
	struct str_index_slot *slots; /* open addressing */
	size_t nslots;
	struct str_index_chunk *chunks; /* where the copies live: big blocks, no malloc each */
};

void str_index_init(struct str_index *x);
void str_index_free(struct str_index *x);
/* The index of s[0..len) (s need not be NUL-terminated; a NUL in it is kept
 * in the copy, but strs[i] then reads as shorter), added when new.
 * -1 when out of memory or full. */
long str_index_add(struct str_index *x, const char *s, size_t len);
/* The index of s[0..len), or -1 when it was never added. */
long str_index_find(const struct str_index *x, const char *s, size_t len);

#endif
