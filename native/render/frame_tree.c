/* frame_tree.c - the merged frame tree of a flame graph: frame names interned,
 * stacks sorted and flowed left to right into nodes, parents first. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include "frame_tree.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "key_sort.h"
#include "str_intern.h"
#include "swar.h"

#define NONE UINT32_MAX

/* one frame of the caller's text */
struct slice {
	const char *p;
	uint32_t len;
};

/* one stack as name indexes, for sorting */
struct frame_seq {
	const uint32_t *ids;
	uint32_t len;
	size_t stack; /* index into the caller's stacks */
	size_t off;   /* of ids in tree.ids */
};

/* Doubles the name slots when they are half full. */
static int name_slots_grow(struct frame_tree *t)
{
	uint32_t size = t->name_slots ? t->name_mask + 1 : 0, nsize, *ns;
	if (size && t->nnames < size / 2)
		return 0;
	nsize = size ? size * 2 : 1024;
	if (nsize < size || !(ns = calloc(nsize, sizeof(*ns))))
		return -1;
	for (uint32_t i = 0; i < size; i++) {
		uint32_t v = t->name_slots[i], j;
		if (!v)
			continue;
		for (j = (uint32_t)t->names[v - 1].hash & (nsize - 1); ns[j]; j = (j + 1) & (nsize - 1))
			;
		ns[j] = v;
	}
	free(t->name_slots);
	t->name_slots = ns, t->name_mask = nsize - 1;
	return 0;
}

static bool same_bytes(const char *a, const char *b, size_t n)
{
	uint64_t x, y;
	for (; n >= 8; a += 8, b += 8, n -= 8) {
		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		if (x != y)
			return false;
	}
	while (n--)
		if (*a++ != *b++)
			return false;
	return true;
}

static uint32_t name_intern(struct frame_tree *t, const char *p, uint32_t len)
{
	uint64_t h = str_hash(p, len);
	uint32_t j, v;
	struct frame_name *nm;

	for (j = (uint32_t)h & t->name_mask; (v = t->name_slots[j]); j = (j + 1) & t->name_mask) {
		nm = &t->names[v - 1];
		if (nm->hash == h && nm->len == len && same_bytes(t->pool + nm->off, p, len))
			return v - 1;
	}
	if (t->nnames == UINT32_MAX - 1 || t->pool_len + len + 1 > UINT32_MAX)
		return NONE;
	size_t names_cap = t->names_cap;
	if (ARRAY_GROW(t->names, names_cap, (size_t)t->nnames + 1) != 0 || names_cap > UINT32_MAX)
		return NONE;
	t->names_cap = (uint32_t)names_cap;
	if (ARRAY_GROW(t->pool, t->pool_cap, t->pool_len + len + 1) != 0)
		return NONE;
	memcpy(t->pool + t->pool_len, p, len);
	t->pool[t->pool_len + len] = '\0';
	nm = &t->names[t->nnames];
	nm->off = (uint32_t)t->pool_len, nm->len = len, nm->hash = h, nm->hue = -1;
	t->pool_len += len + 1;
	t->name_slots[j] = ++t->nnames;
	if (name_slots_grow(t))
		return NONE;
	return t->nnames - 1;
}

/* The first ';' in p[0..end), or end: eight bytes a step, in bounds. */
static const char *frame_end(const char *p, const char *end)
{
	while (end - p >= 8) {
		uint64_t m = swar_eq(swar_load(p), swar_rep(';'));
		if (m) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
			return p + (__builtin_ctzll(m) >> 3);
#else
			break;
#endif
		}
		p += 8;
	}
	while (p < end && *p != ';')
		p++;
	return p;
}

/* Turns every stack with samples into a sequence of name indexes. The frames a
 * stack begins with that are the same as the stack before's (sorted input has
 * many) take their indexes without another look-up. */
