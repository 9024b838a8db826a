/* cli_io.h - what the jflame front ends (builtin-*.c) share around their work:
 * input lists and names, warnings about skipped input, outputs. */
#ifndef JFLAME_CLI_IO_H
#define JFLAME_CLI_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "collapse.h"
#include "folded.h"
#include "perf_script.h"

/* How messages name an input: "standard input" for "-", else path. */
const char *cli_input_name(const char *path);
/* An -o argument as out_file_open takes it: NULL (standard output) for NULL or "-". */
const char *cli_output_path(const char *arg);

/* The one rule for names given twice, for every command: an output named twice
 * (the same text, or the same file by another path, or "-" twice) is an error
 * naming it; inputs that are merged (collapse, heatmap) likewise; jflame diff A A
 * compares a file with itself and is fine. */

/* Whether a and b name the same file: the same text, the same existing file
 * (dev and inode), or the same name in the same directory for files still to
 * be made. "-" (standard input or output) is the same only as "-". */
bool cli_same_file(const char *a, const char *b);

/* Adds the -o argument arg to outs[0..*n) of jflame CMD, which writes at most
 * max outputs: 0, or -1 after printing why not (named twice, or too many:
 * "give -o once" when max is 1). */
int cli_output_add(const char *cmd, const char **outs, size_t *n, size_t max, const char *arg);

/* The operands argv[first..argc) as inputs[], "-" (standard input) when none,
 * for inputs that are merged: 0, or -1 after printing when there are more
 * than max or one is given twice. */
int cli_inputs(const char **inputs, size_t *n, size_t max, int argc, char **argv, int first);

/* The lines of perf script inputs read so far. */
struct cli_script_lines {
	uint64_t bad, overlong, samples, real; /* real: see ps_stats */
	char first_bad[4200];		       /* "NAME: 'line'": the first bad line and its input */
	const char *oom_input;		       /* the input after which *oom was set */
};

/* Reads inputs[0..n) with perf_script_parse_file(fn, ctx), counting their
 * lines into t (zeroed first). 0; -1 with one line in err; 1 when *oom was set
 * after reading t->oom_input (err untouched: the caller says what ran out). */
int cli_scripts_read(const char *const *inputs, size_t n, ps_sample_fn fn, void *ctx, const bool *oom,
		     struct cli_script_lines *t, char *err, size_t errlen);

/* Warns about the unrecognized and overlong lines in t (the first bad one and
 * its input cut to first_width bytes), then about the samples of events other
 * than the one c kept. */
void cli_scripts_warn(const struct cli_script_lines *t, int first_width, const struct collapse *c);

/* Writes one output: fn(f, ctx, err, errlen) returns 0, or -1 with one line in err. */
typedef int (*cli_write_fn)(FILE *f, void *ctx, char *err, size_t errlen);

/* Writes path (NULL: standard output) with fn through out_file: into a
 * temporary file that replaces path when fn succeeds and is removed when it
 * fails. 0, or -1 with one line in err. */
int cli_output_write(const char *path, cli_write_fn fn, void *ctx, char *err, size_t errlen);

#endif
