/* stack_cache.c - folded stacks kept by their raw sample stacks (an open hash
 * table, XXH3 of the key, of entries in one arena: key, text, plain), and
 * named frames kept by their pc or HotSpot frame (a fixed table). */
#include "stack_cache.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#define MIN_SLOTS 1024

struct entry {
	uint64_t hash, gen, head;
	uint32_t pid;
	size_t len[2];
	struct stack_cache_value v;
	unsigned char key[]; /* both parts, then text, then plain */
};

struct stack_cache {
	struct entry **slot;  /* nslots, a power of two; load at most 1/2 */
	uint64_t *hash;	      /* per slot: its entry's hash (a probe reads no entry that differs) */
	unsigned char *arena; /* max_bytes, entries one after another from its start */
	size_t nslots, count, bytes, max_bytes;
	uint64_t hits, misses, flushes;
};

struct stack_cache *stack_cache_new(size_t max_bytes)
{
	struct stack_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->slot = calloc(MIN_SLOTS, sizeof(*c->slot));
	c->hash = calloc(MIN_SLOTS, sizeof(*c->hash));
	c->arena = malloc(max_bytes); /* its pages are touched as it fills */
	if (!c->slot || !c->hash || !c->arena) {
		free(c->slot);
		free(c->hash);
		free(c->arena);
		free(c);
		return NULL;
	}
	c->nslots = MIN_SLOTS;
	c->max_bytes = max_bytes;
	return c;
}

static void flush(struct stack_cache *c)
{
	memset(c->slot, 0, c->nslots * sizeof(*c->slot));
	c->count = c->bytes = 0;
}

void stack_cache_free(struct stack_cache *c)
{
	if (!c)
		return;
	free(c->slot);
	free(c->hash);
	free(c->arena);
	free(c);
}

void stack_cache_hash(struct stack_cache_key *k)
{
	uint64_t seed = XXH3_64bits_withSeed(&k->head, sizeof(k->head), k->gen * 0x9e3779b97f4a7c15ULL ^ k->pid);
	seed = XXH3_64bits_withSeed(k->part[0], k->len[0], seed);
	k->hash = XXH3_64bits_withSeed(k->part[1], k->len[1], seed);
}

const struct stack_cache_value *stack_cache_get(struct stack_cache *c, const struct stack_cache_key *k)
{
	for (size_t i = k->hash & (c->nslots - 1);; i = (i + 1) & (c->nslots - 1)) {
		const struct entry *e = c->slot[i];
		if (!e)
			break;
		if (c->hash[i] == k->hash && e->pid == k->pid && e->gen == k->gen && e->head == k->head &&
		    e->len[0] == k->len[0] && e->len[1] == k->len[1] &&
		    (!k->len[0] || memcmp(e->key, k->part[0], k->len[0]) == 0) &&
		    (!k->len[1] || memcmp(e->key + k->len[0], k->part[1], k->len[1]) == 0)) {
			c->hits++;
			return &e->v;
		}
	}
	c->misses++;
	return NULL;
}

static int grow(struct stack_cache *c)
{
	size_t n = c->nslots * 2;
	struct entry **s = calloc(n, sizeof(*s));
	uint64_t *h = calloc(n, sizeof(*h));
	if (!s || !h) {
		free(s);
		free(h);
		return -1;
	}
	for (size_t i = 0; i < c->nslots; i++) {
		struct entry *e = c->slot[i];
		if (!e)
			continue;
		size_t k = e->hash & (n - 1);
		while (s[k])
			k = (k + 1) & (n - 1);
		s[k] = e;
		h[k] = e->hash;
	}
	free(c->slot);
	free(c->hash);
	c->slot = s;
	c->hash = h;
	c->nslots = n;
	return 0;
}

