/* diff_graph.c - a differential profile written as its file name asks: the red and
 * blue flame graph (.svg), the compare page (.html) or difffolded.pl's text (.folded). */
#include "diff_graph.h"

#include <string.h>

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

int diff_graph_kind_of(const char *path, enum diff_graph_kind *k)
{
	if (strcmp(path, "-") == 0 || ends_with(path, ".svg"))
		*k = DIFF_GRAPH_SVG;
	else if (ends_with(path, ".html") || ends_with(path, ".htm"))
		*k = DIFF_GRAPH_HTML;
	else if (ends_with(path, ".folded") || ends_with(path, ".collapsed") || ends_with(path, ".txt"))
		*k = DIFF_GRAPH_FOLDED;
	else
		return -1;
	return 0;
}

int diff_graph_write(FILE *out, const char *path, enum diff_graph_kind k, const struct folded_diff *d,
		     const struct folded_diff *raw, const struct fg_options *svg, const struct compare_options *html,
		     char *err, size_t errlen)
{
	switch (k) {
	case DIFF_GRAPH_SVG:
		return flamegraph_write(out, &d->t, svg, err, errlen);
	case DIFF_GRAPH_HTML:
		return compare_write_html(out, &raw->t, html, err, errlen);
	case DIFF_GRAPH_FOLDED:
		break;
	}
	if (folded_diff_write(out, d) != 0) {
		snprintf(err, errlen, "failed to write %.900s", path);
		return -1;
	}
	return 0;
}
