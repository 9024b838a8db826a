/* utf8.h - the one UTF-8 decoder (what a valid sequence is: RFC 3629, no overlong
 * forms, no surrogates, nothing above U+10FFFF) and encoder, for every escaper and writer. */
#ifndef JFLAME_UTF8_H
#define JFLAME_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The length of the valid UTF-8 sequence at s[0..n) (n > 0), its code point
 * in *cp; 0 when the bytes there are not one (then *cp is left alone). */
static inline size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
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

/* Appends code point c as UTF-8 to out[*pos..len), NUL-terminated: false
 * when it does not fit. */
static inline bool utf8_put(char *out, size_t len, size_t *pos, uint32_t c)
{
	char b[4];
	size_t k = 0;
	if (c < 0x80) {
		b[k++] = (char)c;
	} else if (c < 0x800) {
		b[k++] = (char)(0xc0 | c >> 6);
		b[k++] = (char)(0x80 | (c & 0x3f));
	} else if (c < 0x10000) {
		b[k++] = (char)(0xe0 | c >> 12);
		b[k++] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[k++] = (char)(0x80 | (c & 0x3f));
	} else {
		b[k++] = (char)(0xf0 | c >> 18);
		b[k++] = (char)(0x80 | ((c >> 12) & 0x3f));
		b[k++] = (char)(0x80 | ((c >> 6) & 0x3f));
		b[k++] = (char)(0x80 | (c & 0x3f));
	}
	if (*pos + k >= len)
		return false;
	memcpy(out + *pos, b, k);
	*pos += k;
	out[*pos] = '\0';
	return true;
}

#endif
