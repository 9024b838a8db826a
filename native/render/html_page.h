/* html_page.h - writes a self-contained HTML view (heat map, compare) from one
 * of the embedded page templates, its inlined assets and the view's JSON data. */
#ifndef JFLAME_HTML_PAGE_H
#define JFLAME_HTML_PAGE_H

#include <stddef.h>
#include <stdio.h>

struct html_page {
	const char *title;    /* HTML-escaped into {{title}} */
	const char *subtitle; /* into {{subtitle}}; NULL: empty */
	/* writes the JSON for {{data}} (inside <script type="application/json">:
	 * strings through json_out_str); 0, or -1 with err */
	int (*data)(FILE *out, void *ctx, char *err, size_t errlen);
	void *ctx;
};

/* Expands the template (an asset such as "heatmap.html"): {{title}},
 * {{subtitle}}, {{data}} and {{asset:NAME}} (the asset's bytes). 0, or -1 with
 * one line in err. */
int html_page_write(FILE *out, const char *template_name, const struct html_page *p, char *err, size_t errlen);

#endif
