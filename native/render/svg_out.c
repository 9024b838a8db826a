/* svg_out.c - the buffered output of the SVG writer: bytes, numbers, colours,
 * and UTF-8 text XML-escaped or fitted to a width. */
#include "svg_out.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "utf8.h"

void out_flush(struct out *o)
{
	if (o->len && !o->err && fwrite(o->buf, 1, o->len, o->f) != o->len)
		o->err = errno ? errno : EIO;
	o->len = 0;
}

void out_u64(struct out *o, uint64_t v, bool commas)
{
	char tmp[32];
	int n = 0, digits = 0;
	do {
		if (commas && digits && digits % 3 == 0)
			tmp[n++] = ',';
		tmp[n++] = (char)('0' + v % 10);
		v /= 10, digits++;
	} while (v);
	while (n)
		out_char(o, tmp[--n]);
}

/* v / 100 with two decimals; with trim, trailing zeros (and the point) dropped */
void out_centi(struct out *o, int64_t v, bool trim)
{
	uint64_t a;
	if (v < 0) {
		out_char(o, '-');
		a = (uint64_t)0 - (uint64_t)v;
	} else {
		a = (uint64_t)v;
	}
	out_u64(o, a / 100, false);
	if (trim && a % 100 == 0)
		return;
	out_char(o, '.');
	out_char(o, (char)('0' + a % 100 / 10));
	if (!trim || a % 10)
		out_char(o, (char)('0' + a % 10));
}

int64_t centi_round(double v)
{
	return (int64_t)llround(v * 100.0);
}

void out_num(struct out *o, double v)
{
	out_centi(o, centi_round(v), true);
}

void out_rgb(struct out *o, const uint8_t rgb[3])
{
	out_str(o, "rgb(");
	out_u64(o, rgb[0], false);
	out_char(o, ',');
	out_u64(o, rgb[1], false);
	out_char(o, ',');
	out_u64(o, rgb[2], false);
	out_char(o, ')');
}

/* Decodes one UTF-8 character of s[0..n) into *cp; invalid sequences and
 * characters XML 1.0 forbids give U+FFFD. Returns the bytes used. */
size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t k = utf8_decode(s, n, cp);
	if (k == 0 || *cp < 0x20 || *cp == 0xfffe || *cp == 0xffff) {
		*cp = 0xfffd; /* a control character or a noncharacter XML forbids: one byte's worth */
		return 1;
	}
	return k;
}

/* Writes up to max characters of s[0..n) XML-escaped; returns how many
 * characters s has in all. */
size_t out_xml_n(struct out *o, const char *s, size_t n, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t chars = 0;
	while (n) {
		uint32_t cp;
		size_t k = utf8_next(p, n, &cp);
		if (chars < max) {
			switch (cp) {
			case '&':
				out_str(o, "&amp;");
				break;
			case '<':
				out_str(o, "&lt;");
				break;
			case '>':
				out_str(o, "&gt;");
				break;
			case '"':
				out_str(o, "&quot;");
				break;
			case '\'':
				out_str(o, "&apos;");
				break;
			case 0xfffd:
				out_str(o, "\xef\xbf\xbd");
				break;
			default:
				out_mem(o, (const char *)p, k);
			}
		}
		chars++, p += k, n -= k;
	}
	return chars;
}

void out_xml(struct out *o, const char *s)
{
	if (s)
		out_xml_n(o, s, strlen(s), SIZE_MAX);
}

size_t utf8_chars(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t chars = 0;
	while (n) {
		uint32_t cp;
		size_t k = utf8_next(p, n, &cp);
		chars++, p += k, n -= k;
	}
	return chars;
}

/* <text> with a fitted name: ".." ends a cut name, as flamegraph.pl */
void out_fitted(struct out *o, const char *s, size_t n, size_t room)
{
	size_t chars;
	if (room < 3)
		return;
	chars = utf8_chars(s, n);
	if (chars <= room) {
		out_xml_n(o, s, n, SIZE_MAX);
		return;
	}
	out_xml_n(o, s, n, room - 2);
	out_str(o, "..");
}
