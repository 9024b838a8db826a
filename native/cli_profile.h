/* cli_profile.h - reads a profile in any format the commands take (folded,
 * perf script or .stacks, pprof, speedscope) into a stack table. */
#ifndef JFLAME_CLI_PROFILE_H
#define JFLAME_CLI_PROFILE_H

#include "profile_format.h"
#include "stack_table.h"

/* Reads path ("-": standard input; gzip or plain) into t (initialized): its
 * format from, or (PFMT_UNKNOWN) told by its name and then its content;
 * sample_index picks a pprof sample type (NULL: the first). cmd names the
 * command in messages ("convert"). Warnings about skipped lines go to stderr.
 * 0, or -1 with one line in err (no stacks is an error). */
int cli_profile_read(struct stack_table *t, const char *path, enum profile_format from, const char *sample_index,
		     const char *cmd, char *err, size_t errlen);

#endif
