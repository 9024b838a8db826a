/* fg_cli.h - the flame graph's size options (--width, --height, --minwidth) as
 * `jflame svg` and `jflame diff` take them, checked, with one error line. */
#ifndef JFLAME_FG_CLI_H
#define JFLAME_FG_CLI_H

#include <stdbool.h>

#include "flamegraph.h"

/* --width PX (100..100000) when width, else --height PX (4..200). 0, or -1
 * after printing what is wrong. */
int fg_cli_size(struct fg_options *o, bool width, const char *arg);
/* --minwidth N (pixels) or N% (of the total). 0, or -1 after printing. */
int fg_cli_minwidth(struct fg_options *o, const char *arg);

#endif
