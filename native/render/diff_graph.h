/* diff_graph.h - a differential profile written as its file name asks: the red and
 * blue flame graph (.svg), the compare page (.html) or difffolded.pl's text (.folded). */
#ifndef JFLAME_DIFF_GRAPH_H
#define JFLAME_DIFF_GRAPH_H

#include <stdio.h>

#include "flamegraph.h"
#include "folded_diff.h"
#include "html_compare.h"

enum diff_graph_kind { DIFF_GRAPH_SVG, DIFF_GRAPH_HTML, DIFF_GRAPH_FOLDED };

/* What a file name asks for: .svg (and "-", standard output), .html or .htm,
 * .folded, .collapsed or .txt. 0, or -1 for any other name. */
int diff_graph_kind_of(const char *path, enum diff_graph_kind *k);

/* Writes d as kind k to out: the flame graph with svg's options (differential
 * and its legend set by the caller), the compare page of raw (the stacks as
 * read, never normalized) with html's, or d's folded text. 0, or -1 with one
 * line in err (a folded write that failed: "failed to write PATH"). */
int diff_graph_write(FILE *out, const char *path, enum diff_graph_kind k, const struct folded_diff *d,
		     const struct folded_diff *raw, const struct fg_options *svg, const struct compare_options *html,
		     char *err, size_t errlen);

#endif
