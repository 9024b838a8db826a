/* str_index.c - open-addressing hash table from strings to their first-seen
 * index, the strings kept in an array in that order. */
#include "str_index.h"

#include <stdlib.h>
#include <string.h>

#include "str_intern.h"

void str_index_init(struct str_index *x)
{
	memset(x, 0, sizeof(*x));
}

void str_index_free(struct str_index *x)
{
	for (size_t i = 0; i < x->n; i++)
		free(x->strs[i]);
	free(x->strs);
	free(x->lens);
	free(x->slots);
	memset(x, 0, sizeof(*x));
}

static size_t slot_of(const struct str_index *x, const char *s, size_t len, uint64_t h)
{
	size_t mask = x->nslots - 1, i = (size_t)h & mask;
	for (; x->slots[i]; i = (i + 1) & mask) {
		uint32_t k = x->slots[i] - 1;
		if (x->lens[k] == len && memcmp(x->strs[k], s, len) == 0)
			break;
	}
	return i;
}

static int rehash(struct str_index *x)
{
	size_t nslots = x->nslots ? x->nslots * 2 : 1024;
	uint32_t *slots = calloc(nslots, sizeof(*slots));
	if (!slots)
		return -1;
	free(x->slots);
	x->slots = slots;
	x->nslots = nslots;
	for (size_t k = 0; k < x->n; k++) {
		size_t i = slot_of(x, x->strs[k], x->lens[k], str_hash(x->strs[k], x->lens[k]));
		x->slots[i] = (uint32_t)k + 1;
	}
	return 0;
}

long str_index_find(const struct str_index *x, const char *s, size_t len)
{
	if (!x->nslots)
		return -1;
	size_t i = slot_of(x, s, len, str_hash(s, len));
	return x->slots[i] ? (long)x->slots[i] - 1 : -1;
}

long str_index_add(struct str_index *x, const char *s, size_t len)
{
	if ((x->n + 1) * 2 > x->nslots && rehash(x) != 0)
		return -1;
	size_t i = slot_of(x, s, len, str_hash(s, len));
	if (x->slots[i])
		return (long)x->slots[i] - 1;
	if (x->n >= STR_INDEX_MAX)
		return -1;
	if (x->n == x->cap) {
		size_t cap = x->cap ? x->cap * 2 : 256;
		char **strs = realloc(x->strs, cap * sizeof(*strs));
		if (!strs)
			return -1;
		x->strs = strs;
		size_t *lens = realloc(x->lens, cap * sizeof(*lens));
		if (!lens)
			return -1;
		x->lens = lens;
		x->cap = cap;
	}
	char *copy = malloc(len + 1);
	if (!copy)
		return -1;
	memcpy(copy, s, len);
	copy[len] = '\0';
	x->strs[x->n] = copy;
	x->lens[x->n] = len;
	x->slots[i] = (uint32_t)x->n + 1;
	return (long)x->n++;
}
