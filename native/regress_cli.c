/* regress_cli.c - the --confirm and --alpha rows record and diff share: the
 * baseline's parser and bounds, one message each (see regress_cli.h). */
#include "regress_cli.h"

#include "baseline.h"
#include "msg.h"

static int regress_confirm(void *to, char *arg)
{
	char e[256];
	if (baseline_parse_confirm(arg, to, e, sizeof(e)) != 0) {
		msg_say("%s\n", e);
		return -1;
	}
	return 0;
}

struct cli_opt regress_cli_confirm(unsigned *to, bool *given, const char *help)
{
	return (struct cli_opt){ .name = "confirm",
				 .kind = OPT_CALL,
				 .call = regress_confirm,
				 .to = to,
				 .given = given,
				 .arg = "N",
				 .help = help };
}

struct cli_opt regress_cli_alpha(double *to, bool *given, const char *help)
{
	return (struct cli_opt)ROW_NUM("alpha", 0, OPT_SECONDS, to, given, 1e-12, 0.5,
				       "--alpha %s: give an error rate between 0 and 0.5 (e.g. 0.01)", "A", help);
}
