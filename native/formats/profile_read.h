/* profile_read.h - the readers of the profile formats the commands take (folded,
 * perf script or .stacks, pprof, speedscope, JFR) into the stack store: each a
 * row's reader in the format table (render/format_table.c: profile_read()). */
#ifndef JFLAME_PROFILE_READ_H
#define JFLAME_PROFILE_READ_H

#include "stack_table.h"

enum {
	PROFILE_READ_BEFORE = 1 << 0, /* take a differential profile (folded "stack before after":
					the table's befores); else it is an error */
	PROFILE_READ_ORDER = 1 << 1,  /* keep folded input's lines in order (the table's steps) */
	PROFILE_READ_FOLDED = 1 << 2, /* content no format claims is folded stacks (flamegraph.pl's
					input, with its messages), not an error */
};

/* What a reader reads. */
struct profile_source {
	const char *path;	  /* "-": standard input */
	const char *name;	  /* how messages name it (profile_input_name) */
	const char *buf;	  /* the content, gunzipped; NULL: the reader reads path itself
				     (a row that streams) */
	size_t len;		  /* of buf */
	const char *sample_index; /* pprof: the sample type (NULL: the first); JFR: the events
				     (cpu, wall, alloc, lock, native; NULL: cpu) */
	unsigned flags;		  /* PROFILE_READ_* */
	const char *cmd;	  /* the command, in messages ("convert") */
};

/* A row's reader: s into t (initialized). Warnings about skipped lines go to
 * standard error (util/msg.h). 0, or -1 with one line in err, without "jflame: ". */
typedef int (*profile_read_fn)(struct stack_table *t, const struct profile_source *s, char *err, size_t errlen);

/* Folded stacks ("frame;frame;... count" lines; streams from s->path). */
int profile_read_folded(struct stack_table *t, const struct profile_source *s, char *err, size_t errlen);
/* perf script text or record's .stacks (streams from s->path). */
int profile_read_stacks(struct stack_table *t, const struct profile_source *s, char *err, size_t errlen);
/* pprof's profile.proto (s->buf). */
int profile_read_pprof(struct stack_table *t, const struct profile_source *s, char *err, size_t errlen);
/* speedscope's JSON (s->buf). */
int profile_read_speedscope(struct stack_table *t, const struct profile_source *s, char *err, size_t errlen);
/* A JDK Flight Recorder recording (s->buf). */
int profile_read_jfr(struct stack_table *t, const struct profile_source *s, char *err, size_t errlen);
/* How messages name path: "standard input" for "-". */
const char *profile_input_name(const char *path);

#endif
