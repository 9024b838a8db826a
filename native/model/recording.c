/* recording.c - aggregates samples into folded stacks: a hash table from the
 * folded text to its count, sorted on demand for the writers. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include "recording.h"

#include <endian.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "key_sort.h"
#include "str_intern.h"
#include "swar.h"

int recording_init(struct recording *r)
{
	memset(r, 0, sizeof(*r));
	r->cap = 4096;
	r->slots = calloc(r->cap, sizeof(*r->slots));
	r->keys = calloc(r->cap, sizeof(*r->keys));
	if (!r->slots || !r->keys) {
		free(r->slots);
		free(r->keys);
		memset(r, 0, sizeof(*r));
		return -1;
	}
	return 0;
}

/* The stacks' text, one after another in big blocks: no malloc each. A
 * block is mapped with its pages in (one call, not a fault per page: a
 * recording holds tens of megabytes of text). */
#define CHUNK_SIZE (4u << 20)

struct recording_chunk {
	struct recording_chunk *next;
	size_t used, cap;
	char data[];
};

static char *text_alloc(struct recording *r, size_t n)
{
	struct recording_chunk *c = r->chunks;
	if (!c || c->cap - c->used < n) {
		/* 64 KB first (a small recording stays small), doubling to 4 MB */
		size_t size = c ? (c->cap + sizeof(*c)) * 2 : (64u << 10);
		if (size > CHUNK_SIZE)
			size = CHUNK_SIZE;
		if (size < n + sizeof(*c))
			size = n + sizeof(*c);
		void *mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (mem == MAP_FAILED)
			return NULL;
		c = mem;
		c->used = 0;
		c->cap = size - sizeof(*c);
		c->next = r->chunks;
		r->chunks = c;
	}
	char *p = c->data + c->used;
	c->used += n;
	return p;
}

void recording_free(struct recording *r)
{
	for (struct recording_chunk *c = r->chunks, *next; c; c = next) {
		next = c->next;
		munmap(c, c->cap + sizeof(*c));
	}
	free(r->slots);
	free(r->keys);
	memset(r, 0, sizeof(*r));
}

