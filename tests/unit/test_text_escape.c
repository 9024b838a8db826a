/* test_text_escape.c - unit tests for text_unescape (the agent files' escapes
 * decoded, malformed ones kept, the agent's escaping given back byte for byte)
 * and text_escape (target text as data: no control byte, valid UTF-8 out). */
#include "text_escape.h"

#include <stdlib.h>
#include <string.h>

#include "agent_status.h"
#include "check.h"
#include "str_intern.h"

static const struct {
	const char *in, *want;
} unescapes[] = {
	{ "", "" },
	{ "plain name", "plain name" },
	{ "a\\\\b", "a\\b" },
	{ "a\\nb", "a\nb" },
	{ "\\\\n", "\\n" }, /* an escaped backslash, then a plain n */
	{ "\\\\\\n", "\\\n" },
	{ "\\\\\\\\", "\\\\" },
	{ "\\x01", "\x01" },
	{ "x\\x1fy", "x\x1fy" },
	{ "\\x7f\\x7F", "\x7f\x7f" },
	{ "\\x4a\\x4A", "JJ" },
	{ "\\xff", "\xff" },
	{ "\\x09tab", "\ttab" },
	{ "end\\", "end\\" }, /* a lone backslash at the end is kept */
	{ "Worker\\x01 \\\\ pool\\nx", "Worker\x01 \\ pool\nx" },
};

static void test_unescape(void)
{
	for (size_t i = 0; i < sizeof(unescapes) / sizeof(unescapes[0]); i++) {
		char buf[128];
		snprintf(buf, sizeof(buf), "%s", unescapes[i].in);
		text_unescape(buf);
		CHECK_MSG(strcmp(buf, unescapes[i].want) == 0, "text_unescape(\"%s\") = \"%s\", want \"%s\"",
			  check_show(unescapes[i].in), check_show(buf), check_show(unescapes[i].want));
	}

	/* malformed or cut escapes: no read past the end, and the text after
	 * them is not lost */
	static const char *const cut[] = { "a\\x", "a\\x4", "a\\xZZtail", "a\\x0gtail", "a\\xg0tail" };
	for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
		size_t n = strlen(cut[i]);
		char *buf = malloc(n + 1); /* exact size: ASan sees a read past the end */
		memcpy(buf, cut[i], n + 1);
		text_unescape(buf);
		CHECK_MSG(strlen(buf) <= n, "text_unescape(\"%s\") grew", check_show(cut[i]));
		CHECK_MSG(buf[0] == 'a', "text_unescape(\"%s\") = \"%s\"", check_show(cut[i]), check_show(buf));
		if (strstr(cut[i], "tail"))
			CHECK_MSG(strstr(buf, "tail") != NULL,
				  "text_unescape(\"%s\") = \"%s\": the text after a malformed \\x escape is lost",
				  check_show(cut[i]), check_show(buf));
		free(buf);
	}
}

/* What the agent escapes (status_escape_append) text_unescape gives back. */
static void test_unescape_roundtrip(void)
{
	char s[300], esc[1300];
	size_t n = 0;

	for (int c = 1; c < 256; c++)
		s[n++] = (char)c;
	s[n] = '\0';
	status_escape_append(esc, sizeof(esc), 0, s);
	text_unescape(esc);
	CHECK_MSG(strcmp(esc, s) == 0, "bytes 1..255 do not round-trip");
	for (int c = 1; c < 256; c++) {
		char one[4] = { (char)c, 'x', (char)c, '\0' };
		status_escape_append(esc, sizeof(esc), 0, one);
		text_unescape(esc);
		CHECK_MSG(strcmp(esc, one) == 0, "byte %#x does not round-trip", c);
	}
}

/* ---- text_escape: target text as data ----------------------------------- */

