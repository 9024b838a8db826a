/* cli_num.h - the numbers subcommands take as option values (pids, rates,
 * seconds): parsed whole and range-checked, so "10x" or "-1" are refused. */
#ifndef JFLAME_CLI_NUM_H
#define JFLAME_CLI_NUM_H

/* A decimal integer in [lo, hi]. 0, or -1 when s is anything else. */
int cli_parse_long(const char *s, long lo, long hi, long *out);
/* Seconds as a decimal number ("30", "0.5") in [lo, hi]. 0, or -1. */
int cli_parse_seconds(const char *s, double lo, double hi, double *out);

#endif
