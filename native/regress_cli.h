/* regress_cli.h - the regression check's options `jflame record --baseline` and
 * `jflame diff --baseline` share (--confirm, --alpha) as rows. */
#ifndef JFLAME_REGRESS_CLI_H
#define JFLAME_REGRESS_CLI_H

#include "cli_opts.h"

/* --confirm N: windows in a row a frame must grow in (1 to 10) into *to;
 * *given set when taken; help its --help description. */
struct cli_opt regress_cli_confirm(unsigned *to, bool *given, const char *help);
/* --alpha A: the test's family-wise error rate (0 to 0.5) into *to. */
struct cli_opt regress_cli_alpha(double *to, bool *given, const char *help);

#endif
