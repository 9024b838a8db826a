/* profile_read.h - reads a profile in any format the commands take (folded,
 * perf script or .stacks, pprof, speedscope, JFR) into the stack store. */
#ifndef JFLAME_PROFILE_READ_H
#define JFLAME_PROFILE_READ_H

#include "profile_format.h"
#include "stack_table.h"

enum {
	PROFILE_READ_BEFORE = 1 << 0, /* take a differential profile (folded "stack before after":
					the table's befores); else it is an error */
	PROFILE_READ_ORDER = 1 << 1,  /* keep folded input's lines in order (the table's steps) */
	PROFILE_READ_FOLDED = 1 << 2, /* content no format claims is folded stacks (flamegraph.pl's
					input, with its messages), not an error */
};

/* Reads path ("-": standard input; gzip or plain) into t (initialized): its
 * format from, or (PFMT_UNKNOWN) told by its name and then its content;
 * sample_index picks a pprof sample type (NULL: the first) or the JFR events
 * (jfr_read: cpu, wall, alloc, lock, native; NULL cpu); flags PROFILE_READ_*.
 * cmd names the command in messages ("convert"). Warnings about skipped lines
 * go to standard error (util/msg.h). 0, or -1 with one line in err, without
 * "jflame: " (no stacks is an error). */
int profile_read(struct stack_table *t, const char *path, enum profile_format from, const char *sample_index,
		 unsigned flags, const char *cmd, char *err, size_t errlen);
/* How messages name path: "standard input" for "-". */
const char *profile_input_name(const char *path);

#endif
