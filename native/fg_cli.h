/* fg_cli.h - the flame graph's options `jflame svg` and `jflame diff` share
 * (--title, --subtitle, --width, --height, --minwidth, --countname, --negate) as rows. */
#ifndef JFLAME_FG_CLI_H
#define JFLAME_FG_CLI_H

#include "cli_opts.h"
#include "flamegraph.h"

enum fg_cli_opt {
	FG_CLI_TITLE,
	FG_CLI_SUBTITLE,
	FG_CLI_WIDTH,	  /* 100 to 100000 pixels */
	FG_CLI_HEIGHT,	  /* a frame's, 4 to 200 pixels */
	FG_CLI_MINWIDTH,  /* N pixels or N% of the total */
	FG_CLI_COUNTNAME, /* what the counts are */
	FG_CLI_NEGATE,
};

/* Option which as a row of a command's table: its kind, bounds and message
 * are the graph's, its value goes into o, help is its --help description
 * (the command's words: cli_opts.h). */
struct cli_opt fg_cli_row(struct fg_options *o, enum fg_cli_opt which, const char *help);

#endif
