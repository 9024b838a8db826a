/* test_text_escape.c - unit tests for text_unescape: the agent files' escapes
 * decoded, malformed and cut ones kept without reading past the end, and what
 * the agent escapes (status_escape_append) given back byte for byte. */
#include "text_escape.h"

#include <stdlib.h>
#include <string.h>

#include "agent_status.h"
#include "check.h"

static const struct {
	const char *in, *want;
} unescapes[] = {
	{ "", "" },
	{ "plain name", "plain name" },
	{ "a\\\\b", "a\\b" },
	{ "a\\nb", "a\nb" },
	{ "\\\\n", "\\n" },		/* an escaped backslash, then a plain n */
	{ "\\\\\\n", "\\\n" },
	{ "\\\\\\\\", "\\\\" },
	{ "\\x01", "\x01" },
	{ "x\\x1fy", "x\x1fy" },
	{ "\\x7f\\x7F", "\x7f\x7f" },
	{ "\\x4a\\x4A", "JJ" },
	{ "\\xff", "\xff" },
	{ "\\x09tab", "\ttab" },
	{ "end\\", "end\\" },		/* a lone backslash at the end is kept */
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

int main(void)
{
	test_unescape();
	test_unescape_roundtrip();
	return check_report("test_text_escape");
}
