/* fuzz_text_escape.c - libFuzzer target for target text as data: escaped, any
 * bytes give valid UTF-8 with no control byte, cut cleanly, decoded back. */
/* module: native/util/text_escape.c native/util/str_intern.c */
#include "text_escape.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "str_intern.h"

/* Prints the message and aborts, which the fuzzer reports as a crash. */
static __attribute__((noreturn, format(printf, 1, 2))) void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fuzz_text_escape: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/* Valid UTF-8 (no overlong form, surrogate or code point above U+10FFFF) with
 * no C0, DEL or C1 control: the test's own reading of the standard. */
static bool clean_utf8(const unsigned char *s, size_t n)
{
	static const unsigned minimum[] = { 0, 0, 0x80, 0x800, 0x10000 };
	for (size_t i = 0; i < n;) {
		unsigned c = s[i];
		size_t len = c < 0x80		? 1 :
			     (c & 0xe0) == 0xc0 ? 2 :
			     (c & 0xf0) == 0xe0 ? 3 :
			     (c & 0xf8) == 0xf0 ? 4 :
						  0;
		if (!len || i + len > n)
			return false;
		unsigned cp = len == 1 ? c : len == 2 ? c & 0x1f : len == 3 ? c & 0x0f : c & 0x07;
		for (size_t k = 1; k < len; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if (cp < minimum[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp < 0x20 ||
		    (cp >= 0x7f && cp <= 0x9f))
			return false;
		i += len;
	}
	return true;
}

/* The length of the piece of escaped text at full[k]. */
static size_t piece_at(const char *full, size_t k)
{
	unsigned char c = (unsigned char)full[k];
	if (c == '\\') {
		bool c1 = strncmp(full + k, "\\xc2\\x8", 7) == 0 || strncmp(full + k, "\\xc2\\x9", 7) == 0;
		return c1 ? 8 : full[k + 1] == 'x' ? 4 : full[k + 1] == '\\' ? 2 : 1;
	}
	return c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : 4;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t cut_sel = data[0];
	const char *s = (const char *)data + 1;
	size_t n = size - 1;

	size_t need = text_escape(NULL, 0, s, n);
	if (need > 4 * n)
		fail("%zu bytes escape to %zu, more than 4 each", n, need);
	char *full = malloc(need + 1);
	if (text_escape(full, need + 1, s, n) != need || strlen(full) != need)
		fail("escaped length %zu, wrote %zu", need, strlen(full));
	if (!clean_utf8((const unsigned char *)full, need))
		fail("'%s' holds a control byte or is not UTF-8", full);
	if (text_needs_escape(s, n) != (need != n || memcmp(full, s, n) != 0))
		fail("text_needs_escape disagrees with text_escape");

	/* back to the bytes, when they hold no NUL (text_unescape stops there) */
	if (!memchr(s, '\0', n)) {
		char *back = strdup(full);
		text_unescape(back);
		if (strlen(back) != n || memcmp(back, s, n) != 0)
			fail("'%s' does not unescape back", full);
		free(back);
	}

	/* cut into an exact-size buffer: a prefix of whole escapes and characters */
	size_t len = 1 + cut_sel % (need + 1);
	char *buf = malloc(len);
	if (text_escape(buf, len, s, n) != need)
		fail("cut at %zu: another length", len);
	size_t k = strnlen(buf, len);
	if (k >= len || memcmp(buf, full, k) != 0)
		fail("cut at %zu: not a NUL-terminated prefix", len);
	if (!clean_utf8((const unsigned char *)buf, k))
		fail("cut at %zu: '%s' ends inside a character", len, buf);
	/* k is where a piece (an escape, a C1 control's two, a doubled backslash, a
	 * character) ends, and the next one did not fit */
	size_t at = 0, piece = 0;
	while (at < need) {
		piece = piece_at(full, at);
		if (at >= k)
			break;
		at += piece;
	}
	if (at != k || (k < need && k + piece < len))
		fail("cut at %zu: ends at %zu of '%s', inside a piece or before one that fits", len, k, full);

	/* in place and interned: the same text */
	if (!memchr(s, '\0', n)) {
		char *in = malloc(need + 1);
		memcpy(in, s, n);
		in[n] = '\0';
		if (strcmp(text_escape_inplace(in, need + 1), full) != 0)
			fail("text_escape_inplace differs");
		free(in);
	}
	struct str_intern *si = str_intern_new();
	const char *interned = si ? text_intern(si, s, n) : NULL;
	if (si && (!interned || strcmp(interned, full) != 0))
		fail("text_intern differs");
	str_intern_free(si);
	free(buf);
	free(full);
	return 0;
}
