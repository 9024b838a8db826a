/* str_index.c - open-addressing hash table from strings to their first-seen
 * index, the strings kept in an array in that order, their text in big blocks. */
#include "str_index.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "grow.h"
#include "str_intern.h"

/* The strings' text, one after another in blocks: 64 KB first (a small index
 * stays small), doubling to 4 MB. A block is mapped with its pages in (one call,
 * not a fault per page: a recording holds tens of megabytes of stacks). */
#define CHUNK_FIRST (64u << 10)
#define CHUNK_MAX   (4u << 20)

struct str_index_chunk {
	struct str_index_chunk *next;
	size_t used, cap;
	char data[];
};

static char *text_alloc(struct str_index *x, size_t n)
{
	struct str_index_chunk *c = x->chunks;
	if (!c || c->cap - c->used < n) {
		size_t size = c ? (c->cap + sizeof(*c)) * 2 : CHUNK_FIRST;
		if (size > CHUNK_MAX)
			size = CHUNK_MAX;
		if (size < n + sizeof(*c))
			size = n + sizeof(*c);
		void *mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		if (mem == MAP_FAILED)
			return NULL;
		c = mem;
		c->used = 0;
		c->cap = size - sizeof(*c);
		c->next = x->chunks;
		x->chunks = c;
	}
	char *p = c->data + c->used;
	c->used += n;
	return p;
}

void str_index_init(struct str_index *x)
{
	memset(x, 0, sizeof(*x));
}

void str_index_free(struct str_index *x)
{
	for (struct str_index_chunk *c = x->chunks, *next; c; c = next) {
		next = c->next;
		munmap(c, c->cap + sizeof(*c));
	}
	free(x->strs);
	free(x->lens);
	free(x->slots);
	memset(x, 0, sizeof(*x));
}

static size_t slot_of(const struct str_index *x, const char *s, size_t len, uint64_t h)
{
	size_t mask = x->nslots - 1, i = (size_t)h & mask;
	uint32_t h32 = (uint32_t)h;
	for (; x->slots[i].idx1; i = (i + 1) & mask) {
		uint32_t k = x->slots[i].idx1 - 1;
		if (x->slots[i].hash == h32 && x->lens[k] == len && memcmp(x->strs[k], s, len) == 0)
			break;
	}
	return i;
}

static int rehash(struct str_index *x)
{
	size_t nslots = x->nslots ? x->nslots * 2 : 1024;
	struct str_index_slot *slots = calloc(nslots, sizeof(*slots));
	if (!slots)
		return -1;
	for (size_t i = 0; i < x->nslots; i++) {
		if (!x->slots[i].idx1)
			continue;
		/* the kept low 32 bits of the hash place it (the table has < 2^32 slots) */
		size_t j = x->slots[i].hash & (nslots - 1);
		while (slots[j].idx1)
			j = (j + 1) & (nslots - 1);
		slots[j] = x->slots[i];
	}
	free(x->slots);
	x->slots = slots;
	x->nslots = nslots;
	return 0;
}

long str_index_find(const struct str_index *x, const char *s, size_t len)
{
	if (!s)
		s = "";
	if (!x->nslots)
		return -1;
	size_t i = slot_of(x, s, len, str_hash(s, len));
	return x->slots[i].idx1 ? (long)x->slots[i].idx1 - 1 : -1;
}

long str_index_add(struct str_index *x, const char *s, size_t len)
{
	if (!s)
		s = ""; /* the empty string, given as NULL (len 0) */
	if ((x->n + 1) * 2 > x->nslots && rehash(x) != 0)
		return -1;
	uint64_t h = str_hash(s, len);
	size_t i = slot_of(x, s, len, h);
	if (x->slots[i].idx1)
		return (long)x->slots[i].idx1 - 1;
	if (x->n >= STR_INDEX_MAX)
		return -1;
	size_t strs_cap = x->cap, lens_cap = x->cap; /* one capacity: set when both grew */
	if (ARRAY_GROW(x->strs, strs_cap, x->n + 1) != 0 || ARRAY_GROW(x->lens, lens_cap, x->n + 1) != 0)
		return -1;
	x->cap = strs_cap;
	char *copy = text_alloc(x, len + 1);
	if (!copy)
		return -1;
	memcpy(copy, s, len);
	copy[len] = '\0';
	x->strs[x->n] = copy;
	x->lens[x->n] = len;
	x->slots[i] = (struct str_index_slot){ (uint32_t)x->n + 1, (uint32_t)h };
	return (long)x->n++;
}
