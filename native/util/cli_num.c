/* cli_num.c - whole-string, range-checked number parsing for command-line
 * option values (strtol/strtod with every error case refused). */
#include "cli_num.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int cli_parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

int cli_parse_seconds(const char *s, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	/* !(v >= lo) also refuses NaN */
	if (errno || end == s || *end || !(v >= lo) || v > hi)
		return -1;
	*out = v;
	return 0;
}

int cli_parse_duration(const char *s, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end), unit = 1;
	if (errno || end == s)
		return -1;
	if (*end == 's' || *end == 'm' || *end == 'h') {
		unit = *end == 's' ? 1 : *end == 'm' ? 60 : 3600;
		end++;
	}
	if (*end || !(v * unit >= lo) || v * unit > hi)
		return -1;
	*out = v * unit;
	return 0;
}

int cli_parse_nanos(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	static const struct {
		const char *name;
		double ns;
	} units[] = {
		{ "", 1e3 }, { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
	};
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || !(v >= 0) || *s == '+' || *s == ' ')
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].name) != 0)
			continue;
		double ns = v * units[i].ns;
		if (!(ns >= (double)lo) || ns > (double)hi || ns >= 18446744073709551616.0)
			return -1;
		*out = (uint64_t)(ns + 0.5);
		return 0;
	}
	return -1;
}

int cli_parse_size(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	static const char units[] = "KMGT"; /* either case: 64k, 2m, 500M, 2G */
	char *end;
	errno = 0;
	double v = strtod(s, &end), mult = 1;
	if (errno || end == s || !(v >= 0))
		return -1;
	const char *u = *end ? strchr(units, toupper((unsigned char)*end)) : NULL;
	if (u) {
		for (const char *k = units; k <= u; k++)
			mult *= 1024;
		end++;
		if (*end == 'i' && end[1] == 'B')
			end += 2;
	}
	if (*end == 'B')
		end++;
	double bytes = v * mult;
	if (*end || bytes < (double)lo || bytes > (double)hi || bytes >= 18446744073709551616.0)
		return -1;
	*out = (uint64_t)bytes;
	return 0;
}
