/* fg_cli.c - the flame graph's size options (--width, --height, --minwidth)
 * shared by `jflame svg` and `jflame diff`. */
#include "fg_cli.h"

#include <stdio.h>
#include <string.h>

#include "cli_num.h"

int fg_cli_size(struct fg_options *o, bool width, const char *arg)
{
	long v;
	if (cli_parse_long(arg, width ? 100 : 4, width ? 100000 : 200, &v) != 0) {
		fprintf(stderr, "jflame: --%s takes pixels (%s), not '%s'\n", width ? "width" : "height",
			width ? "100 to 100000" : "4 to 200", arg);
		return -1;
	}
	if (width)
		o->width = (int)v;
	else
		o->frameheight = (int)v;
	return 0;
}

int fg_cli_minwidth(struct fg_options *o, const char *arg)
{
	char buf[64];
	double d;
	size_t n = strlen(arg);
	bool pct = n > 0 && arg[n - 1] == '%';
	snprintf(buf, sizeof(buf), "%.*s", (int)(pct ? n - 1 : n), arg);
	if (n >= sizeof(buf) || cli_parse_seconds(buf, 0, pct ? 100 : 100000, &d) != 0) {
		fprintf(stderr, "jflame: --minwidth takes pixels (0.1) or a percentage (0.5%%), not '%s'\n", arg);
		return -1;
	}
	o->minwidth = d > 0 ? d : 1e-9;
	o->minwidth_percent = pct;
	return 0;
}
