/* fg_cli.h - the flame graph's options `jflame svg` and `jflame diff` share
 * (--title, --subtitle, --width, --height, --minwidth, --countname, --negate),
 * checked, with one error line. */
#ifndef JFLAME_FG_CLI_H
#define JFLAME_FG_CLI_H

#include <stdbool.h>

#include "flamegraph.h"

/* Their getopt_long values; a front end numbers its own options from FG_CLI_NEXT. */
enum {
	FG_CLI_TITLE = 256, /* past every short option */
	FG_CLI_SUBTITLE,
	FG_CLI_WIDTH,
	FG_CLI_HEIGHT,
	FG_CLI_MINWIDTH,
	FG_CLI_COUNTNAME, /* the last that takes a value */
	FG_CLI_NEGATE,
	FG_CLI_NEXT
};

/* Takes option ch with its argument arg into o: 1 when ch is one of the
 * shared options, 0 when not, -1 after printing what is wrong with arg. */
int fg_cli_option(struct fg_options *o, int ch, const char *arg);

/* --width PX (100..100000) when width, else --height PX (4..200). 0, or -1
 * after printing what is wrong. */
int fg_cli_size(struct fg_options *o, bool width, const char *arg);
/* --minwidth N (pixels) or N% (of the total). 0, or -1 after printing. */
int fg_cli_minwidth(struct fg_options *o, const char *arg);

#endif
