/* html_assets.h - the HTML views' JavaScript, CSS and page templates
 * (native/render/html_assets/), embedded at build time into the generated html_assets.c. */
#ifndef JFLAME_HTML_ASSETS_H
#define JFLAME_HTML_ASSETS_H

#include <stddef.h>

/* The file's bytes ("flame.js", "heatmap.html", ...) and length, or NULL. */
const char *html_asset(const char *name, size_t *len);

#endif
