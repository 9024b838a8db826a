/* html_heatmap.h - the heat map's HTML page: the subsecond-offset map, range
 * selection and the range's flame graph, in one self-contained file. */
#ifndef JFLAME_HTML_HEATMAP_H
#define JFLAME_HTML_HEATMAP_H

#include <stddef.h>
#include <stdio.h>

#include "heatmap.h"

/* Writes the page (for `jflame heatmap` and `jflame record -o x.html`): no
 * network, no external scripts. 0, or -1 with one line in err (no samples, a
 * span over HEATMAP_MAX_SECONDS, out of memory, a write error). */
int heatmap_write_html(FILE *out, const struct heatmap *h, const struct heatmap_options *o, char *err, size_t errlen);

#endif
