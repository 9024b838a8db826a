/* flamegraph.h - the interactive SVG flame graph writer: folded stacks in,
 * a self-contained SVG out, as flamegraph.pl draws it, with jflame's palettes. */
#ifndef JFLAME_FLAMEGRAPH_H
#define JFLAME_FLAMEGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stack_table.h"

struct fg_options {
	const char *title;     /* NULL: "Flame Graph" ("Icicle Graph" when inverted,
				 "Flame Chart" when flamechart) */
	const char *subtitle;  /* a second line under the title; NULL for none */
	bool subtitle_warning; /* the subtitle states a warning: drawn bold, in the warning
				  colour (the caller knows; the text is not searched) */
	const char *notes;     /* text for the SVG's <desc id="notes"> element; NULL for none */
	const char *colors;    /* palette: "java" (default), "hot", "mem", "io", "js", "red", "green",
				 "blue", "aqua", "yellow", "purple", "orange"; unknown names
				 draw as "hot" */
	const char *countname; /* "samples" when NULL */
	uint64_t count_scale;  /* > 1: titles show counts divided by this, with two
				  decimals ("1,234.56 ms" from microseconds with 1000) */
	bool bytes;	       /* counts are bytes: titles read "NAME (1,572,864 bytes =
				  1.5 MiB, 12.34%)" (countname and count_scale unused) */
	const char *nametype;  /* "Function:" when NULL */
	const char *fonttype;  /* "Verdana" when NULL */
	double fontsize;       /* 12 when 0 */
	int width;	       /* 1200 when 0 */
	int frameheight;       /* 16 when 0 */
	double minwidth;       /* omit frames narrower than this many pixels (0.1 when 0);
				  their samples still count in their parents */
	bool minwidth_percent; /* minwidth is a percentage of the total instead */
	bool hash;	       /* vary colours by a hash of the name (same name, same
				  colour, across graphs); else by a fixed-seed
				  pseudo-random sequence: same input, same bytes out */
	bool inverted;	       /* icicle graph: roots at the top */
	bool reverse;	       /* reverse each stack before merging */
	bool flamechart;       /* keep input order (time): the table's steps when it has
				  them (else its stacks, in the order first seen); merge a
				  frame only with the same frame of the stack just before,
				  don't sort by name */
	bool differential;     /* red grew / blue shrank, from the table's befores (see below) */
	bool negate;	       /* differential: swap what counts as grew and shrank */
	bool legend;	       /* draw a legend row under the title: the java palette's
				  hues, or grew/shrank for differential graphs; nothing
				  for other palettes */
};

/* Writes the flame graph of the stack table's counts to out. Returns 0, or -1
 * with a one-line reason in err: "no samples" (no stacks, or every count zero)
 * before anything is written; a write error after.
 *
 * What comes out (the structure of flamegraph.pl 1.0's SVG, so tools and users
 * that know it find their way):
 * - <svg> with an embedded <script> (no network, no external references) and
 *   <text> elements id="title", "subtitle", "details" (the hover line:
 *   "Function: NAME (N samples, P%)"), "unzoom" ("Reset Zoom"), "search",
 *   "ignorecase" ("ic"), "matched" ("Matched: x%"), <g id="legend"> when asked.
 * - <g id="frames">: one <g><title>NAME (N samples, P%)</title><rect/><text/></g>
 *   per drawn frame, parents before their children; the root is
 *   "all (N samples, 100%)". N has thousands separators ("1,234"), P two
 *   decimals. Names are XML-escaped (& < > " '), invalid UTF-8 and control
 *   characters become U+FFFD. The kind annotations "_[j]", "_[i]", "_[0]",
 *   "_[k]", "_[a]" and "_[l]" are dropped from the shown name (flamegraph.pl does the same; the
 *   colour tells the kind). Frames of one parent are merged by name, children
 *   sorted by name (byte order) unless flamechart.
 * - Differential: a frame's change is its share of the after total minus its
 *   share of the before total (its own samples plus its callees', so a new
 *   String.format() subtree is red from String.format() up); the titles read
 *   "NAME (N samples, P%; +D%)" with D that change in percentage points, the
 *   colour is white for no change to full red (grew) or blue (shrank) for the
 *   largest change in the graph. Widths are those of the after counts.
 * - In the browser: click a frame to zoom (its ancestors greyed out and
 *   stretched, other branches hidden), click "Reset Zoom" (or Escape) to
 *   reset; "Search" (or Ctrl-F) asks for a regex and paints matching frames
 *   rgb(230,0,230) with "Matched: x%" of all samples; "ic" (or Ctrl-I) toggles
 *   case-insensitive search. Zoom and search live in the URL query as
 *   flamegraph.pl keeps them: ?x=<rect x>&y=<rect y>&s=<regex>. The page's
 *   functions zoom(g), unzoom(), search(regex), reset_search() and
 *   toggle_ignorecase() are global for scripted use. */
int flamegraph_write(FILE *out, const struct stack_table *t, const struct fg_options *opts, char *err, size_t errlen);

#endif
