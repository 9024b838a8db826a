/* key_sort.h - sorts (64-bit key, index) pairs by key: a quicksort with the
 * comparison inline, for the writers' prefix-at-a-time string sorts. */
#ifndef JFLAME_KEY_SORT_H
#define JFLAME_KEY_SORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

struct key_item {
	uint64_t key;
	size_t idx;
};

static inline int key_item_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct key_item *)a)->key, y = ((const struct key_item *)b)->key;
	return x < y ? -1 : x > y;
}

static inline void key_item_swap(struct key_item *a, struct key_item *b)
{
	struct key_item t = *a;
	*a = *b;
	*b = t;
}

/* Not stable (equal keys come out in any order). depth: how many more
 * partitions before it hands over to qsort (a bad pivot run). */
static inline void key_sort_depth(struct key_item *v, size_t n, int depth)
{
	while (n > 16) {
		if (depth-- == 0) {
			qsort(v, n, sizeof(*v), key_item_cmp);
			return;
		}
		/* median of three to v[0], then Hoare's partition */
		size_t mid = n / 2;
		if (v[mid].key < v[0].key)
			key_item_swap(&v[mid], &v[0]);
		if (v[n - 1].key < v[0].key)
			key_item_swap(&v[n - 1], &v[0]);
		if (v[n - 1].key < v[mid].key)
			key_item_swap(&v[n - 1], &v[mid]);
		key_item_swap(&v[0], &v[mid]);
		uint64_t pivot = v[0].key;
		size_t i = 0, j = n;
		for (;;) {
			do
				i++;
			while (i < n && v[i].key < pivot);
			do
				j--;
			while (v[j].key > pivot);
			if (i >= j)
				break;
			key_item_swap(&v[i], &v[j]);
		}
		key_item_swap(&v[0], &v[j]);
		/* the smaller side by recursion, the larger by the loop */
		if (j < n - j - 1) {
			key_sort_depth(v, j, depth);
			v += j + 1;
			n -= j + 1;
		} else {
			key_sort_depth(v + j + 1, n - j - 1, depth);
			n = j;
		}
	}
	for (size_t i = 1; i < n; i++) {
		struct key_item x = v[i];
		size_t j = i;
		for (; j > 0 && v[j - 1].key > x.key; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

static inline void key_sort(struct key_item *v, size_t n)
{
	int depth = 0;
	for (size_t m = n; m > 1; m >>= 1)
		depth += 2;
	key_sort_depth(v, n, depth + 4);
}

#endif
