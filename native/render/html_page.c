/* html_page.c - page templates with {{...}} placeholders expanded: escaped
 * text, the embedded JavaScript and CSS, and the view's JSON. */
#include "html_page.h"

#include <string.h>

#include "html_assets.h"

static void html_text(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&#39;", out);
			break;
		default:
			putc(*s, out);
		}
	}
}

int html_page_write(FILE *out, const char *template_name, const struct html_page *p, char *err, size_t errlen)
{
	size_t len;
	const char *t = html_asset(template_name, &len), *end = t + len;
	if (!t) {
		snprintf(err, errlen, "no page template %s (a broken build?)", template_name);
		return -1;
	}
	while (t < end) {
		const char *open = memmem(t, (size_t)(end - t), "{{", 2);
		const char *close = open ? memmem(open, (size_t)(end - open), "}}", 2) : NULL;
		if (!open || !close) {
			fwrite(t, 1, (size_t)(end - t), out);
			break;
		}
		fwrite(t, 1, (size_t)(open - t), out);
		const char *name = open + 2;
		size_t n = (size_t)(close - name);
		if (n == 5 && memcmp(name, "title", 5) == 0) {
			html_text(out, p->title);
		} else if (n == 8 && memcmp(name, "subtitle", 8) == 0) {
			html_text(out, p->subtitle);
		} else if (n == 4 && memcmp(name, "data", 4) == 0) {
			if (p->data(out, p->ctx, err, errlen) != 0)
				return -1;
		} else if (n > 6 && memcmp(name, "asset:", 6) == 0) {
			char an[64];
			size_t alen;
			snprintf(an, sizeof(an), "%.*s", (int)(n - 6), name + 6);
			const char *a = html_asset(an, &alen);
			if (!a) {
				snprintf(err, errlen, "page template %s names a missing asset %s", template_name, an);
				return -1;
			}
			fwrite(a, 1, alen, out);
		} else {
			fwrite(open, 1, (size_t)(close + 2 - open), out);
		}
		t = close + 2;
	}
	if (ferror(out)) {
		snprintf(err, errlen, "failed to write the page");
		return -1;
	}
	return 0;
}
