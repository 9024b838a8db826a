/* text_escape.c - target text as data: escapes control characters and bytes
 * that are not UTF-8 (\xHH); decodes the agent files' escaping (\\ \n \xHH). */
#include "text_escape.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "swar.h"
#include "utf8.h"

void text_unescape(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (*r != '\\' || !r[1]) {
			*w++ = *r;
			continue;
		}
		r++;
		if (*r == 'n') {
			*w++ = '\n';
		} else if (*r == 'x' && isxdigit((unsigned char)r[1]) && isxdigit((unsigned char)r[2])) {
			char hex[3] = { r[1], r[2], 0 };
			*w++ = (char)strtoul(hex, NULL, 16);
			r += 2;
		} else if (*r == '\\') {
			*w++ = '\\';
		} else { /* not an escape (a malformed \x too): kept as it is */
			*w++ = '\\';
			*w++ = *r;
		}
	}
	*w = '\0';
}

/* The character at s[i] (i < n): its length in bytes, and in *esc whether its
 * bytes are escaped (a control character, or a byte not in valid UTF-8, which
 * is then one byte long). A backslash is 1 byte, not escaped here. */
static size_t unit_at(const unsigned char *s, size_t n, size_t i, bool *esc)
{
	uint32_t cp;
	size_t len = utf8_decode(s + i, n - i, &cp);
	if (len == 0) {
		*esc = true; /* a byte not in valid UTF-8: escaped alone */
		return 1;
	}
	*esc = cp < 0x20 || (cp >= 0x7f && cp <= 0x9f); /* C0, DEL and C1 controls */
	return len;
}

/* Whether the backslash at s[i] must be doubled: what follows would read as
 * an escape. */
static bool backslash_escaped(const unsigned char *s, size_t n, size_t i)
{
	bool esc;
	if (i + 1 >= n)
		return false;
	if (s[i + 1] == '\\' || s[i + 1] == 'x' || s[i + 1] == 'n')
		return true;
	unit_at(s, n, i + 1, &esc);
	return esc;
}

bool text_needs_escape(const char *str, size_t n)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;
	/* eight bytes a step while all are printable ASCII but '\\' (a byte below
	 * 0x20: hasless of Bit Twiddling Hacks, exact with no high bit set) */
	for (; i + 8 <= n; i += 8) {
		uint64_t w = swar_load(s + i), high = swar_rep(0x80);
		if ((w & high) | ((w - swar_rep(0x20)) & ~w & high) | swar_eq(w, swar_rep(0x7f)) |
		    swar_eq(w, swar_rep('\\')))
			break;
	}
	while (i < n) {
		unsigned char c = s[i];
		bool esc;
		if (c >= 0x20 && c < 0x7f && c != '\\') { /* the common case */
			i++;
			continue;
		}
		if (c == '\\') {
			if (backslash_escaped(s, n, i))
				return true;
			i++;
			continue;
		}
		i += unit_at(s, n, i, &esc);
		if (esc)
			return true;
	}
	return false;
}

size_t text_escape(char *out, size_t len, const char *str, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t o = 0;
	bool full = len == 0;

	for (size_t i = 0; i < n;) {
		char piece[16];
		size_t plen = 0;
		bool esc = false;
		size_t u = s[i] == '\\' ? 1 : unit_at(s, n, i, &esc);
		if (s[i] == '\\') {
			piece[plen++] = '\\';
			if (backslash_escaped(s, n, i))
				piece[plen++] = '\\';
		} else if (esc) {
			for (size_t k = 0; k < u; k++) {
				piece[plen++] = '\\';
				piece[plen++] = 'x';
				piece[plen++] = hex[s[i + k] >> 4];
				piece[plen++] = hex[s[i + k] & 15];
			}
		} else {
			memcpy(piece, s + i, u);
			plen = u;
		}
		if (!full && o + plen < len)
			memcpy(out + o, piece, plen);
		else if (!full) {
			out[o] = '\0';
			full = true;
		}
		o += plen;
		i += u;
	}
	if (!full)
		out[o] = '\0';
	return o;
}

char *text_escape_inplace(char *s, size_t len)
{
	size_t n = strlen(s);
	char buf[1024], *tmp;

	if (!text_needs_escape(s, n))
		return s;
	tmp = n < sizeof(buf) ? buf : malloc(n + 1);
	if (!tmp) { /* out of memory: keep only what is safe, never the raw text */
		s[0] = '\0';
		return s;
	}
	memcpy(tmp, s, n + 1);
	text_escape(s, len, tmp, n);
	if (tmp != buf)
		free(tmp);
	return s;
}

const char *text_intern(struct str_intern *si, const char *s, size_t n)
{
	char buf[1024], *esc;
	const char *r;

	if (!text_needs_escape(s, n))
		return str_intern_n(si, s, n);
	size_t need = text_escape(NULL, 0, s, n) + 1;
	esc = need <= sizeof(buf) ? buf : malloc(need);
	if (!esc)
		return NULL;
	text_escape(esc, need, s, n);
	r = str_intern_n(si, esc, need - 1);
	if (esc != buf)
		free(esc);
	return r;
}
