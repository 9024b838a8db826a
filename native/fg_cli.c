/* fg_cli.c - the flame graph's options shared by `jflame svg` and `jflame diff`. */
#include "fg_cli.h"

#include <stdio.h>
#include <string.h>

#include "cli_num.h"
#include "msg.h"

int fg_cli_size(struct fg_options *o, bool width, const char *arg)
{
	long v;
	if (cli_parse_long(arg, width ? 100 : 4, width ? 100000 : 200, &v) != 0) {
		msg_say("--%s takes pixels (%s), not '%s'\n", width ? "width" : "height",
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
		msg_say("--minwidth takes pixels (0.1) or a percentage (0.5%%), not '%s'\n", arg);
		return -1;
	}
	o->minwidth = d > 0 ? d : 1e-9;
	o->minwidth_percent = pct;
	return 0;
}

int fg_cli_option(struct fg_options *o, int ch, const char *arg)
{
	switch (ch) {
	case FG_CLI_TITLE:
		o->title = arg;
		return 1;
	case FG_CLI_SUBTITLE:
		o->subtitle = arg;
		/* a subtitle given here that reads as record's own warning is drawn as one */
		o->subtitle_warning = strncmp(arg, "WARNING", 7) == 0 || strstr(arg, "frame pointers: off");
		return 1;
	case FG_CLI_WIDTH:
	case FG_CLI_HEIGHT:
		return fg_cli_size(o, ch == FG_CLI_WIDTH, arg) == 0 ? 1 : -1;
	case FG_CLI_MINWIDTH:
		return fg_cli_minwidth(o, arg) == 0 ? 1 : -1;
	case FG_CLI_COUNTNAME:
		o->countname = arg;
		return 1;
	case FG_CLI_NEGATE:
		o->negate = true;
		return 1;
	default:
		return 0;
	}
}
