/* flamegraph.c - writes folded stacks as an interactive SVG flame graph: merges
 * the stacks into a tree, lays it out, colours it and embeds the viewer. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include "flamegraph.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph_js.h"
#include "key_sort.h"
#include "palette.h"
#include "svg_out.h"
#include "swar.h"

#define NONE UINT32_MAX
#define XPAD 10.0
#define FRAMEPAD 1.0
#define FONTWIDTH 0.59 /* average glyph width relative to the font size */
#define SEARCHCOLOR "rgb(230,0,230)"

/* ---- the merged tree -----------------------------------------------------
 *
 * As flamegraph.pl: the stacks, sorted by their frames (a flame chart keeps
 * input order), flow from left to right; a stack shares the frames it has in
 * common with the stack before it and opens new ones for the rest. Frame names
 * are interned first, so sorting and comparing deal in integers, and the
 * nodes come out parents first, children in order: drawing is one pass. */

struct name {
	uint32_t off, len; /* in tree.pool, NUL-terminated there */
	uint64_t hash;
	int8_t hue;        /* palette_name_hue, -1 until needed */
};

struct node {
	uint32_t name; /* index into names */
	uint32_t depth;
	uint64_t start; /* samples left of it */
	uint64_t total;
};

/* one frame of the caller's text */
struct slice {
	const char *p;
	uint32_t len;
};

/* one stack as name indexes, for sorting */
struct seq {
	const uint32_t *ids;
	uint32_t len;
	size_t stack;   /* index into the caller's stacks */
	size_t off;     /* of ids in tree.ids */
};

struct tree {
	char *pool;
	size_t pool_len, pool_cap;
	struct name *names;
	uint32_t nnames, names_cap;
	uint32_t *name_slots; /* open addressing: name index + 1, 0 empty */
	uint32_t name_mask;
	uint32_t *ids; /* the frames of every stack, as name indexes */
	size_t nids, ids_cap;
	struct seq *seqs;
	size_t nseqs;
	struct node *nodes;
	uint64_t *before; /* per node, differential graphs only */
	size_t nnodes, nodes_cap;
	uint32_t maxdepth;
};

static uint64_t hash_bytes(const char *p, size_t n)
{
	size_t len = n;
	uint64_t h = 0x9e3779b97f4a7c15ull ^ n, w;
	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	w = 0;
	if (n && len >= 8) {
		/* the last eight bytes, overlapping ones already mixed in */
		memcpy(&w, p + n - 8, 8);
	} else {
		while (n--)
			w = w << 8 | (unsigned char)p[n];
	}
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
	return h ^ (h >> 29);
}

/* Grows the array whose pointer is at pp to hold need elements. The pointer is
 * read and written with memcpy, so any object pointer type can be passed. */
static int grow_array(void *pp, size_t *cap, size_t elem, size_t need)
{
	size_t c = *cap ? *cap : 256;
	void *p, *q;
	if (need <= *cap)
		return 0;
	while (c < need) {
		if (c > SIZE_MAX / 2 / elem)
			return -1;
		c *= 2;
	}
	memcpy(&p, pp, sizeof(p));
	q = realloc(p, c * elem);
	if (!q)
		return -1;
	memcpy(pp, &q, sizeof(q));
	*cap = c;
	return 0;
}

/* Doubles the name slots when they are half full. */
static int name_slots_grow(struct tree *t)
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

