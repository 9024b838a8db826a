/* html_heatmap.c - writes the heat map page: heatmap.html with flame.js,
 * heatmap.js and flame.css inlined, and the map's JSON. */
#include "html_heatmap.h"

#include "html_page.h"

struct page_ctx {
	const struct heatmap *h;
	const struct heatmap_options *o;
};

static int page_data(FILE *out, void *ctx, char *err, size_t errlen)
{
	struct page_ctx *c = ctx;
	return heatmap_write_json(out, c->h, c->o, err, errlen);
}

int heatmap_write_html(FILE *out, const struct heatmap *h, const struct heatmap_options *o, char *err, size_t errlen)
{
	struct page_ctx c = { h, o };
	struct html_page p = { o->title ? o->title : "CPU heat map", o->subtitle, page_data, &c };
	if (heatmap_check(h, o, err, errlen) != 0)
		return -1;
	return html_page_write(out, "heatmap.html", &p, err, errlen);
}
