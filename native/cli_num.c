/* cli_num.c - whole-string, range-checked number parsing for command-line
 * option values (strtol/strtod with every error case refused). */
#include "cli_num.h"

#include <errno.h>
#include <stdlib.h>

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