static const struct {
	const char *in;
	size_t n; /* 0: strlen(in) */
	const char *want;
} escapes[] = {
	{ "", 0, "" },
	{ "main", 0, "main" },
	{ "C2 CompilerThread0", 0, "C2 CompilerThread0" },
	{ "pool-1-thread-2; x", 0, "pool-1-thread-2; x" }, /* ';' is the folded writers' business */
	{ "\x1b[31mred\x1b[0m", 0, "\\x1b[31mred\\x1b[0m" },
	{ "a\nb\rc\td", 0, "a\\x0ab\\x0dc\\x09d" },
	{ "bell\a", 0, "bell\\x07" },
	{ "del\x7f", 0, "del\\x7f" },
	{ "nul\0in", 6, "nul\\x00in" },
	{ "\x1f", 0, "\\x1f" },
	{ " ~", 0, " ~" },
	/* past the first eight bytes (the word-at-a-time check) */
	{ "abcdefgh\x01", 0, "abcdefgh\\x01" },
	{ "abcdefghijklmno\x7f", 0, "abcdefghijklmno\\x7f" },
	{ "abcdefghijklmnop\xc3\xa9", 0, "abcdefghijklmnop\xc3\xa9" },
	{ "abcdefghijklmnop\xc3", 0, "abcdefghijklmnop\\xc3" },
	{ "abcdefgh\\x", 0, "abcdefgh\\\\x" },
	{ "abcdefgh\\y", 0, "abcdefgh\\y" },
	{ "abcdefgh ~!@#$%^&*()_+{}|:<>?", 0, "abcdefgh ~!@#$%^&*()_+{}|:<>?" },
	/* printable UTF-8 stays */
	{ "\xe4\xb8\xbb\xe7\xba\xbf\xe7\xa8\x8b", 0, "\xe4\xb8\xbb\xe7\xba\xbf\xe7\xa8\x8b" }, /* 主线程 */
	{ "Caf\xc3\xa9.na\xc3\xafve", 0, "Caf\xc3\xa9.na\xc3\xafve" },
	{ "\xc2\xa0nbsp \xc2\xbf", 0, "\xc2\xa0nbsp \xc2\xbf" },
	{ "\xf0\x9f\x94\xa5", 0, "\xf0\x9f\x94\xa5" }, /* U+1F525 */
	{ "\xf4\x8f\xbf\xbf", 0, "\xf4\x8f\xbf\xbf" }, /* U+10FFFF */
	{ "\xef\xbf\xbd", 0, "\xef\xbf\xbd" },
	/* C1 controls in UTF-8: both bytes */
	{ "\xc2\x9b"
	  "31m",
	  0, "\\xc2\\x9b31m" },
	{ "a\xc2\x80z\xc2\x9f", 0, "a\\xc2\\x80z\\xc2\\x9f" },
	/* not UTF-8: each bad byte, the rest kept */
	{ "\xff", 0, "\\xff" },
	{ "a\x80z", 0, "a\\x80z" },
	{ "\xc3", 0, "\\xc3" }, /* cut */
	{ "\xc3(", 0, "\\xc3(" },
	{ "\xc0\x80", 0, "\\xc0\\x80" },		   /* overlong NUL (modified UTF-8) */
	{ "\xe0\x80\xaf", 0, "\\xe0\\x80\\xaf" },	   /* overlong */
	{ "\xed\xa0\x80", 0, "\\xed\\xa0\\x80" },	   /* a surrogate (CESU-8) */
	{ "\xf4\x90\x80\x80", 0, "\\xf4\\x90\\x80\\x80" }, /* above U+10FFFF */
	{ "\xf5\x80\x80\x80", 0, "\\xf5\\x80\\x80\\x80" },
	{ "\xe4\xb8", 0, "\\xe4\\xb8" },
	{ "\xe4\xb8z", 0, "\\xe4\\xb8z" },
	/* a backslash is doubled only where it would read as an escape */
	{ "a\\b", 0, "a\\b" },
	{ "C:\\Temp", 0, "C:\\Temp" },
	{ "end\\", 0, "end\\" },
	{ "\\x1b", 0, "\\\\x1b" },
	{ "\\n", 0, "\\\\n" },
	{ "\\\\", 0, "\\\\\\" },
	{ "\\\x1b", 0, "\\\\\\x1b" },
	{ "\\\xff", 0, "\\\\\\xff" },
	{ "\\\xc3\xa9", 0, "\\\xc3\xa9" },
};

static void test_escape(void)
{
	for (size_t i = 0; i < sizeof(escapes) / sizeof(escapes[0]); i++) {
		const char *in = escapes[i].in;
		size_t n = escapes[i].n ? escapes[i].n : strlen(in);
		char out[256];
		size_t got = text_escape(out, sizeof(out), in, n);
		CHECK_MSG(strcmp(out, escapes[i].want) == 0, "text_escape(\"%s\") = \"%s\", want \"%s\"",
			  check_show(in), check_show(out), check_show(escapes[i].want));
		CHECK_MSG(got == strlen(escapes[i].want), "text_escape(\"%s\") returned %zu", check_show(in), got);
		CHECK_MSG(text_needs_escape(in, n) == (strcmp(in, escapes[i].want) != 0 || n != strlen(in)),
			  "text_needs_escape(\"%s\") is wrong", check_show(in));
		CHECK_MSG(text_escape(NULL, 0, in, n) == got, "text_escape(\"%s\") sized without a buffer differs",
			  check_show(in));
		/* back to the bytes (when they hold no NUL) */
		if (!memchr(in, '\0', n)) {
			text_unescape(out);
			CHECK_MSG(strcmp(out, in) == 0, "text_escape(\"%s\") does not unescape back", check_show(in));
		}
	}
}

