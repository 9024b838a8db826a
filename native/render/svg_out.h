/* svg_out.h - the buffered output of the SVG writer: bytes, numbers, colours,
 * and UTF-8 text XML-escaped or fitted to a width. */
#ifndef JFLAME_SVG_OUT_H
#define JFLAME_SVG_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Output to f through a buffer; the first write error sticks in err (errno
 * value) and later writes are dropped. Set f, len = 0, err = 0 to start. */
struct out {
	FILE *f;
	char buf[1 << 16];
	size_t len;
	int err;
};

/* Writes the buffer out (out_mem and out_char do when it is full). */
void out_flush(struct out *o);

/* bytes, a string, a character: inline, they are most of what is written */
static inline void out_mem(struct out *o, const char *p, size_t n)
{
	while (n) {
		size_t room = sizeof(o->buf) - o->len, k = n < room ? n : room;
		memcpy(o->buf + o->len, p, k);
		o->len += k, p += k, n -= k;
		if (o->len == sizeof(o->buf))
			out_flush(o);
	}
}

static inline void out_str(struct out *o, const char *s)
{
	out_mem(o, s, strlen(s));
}

static inline void out_char(struct out *o, char c)
{
	if (o->len == sizeof(o->buf))
		out_flush(o);
	o->buf[o->len++] = c;
}

/* v in decimal; with commas, thousands separated ("1,234") */
void out_u64(struct out *o, uint64_t v, bool commas);
/* v / 100 with two decimals; with trim, trailing zeros (and the point) dropped */
void out_centi(struct out *o, int64_t v, bool trim);
/* v in hundredths, rounded */
int64_t centi_round(double v);
/* v with at most two decimals, trailing zeros dropped ("12", "3.5", "0.25") */
void out_num(struct out *o, double v);
/* "rgb(r,g,b)" */
void out_rgb(struct out *o, const uint8_t rgb[3]);

/* Decodes one UTF-8 character of s[0..n) (n >= 1) into *cp; invalid sequences
 * and characters XML 1.0 forbids give U+FFFD. Returns the bytes used. */
size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp);
/* The characters in s[0..n), as utf8_next counts them. */
size_t utf8_chars(const char *s, size_t n);
/* Writes up to max characters of s[0..n) XML-escaped (& < > " ', U+FFFD for
 * what utf8_next rejects); returns how many characters s has in all. */
size_t out_xml_n(struct out *o, const char *s, size_t n, size_t max);
/* out_xml_n of a whole string; nothing for NULL */
void out_xml(struct out *o, const char *s);
/* s[0..n) in room characters: whole, or cut and ended with ".." as
 * flamegraph.pl does; nothing when room < 3 */
void out_fitted(struct out *o, const char *s, size_t n, size_t room);

#endif
