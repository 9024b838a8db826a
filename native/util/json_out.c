/* json_out.c - JSON string escaping for the HTML views: safe inside <script>,
 * always valid UTF-8 (a hand-written streamer: the data can be large). */
#include "json_out.h"

#include <stdint.h>

#include "utf8.h"

void json_out_str(FILE *out, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	putc('"', out);
	for (size_t i = 0; i < n;) {
		unsigned char c = p[i];
		uint32_t cp;
		size_t k = utf8_decode(p + i, n - i, &cp);
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