static int tree_tokenize(struct frame_tree *t, const struct fg_stack *stacks, size_t n, bool reverse, bool differential)
{
	struct slice *cur = NULL, *prev = NULL, *tmp;
	size_t cur_cap = 0, prev_cap = 0, prev_n = 0, prev_start = 0, c;
	int ret = -1;

	if (!(t->seqs = malloc((n ? n : 1) * sizeof(*t->seqs))))
		return -1;
	for (size_t i = 0; i < n; i++) {
		const char *p = stacks[i].frames ? stacks[i].frames : "", *end;
		size_t k = 0, start = t->nids;
		bool same = !reverse;

		if (!stacks[i].count && !(differential && stacks[i].count_before))
			continue;
		end = p + strlen(p);
		for (;;) {
			const char *e = frame_end(p, end);
			size_t len = (size_t)(e - p);
			if (len) {
				uint32_t id;
				if (len > UINT32_MAX / 2 || ARRAY_GROW(t->ids, t->ids_cap, t->nids + 1) != 0 ||
				    ARRAY_GROW(cur, cur_cap, k + 1) != 0)
					goto out;
				if (same && k < prev_n && prev[k].len == len && same_bytes(prev[k].p, p, len)) {
					id = t->ids[prev_start + k];
				} else {
					same = false;
					if ((id = name_intern(t, p, (uint32_t)len)) == NONE)
						goto out;
				}
				t->ids[t->nids++] = id;
				cur[k++] = (struct slice){ p, (uint32_t)len };
			}
			if (e == end)
				break;
			p = e + 1;
		}
		if (k > UINT32_MAX - 1)
			goto out;
		if (k > t->maxdepth)
			t->maxdepth = (uint32_t)k;
		if (reverse) {
			for (size_t a = start, b = t->nids; a + 1 < b; a++, b--) {
				uint32_t x = t->ids[a];
				t->ids[a] = t->ids[b - 1], t->ids[b - 1] = x;
			}
		}
		/* ids may still move as they grow: offsets until the end */
		t->seqs[t->nseqs++] = (struct frame_seq){ NULL, (uint32_t)k, i, start };
		prev_n = k, prev_start = start;
		tmp = prev, prev = cur, cur = tmp;
		c = prev_cap, prev_cap = cur_cap, cur_cap = c;
	}
	for (size_t i = 0; i < t->nseqs; i++)
		t->seqs[i].ids = t->ids + t->seqs[i].off;
	ret = 0;
out:
	free(cur);
	free(prev);
	return ret;
}

struct ranked {
	const char *p;
	uint32_t len, id;
};

static int rank_cmp(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	uint32_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->p, y->p, n);
	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

/* Renumbers the names in byte order, so stacks sort by their indexes. */
static int tree_rank(struct frame_tree *t)
{
	struct ranked *v = malloc(((size_t)t->nnames + 1) * sizeof(*v));
	uint32_t *rank = malloc(((size_t)t->nnames + 1) * sizeof(*rank));
	struct frame_name *sorted = malloc(((size_t)t->nnames + 1) * sizeof(*sorted));
	int ret = -1;

	if (!v || !rank || !sorted)
		goto out;
	for (uint32_t i = 0; i < t->nnames; i++)
		v[i] = (struct ranked){ t->pool + t->names[i].off, t->names[i].len, i };
	qsort(v, t->nnames, sizeof(*v), rank_cmp);
	for (uint32_t i = 0; i < t->nnames; i++) {
		rank[v[i].id] = i;
		sorted[i] = t->names[v[i].id];
	}
	for (size_t i = 0; i < t->nids; i++)
		t->ids[i] = rank[t->ids[i]];
	free(t->names);
	t->names = sorted, sorted = NULL;
	ret = 0;
out:
	free(v);
	free(rank);
	free(sorted);
	return ret;
}

static int seq_cmp(const void *a, const void *b)
{
	const struct frame_seq *x = a, *y = b;
	uint32_t n = x->len < y->len ? x->len : y->len, i = 0;
	for (; i + 2 <= n; i += 2) {
		uint64_t a, b;
		memcpy(&a, x->ids + i, 8);
		memcpy(&b, y->ids + i, 8);
		if (a != b)
			break;
	}
	for (; i < n; i++)
		if (x->ids[i] != y->ids[i])
			return x->ids[i] < y->ids[i] ? -1 : 1;
	return x->len < y->len ? -1 : x->len > y->len;
}

/* Sorting the stacks: they share their first frames, so rather than compare
 * them whole again and again they are sorted by two frames at a time (a 64-bit
 * key: name rank + 1, 0 past the end, so a stack sorts before the longer ones
 * it begins), and runs that share those by the next two. */
static int seq_key_full_cmp(const void *a, const void *b, void *ctx)
{
	const struct frame_seq *seqs = ctx;
	return seq_cmp(&seqs[((const struct key_item *)a)->idx], &seqs[((const struct key_item *)b)->idx]);
}

static void seq_sort_keys(const struct frame_seq *seqs, struct key_item *v, size_t n, uint32_t depth)
{
	while (n > 1) {
		bool same = true, longer = false;
		if (depth >= 4096) {
			/* long shared beginnings: no deeper recursion */
			qsort_r(v, n, sizeof(*v), seq_key_full_cmp, (void *)seqs);
			return;
		}
		for (size_t i = 0; i < n; i++) {
			const struct frame_seq *q = &seqs[v[i].idx];
			/* the stacks are all over memory: ask for them ahead */
			if (i + 16 < n)
				__builtin_prefetch(&seqs[v[i + 16].idx]);
			if (i + 8 < n)
				__builtin_prefetch(seqs[v[i + 8].idx].ids + depth);
			uint64_t hi = depth < q->len ? (uint64_t)q->ids[depth] + 1 : 0;
			uint64_t lo = depth + 1 < q->len ? (uint64_t)q->ids[depth + 1] + 1 : 0;
			v[i].key = hi << 32 | lo;
			same = same && v[i].key == v[0].key;
			longer = longer || q->len > depth;
		}
		if (!longer)
			return; /* all end here: equal stacks */
		if (!same) {
			size_t start = 0;
			key_sort(v, n);
			for (size_t i = 1; i < n; i++) {
				if (v[i].key != v[start].key) {
					if (i - start > 1)
						seq_sort_keys(seqs, v + start, i - start, depth + 2);
					start = i;
				}
			}
			v += start;
			n -= start;
		}
		depth += 2;
	}
}

