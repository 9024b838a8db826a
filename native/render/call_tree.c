/* call_tree.c - folded stacks to a calling-context tree for the HTML views:
 * hash maps from (parent, frame) to node, names and frames stored once. */
#include "call_tree.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "frame_mark.h"
#include "grow.h"
#include "json_out.h"
#include "palette.h"
#include "str_intern.h"
#include "u64_map.h"

#define EMPTY U64_MAP_NONE /* no id: not there, or out of memory */

struct call_tree {
	struct str_intern *si;
	struct u64_map name_ids;  /* shown name (interned pointer) -> names index */
	struct u64_map full_ids;  /* frame as written (interned pointer) -> fulls index */
	struct u64_map frame_ids; /* name index << 8 | colour -> frame */
	struct u64_map kids;	  /* parent << 32 | fulls index -> node */
	struct u64_map stacks;	  /* folded stack (interned pointer) -> node */
	const char **names, **fulls, **path;
	size_t nnames, cap_names, nfulls, cap_fulls, cap_path;
	uint32_t *frame_name;
	uint8_t *frame_colour;
	size_t nframes, cap_frames;
	uint32_t *node_parent, *node_frame;
	uint8_t *node_hue;
	size_t nnodes, cap_nodes;
};

/* Room for n nodes: one capacity, set when all grew. */
static int reserve_nodes(struct call_tree *t, size_t n)
{
	size_t parent_cap = t->cap_nodes, frame_cap = t->cap_nodes, hue_cap = t->cap_nodes;
	if (ARRAY_GROW(t->node_parent, parent_cap, n) != 0 || ARRAY_GROW(t->node_frame, frame_cap, n) != 0 ||
	    ARRAY_GROW(t->node_hue, hue_cap, n) != 0)
		return -1;
	t->cap_nodes = parent_cap;
	return 0;
}

struct call_tree *call_tree_new(void)
{
	struct call_tree *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	if (!(t->si = str_intern_new()) || reserve_nodes(t, 1) != 0) {
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
	u64_map_free(&t->name_ids);
	u64_map_free(&t->full_ids);
	u64_map_free(&t->frame_ids);
	u64_map_free(&t->kids);
	u64_map_free(&t->stacks);
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
static uint32_t string_id(struct u64_map *ids, const char ***table, size_t *n, size_t *cap, const char *s)
{
	uint32_t id = u64_map_find(ids, (uint64_t)(uintptr_t)s);
	if (id != EMPTY)
		return id;
	if (*n >= EMPTY - 1 || ARRAY_GROW(*table, *cap, *n + 1) != 0 ||
	    u64_map_add(ids, (uint64_t)(uintptr_t)s, (uint32_t)*n) == EMPTY)
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
	uint32_t frame = u64_map_find(&t->frame_ids, fkey);
	if (frame == EMPTY) {
		size_t name_cap = t->cap_frames, colour_cap = t->cap_frames; /* one cap: set when both grew */
		if (t->nframes >= EMPTY - 1 || ARRAY_GROW(t->frame_name, name_cap, t->nframes + 1) != 0 ||
		    ARRAY_GROW(t->frame_colour, colour_cap, t->nframes + 1) != 0)
			return EMPTY;
		t->cap_frames = name_cap;
		if (u64_map_add(&t->frame_ids, fkey, (uint32_t)t->nframes) == EMPTY)
			return EMPTY;
		t->frame_name[t->nframes] = name;
		t->frame_colour[t->nframes] = colour;
		frame = (uint32_t)t->nframes++;
	}
	if (t->nnodes >= EMPTY - 1 || reserve_nodes(t, t->nnodes + 1) != 0 ||
	    u64_map_add(&t->kids, (uint64_t)parent << 32 | full, (uint32_t)t->nnodes) == EMPTY)
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
	uint32_t node = u64_map_find(&t->stacks, (uint64_t)(uintptr_t)key);
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
			if (full == EMPTY || ARRAY_GROW(t->path, t->cap_path, depth + 1) != 0)
				return -1;
			t->path[depth++] = s;
			uint32_t kid = u64_map_find(&t->kids, (uint64_t)node << 32 | full);
			if (kid == EMPTY && (kid = node_add(t, node, full, depth)) == EMPTY)
				return -1;
			node = kid;
		}
		i = j + 1;
	}
	if (u64_map_add(&t->stacks, (uint64_t)(uintptr_t)key, node) == EMPTY)
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
