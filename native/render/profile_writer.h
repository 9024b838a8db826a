/* profile_writer.h - the one table of the profile formats jflame writes: per
 * format its names (-t), file extensions, the commands that write it, its writer. */
#ifndef JFLAME_PROFILE_WRITER_H
#define JFLAME_PROFILE_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "flamegraph.h"
#include "profile_format.h"
#include "stack_table.h"

/* The commands that write a row's format (profile_writer.cmds). */
enum {
	PW_RECORD = 1 << 0,   /* jflame record -o */
	PW_CONVERT = 1 << 1,  /* jflame convert -o, -t */
	PW_SVG = 1 << 2,      /* jflame svg: its one format */
	PW_COLLAPSE = 1 << 3, /* jflame collapse: its one format */
};

/* How one output is written, beyond the table it is written from. */
struct profile_write_opts {
	bool raw;			/* pprof: a plain protobuf (.pb), not gzipped */
	const char *title;		/* SVG: the title (NULL: the table's meta.name, else
					   the flame graph's default) */
	const struct fg_options *graph; /* SVG: the graph as the caller set it up (record:
					   title, subtitle and subtitle_warning, units); NULL:
					   convert's (java colours, legend, colours hashed by
					   name, counts named by meta.count_type or _unit) */
};

/* Writes t to out. 0, or -1 with one line in err (without "jflame: "). */
typedef int (*profile_write_fn)(FILE *out, const struct stack_table *t, const struct profile_write_opts *o, char *err,
				size_t errlen);

struct profile_writer {
	enum profile_format format;
	const char *name;	    /* what -t takes and messages list */
	const char *alias;	    /* another name -t takes; NULL for none */
	const char *ext;	    /* the extension messages suggest */
	const char *exts[4];	    /* the extensions convert tells it by: case ignored,
				       each also with .gz after it (.pb: pprof not gzipped) */
	const char *record_exts[3]; /* the extensions record tells it by: case kept, no
				       .gz added */
	unsigned cmds;		    /* PW_*: the commands that write it */
	profile_write_fn write;	    /* NULL: not written from a stack table (record writes
				       .stacks as samples come and .html from its heat map) */
};

/* The rows, in the order messages list them, and their number. */
extern const struct profile_writer profile_writers[];
extern const size_t profile_writers_n;

/* The row of format f; NULL when no row has it. */
const struct profile_writer *profile_writer_of(enum profile_format f);
/* The row -t NAME names (its name or alias, case kept); NULL for none. */
const struct profile_writer *profile_writer_named(const char *name);
/* The row convert tells path by (profile_writer.exts); NULL for none. *raw:
 * the name ends in .pb (a plain, not gzipped, protobuf). */
const struct profile_writer *profile_writer_of_name(const char *path, bool *raw);
/* The row record tells path by (profile_writer.record_exts; "-", standard
 * output, is the SVG); NULL for none. */
const struct profile_writer *profile_writer_for_record(const char *path);
/* The names (field ext: the extensions messages suggest) of the rows cmd
 * writes, as a list "a, b, c or d", into buf. */
void profile_writer_list(char *buf, size_t len, unsigned cmd, bool ext);
/* Writes t to out as row w. 0, or -1 with one line in err (without "jflame: ";
 * a row without a writer says it cannot write that format). */
int profile_writer_write(const struct profile_writer *w, FILE *out, const struct stack_table *t,
			 const struct profile_write_opts *o, char *err, size_t errlen);

#endif