int stack_cache_put(struct stack_cache *c, const struct stack_cache_key *k, const struct stack_cache_value *v)
{
	size_t keylen = k->len[0] + k->len[1];
	size_t size = sizeof(struct entry) + keylen + v->len + 1 + (v->plain ? v->plain_len + 1 : 0);
	size = (size + 7) & ~(size_t)7; /* the next entry aligned */
	if (size > c->max_bytes)
		return -1;
	if (c->bytes + size > c->max_bytes) {
		flush(c); /* the stacks of now come back soon; old ones are gone for good */
		c->flushes++;
	}
	if ((c->count + 1) * 2 > c->nslots && grow(c) != 0)
		return -1;
	struct entry *e = (struct entry *)(c->arena + c->bytes);
	e->hash = k->hash;
	e->gen = k->gen;
	e->head = k->head;
	e->pid = k->pid;
	e->len[0] = k->len[0];
	e->len[1] = k->len[1];
	e->v = *v;
	if (k->len[0]) /* an empty part may be NULL */
		memcpy(e->key, k->part[0], k->len[0]);
	if (k->len[1])
		memcpy(e->key + k->len[0], k->part[1], k->len[1]);
	char *text = (char *)e->key + keylen;
	memcpy(text, v->text, v->len);
	text[v->len] = '\0';
	e->v.text = text;
	if (v->plain) {
		char *plain = text + v->len + 1;
		memcpy(plain, v->plain, v->plain_len);
		plain[v->plain_len] = '\0';
		e->v.plain = plain;
	}
	size_t i = e->hash & (c->nslots - 1);
	while (c->slot[i])
		i = (i + 1) & (c->nslots - 1);
	c->slot[i] = e;
	c->hash[i] = e->hash;
	c->count++;
	c->bytes += size;
	return 0;
}

void stack_cache_stats(const struct stack_cache *c, struct stack_cache_stats *out)
{
	*out = (struct stack_cache_stats){ c->hits, c->misses, c->flushes, c->count, c->bytes };
}

/* ---- frames ------------------------------------------------------------------ */

struct memo_slot {
	struct frame_key k;
	bool used;
	struct frame_memo_entry e;
};

struct frame_memo {
	struct memo_slot *slot;
	size_t mask;
};

struct frame_memo *frame_memo_new(size_t slots)
{
	size_t n = 1;
	while (n < slots)
		n *= 2;
	struct frame_memo *m = calloc(1, sizeof(*m));
	if (!m || !(m->slot = calloc(n, sizeof(*m->slot)))) {
		free(m);
		return NULL;
	}
	m->mask = n - 1;
	return m;
}

void frame_memo_free(struct frame_memo *m)
{
	if (!m)
		return;
	for (size_t i = 0; i <= m->mask; i++)
		free(m->slot[i].e.fold);
	free(m->slot);
	free(m);
}

static size_t memo_index(const struct frame_memo *m, const struct frame_key *k)
{
	uint64_t h = k->pc * 0x9e3779b97f4a7c15ULL ^ k->method * 0xc2b2ae3d27d4eb4fULL ^
		     (k->gen + k->pid + ((uint64_t)k->cookie << 32)) * 0x165667b19e3779f9ULL ^
		     ((uint64_t)k->bci << 16 | (uint64_t)k->kind << 8 | k->caller);
	h ^= h >> 29;
	return (size_t)(h * 0xbf58476d1ce4e5b9ULL >> 32) & m->mask;
}

static bool same_key(const struct frame_key *a, const struct frame_key *b)
{
	return a->pc == b->pc && a->method == b->method && a->gen == b->gen && a->pid == b->pid &&
	       a->cookie == b->cookie && a->bci == b->bci && a->kind == b->kind && a->caller == b->caller;
}

const struct frame_memo_entry *frame_memo_get(const struct frame_memo *m, const struct frame_key *k)
{
	const struct memo_slot *s = &m->slot[memo_index(m, k)];
	return s->used && same_key(&s->k, k) ? &s->e : NULL;
}

void frame_memo_put(struct frame_memo *m, const struct frame_key *k, const struct frame *f, const char *fold,
		    size_t fold_len, unsigned fold_lines)
{
	struct memo_slot *s = &m->slot[memo_index(m, k)];
	free(s->e.fold);
	s->e = (struct frame_memo_entry){ *f, NULL, 0, 0 };
	if (fold && (s->e.fold = malloc(fold_len + 1)) != NULL) {
		memcpy(s->e.fold, fold, fold_len);
		s->e.fold[fold_len] = '\0';
		s->e.fold_len = fold_len;
		s->e.fold_lines = fold_lines;
	}
	s->k = *k;
	s->used = true;
}