/* Sorts t->seqs as seq_cmp orders them. 0, or -1 out of memory. */
static int seqs_sort(struct frame_tree *t)
{
	struct key_item *v = malloc((t->nseqs ? t->nseqs : 1) * sizeof(*v));
	struct frame_seq *sorted = malloc((t->nseqs ? t->nseqs : 1) * sizeof(*sorted));
	if (!v || !sorted) {
		free(v);
		free(sorted);
		return -1;
	}
	for (size_t i = 0; i < t->nseqs; i++)
		v[i] = (struct key_item){ 0, i };
	seq_sort_keys(t->seqs, v, t->nseqs, 0);
	for (size_t i = 0; i < t->nseqs; i++)
		sorted[i] = t->seqs[v[i].idx];
	free(v);
	free(t->seqs);
	t->seqs = sorted;
	return 0;
}

/* Lays the sorted stacks out left to right, opening nodes where a stack parts
 * from the one before. A node's subtree follows it in the array, so a closed
 * node narrower than min_total goes, with everything above it, at once: the
 * tree holds only what is drawn, and the frames being walked. */
static int tree_flow(struct frame_tree *t, const struct fg_stack *stacks, bool differential, double min_total)
{
	size_t *path = calloc((size_t)t->maxdepth + 1, sizeof(*path));
	const uint32_t *prev = NULL;
	uint32_t prev_len = 0;
	uint64_t time = 0;
	int ret = -1;

	if (!path || ARRAY_GROW(t->nodes, t->nodes_cap, (size_t)t->maxdepth + 1) != 0)
		goto out;
	if (differential && !(t->before = calloc(t->nodes_cap, sizeof(*t->before))))
		goto out;
	t->nodes[0] = (struct frame_node){ NONE, 0, 0, 0 };
	t->nnodes = 1;
	for (size_t i = 0; i <= t->nseqs; i++) {
		const struct frame_seq *q = i < t->nseqs ? &t->seqs[i] : NULL;
		if (i + 8 < t->nseqs) {
			/* sorted, the stacks are all over memory: ask for them ahead */
			__builtin_prefetch(t->seqs[i + 8].ids);
			__builtin_prefetch(&stacks[t->seqs[i + 8].stack]);
		}
		uint64_t count = q ? stacks[q->stack].count : 0;
		uint64_t before = q && differential ? stacks[q->stack].count_before : 0;
		uint32_t same = 0, len = q ? q->len : 0;

		while (same < len && same < prev_len && q->ids[same] == prev[same])
			same++;
		/* close what this stack doesn't share: deepest first */
		for (uint32_t d = prev_len; d > same; d--)
			if ((double)t->nodes[path[d]].total < min_total)
				t->nnodes = path[d];
		if (!q)
			break;
		size_t need = t->nnodes + len - same, before_cap = t->nodes_cap; /* before: as many as nodes */
		if (ARRAY_GROW(t->nodes, t->nodes_cap, need) != 0 ||
		    (differential && ARRAY_GROW_ZEROED(t->before, before_cap, need) != 0))
			goto out;
		for (uint32_t d = same; d < len; d++) {
			t->nodes[t->nnodes] = (struct frame_node){ q->ids[d], d + 1, time, 0 };
			if (differential)
				t->before[t->nnodes] = 0;
			path[d + 1] = t->nnodes++;
		}
		for (uint32_t d = 0; d <= len; d++) {
			t->nodes[path[d]].total += count;
			if (differential)
				t->before[path[d]] += before;
		}
		time += count;
		if (time < count || (differential && t->before[0] < before)) {
			ret = -2;
			goto out;
		}
		prev = q->ids, prev_len = len;
	}
	ret = 0;
out:
	free(path);
	return ret;
}

void frame_tree_free(struct frame_tree *t)
{
	free(t->pool);
	free(t->names);
	free(t->name_slots);
	free(t->ids);
	free(t->seqs);
	free(t->nodes);
	free(t->before);
}

int frame_tree_build(struct frame_tree *t, const struct fg_stack *stacks, size_t n, const struct frame_tree_options *op,
		     double min_total)
{
	bool sorted = true;
	if (name_slots_grow(t) || tree_tokenize(t, stacks, n, op->reverse, op->differential))
		return -1;
	if (!op->flamechart) {
		if (tree_rank(t))
			return -1;
		for (size_t i = 1; i < t->nseqs && sorted; i++)
			sorted = seq_cmp(&t->seqs[i - 1], &t->seqs[i]) <= 0;
		if (!sorted && seqs_sort(t))
			return -1;
	}
	return tree_flow(t, stacks, op->differential, min_total);
}
