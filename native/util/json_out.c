/* json_out.c - JSON string escaping for the HTML views: safe inside <script>,
 * always valid UTF-8 (a hand-written streamer: the data can be large). */
#include "json_out.h"

#include <stdint.h>

/* The length of the valid UTF-8 sequence at s[0..n), or 0 when invalid
 * (overlong forms, surrogates and code points above U+10FFFF included). */
static size_t utf8_len(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned char c = s[0];
	size_t k;
	uint32_t v, min;
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf)
		k = 2, v = c & 0x1f, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		k = 3, v = c & 0x0f, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		k = 4, v = c & 0x07, min = 0x10000;
	else
		return 0;
	if (n < k)
		return 0;
	for (size_t i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = (v << 6) | (s[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	*cp = v;
	return k;
}

void json_out_str(FILE *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	putc('"', out);
	for (size_t i = 0; i < n;) {
		unsigned char c = p[i];
		uint32_t cp;
		size_t k = utf8_len(p + i, n - i, &cp);
		if (k == 0) {
			fputs("\\ufffd", out);
			i++;
			continue;
		}
		if (k > 1) {
			if (cp == 0x2028 || cp == 0x2029)
				fprintf(out, "\\u%04x", (unsigned)cp);
			else
				fwrite(p + i, 1, k, out);
			i += k;
			continue;
		}
		i++;
		switch (c) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		case '<':
		case '>':
		case '&':
			fprintf(out, "\\u%04x", (unsigned)c);
			break;
		default:
			if (c < 0x20 || c == 0x7f)
				fprintf(out, "\\u%04x", (unsigned)c);
			else
				putc(c, out);
		}
	}
	putc('"', out);
}
