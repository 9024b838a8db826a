/* call_tree.c - folded stacks to a calling-context tree for the HTML views:
 * hash maps from (parent, frame) to node, names and frames stored once. */
#include "call_tree.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "frame_mark.h"
#include "json_out.h"
#include "palette.h"
#include "str_intern.h"

#define EMPTY UINT32_MAX

/* uint64 -> uint32, open addressing; EMPTY marks a free slot */
struct u64map {
	uint64_t *keys;
	uint32_t *vals;
	size_t cap, n;
};

struct call_tree {
	struct str_intern *si;
	struct u64map name_ids;	 /* shown name (interned pointer) -> names index */
	struct u64map full_ids;	 /* frame as written (interned pointer) -> fulls index */
	struct u64map frame_ids; /* name index << 8 | colour -> frame */
	struct u64map kids;	 /* parent << 32 | fulls index -> node */
	struct u64map stacks;	 /* folded stack (interned pointer) -> node */
	const char **names, **fulls, **path;
	size_t nnames, cap_names, nfulls, cap_fulls, cap_path;
	uint32_t *frame_name;
	uint8_t *frame_colour;
	size_t nframes, cap_frames;
	uint32_t *node_parent, *node_frame;
	uint8_t *node_hue;
	size_t nnodes, cap_nodes;
};

static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	return k ^ (k >> 33);
}

static int u64map_init(struct u64map *m, size_t cap)
{
	m->cap = cap;
	m->n = 0;
	m->keys = malloc(cap * sizeof(*m->keys));
	m->vals = malloc(cap * sizeof(*m->vals));
	if (!m->keys || !m->vals)
		return -1;
	memset(m->vals, 0xff, cap * sizeof(*m->vals));
	return 0;
}

static void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

