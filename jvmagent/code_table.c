/* code_table.c - open-addressing hash of live compiled code: start -> size.
 * Linear probing with tombstones; rehashes when half the slots are used. */
#include "code_table.h"

#include <stdlib.h>

#define EMPTY	0
#define REMOVED 1

static size_t slot(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

void code_table_init(struct code_table *t)
{
	*t = (struct code_table){ 0 };
}

void code_table_free(struct code_table *t)
{
	free(t->keys);
	free(t->sizes);
	*t = (struct code_table){ 0 };
}

/* Rehashes into a table sized for the live entries (a quarter full at most),
 * which also clears the tombstones that churn leaves behind. */
static int grow(struct code_table *t)
{
	size_t cap = 1024;
	while (cap < (t->live + 1) * 4)
		cap *= 2;
	uint64_t *keys = calloc(cap, sizeof(*keys)), *sizes = calloc(cap, sizeof(*sizes));
	if (!keys || !sizes) {
		free(keys);
		free(sizes);
		return -1;
	}
	for (size_t i = 0; i < t->cap; i++) {
		if (t->keys[i] <= REMOVED)
			continue;
		size_t j = slot(t->keys[i], cap);
		while (keys[j] != EMPTY)
			j = (j + 1) & (cap - 1);
		keys[j] = t->keys[i];
		sizes[j] = t->sizes[i];
	}
	free(t->keys);
	free(t->sizes);
	t->keys = keys;
	t->sizes = sizes;
	t->cap = cap;
	t->used = t->live;
	return 0;
}

int code_table_put(struct code_table *t, uint64_t start, uint64_t size)
{
	if (start <= REMOVED)
		return 0;
	if ((t->used + 1) * 2 > t->cap && grow(t) != 0)
		return -1;
	size_t i = slot(start, t->cap), free_slot = (size_t)-1;
	for (;; i = (i + 1) & (t->cap - 1)) {
		if (t->keys[i] == start) {
			t->sizes[i] = size;
			return 0;
		}
		if (t->keys[i] == REMOVED && free_slot == (size_t)-1)
			free_slot = i;
		if (t->keys[i] == EMPTY)
			break;
	}
	if (free_slot == (size_t)-1) {
		free_slot = i;
		t->used++;
	}
	t->keys[free_slot] = start;
	t->sizes[free_slot] = size;
	t->live++;
	return 0;
}

uint64_t code_table_take(struct code_table *t, uint64_t start)
{
	if (!t->cap || start <= REMOVED)
		return 0;
	for (size_t i = slot(start, t->cap); t->keys[i] != EMPTY; i = (i + 1) & (t->cap - 1)) {
		if (t->keys[i] == start) {
			t->keys[i] = REMOVED;
			t->live--;
			return t->sizes[i];
		}
	}
	return 0;
}
