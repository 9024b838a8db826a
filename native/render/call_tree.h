/* call_tree.h - the calling-context tree the HTML views embed: folded stacks
 * become nodes (parent, frame), frame names stored once, coloured by the java palette. */
#ifndef JFLAME_CALL_TREE_H
#define JFLAME_CALL_TREE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct call_tree;

struct call_tree *call_tree_new(void);
void call_tree_free(struct call_tree *t);

/* The node of a folded stack (frames root first joined by ';'; empty frames
 * are skipped, so "" is the root): node 0 is the root, "all"; the same stack
 * always gives the same node, and a node's parent has a lower number. Frames
 * of one parent are merged by name. -1 when out of memory. */
long call_tree_node(struct call_tree *t, const char *stack, size_t len);

/* Nodes, the root included. */
size_t call_tree_size(const struct call_tree *t);
/* A node's parent (-1 for the root), its shown name (the frame without the
 * "_[j]"/"_[i]"/"_[0]"/"_[k]" annotation; "all" for the root) and its hue
 * (palette_java_hue()'s, by the frames from the root to it). */
long call_tree_parent(const struct call_tree *t, size_t node);
const char *call_tree_name(const struct call_tree *t, size_t node);
int call_tree_hue(const struct call_tree *t, size_t node);

/* Writes the tree as JSON object members (no braces):
 *   "names":["name",...]            the shown names, each once
 *   "frames":[name,colour,...]      per frame: an index into names and one into palette
 *   "palette":["rgb(r,g,b)",...]    CALL_TREE_SHADES shades per hue, hue by hue
 *   "legend":[["label","rgb(r,g,b)"],...]  per hue (fg_hue order)
 *   "rootColor":"rgb(r,g,b)"
 *   "nodes":[parent,frame,...]      nodes 1, 2, ... (the root, 0, is implicit)
 * Returns 0, or -1 when the write failed. */
int call_tree_write_json(const struct call_tree *t, FILE *out);

#define CALL_TREE_SHADES 8

#endif
