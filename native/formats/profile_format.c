/* profile_format.c - tells profile formats apart: a table of file name
 * extensions, and a look at the first lines or bytes of the content. */
#include "profile_format.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

static bool ends_with(const char *s, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);
	return n >= k && strncasecmp(s + n - k, suffix, k) == 0;
}

enum profile_format profile_format_of_name(const char *path, bool *raw)
{
	static const struct {
		const char *ext;
		enum profile_format f;
	} exts[] = {
		{ ".folded", PFMT_FOLDED }, { ".collapsed", PFMT_FOLDED }, { ".stacks", PFMT_STACKS },
		{ ".perf", PFMT_STACKS },   { ".script", PFMT_STACKS },	   { ".pb", PFMT_PPROF },
		{ ".pprof", PFMT_PPROF },   { ".json", PFMT_SPEEDSCOPE },  { ".svg", PFMT_SVG },
		{ ".txt", PFMT_TEXT },	    { ".jfr", PFMT_JFR },
	};
	size_t n = strlen(path);
	bool gz = ends_with(path, n, ".gz");
	if (gz)
		n -= 3;
	*raw = !gz && ends_with(path, n, ".pb");
	for (size_t i = 0; i < sizeof(exts) / sizeof(exts[0]); i++)
		if (ends_with(path, n, exts[i].ext))
			return exts[i].f;
	return PFMT_UNKNOWN;
}

enum profile_format profile_format_named(const char *name)
{
	static const struct {
		const char *name;
		enum profile_format f;
	} names[] = {
		{ "folded", PFMT_FOLDED },   { "collapsed", PFMT_FOLDED },	{ "stacks", PFMT_STACKS },
		{ "perf", PFMT_STACKS },     { "pprof", PFMT_PPROF },		{ "pb", PFMT_PPROF },
		{ "json", PFMT_SPEEDSCOPE }, { "speedscope", PFMT_SPEEDSCOPE }, { "svg", PFMT_SVG },
		{ "jfr", PFMT_JFR },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i].name) == 0)
			return names[i].f;
	return PFMT_UNKNOWN;
}

const char *profile_format_label(enum profile_format f)
{
	switch (f) {
	case PFMT_FOLDED:
		return "folded stacks";
	case PFMT_STACKS:
		return "perf script text";
	case PFMT_PPROF:
		return "pprof";
	case PFMT_SPEEDSCOPE:
		return "speedscope JSON";
	case PFMT_SVG:
		return "SVG";
	case PFMT_TEXT:
		return "text";
	case PFMT_HTML:
		return "HTML";
	case PFMT_JFR:
		return "JFR";
	default:
		return "unknown";
	}
}

/* Whether a line is a perf script frame: blanks, a hex address, a blank. */
static bool frame_line(const char *p, size_t n)
{
	size_t i = 0, h;
	while (i < n && (p[i] == ' ' || p[i] == '\t'))
		i++;
	if (i == 0)
		return false;
	for (h = i; h < n && isxdigit((unsigned char)p[h]); h++)
		;
	return h > i && (h == n || p[h] == ' ');
}

/* Whether a line ends in a blank and a count, as folded lines do. */
static bool count_line(const char *p, size_t n)
{
	size_t i = n;
	while (i > 0 && isdigit((unsigned char)p[i - 1]))
		i--;
	return i < n && i > 1 && (p[i - 1] == ' ' || p[i - 1] == '\t');
}

enum profile_format profile_format_sniff(const char *buf, size_t len)
{
	const unsigned char *b = (const unsigned char *)buf;
	size_t bom = len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0 ? 3 : 0, i = bom, probe = len < 4096 ? len : 4096;
	if (len >= 4 && memcmp(buf, "FLR\0", 4) == 0)
		return PFMT_JFR;
	while (i < len && isspace(b[i]))
		i++;
	if (i < len && b[i] == '{')
		return PFMT_SPEEDSCOPE;
	for (size_t k = 0; k < probe; k++) {
		if (b[k] < 0x20 && b[k] != '\t' && b[k] != '\n' && b[k] != '\r' && b[k] != '\f') {
			/* binary: a protobuf starts with a tag of a low field number, wire type 0 or 2 */
			unsigned field = b[0] >> 3, wire = b[0] & 7;
			return field >= 1 && field <= 15 && (wire == 0 || wire == 2) ? PFMT_PPROF : PFMT_UNKNOWN;
		}
	}
	/* text: the first content line (a count?) and the one after it (a frame?) */
	bool first_counts = false;
	size_t content = 0;
	for (size_t off = bom, lines = 0; off < len && lines < 10000 && content < 2; lines++) {
		const char *p = buf + off, *nl = memchr(p, '\n', len - off);
		size_t n = nl ? (size_t)(nl - p) : len - off;
		off += n + 1;
		if (n && p[n - 1] == '\r')
			n--;
		size_t k = 0;
		while (k < n && isspace((unsigned char)p[k]))
			k++;
		if (k == n || p[k] == '#')
			continue;
		if (frame_line(p, n))
			return PFMT_STACKS;
		if (content++ == 0)
			first_counts = count_line(p, n);
	}
	return first_counts ? PFMT_FOLDED : PFMT_UNKNOWN;
}
