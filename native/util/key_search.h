/* key_search.h - the one binary search of a table sorted by a 64-bit key: how many
 * of its rows begin at or before an address (the last of them is the one that may hold it). */
#ifndef JFLAME_KEY_SEARCH_H
#define JFLAME_KEY_SEARCH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The rows of base[0..n) (each size bytes, sorted by the uint64_t at key_off)
 * whose key is key or less: the index after the last such row, 0 when none. */
static inline size_t key_upper_bound(const void *base, size_t n, size_t size, size_t key_off, uint64_t key)
{
	const char *p = base;
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;
		memcpy(&k, p + mid * size + key_off, sizeof(k));
		if (k <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The typed form: rows an array of n structs sorted by their uint64_t field. */
#define KEY_UPPER_BOUND(rows, n, field, key) \
	key_upper_bound((rows), (n), sizeof(*(rows)), offsetof(__typeof__(*(rows)), field), (key))

#endif
