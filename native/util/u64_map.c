/* u64_map.c - the one map of 64-bit keys (u64_map.h): linear probing from
 * murmur3's finalizer of the key, the table doubled at half full. */
#include "u64_map.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t key_mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	return k ^ (k >> 33);
}

/* key's slot: the one holding it, else the free one where it goes */
static size_t slot_find(const struct u64_map *m, uint64_t key)
{
	size_t i = (size_t)key_mix(key) & (m->cap - 1);
	while (m->vals[i] != U64_MAP_NONE && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

/* m's keys moved into a table of cap slots (a power of two, over twice m->n). */
static int table_resize(struct u64_map *m, size_t cap)
{
	struct u64_map t = { NULL, NULL, cap, m->n };
	int rc = -1;

	if (cap > SIZE_MAX / sizeof(*t.keys) || !(t.keys = malloc(cap * sizeof(*t.keys))) ||
	    !(t.vals = malloc(cap * sizeof(*t.vals))))
		goto out;
	memset(t.vals, 0xff, cap * sizeof(*t.vals));
	for (size_t i = 0; i < m->cap; i++) {
		if (m->vals[i] == U64_MAP_NONE)
			continue;
		size_t j = slot_find(&t, m->keys[i]);
		t.keys[j] = m->keys[i];
		t.vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	*m = t;
	t.keys = NULL;
	t.vals = NULL;
	rc = 0;
out:
	free(t.keys);
	free(t.vals);
	return rc;
}

int u64_map_init(struct u64_map *m, size_t keys)
{
	size_t cap = U64_MAP_FIRST;

	memset(m, 0, sizeof(*m));
	while (cap / 2 < keys && cap <= SIZE_MAX / 4)
		cap *= 2;
	return table_resize(m, cap);
}

void u64_map_free(struct u64_map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

void u64_map_clear(struct u64_map *m)
{
	if (m->cap)
		memset(m->vals, 0xff, m->cap * sizeof(*m->vals));
	m->n = 0;
}

uint32_t u64_map_find(const struct u64_map *m, uint64_t key)
{
	return m->cap ? m->vals[slot_find(m, key)] : U64_MAP_NONE;
}

uint32_t u64_map_add(struct u64_map *m, uint64_t key, uint32_t val)
{
	size_t i = m->cap ? slot_find(m, key) : 0;

	if (m->cap && m->vals[i] != U64_MAP_NONE)
		return m->vals[i];
	if ((m->n + 1) * 2 > m->cap) {
		if (m->cap > SIZE_MAX / 4 || table_resize(m, m->cap ? m->cap * 2 : U64_MAP_FIRST) != 0)
			return U64_MAP_NONE;
		i = slot_find(m, key);
	}
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
	return val;
}
