/* cli_opts.h - the front ends' options as rows, one per option (its names, how
 * its value is taken, where it goes, what is said when it is not, its --help lines). */
#ifndef JFLAME_CLI_OPTS_H
#define JFLAME_CLI_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* How an option's value is taken: the cli_num.h parser, within [min, max],
 * and the type of what it sets. */
enum cli_opt_kind {
	OPT_FLAG,	   /* no value; bool set true */
	OPT_UNSET,	   /* no value; bool set false */
	OPT_STRING,	   /* const char * */
	OPT_NONEMPTY,	   /* const char *, not "" */
	OPT_INT,	   /* cli_parse_long; int */
	OPT_LONG,	   /* cli_parse_long; long */
	OPT_COUNT,	   /* cli_parse_long; size_t */
	OPT_SIZE,	   /* cli_parse_size; uint64_t bytes */
	OPT_NANOS,	   /* cli_parse_nanos; uint64_t ns */
	OPT_DURATION,	   /* cli_parse_duration; double s */
	OPT_DURATION_NS,   /* cli_parse_duration; uint64_t ns */
	OPT_DURATION_MS,   /* cli_parse_duration; int ms */
	OPT_SECONDS,	   /* cli_parse_seconds; double */
	OPT_SECONDS_MS,	   /* cli_parse_seconds; int ms */
	OPT_CALL,	   /* call(to, value): 0, or -1 said */
	OPT_CALL_FLAG,	   /* no value: call(to, NULL) */
	OPT_CALL_OPTIONAL, /* --name or --name=value: call(to, value or NULL) */
	OPT_HELP,	   /* prints --help; the parse gives 1 */
	OPT_TEXT,	   /* no option: lines of --help's list ("-- COMMAND...", a heading) */
};

/* One row per option, as perf's struct option. */
struct cli_opt {
	const char *name; /* --name; OPT_TEXT: what stands in the option's place, or NULL */
	char letter;	  /* the short option, or 0 */
	enum cli_opt_kind kind;
	void *to;    /* what it sets; the calls' first argument */
	bool *given; /* also set to true when taken, or NULL */
	double min, max;
	const char *bad; /* said (msg_say) with the value as %s when it is not taken */
	int (*call)(void *to, char *arg);
	const char *arg; /* the value's name in --help ("PID[,PID...]"); one starting
			  * with '[' is written onto the name ("--report[=FMT]") */
	/* The description in --help: lines split by '\n', each wrapped at 79
	 * columns if longer; an empty first line puts the description under the
	 * option; "" shares the next row's line ("--pid, --tid  ..."); NULL: the
	 * option is not listed. OPT_TEXT without a name: lines written as they are. */
	const char *help;
};

#define ROW(n, l, k, v, a, h)                                                   \
	{                                                                       \
		.name = n, .letter = l, .kind = k, .to = v, .arg = a, .help = h \
	}
#define ROW_NUM(n, l, k, v, g, lo, hi, msg, a, h)                                                                   \
	{                                                                                                           \
		.name = n, .letter = l, .kind = k, .to = v, .given = g, .min = lo, .max = hi, .bad = msg, .arg = a, \
		.help = h                                                                                           \
	}
#define ROW_CALL(n, l, k, fn, v, a, h)                                                      \
	{                                                                                   \
		.name = n, .letter = l, .kind = k, .call = fn, .to = v, .arg = a, .help = h \
	}
#define ROW_HELP(n, l, h)                                           \
	{                                                           \
		.name = n, .letter = l, .kind = OPT_HELP, .help = h \
	}
#define ROW_TEXT(spec, h)                                 \
	{                                                 \
		.name = spec, .kind = OPT_TEXT, .help = h \
	}

#define CLI_OPTS_MAX   64 /* rows a command has at most */
#define CLI_HELP_WIDTH 79 /* --help's lines of options are this wide at most */

enum {
	CLI_IN_ORDER = 1,   /* options end at the first operand (record's command, attach's options) */
	CLI_LONG_ONLY = 2,  /* long options take one dash too (flamegraph.pl's) */
	CLI_NO_LETTERS = 4, /* --help: no column for the short options ("  --title TEXT") */
};

/* A command: what its --help says around the rows, and how they are parsed. */
struct cli_cmd {
	const char *name;	 /* "record": "see jflame record --help" */
	const char *usage;	 /* --help before the options: the usage lines and what it does */
	void (*more)(FILE *out); /* after the options, or NULL (record's events) */
	const char *tail;	 /* after them: notes and examples, or NULL */
	int col;		 /* the column the options' descriptions start in */
	unsigned flags;		 /* CLI_IN_ORDER, CLI_LONG_ONLY, CLI_NO_LETTERS */
};

/* Takes the options of argv[1..argc) by rows[0..n) with getopt_long: 0 with
 * *next the first operand's index, 1 after --help was printed on standard
 * output, -1 after one line said what is wrong (a value not taken, an option
 * unknown or without its value). */
int cli_opts_parse(const struct cli_cmd *cmd, const struct cli_opt *rows, size_t n, int argc, char **argv, int *next);

/* Prints cmd's --help: usage, a line (or more) per row, more, tail. */
void cli_opts_help(FILE *out, const struct cli_cmd *cmd, const struct cli_opt *rows, size_t n);

/* The rows' short options as getopt wants them ("+p:aF:h"; '+' with
 * CLI_IN_ORDER) into buf: 0, or -1 when they do not fit in len bytes. */
int cli_opts_letters(const struct cli_cmd *cmd, const struct cli_opt *rows, size_t n, char *buf, size_t len);

#endif
