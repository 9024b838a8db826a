/* frame_tree.h - the merged frame tree of a flame graph: frame names interned,
 * stacks sorted and flowed left to right into nodes, parents first. */
#ifndef JFLAME_FRAME_TREE_H
#define JFLAME_FRAME_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One stack of the tree's input (the flame graph writers' view of a stack
 * table): frames root first joined by ';', its count, and for differential
 * graphs the count before (count is then the count after). Empty frames
 * ("a;;b", a trailing ';') are skipped. The same stack may appear more than
 * once (a flame chart's steps): counts add up. */
struct fg_stack {
	const char *frames;
	uint64_t count;
	uint64_t count_before;
};

/* As flamegraph.pl: the stacks, sorted by their frames (a flame chart keeps
 * input order), flow from left to right; a stack shares the frames it has in
 * common with the stack before it and opens new ones for the rest. Frame names
 * are interned first, so sorting and comparing deal in integers, and the
 * nodes come out parents first, children in order: drawing is one pass. */

struct frame_name {
	uint32_t off, len; /* in the tree's pool, NUL-terminated there */
	uint64_t hash;
	int8_t hue; /* palette_name_hue, -1 until needed (the writer's cache) */
};

/* nodes[0] is the root ("all": depth 0, name UINT32_MAX) */
struct frame_node {
	uint32_t name; /* index into names */
	uint32_t depth;
	uint64_t start; /* samples left of it */
	uint64_t total;
};

struct frame_seq; /* one stack as name indexes, for sorting (frame_tree.c) */

struct frame_tree {
	char *pool;
	size_t pool_len, pool_cap;
	struct frame_name *names;
	uint32_t nnames, names_cap;
	uint32_t *name_slots; /* open addressing: name index + 1, 0 empty */
	uint32_t name_mask;
	uint32_t *ids; /* the frames of every stack, as name indexes */
	size_t nids, ids_cap;
	struct frame_seq *seqs;
	size_t nseqs;
	struct frame_node *nodes;
	uint64_t *before; /* per node, differential graphs only */
	size_t nnodes, nodes_cap;
	uint32_t maxdepth;
};

struct frame_tree_options {
	bool reverse;	   /* reverse each stack before merging */
	bool differential; /* keep count_before per node in before[]; stacks with
			      only a count before count too */
	bool flamechart;   /* keep input order: don't sort */
};

/* Builds the tree (zeroed before) of the frames at least min_total samples
 * wide: 0, -1 out of memory, -2 the counts overflow. Free it with
 * frame_tree_free() whatever the result. */
int frame_tree_build(struct frame_tree *t, const struct fg_stack *stacks, size_t n, const struct frame_tree_options *op,
		     double min_total);
void frame_tree_free(struct frame_tree *t);

#endif
