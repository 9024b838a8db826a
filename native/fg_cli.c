/* fg_cli.c - the flame graph's options shared by `jflame svg` and `jflame diff`:
 * one row each, placed in a command's table by fg_cli_row() with its help. */
#include "fg_cli.h"

#include <stdio.h>
#include <string.h>

#include "cli_num.h"
#include "msg.h"

static int fg_subtitle(void *to, char *arg)
{
	struct fg_options *o = to;
	o->subtitle = arg;
	/* a subtitle given here that reads as record's own warning is drawn as one */
	o->subtitle_warning = strncmp(arg, "WARNING", 7) == 0 || strstr(arg, "frame pointers: off");
	return 0;
}

static int fg_minwidth(void *to, char *arg)
{
	struct fg_options *o = to;
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

struct cli_opt fg_cli_row(struct fg_options *o, enum fg_cli_opt which, const char *help)
{
	const struct cli_opt rows[] = {
		[FG_CLI_TITLE] = ROW("title", 0, OPT_STRING, &o->title, "TEXT", NULL),
		[FG_CLI_SUBTITLE] = ROW_CALL("subtitle", 0, OPT_CALL, fg_subtitle, o, "TEXT", NULL),
		[FG_CLI_WIDTH] = ROW_NUM("width", 0, OPT_INT, &o->width, NULL, 100, 100000,
					 "--width takes pixels (100 to 100000), not '%s'", "PX", NULL),
		[FG_CLI_HEIGHT] = ROW_NUM("height", 0, OPT_INT, &o->frameheight, NULL, 4, 200,
					  "--height takes pixels (4 to 200), not '%s'", "PX", NULL),
		[FG_CLI_MINWIDTH] = ROW_CALL("minwidth", 0, OPT_CALL, fg_minwidth, o, "N[%]", NULL),
		[FG_CLI_COUNTNAME] = ROW("countname", 0, OPT_STRING, &o->countname, "NAME", NULL),
		[FG_CLI_NEGATE] = ROW("negate", 0, OPT_FLAG, &o->negate, NULL, NULL),
	};
	struct cli_opt r = rows[which];
	r.help = help;
	return r;
}
