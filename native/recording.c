/* recording.c - aggregates samples into folded stacks: a hash table from the
 * folded text to its count, sorted on demand for the writers. */
#include "recording.h"

#include <stdlib.h>
#include <string.h>

#include "str_intern.h"

int recording_init(struct recording *r)
{
	memset(r, 0, sizeof(*r));
	r->cap = 4096;
	r->slots = calloc(r->cap, sizeof(*r->slots));
	return r->slots ? 0 : -1;
}

void recording_free(struct recording *r)
{
	for (size_t i = 0; r->slots && i < r->cap; i++)
		free((char *)r->slots[i].stack);
	free(r->slots);
	memset(r, 0, sizeof(*r));
}

static int grow(struct recording *r)
{
	size_t cap = r->cap * 2;
	struct stack_count *slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -1;
	for (size_t i = 0; i < r->cap; i++) {
		if (!r->slots[i].stack)
			continue;
		size_t j = str_hash(r->slots[i].stack, strlen(r->slots[i].stack)) & (cap - 1);
		while (slots[j].stack)
			j = (j + 1) & (cap - 1);
		slots[j] = r->slots[i];
	}
	free(r->slots);
	r->slots = slots;
	r->cap = cap;
	return 0;
}

int recording_add(struct recording *r, const char *stack, size_t len, uint64_t count)
{
	if ((r->nstacks + 1) * 2 > r->cap && grow(r) != 0)
		return -1;
	size_t i = str_hash(stack, len) & (r->cap - 1);
	for (; r->slots[i].stack; i = (i + 1) & (r->cap - 1)) {
		const char *s = r->slots[i].stack;
		if (strncmp(s, stack, len) == 0 && s[len] == '\0') {
			r->slots[i].count += count;
			r->total += count;
			return 0;
		}
	}
	char *copy = malloc(len + 1);
	if (!copy)
		return -1;
	memcpy(copy, stack, len);
	copy[len] = '\0';
	r->slots[i] = (struct stack_count){ copy, count };
	r->nstacks++;
	r->total += count;
	return 0;
}

static int cmp_stack(const void *a, const void *b)
{
	return strcmp(((const struct stack_count *)a)->stack, ((const struct stack_count *)b)->stack);
}

struct stack_count *recording_sorted(const struct recording *r, size_t *n)
{
	struct stack_count *out = malloc((r->nstacks ? r->nstacks : 1) * sizeof(*out));
	size_t k = 0;
	if (!out)
		return NULL;
	for (size_t i = 0; i < r->cap; i++)
		if (r->slots[i].stack)
			out[k++] = r->slots[i];
	qsort(out, k, sizeof(*out), cmp_stack);
	*n = k;
	return out;
}