/* Cut to a short buffer: whole escapes and characters only, always a NUL. */
static void test_escape_cut(void)
{
	const char *in = "ab\x1b\xe4\xb8\xbb\\x";
	const char *want = "ab\\x1b\xe4\xb8\xbb\\\\x";
	size_t full = strlen(want);
	for (size_t len = 1; len <= full + 2; len++) {
		char out[64];
		memset(out, 'Z', sizeof(out));
		size_t got = text_escape(out, len, in, strlen(in));
		CHECK_MSG(got == full, "cut at %zu: returned %zu, want %zu", len, got, full);
		CHECK_MSG(memchr(out, '\0', len) != NULL, "cut at %zu: not NUL-terminated", len);
		size_t k = strlen(out);
		CHECK_MSG(k < len && strncmp(out, want, k) == 0, "cut at %zu: \"%s\" is not a prefix", len,
			  check_show(out));
		/* never half an escape or half a character */
		CHECK_MSG(k == 0 || k == 1 || k == 2 || k == 6 || k == 9 || k == 11 || k == 12,
			  "cut at %zu: \"%s\" ends inside an escape", len, check_show(out));
		CHECK_MSG(out[len] == 'Z', "cut at %zu: wrote past the buffer", len);
	}
}

/* Every byte value, every two-byte pair: the result is valid UTF-8 with no
 * control byte (checked by the test's own reading of the standard). */
static bool clean_utf8(const unsigned char *s, size_t n)
{
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
		static const unsigned minimum[] = { 0, 0, 0x80, 0x800, 0x10000 };
		if (cp < minimum[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff) || cp < 0x20 ||
		    (cp >= 0x7f && cp <= 0x9f))
			return false;
		i += len;
	}
	return true;
}

static void test_escape_all_bytes(void)
{
	int bad = 0;
	for (unsigned a = 0; a < 256; a++) {
		for (unsigned b = 0; b < 256; b++) {
			char in[4] = { (char)a, (char)b, (char)0xbf, (char)0x80 };
			char out[32];
			for (size_t n = 1; n <= 4; n++) {
				size_t k = text_escape(out, sizeof(out), in, n);
				if (!clean_utf8((const unsigned char *)out, k) || strlen(out) != k)
					bad++;
			}
		}
	}
	CHECK_MSG(bad == 0, "%d escaped texts are not clean UTF-8", bad);
}

static void test_escape_inplace_intern(void)
{
	char s[16] = "ab\x1b[0m";
	CHECK_EQ_STR(text_escape_inplace(s, sizeof(s)), "ab\\x1b[0m");
	char cut[8] = "\x1b\x1b\x1b";
	CHECK_EQ_STR(text_escape_inplace(cut, sizeof(cut)), "\\x1b");
	char plain[8] = "plain";
	CHECK_EQ_STR(text_escape_inplace(plain, sizeof(plain)), "plain");

	struct str_intern *si = str_intern_new();
	const char *a = text_intern(si, "t\x1b[1m", 5), *b = str_intern(si, "t\\x1b[1m");
	const char *c = text_intern(si, "main", 4), *d = str_intern(si, "main");
	CHECK(a && a == b);
	CHECK(c && c == d);
	/* a long name: escaped beyond any stack buffer */
	char *big = malloc(5000);
	memset(big, '\x01', 4999);
	big[4999] = '\0';
	const char *e = text_intern(si, big, 4999);
	CHECK(e && strlen(e) == 4 * 4999 && strncmp(e, "\\x01\\x01", 8) == 0);
	free(big);
	str_intern_free(si);
}

int main(void)
{
	test_unescape();
	test_unescape_roundtrip();
	test_escape();
	test_escape_cut();
	test_escape_all_bytes();
	test_escape_inplace_intern();
	return check_report("test_text_escape");
}
