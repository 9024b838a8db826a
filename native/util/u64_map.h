/* u64_map.h - the one map of 64-bit keys: key -> a 32-bit value (the index of
 * the caller's row, say), open addressing over a power-of-two table. */
#ifndef JFLAME_U64_MAP_H
#define JFLAME_U64_MAP_H

#include <stddef.h>
#include <stdint.h>

#define U64_MAP_NONE  UINT32_MAX /* no value: a free slot, a key not there, out of memory */
#define U64_MAP_FIRST 64	 /* slots of a table's first allocation */

/* Any key, 0 too; linear probing from a mix of the key; the table doubles
 * when an add would fill more than half of it. A zeroed struct is an empty map. */
struct u64_map {
	uint64_t *keys;
	uint32_t *vals; /* U64_MAP_NONE: a free slot */
	size_t cap, n;	/* cap: 0 (no table yet) or a power of two */
};

/* An empty map with room for keys keys before it grows. 0, or -1 when out of
 * memory (m is then empty, with no table). */
int u64_map_init(struct u64_map *m, size_t keys);
void u64_map_free(struct u64_map *m);
/* Empties m, keeping its table. */
void u64_map_clear(struct u64_map *m);
/* The value of key, or U64_MAP_NONE when it is not there. */
uint32_t u64_map_find(const struct u64_map *m, uint64_t key);
/* The value of key, added first with value val (below U64_MAP_NONE) when it
 * is not there. U64_MAP_NONE when out of memory: m is then unchanged. */
uint32_t u64_map_add(struct u64_map *m, uint64_t key, uint32_t val);

#endif
