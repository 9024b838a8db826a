/* str_index.h - numbers distinct strings 0, 1, 2, ... in the order they are first
 * seen: pprof's string table, speedscope's frame list, convert's stacks. */
#ifndef JFLAME_STR_INDEX_H
#define JFLAME_STR_INDEX_H

#include <stddef.h>
#include <stdint.h>

#define STR_INDEX_MAX 0x7fffffffu /* at most this many strings */

struct str_index {
	char **strs;     /* strs[i] is string i (a NUL-terminated copy) */
	size_t *lens;
	size_t n, cap;
	uint32_t *slots; /* open addressing: index + 1, 0 when empty */
	size_t nslots;
};

void str_index_init(struct str_index *x);
void str_index_free(struct str_index *x);
/* The index of s[0..len) (s need not be NUL-terminated), added when new.
 * -1 when out of memory or full. */
long str_index_add(struct str_index *x, const char *s, size_t len);
/* The index of s[0..len), or -1 when it was never added. */
long str_index_find(const struct str_index *x, const char *s, size_t len);

#endif
