/* format_sniff.c - what a profile's first bytes say it is: JFR's magic,
 * JSON's brace, a protobuf's first tag, perf script's frame lines, a count. */
#include "format_sniff.h"

#include <ctype.h>
#include <string.h>

#define PROBE 4096 /* the bytes looked at for control characters */

static size_t bom(const char *buf, size_t len)
{
	return len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
}

/* Whether the first PROBE bytes hold a control byte other than blanks. */
static bool binary(const char *buf, size_t len)
{
	const unsigned char *b = (const unsigned char *)buf;
	for (size_t k = 0; k < len && k < PROBE; k++)
		if (b[k] < 0x20 && b[k] != '\t' && b[k] != '\n' && b[k] != '\r' && b[k] != '\f')
			return true;
	return false;
}

bool format_sniff_jfr(const char *buf, size_t len)
{
	return len >= 4 && memcmp(buf, "FLR\0", 4) == 0;
}

bool format_sniff_speedscope(const char *buf, size_t len)
{
	size_t i = bom(buf, len);
	while (i < len && isspace((unsigned char)buf[i]))
		i++;
	return i < len && buf[i] == '{';
}

bool format_sniff_pprof(const char *buf, size_t len)
{
	if (len == 0 || !binary(buf, len))
		return false;
	unsigned field = (unsigned char)buf[0] >> 3, wire = (unsigned char)buf[0] & 7;
	return field >= 1 && field <= 15 && (wire == 0 || wire == 2);
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

/* The first two content lines of text (not blank, not '#'): *frames, whether
 * one of them is a frame line; *counts, whether the first ends in a count. */
static void first_lines(const char *buf, size_t len, bool *frames, bool *counts)
{
	size_t content = 0;
	*frames = *counts = false;
	for (size_t off = bom(buf, len), lines = 0; off < len && lines < 10000 && content < 2; lines++) {
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
		if (frame_line(p, n)) {
			*frames = true;
			return;
		}
		if (content++ == 0)
			*counts = count_line(p, n);
	}
}

bool format_sniff_stacks(const char *buf, size_t len)
{
	bool frames, counts;
	if (binary(buf, len))
		return false;
	first_lines(buf, len, &frames, &counts);
	return frames;
}

bool format_sniff_folded(const char *buf, size_t len)
{
	bool frames, counts;
	if (binary(buf, len))
		return false;
	first_lines(buf, len, &frames, &counts);
	return counts && !frames;
}
