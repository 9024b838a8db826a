/* str_intern.c - open-addressing hash set of strings with an arena behind it;
 * strings live until the set is freed. */
#include "str_intern.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK (256 * 1024)

struct chunk {
	struct chunk *next;
	size_t used, cap;
	char data[];
};

struct str_intern {
	const char **slots;
	size_t cap, count;
	size_t bytes; /* what it holds: the arena's chunks and the slots */
	struct chunk *chunks;
};

/* Eight bytes a step (folded stacks are long): multiply and fold, as
 * murmur's finaliser mixes, then the tail. */
uint64_t str_hash(const char *s, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ (len * 0xff51afd7ed558ccdULL), w;
	for (; len >= 8; s += 8, len -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	w = 0;
	if (len) /* s may be NULL for the empty string */
		memcpy(&w, s, len);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 29;
	h *= 0xff51afd7ed558ccdULL;
	return h ^ (h >> 32);
}

struct str_intern *str_intern_new(void)
{
	struct str_intern *si = calloc(1, sizeof(*si));
	if (!si)
		return NULL;
	si->cap = 1024;
	si->slots = calloc(si->cap, sizeof(*si->slots));
	si->bytes = si->cap * sizeof(*si->slots);
	if (!si->slots) {
		free(si);
		return NULL;
	}
	return si;
}

void str_intern_free(struct str_intern *si)
{
	if (!si)
		return;
	for (struct chunk *c = si->chunks, *next; c; c = next) {
		next = c->next;
		free(c);
	}
	free(si->slots);
	free(si);
}

static char *arena_copy(struct str_intern *si, const char *s, size_t len)
{
	struct chunk *c = si->chunks;
	if (!c || c->cap - c->used < len + 1) {
		size_t cap = len + 1 > CHUNK ? len + 1 : CHUNK;
		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->used = 0;
		c->cap = cap;
		si->bytes += sizeof(*c) + cap;
		c->next = si->chunks;
		si->chunks = c;
	}
	char *p = c->data + c->used;
	memcpy(p, s, len);
	p[len] = '\0';
	c->used += len + 1;
	return p;
}

static int grow(struct str_intern *si)
{
	size_t cap = si->cap * 2;
	const char **slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -1;
	for (size_t i = 0; i < si->cap; i++) {
		const char *s = si->slots[i];
		if (!s)
			continue;
		size_t j = str_hash(s, strlen(s)) & (cap - 1);
		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = s;
	}
	free(si->slots);
	si->slots = slots;
	si->bytes += (cap - si->cap) * sizeof(*slots);
	si->cap = cap;
	return 0;
}

const char *str_intern_n(struct str_intern *si, const char *s, size_t len)
{
	if ((si->count + 1) * 2 > si->cap && grow(si) != 0)
		return NULL;
	size_t i = str_hash(s, len) & (si->cap - 1);
	for (; si->slots[i]; i = (i + 1) & (si->cap - 1)) {
		const char *t = si->slots[i];
		if (strncmp(t, s, len) == 0 && t[len] == '\0')
			return t;
	}
	char *copy = arena_copy(si, s, len);
	if (!copy)
		return NULL;
	si->slots[i] = copy;
	si->count++;
	return copy;
}

const char *str_intern(struct str_intern *si, const char *s)
{
	return str_intern_n(si, s, strlen(s));
}

size_t str_intern_count(const struct str_intern *si)
{
	return si->count;
}

size_t str_intern_bytes(const struct str_intern *si)
{
	return si->bytes;
}

const char *str_intern_find(const struct str_intern *si, const char *s, size_t len)
{
	size_t i = str_hash(s, len) & (si->cap - 1);
	for (; si->slots[i]; i = (i + 1) & (si->cap - 1)) {
		const char *t = si->slots[i];
		if (strncmp(t, s, len) == 0 && t[len] == '\0')
			return t;
	}
	return NULL;
}
