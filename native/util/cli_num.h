/* cli_num.h - the numbers subcommands take as option values (pids, rates,
 * durations, sizes): parsed whole and range-checked, so "10x" or "-1" are refused. */
#ifndef JFLAME_CLI_NUM_H
#define JFLAME_CLI_NUM_H

#include <stdint.h>

/* A decimal integer in [lo, hi]. 0, or -1 when s is anything else. */
int cli_parse_long(const char *s, long lo, long hi, long *out);
/* Seconds as a decimal number ("30", "0.5") in [lo, hi]. 0, or -1. */
int cli_parse_seconds(const char *s, double lo, double hi, double *out);
/* A duration: seconds, or a number with a unit s, m or h ("30s", "5m",
 * "1.5h"), in [lo, hi] seconds. 0, or -1. */
int cli_parse_duration(const char *s, double lo, double hi, double *out);
/* A short duration in nanoseconds: a number with a unit ns, us, ms or s
 * ("500us", "1ms", "0.5ms"), a bare number being microseconds (as
 * offcputime's -m), in [lo, hi] ns. 0, or -1. */
int cli_parse_nanos(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);
/* A size in bytes: an integer, or a number with k, M, G or T (powers of
 * 1024; "512M", "1.5G"; a trailing B or iB is allowed), in [lo, hi]. 0, or -1. */
int cli_parse_size(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);

#endif