static int grow(struct recording *r)
{
	size_t cap = r->cap * 2;
	struct stack_count *slots = calloc(cap, sizeof(*slots));
	struct recording_key *keys = calloc(cap, sizeof(*keys));
	if (!slots || !keys) {
		free(slots);
		free(keys);
		return -1;
	}
	for (size_t i = 0; i < r->cap; i++) {
		if (!r->keys[i].hash)
			continue;
		size_t j = r->keys[i].hash & (cap - 1);
		while (keys[j].hash)
			j = (j + 1) & (cap - 1);
		slots[j] = r->slots[i];
		keys[j] = r->keys[i];
	}
	free(r->slots);
	free(r->keys);
	r->slots = slots;
	r->keys = keys;
	r->cap = cap;
	return 0;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

int recording_add(struct recording *r, const char *stack, size_t len, uint64_t count)
{
	return recording_add_weighted(r, stack, len, count, 0);
}

int recording_add_weighted(struct recording *r, const char *stack, size_t len, uint64_t count, uint64_t weight)
{
	const char *nul = memchr(stack, '\0', len);
	if (nul)
		len = (size_t)(nul - stack); /* the stack is a C string */
	if ((r->nstacks + 1) * 2 > r->cap && grow(r) != 0)
		return -1;
	uint64_t h = str_hash(stack, len) | 1; /* never 0: 0 marks an empty slot */
	size_t i = h & (r->cap - 1);
	for (; r->keys[i].hash; i = (i + 1) & (r->cap - 1)) {
		if (r->keys[i].hash == h && r->keys[i].len == len && memcmp(r->slots[i].stack, stack, len) == 0) {
			r->slots[i].count += count;
			r->slots[i].weight = add_sat(r->slots[i].weight, weight);
			r->total += count;
			r->total_weight = add_sat(r->total_weight, weight);
			return 0;
		}
	}
	char *copy = text_alloc(r, len + 1);
	if (!copy)
		return -1;
	memcpy(copy, stack, len);
	copy[len] = '\0';
	r->slots[i] = (struct stack_count){ copy, count, weight };
	r->keys[i] = (struct recording_key){ h, len };
	r->nstacks++;
	r->total += count;
	r->total_weight = add_sat(r->total_weight, weight);
	return 0;
}

/* Sorting: the stacks share long prefixes (the same root frames), so instead
 * of strcmp over them again and again they are sorted by eight bytes at a
 * time (big-endian, so numeric order is byte order), and runs that share those
 * eight bytes by the next eight. A stack has no NUL byte and ends with zero
 * padding, so a shorter stack sorts before one it is a prefix of, as strcmp. */
struct sort_item {
	const char *s;
	size_t len;
};

static uint64_t key_at(const struct sort_item *it, size_t depth)
{
	uint64_t k = 0;
	if (depth + 8 <= it->len) {
		memcpy(&k, it->s + depth, 8);
		return be64toh(k);
	}
	for (size_t i = 0; i < 8; i++) {
		unsigned char c = depth + i < it->len ? (unsigned char)it->s[depth + i] : 0;
		k = k << 8 | c;
	}
	return k;
}

static int str_cmp(const void *a, const void *b, void *ctx)
{
	const struct sort_item *base = ctx;
	return strcmp(base[((const struct key_item *)a)->idx].s, base[((const struct key_item *)b)->idx].s);
}

static void sort_items(struct sort_item *base, struct key_item *v, size_t n, size_t depth)
{
	while (n > 1) {
		if (depth >= 4096) {
			/* a long shared prefix: no deeper recursion */
			qsort_r(v, n, sizeof(*v), str_cmp, (void *)base);
			return;
		}
		bool same = true, longer = false;
		for (size_t i = 0; i < n; i++) {
			const struct sort_item *it = &base[v[i].idx];
			if (i + 8 < n) /* the stacks are all over memory: ask for them ahead */
				__builtin_prefetch(base[v[i + 8].idx].s + depth);
			v[i].key = key_at(it, depth);
			same = same && v[i].key == v[0].key;
			longer = longer || it->len > depth;
		}
		if (!longer)
			return; /* all end here: equal stacks */
		if (same) {
			/* they share these bytes: skip to where the first two part */
			const struct sort_item *first = &base[v[0].idx];
			size_t lcp = first->len;
			for (size_t i = 1; i < n && lcp > depth; i++) {
				const struct sort_item *it = &base[v[i].idx];
				size_t m = it->len < lcp ? it->len : lcp, j = depth;
				while (j + 8 <= m && swar_load(it->s + j) == swar_load(first->s + j))
					j += 8;
				while (j < m && it->s[j] == first->s[j])
					j++;
				lcp = j;
			}
			depth = lcp > depth ? lcp : depth + 1;
			continue;
		}
		key_sort(v, n);
		size_t start = 0;
		for (size_t i = 1; i < n; i++) {
			if (v[i].key != v[start].key) {
				if (i - start > 1)
					sort_items(base, v + start, i - start, depth + 8);
				start = i;
			}
		}
		/* the last run of one key: on to the next eight bytes here */
		v += start;
		n -= start;
		depth += 8;
	}
}

struct stack_count *recording_sorted(const struct recording *r, size_t *n)
{
	size_t cnt = r->nstacks ? r->nstacks : 1, k = 0;
	struct stack_count *all = malloc(cnt * sizeof(*all)), *out = malloc(cnt * sizeof(*out));
	struct sort_item *base = malloc(cnt * sizeof(*base));
	struct key_item *v = malloc(cnt * sizeof(*v));
	if (all && out && base && v) {
		for (size_t i = 0; i < r->cap; i++) {
			if (!r->keys[i].hash)
				continue;
			all[k] = r->slots[i];
			base[k] = (struct sort_item){ r->slots[i].stack, r->keys[i].len };
			v[k] = (struct key_item){ 0, k };
			k++;
		}
		sort_items(base, v, k, 0);
		for (size_t i = 0; i < k; i++)
			out[i] = all[v[i].idx];
		*n = k;
	} else {
		free(out);
		out = NULL;
	}
	free(all);
	free(base);
	free(v);
	return out;
}