static uint32_t u64map_get(const struct u64map *m, uint64_t key)
{
	for (size_t i = mix(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		if (m->vals[i] == EMPTY)
			return EMPTY;
		if (m->keys[i] == key)
			return m->vals[i];
	}
}

/* key must not be in the map yet */
static int u64map_put(struct u64map *m, uint64_t key, uint32_t val)
{
	if ((m->n + 1) * 2 > m->cap) {
		struct u64map bigger;
		if (u64map_init(&bigger, m->cap * 2) != 0) {
			u64map_free(&bigger);
			return -1;
		}
		for (size_t i = 0; i < m->cap; i++)
			if (m->vals[i] != EMPTY)
				u64map_put(&bigger, m->keys[i], m->vals[i]);
		u64map_free(m);
		*m = bigger;
	}
	size_t i = mix(key) & (m->cap - 1);
	while (m->vals[i] != EMPTY)
		i = (i + 1) & (m->cap - 1);
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
	return 0;
}

/* Room for n elements of size elem in *p (capacity *cap). */
static int reserve(void *pp, size_t *cap, size_t n, size_t elem)
{
	void **p = pp;
	if (n <= *cap)
		return 0;
	size_t c = *cap ? *cap : 256;
	while (c < n)
		c *= 2;
	void *q = realloc(*p, c * elem);
	if (!q)
		return -1;
	*p = q;
	*cap = c;
	return 0;
}

static int reserve_nodes(struct call_tree *t, size_t n)
{
	size_t cap = t->cap_nodes;
	if (reserve(&t->node_parent, &cap, n, sizeof(*t->node_parent)) != 0)
		return -1;
	cap = t->cap_nodes;
	if (reserve(&t->node_frame, &cap, n, sizeof(*t->node_frame)) != 0)
		return -1;
	cap = t->cap_nodes;
	if (reserve(&t->node_hue, &cap, n, sizeof(*t->node_hue)) != 0)
		return -1;
	t->cap_nodes = cap;
	return 0;
}

struct call_tree *call_tree_new(void)
{
	struct call_tree *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	if (!(t->si = str_intern_new()) || u64map_init(&t->name_ids, 1024) || u64map_init(&t->full_ids, 1024) ||
	    u64map_init(&t->frame_ids, 1024) || u64map_init(&t->kids, 1024) || u64map_init(&t->stacks, 1024) ||
	    reserve_nodes(t, 1) != 0) {
		call_tree_free(t);
		return NULL;
	}
	t->node_parent[0] = EMPTY;
	t->node_frame[0] = EMPTY;
	t->node_hue[0] = FG_HUE_META;
	t->nnodes = 1;
	return t;
}

void call_tree_free(struct call_tree *t)
{
	if (!t)
		return;
	str_intern_free(t->si);
	u64map_free(&t->name_ids);
	u64map_free(&t->full_ids);
	u64map_free(&t->frame_ids);
	u64map_free(&t->kids);
	u64map_free(&t->stacks);
	free(t->names);
	free(t->fulls);
	free(t->path);
	free(t->frame_name);
	free(t->frame_colour);
	free(t->node_parent);
	free(t->node_frame);
	free(t->node_hue);
	free(t);
}

/* the name without jflame's kind annotation, as the SVG shows it */
static size_t shown_len(const char *s, size_t len)
{
	if (len > FRAME_MARK_LEN && frame_mark_kind(s, len))
		return len - FRAME_MARK_LEN;
	return len;
}

/* The index of an interned string in a table (added when new); EMPTY when out of memory. */
static uint32_t string_id(struct u64map *ids, const char ***table, size_t *n, size_t *cap, const char *s)
{
	uint32_t id = u64map_get(ids, (uint64_t)(uintptr_t)s);
	if (id != EMPTY)
		return id;
	if (*n >= EMPTY - 1 || reserve(table, cap, *n + 1, sizeof(**table)) != 0 ||
	    u64map_put(ids, (uint64_t)(uintptr_t)s, (uint32_t)*n) != 0)
		return EMPTY;
	(*table)[*n] = s;
	return (uint32_t)(*n)++;
}

/* A new node under parent for the frame path[depth - 1]. */
static uint32_t node_add(struct call_tree *t, uint32_t parent, uint32_t full, size_t depth)
{
	const char *s = t->path[depth - 1];
	size_t len = strlen(s), sl = shown_len(s, len);
	enum fg_hue hue = palette_java_hue(t->path, depth);
	const char *shown = sl == len ? s : str_intern_n(t->si, s, sl);
	if (!shown)
		return EMPTY;
	uint32_t name = string_id(&t->name_ids, &t->names, &t->nnames, &t->cap_names, shown);
	if (name == EMPTY)
		return EMPTY;
	uint8_t colour = (uint8_t)(hue * CALL_TREE_SHADES + str_hash(shown, sl) % CALL_TREE_SHADES);
	uint64_t fkey = (uint64_t)name << 8 | colour;
	uint32_t frame = u64map_get(&t->frame_ids, fkey);
	if (frame == EMPTY) {
		size_t cap = t->cap_frames;
		if (t->nframes >= EMPTY - 1 ||
		    reserve(&t->frame_name, &cap, t->nframes + 1, sizeof(*t->frame_name)) != 0)
			return EMPTY;
		cap = t->cap_frames;
		if (reserve(&t->frame_colour, &cap, t->nframes + 1, sizeof(*t->frame_colour)) != 0)
			return EMPTY;
		t->cap_frames = cap;
		if (u64map_put(&t->frame_ids, fkey, (uint32_t)t->nframes) != 0)
			return EMPTY;
		t->frame_name[t->nframes] = name;
		t->frame_colour[t->nframes] = colour;
		frame = (uint32_t)t->nframes++;
	}
	if (t->nnodes >= EMPTY - 1 || reserve_nodes(t, t->nnodes + 1) != 0 ||
	    u64map_put(&t->kids, (uint64_t)parent << 32 | full, (uint32_t)t->nnodes) != 0)
		return EMPTY;
	t->node_parent[t->nnodes] = parent;
	t->node_frame[t->nnodes] = frame;
	t->node_hue[t->nnodes] = (uint8_t)hue;
	return (uint32_t)t->nnodes++;
}

long call_tree_node(struct call_tree *t, const char *stack, size_t len)
{
	if (len == 0)
		return 0;
	const char *key = str_intern_n(t->si, stack, len);
	if (!key)
		return -1;
	uint32_t node = u64map_get(&t->stacks, (uint64_t)(uintptr_t)key);
	if (node != EMPTY)
		return node;
	node = 0;
	size_t depth = 0;
	for (size_t i = 0; i < len;) {
		const char *semi = memchr(stack + i, ';', len - i);
		size_t j = semi ? (size_t)(semi - stack) : len;
		if (j > i) {
			const char *s = str_intern_n(t->si, stack + i, j - i);
			uint32_t full = s ? string_id(&t->full_ids, &t->fulls, &t->nfulls, &t->cap_fulls, s) : EMPTY;
			if (full == EMPTY || reserve(&t->path, &t->cap_path, depth + 1, sizeof(*t->path)) != 0)
				return -1;
			t->path[depth++] = s;
			uint32_t kid = u64map_get(&t->kids, (uint64_t)node << 32 | full);
			if (kid == EMPTY && (kid = node_add(t, node, full, depth)) == EMPTY)
				return -1;
			node = kid;
		}
		i = j + 1;
	}
	if (u64map_put(&t->stacks, (uint64_t)(uintptr_t)key, node) != 0)
		return -1;
	return node;
}

size_t call_tree_size(const struct call_tree *t)
{
	return t->nnodes;
}

long call_tree_parent(const struct call_tree *t, size_t node)
{
	return node == 0 || node >= t->nnodes ? -1 : (long)t->node_parent[node];
}

const char *call_tree_name(const struct call_tree *t, size_t node)
{
	if (node == 0 || node >= t->nnodes)
		return "all";
	return t->names[t->frame_name[t->node_frame[node]]];
}

int call_tree_hue(const struct call_tree *t, size_t node)
{
	return node < t->nnodes ? t->node_hue[node] : FG_HUE_META;
}

static void colour_out(FILE *out, enum fg_hue hue, double v)
{
	uint8_t rgb[3];
	palette_hue_color(hue, v, rgb);
	fprintf(out, "\"rgb(%u,%u,%u)\"", rgb[0], rgb[1], rgb[2]);
}

int call_tree_write_json(const struct call_tree *t, FILE *out)
{
	fputs("\"names\":[", out);
	for (size_t i = 0; i < t->nnames; i++) {
		if (i)
			putc(',', out);
		json_out_str(out, t->names[i], strlen(t->names[i]));
	}
	fputs("],\n\"frames\":[", out);
	for (size_t i = 0; i < t->nframes; i++)
		fprintf(out, "%s%u,%u", i ? "," : "", (unsigned)t->frame_name[i], (unsigned)t->frame_colour[i]);
	fputs("],\n\"palette\":[", out);
	for (int h = 0; h < FG_HUE_COUNT; h++)
		for (int k = 0; k < CALL_TREE_SHADES; k++) {
			if (h || k)
				putc(',', out);
			colour_out(out, (enum fg_hue)h, (k + 0.5) / CALL_TREE_SHADES);
		}
	fputs("],\n\"legend\":[", out);
	bool drawn[FG_HUE_COUNT] = { false }; /* alloc and lock: when the tree has them */
	for (int h = 0; h < FG_HUE_ALWAYS; h++)
		drawn[h] = true;
	for (size_t i = 0; i < t->nnodes; i++)
		if (t->node_hue[i] < FG_HUE_COUNT)
			drawn[t->node_hue[i]] = true;
	for (int h = 0; h < FG_HUE_COUNT; h++) {
		const char *label = palette_hue_label((enum fg_hue)h);
		if (!drawn[h])
			continue;
		fputs(h ? ",[" : "[", out);
		json_out_str(out, label, strlen(label));
		putc(',', out);
		colour_out(out, (enum fg_hue)h, 0.5);
		putc(']', out);
	}
	fputs("],\n\"rootColor\":", out);
	colour_out(out, FG_HUE_META, 0.5);
	fputs(",\n\"nodes\":[", out);
	for (size_t i = 1; i < t->nnodes; i++)
		fprintf(out, "%s%u,%u", i > 1 ? "," : "", (unsigned)t->node_parent[i], (unsigned)t->node_frame[i]);
	putc(']', out);
	return ferror(out) ? -1 : 0;
}