static uint32_t name_intern(struct tree *t, const char *p, uint32_t len)
{
	uint64_t h = hash_bytes(p, len);
	uint32_t j, v;
	struct name *nm;

	for (j = (uint32_t)h & t->name_mask; (v = t->name_slots[j]); j = (j + 1) & t->name_mask) {
		nm = &t->names[v - 1];
		if (nm->hash == h && nm->len == len && same_bytes(t->pool + nm->off, p, len))
			return v - 1;
	}
	if (t->nnames == UINT32_MAX - 1 || t->pool_len + len + 1 > UINT32_MAX)
		return NONE;
	if (t->nnames == t->names_cap) {
		size_t cap = t->names_cap;
		if (grow_array(&t->names, &cap, sizeof(*t->names), (size_t)t->nnames + 1) ||
		    cap > UINT32_MAX)
			return NONE;
		t->names_cap = (uint32_t)cap;
	}
	if (grow_array(&t->pool, &t->pool_cap, 1, t->pool_len + len + 1))
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
static int tree_tokenize(struct tree *t, const struct fg_stack *stacks, size_t n, bool reverse, bool differential)
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
				if (len > UINT32_MAX / 2 ||
				    grow_array(&t->ids, &t->ids_cap, sizeof(*t->ids), t->nids + 1) ||
				    grow_array(&cur, &cur_cap, sizeof(*cur), k + 1))
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
		t->seqs[t->nseqs++] = (struct seq){ NULL, (uint32_t)k, i, start };
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
static int tree_rank(struct tree *t)
{
	struct ranked *v = malloc(((size_t)t->nnames + 1) * sizeof(*v));
	uint32_t *rank = malloc(((size_t)t->nnames + 1) * sizeof(*rank));
	struct name *sorted = malloc(((size_t)t->nnames + 1) * sizeof(*sorted));
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
	const struct seq *x = a, *y = b;
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
	const struct seq *seqs = ctx;
	return seq_cmp(&seqs[((const struct key_item *)a)->idx], &seqs[((const struct key_item *)b)->idx]);
}

static void seq_sort_keys(const struct seq *seqs, struct key_item *v, size_t n, uint32_t depth)
{
	while (n > 1) {
		bool same = true, longer = false;
		if (depth >= 4096) {
			/* long shared beginnings: no deeper recursion */
			qsort_r(v, n, sizeof(*v), seq_key_full_cmp, (void *)seqs);
			return;
		}
		for (size_t i = 0; i < n; i++) {
			const struct seq *q = &seqs[v[i].idx];
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
static int seqs_sort(struct tree *t)
{
	struct key_item *v = malloc((t->nseqs ? t->nseqs : 1) * sizeof(*v));
	struct seq *sorted = malloc((t->nseqs ? t->nseqs : 1) * sizeof(*sorted));
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
static int tree_flow(struct tree *t, const struct fg_stack *stacks, bool differential, double min_total)
{
	size_t *path = calloc((size_t)t->maxdepth + 1, sizeof(*path));
	const uint32_t *prev = NULL;
	uint32_t prev_len = 0;
	uint64_t time = 0;
	int ret = -1;

	if (!path || grow_array(&t->nodes, &t->nodes_cap, sizeof(*t->nodes), (size_t)t->maxdepth + 1))
		goto out;
	if (differential && !(t->before = calloc(t->nodes_cap, sizeof(*t->before))))
		goto out;
	t->nodes[0] = (struct node){ NONE, 0, 0, 0 };
	t->nnodes = 1;
	for (size_t i = 0; i <= t->nseqs; i++) {
		const struct seq *q = i < t->nseqs ? &t->seqs[i] : NULL;
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
		if (t->nnodes + len - same > t->nodes_cap) {
			size_t cap = t->nodes_cap;
			if (grow_array(&t->nodes, &t->nodes_cap, sizeof(*t->nodes), t->nnodes + len - same))
				goto out;
			if (differential) {
				uint64_t *b = realloc(t->before, t->nodes_cap * sizeof(*b));
				if (!b)
					goto out;
				memset(b + cap, 0, (t->nodes_cap - cap) * sizeof(*b));
				t->before = b;
			}
		}
		for (uint32_t d = same; d < len; d++) {
			t->nodes[t->nnodes] = (struct node){ q->ids[d], d + 1, time, 0 };
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

static void tree_free(struct tree *t)
{
	free(t->pool);
	free(t->names);
	free(t->name_slots);
	free(t->ids);
	free(t->seqs);
	free(t->nodes);
	free(t->before);
}

/* Builds the tree of the frames at least min_total samples wide: 0, -1 out
 * of memory, -2 the counts overflow. */
static int tree_build(struct tree *t, const struct fg_stack *stacks, size_t n, const struct fg_options *op,
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

/* ---- drawing ------------------------------------------------------------- */

struct draw {
	const struct fg_options *o;
	struct out *out;
	struct tree *t;
	enum palette pal;
	double fontsize, width, widthpertime, minwidth_time, height;
	double frameheight, top, bottom; /* frames: depth 0 at bottom (flame) or top (icicle) */
	uint64_t total, total_before;
	double maxdelta;
	const char *countname;
	uint64_t rng;
	const char **path; /* names from the root to the node drawn */
};

static double rng_next(struct draw *d)
{
	uint64_t z = (d->rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

static double hash01(const char *s, size_t n, bool reversed)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[reversed ? n - 1 - i : i]) * 0x100000001b3ull;
	h ^= h >> 32;
	h *= 0x9e3779b97f4a7c15ull;
	return (double)(h >> 11) * (1.0 / 9007199254740992.0);
}

static double node_delta(const struct draw *d, size_t i)
{
	double after = d->total ? (double)d->t->nodes[i].total / (double)d->total : 0;
	double before = d->total_before ? (double)d->t->before[i] / (double)d->total_before : 0;
	return d->o->negate ? before - after : after - before;
}

static void frame_color(struct draw *d, size_t i, uint8_t rgb[3])
{
	const struct node *n = &d->t->nodes[i];
	struct name *nm = n->depth ? &d->t->names[n->name] : NULL;
	const char *s = nm ? d->t->pool + nm->off : "all";
	size_t len = nm ? nm->len : 3;
	double v1, v2, v3;

	if (strcmp(s, "--") == 0 || strcmp(s, "-") == 0) {
		rgb[0] = rgb[1] = rgb[2] = s[1] ? 160 : 200;
		return;
	}
	if (d->o->differential) {
		double v = d->maxdelta > 0 ? node_delta(d, i) / d->maxdelta : 0;
		rgb[0] = rgb[1] = rgb[2] = 255;
		if (v > 0)
			rgb[1] = rgb[2] = (uint8_t)(int)(210 * (1 - (v > 1 ? 1 : v)));
		else if (v < 0)
			rgb[0] = rgb[1] = (uint8_t)(int)(210 * (1 + (v < -1 ? -1 : v)));
		return;
	}
	if (d->o->hash) {
		v1 = hash01(s, len, false);
		v2 = v3 = hash01(s, len, true);
	} else {
		v1 = rng_next(d), v2 = rng_next(d), v3 = rng_next(d);
	}
	if (d->pal == PAL_JAVA) {
		enum fg_hue hue;
		if (!nm) {
			hue = FG_HUE_META;
		} else {
			if (nm->hue < 0)
				nm->hue = (int8_t)palette_name_hue(s);
			hue = palette_hue_at(d->path + 1, n->depth, (enum fg_hue)nm->hue);
		}
		palette_hue_color(hue, v1, rgb);
		return;
	}
	palette_flat_color(d->pal == PAL_JS ? palette_js_type(s) : d->pal, v1, v2, v3, rgb);
}

/* the name without jflame's kind annotation */
static size_t display_len(const char *s, size_t len)
{
	if (len > 4 && palette_kind_hue(s, len) != FG_HUE_COUNT)
		return len - 4;
	return len;
}

static void draw_frame(struct draw *d, size_t i)
{
	struct out *o = d->out;
	const struct node *n = &d->t->nodes[i];
	const char *s = d->path[n->depth];
	size_t len = n->depth ? display_len(s, d->t->names[n->name].len) : 3;
	double x1 = XPAD + (double)n->start * d->widthpertime;
	double x2 = XPAD + (double)(n->start + n->total) * d->widthpertime;
	int64_t cx1 = centi_round(x1), cx2 = centi_round(x2);
	double y1, y2;
	uint8_t rgb[3];

	if (d->o->inverted) {
		y1 = d->top + n->depth * d->frameheight;
		y2 = d->top + (n->depth + 1) * d->frameheight - FRAMEPAD;
	} else {
		y1 = d->bottom - (n->depth + 1) * d->frameheight + FRAMEPAD;
		y2 = d->bottom - n->depth * d->frameheight;
	}
	out_str(o, "<g>\n<title>");
	out_xml_n(o, s, len, SIZE_MAX);
	out_str(o, " (");
	if (d->o->bytes) {
		/* the exact count first: the page's search sums it */
		static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
		double v = (double)n->total;
		int u = -1;
		char buf[48];
		out_u64(o, n->total, true);
		out_str(o, " bytes");
		while (v >= 1024 && u < 3)
			v /= 1024, u++;
		if (u >= 0) {
			snprintf(buf, sizeof(buf), " = %.1f %s", v, units[u]);
			out_str(o, buf);
		}
	} else {
		if (d->o->count_scale > 1)
			out_centi(o, (int64_t)llround(100.0 * (double)n->total / (double)d->o->count_scale), false);
		else
			out_u64(o, n->total, true);
		out_char(o, ' ');
		out_xml(o, d->countname);
	}
	out_str(o, ", ");
	if (n->depth == 0)
		out_str(o, "100");
	else
		out_centi(o, (int64_t)llround(10000.0 * (double)n->total / (double)d->total), false);
	out_char(o, '%');
	if (d->o->differential && n->depth) {
		int64_t dc = centi_round(100.0 * node_delta(d, i));
		out_str(o, "; ");
		if (dc > 0)
			out_char(o, '+');
		out_centi(o, dc, false);
		out_char(o, '%');
	}
	out_str(o, ")</title><rect x=\"");
	out_centi(o, cx1, true);
	out_str(o, "\" y=\"");
	out_num(o, y1);
	out_str(o, "\" width=\"");
	out_centi(o, cx2 - cx1, true);
	out_str(o, "\" height=\"");
	out_num(o, y2 - y1);
	out_str(o, "\" fill=\"");
	frame_color(d, i, rgb);
	out_rgb(o, rgb);
	out_str(o, "\" rx=\"2\" ry=\"2\"/>\n<text x=\"");
	out_num(o, x1 + 3);
	out_str(o, "\" y=\"");
	out_num(o, 3 + (y1 + y2) / 2);
	out_str(o, "\">");
	out_fitted(o, s, len, (size_t)((x2 - x1) / (d->fontsize * FONTWIDTH)));
	out_str(o, "</text>\n</g>\n");
}

static bool node_shown(const struct draw *d, const struct node *n)
{
	return n->total && (double)n->total >= d->minwidth_time;
}

/* The nodes are in drawing order already: parents first, children in order.
 * A frame too narrow to draw has only narrower frames above it. */
static void draw_frames(struct draw *d)
{
	const struct tree *t = d->t;
	d->path[0] = "all";
	for (size_t i = 0; i < t->nnodes; i++) {
		const struct node *n = &t->nodes[i];
		if (!node_shown(d, n))
			continue;
		if (n->depth)
			d->path[n->depth] = t->pool + t->names[n->name].off;
		draw_frame(d, i);
	}
}

struct legend_item {
	const char *label;
	uint8_t rgb[3];
};

/* Lays the legend out in centred rows; with out NULL only counts the rows. */
static int draw_legend(struct draw *d, const struct legend_item *items, size_t n, double y0)
{
	double fs = d->fontsize, rowh = fs + 6, avail = d->width - 2 * XPAD;
	double widths[16];
	size_t first = 0;
	int rows = 0;

	for (size_t i = 0; i < n; i++)
		widths[i] = fs + 4 + (double)utf8_chars(items[i].label, strlen(items[i].label)) * fs * FONTWIDTH + 2 * fs;
	while (first < n) {
		size_t last = first + 1;
		double w = widths[first], x;
		while (last < n && w + widths[last] <= avail)
			w += widths[last++];
		if (y0 >= 0) {
			double y = y0 + rows * rowh;
			x = (d->width - w) / 2 + fs;
			for (size_t i = first; i < last; i++) {
				out_str(d->out, "<rect x=\"");
				out_num(d->out, x);
				out_str(d->out, "\" y=\"");
				out_num(d->out, y + 3);
				out_str(d->out, "\" width=\"");
				out_num(d->out, fs);
				out_str(d->out, "\" height=\"");
				out_num(d->out, fs);
				out_str(d->out, "\" fill=\"");
				out_rgb(d->out, items[i].rgb);
				out_str(d->out, "\" stroke=\"rgb(90,90,90)\" stroke-width=\"0.5\"/>\n<text x=\"");
				out_num(d->out, x + fs + 4);
				out_str(d->out, "\" y=\"");
				out_num(d->out, y + fs + 1);
				out_str(d->out, "\">");
				out_xml(d->out, items[i].label);
				out_str(d->out, "</text>\n");
				x += widths[i];
			}
		}
		rows++;
		first = last;
	}
	return rows;
}

static size_t legend_items(const struct draw *d, struct legend_item *items)
{
	size_t n = 0;
	if (!d->o->legend)
		return 0;
	if (d->o->differential) {
		items[0] = (struct legend_item){ "grew", { 255, 100, 100 } };
		items[1] = (struct legend_item){ "shrank", { 100, 100, 255 } };
		return 2;
	}
	if (d->pal != PAL_JAVA)
		return 0;
	bool drawn[FG_HUE_COUNT] = { false };
	for (int h = 0; h < FG_HUE_ALWAYS; h++)
		drawn[h] = true;
	for (uint32_t i = 0; i < d->t->nnames; i++) { /* alloc and lock: when the graph has them */
		const struct name *nm = &d->t->names[i];
		const char *s = d->t->pool + nm->off;
		enum fg_hue kind = palette_kind_hue(s, nm->len);
		if (kind == FG_HUE_ALLOC || kind == FG_HUE_LOCK)
			drawn[kind] = true;
	}
	for (int h = 0; h < FG_HUE_COUNT; h++) {
		if (!drawn[h])
			continue;
		items[n].label = palette_hue_label((enum fg_hue)h);
		palette_hue_color((enum fg_hue)h, 0.5, items[n].rgb);
		n++;
	}
	return n;
}

static const char *background(enum palette p, bool top)
{
	switch (p) {
	case PAL_MEM:
		return top ? "#eef2ee" : "#e0ffe0";
	case PAL_IO:
		return top ? "#eeeeee" : "#e0e0ff";
	case PAL_JAVA:
	case PAL_HOT:
	case PAL_JS:
		return top ? "#eeeeee" : "#eeeeb0";
	default:
		return top ? "#f8f8f8" : "#e8e8e8";
	}
}

static bool subtitle_warns(const char *s)
{
	return strncmp(s, "WARNING", 7) == 0 || strstr(s, "frame pointers: off");
}

#define SUBTITLE_LEADING 1.25 /* line height, in font sizes */

/* How many characters of the subtitle fit on a line of width: glyphs
 * estimated as flamegraph.pl does (FONTWIDTH), with a margin, more for the
 * bold warning. */
static size_t subtitle_room(double width, double fontsize, bool bold)
{
	double chars = width / (fontsize * (bold ? FONTWIDTH + 0.09 : FONTWIDTH + 0.03));
	return chars > 8 ? (size_t)chars : 8;
}

/* The length in bytes of the subtitle's next line of at most room characters:
 * up to the last "; " that fits (whole parts), else the last space, else a cut
 * between two characters. Never 0 when len is not. */
static size_t subtitle_line(const char *s, size_t len, size_t room)
{
	size_t i = 0, chars = 0, part = 0, space = 0;
	while (i < len) {
		uint32_t cp;
		if (i > 0 && s[i] == ' ') {
			space = i;
			if (s[i - 1] == ';')
				part = i;
		}
		if (chars == room)
			return part ? part : space ? space : i;
		i += utf8_next((const unsigned char *)s + i, len - i, &cp);
		chars++;
	}
	return len;
}

/* Steps to the subtitle's next line: its text in *line and *n; false at the end. */
static bool subtitle_next(const char **s, size_t *len, size_t room, const char **line, size_t *n)
{
	while (*len > 0 && **s == ' ')
		(*s)++, (*len)--;
	if (*len == 0)
		return false;
	*line = *s;
	*n = subtitle_line(*s, *len, room);
	*s += *n;
	*len -= *n;
	return true;
}

/* The number of lines the subtitle takes at this width (1 when it fits). */
static size_t subtitle_count(const char *s, double width, double fontsize)
{
	size_t room = subtitle_room(width, fontsize, subtitle_warns(s)), len = strlen(s), n = 0, k;
	const char *line;
	while (subtitle_next(&s, &len, room, &line, &k))
		n++;
	return n ? n : 1;
}

static void draw_text(struct out *o, const char *id, double x, double y, const char *extra, const char *text)
{
	out_str(o, "<text id=\"");
	out_str(o, id);
	out_str(o, "\" x=\"");
	out_num(o, x);
	out_str(o, "\" y=\"");
	out_num(o, y);
	out_char(o, '"');
	if (extra) {
		out_char(o, ' ');
		out_str(o, extra);
	}
	out_char(o, '>');
	out_xml(o, text);
	out_str(o, "</text>\n");
}

static void draw_page(struct draw *d, double legend_y, const struct legend_item *items, size_t nitems)
{
	const struct fg_options *op = d->o;
	struct out *o = d->out;
	double fs = d->fontsize, W = d->width, H = d->height, ypad2 = fs * 2 + 10;
	const char *title = op->title;
	char num[64];

	if (!title)
		title = op->flamechart ? "Flame Chart" : op->inverted ? "Icicle Graph" : "Flame Graph";
	out_str(o, "<?xml version=\"1.0\" standalone=\"no\"?>\n<svg version=\"1.1\" width=\"");
	out_num(o, W);
	out_str(o, "\" height=\"");
	out_num(o, H);
	out_str(o, "\" onload=\"init(evt)\" viewBox=\"0 0 ");
	out_num(o, W);
	out_char(o, ' ');
	out_num(o, H);
	out_str(o, "\" xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n"
		   "<!-- Flame graph written by jflame: click a frame to zoom, Search (Ctrl-F) for a regex. "
		   "The layout and viewer follow Brendan Gregg's flamegraph.pl. -->\n");
	if (op->notes) {
		out_str(o, "<desc id=\"notes\">");
		out_xml(o, op->notes);
		out_str(o, "</desc>\n");
	}
	out_str(o, "<defs>\n\t<linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">\n"
		   "\t\t<stop stop-color=\"");
	out_str(o, background(d->pal, true));
	out_str(o, "\" offset=\"5%\"/>\n\t\t<stop stop-color=\"");
	out_str(o, background(d->pal, false));
	out_str(o, "\" offset=\"95%\"/>\n\t</linearGradient>\n</defs>\n<style type=\"text/css\">\n"
		   "\ttext { font-family:");
	out_xml(o, op->fonttype ? op->fonttype : "Verdana");
	out_str(o, "; font-size:");
	out_num(o, fs);
	out_str(o, "px; fill:rgb(0,0,0); }\n"
		   "\t#search, #ignorecase { opacity:0.1; cursor:pointer; }\n"
		   "\t#search:hover, #search.show, #ignorecase:hover, #ignorecase.show { opacity:1; }\n"
		   "\t#subtitle { text-anchor:middle; fill:rgb(60,60,60); }\n"
		   "\t#subtitle.warning { fill:rgb(200,0,0); font-weight:bold; }\n"
		   "\t#title { text-anchor:middle; font-size:");
	out_num(o, fs + 5);
	out_str(o, "px; }\n"
		   "\t#unzoom { cursor:pointer; }\n"
		   "\t#frames > *:hover { stroke:black; stroke-width:0.5; cursor:pointer; }\n"
		   "\t.hide { display:none; }\n"
		   "\t.parent { opacity:0.5; }\n"
		   "</style>\n<script type=\"text/ecmascript\">\n<![CDATA[\nvar fg = { width: ");
	out_num(o, W);
	out_str(o, ", xpad: ");
	out_num(o, XPAD);
	out_str(o, ", fontsize: ");
	out_num(o, fs);
	snprintf(num, sizeof(num), ", fontwidth: %g, inverted: %s, searchcolor: \"", FONTWIDTH,
		 op->inverted ? "true" : "false");
	out_str(o, num);
	out_str(o, SEARCHCOLOR "\" };\n");
	out_str(o, flamegraph_js);
	out_str(o, "]]>\n</script>\n<rect x=\"0\" y=\"0\" width=\"");
	out_num(o, W);
	out_str(o, "\" height=\"");
	out_num(o, H);
	out_str(o, "\" fill=\"url(#background)\"/>\n");
	draw_text(o, "title", W / 2, fs * 2, NULL, title);
	if (op->subtitle && subtitle_count(op->subtitle, W - 2 * XPAD, fs) <= 1) {
		draw_text(o, "subtitle", W / 2, fs * 4, subtitle_warns(op->subtitle) ? "class=\"warning\"" : NULL,
			  op->subtitle);
	} else if (op->subtitle) {
		/* one <text>, a line per <tspan>, so that it fits the graph's width */
		bool warns = subtitle_warns(op->subtitle);
		size_t room = subtitle_room(W - 2 * XPAD, fs, warns), len = strlen(op->subtitle), n, i = 0;
		const char *s = op->subtitle, *line;
		out_str(o, "<text id=\"subtitle\" x=\"");
		out_num(o, W / 2);
		out_str(o, "\" y=\"");
		out_num(o, fs * 4);
		out_str(o, warns ? "\" class=\"warning\">" : "\">");
		while (subtitle_next(&s, &len, room, &line, &n)) {
			out_str(o, "<tspan x=\"");
			out_num(o, W / 2);
			out_str(o, "\" dy=\"");
			out_num(o, i++ ? fs * SUBTITLE_LEADING : 0);
			out_str(o, "\">");
			out_xml_n(o, line, n, SIZE_MAX);
			out_str(o, "</tspan>");
		}
		out_str(o, "</text>\n");
	}
	draw_text(o, "details", XPAD, H - ypad2 / 2, NULL, " ");
	draw_text(o, "unzoom", XPAD, fs * 2, "class=\"hide\"", "Reset Zoom");
	draw_text(o, "search", W - XPAD - 100, fs * 2, NULL, "Search");
	draw_text(o, "ignorecase", W - XPAD - 16, fs * 2, NULL, "ic");
	draw_text(o, "matched", W - XPAD - 100, H - ypad2 / 2, NULL, " ");
	if (nitems) {
		out_str(o, "<g id=\"legend\">\n");
		draw_legend(d, items, nitems, legend_y);
		out_str(o, "</g>\n");
	}
	out_str(o, "<g id=\"frames\" data-nametype=\"");
	out_xml(o, op->nametype ? op->nametype : "Function:");
	out_str(o, "\">\n");
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

int flamegraph_write(FILE *out, const struct fg_stack *stacks, size_t n, const struct fg_options *opts,
		     char *err, size_t errlen)
{
	static const struct fg_options defaults;
	const struct fg_options *op = opts ? opts : &defaults;
	struct tree t = { 0 };
	struct draw d = { 0 };
	struct out *o = NULL;
	struct legend_item items[FG_HUE_COUNT];
	size_t nitems;
	uint32_t depthmax = 0;
	size_t i;
	int r;
	double minwidth, legend_y, legend_h = 0, ypad1, ypad3;
	int ret = -1;

	if (!out || (n && !stacks)) {
		set_err(err, errlen, "flame graph: no output or no stacks given");
		return -1;
	}
	for (i = 0; i < n; i++) {
		d.total += stacks[i].count;
		if (d.total < stacks[i].count) {
			set_err(err, errlen, "flame graph: the sample counts overflow");
			return -1;
		}
	}
	if (!d.total) {
		set_err(err, errlen, "no samples");
		return -1;
	}
	d.o = op, d.t = &t, d.pal = palette_of(op->colors);
	d.fontsize = op->fontsize > 0 ? op->fontsize : 12;
	d.width = op->width > 0 ? op->width : 1200;
	d.frameheight = op->frameheight > 0 ? op->frameheight : 16;
	d.countname = op->countname ? op->countname : "samples";
	d.widthpertime = (d.width - 2 * XPAD) / (double)d.total;
	minwidth = op->minwidth > 0 ? op->minwidth : 0.1;
	if (op->minwidth_percent && op->minwidth > 0)
		d.minwidth_time = (double)d.total * minwidth / 100.0;
	else
		d.minwidth_time = minwidth / d.widthpertime;
	r = tree_build(&t, stacks, n, op, d.minwidth_time);
	if (r) {
		set_err(err, errlen, r == -2 ? "flame graph: the sample counts overflow" : "flame graph: out of memory");
		goto out;
	}
	d.total_before = t.before ? t.before[0] : 0;
	d.rng = 0x6a666c616d65ull; /* "jflame": same input, same colours */
	for (i = 0; i < t.nnodes; i++) {
		const struct node *nd = &t.nodes[i];
		if (!node_shown(&d, nd))
			continue;
		if (nd->depth > depthmax)
			depthmax = nd->depth;
		if (op->differential && nd->depth) {
			double dl = fabs(node_delta(&d, i));
			if (dl > d.maxdelta)
				d.maxdelta = dl;
		}
	}
	nitems = legend_items(&d, items);
	ypad1 = d.fontsize * 3;
	ypad3 = 0;
	if (op->subtitle)
		ypad3 = d.fontsize * 2 + (double)(subtitle_count(op->subtitle, d.width - 2 * XPAD, d.fontsize) - 1) *
						 d.fontsize * SUBTITLE_LEADING;
	legend_y = ypad1 + ypad3;
	if (nitems)
		legend_h = draw_legend(&d, items, nitems, -1) * (d.fontsize + 6) + 6;
	d.top = ypad1 + ypad3 + legend_h;
	d.height = d.top + (depthmax + 1) * d.frameheight + d.fontsize * 2 + 10;
	d.bottom = d.height - (d.fontsize * 2 + 10);
	if (!(d.path = calloc((size_t)t.maxdepth + 1, sizeof(*d.path))) || !(o = malloc(sizeof(*o)))) {
		set_err(err, errlen, "flame graph: out of memory");
		goto out;
	}
	o->f = out, o->len = 0, o->err = 0;
	d.out = o;

	draw_page(&d, legend_y, items, nitems);
	draw_frames(&d);
	out_str(o, "</g>\n</svg>\n");
	out_flush(o);
	if (o->err || fflush(out) || ferror(out)) {
		set_err(err, errlen, "flame graph: write failed: %s", strerror(o->err ? o->err : errno ? errno : EIO));
		goto out;
	}
	ret = 0;
out:
	free(o);
	free(d.path);
	tree_free(&t);
	return ret;
}
