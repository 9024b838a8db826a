/* format_table.h - the one table of profile formats: a row per format with its
 * names, extensions, content test, reader, writer and what record keeps for it. */
#ifndef JFLAME_FORMAT_TABLE_H
#define JFLAME_FORMAT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "flamegraph.h"
#include "profile_read.h"
#include "stack_table.h"

/* The commands that read or write a row's format (profile_format.cmds). */
enum {
	PF_READ = 1 << 0,     /* convert, svg, diff and heatmap read it (the row's reader) */
	PF_RECORD = 1 << 1,   /* jflame record -o */
	PF_CONVERT = 1 << 2,  /* jflame convert -o, -t */
	PF_SVG = 1 << 3,      /* jflame svg: its one format */
	PF_COLLAPSE = 1 << 4, /* jflame collapse: its one format */
};

/* What a row's format is like (profile_format.traits). */
enum {
	PF_STREAMS = 1 << 0,	  /* its reader reads a file named for it itself, unbuffered */
	PF_SAMPLE_INDEX = 1 << 1, /* several sample types or events: --sample-index picks one */
	PF_TIMED = 1 << 2,	  /* each sample's time: heatmap draws it */
	PF_FALLBACK = 1 << 3,	  /* what content no row claims is read as, where the command
				     takes flamegraph.pl's input (PROFILE_READ_FOLDED) */
	PF_TEXT = 1 << 4,	  /* text: a name that says only "text" (text_exts) picks among
				     these rows by content */
	PF_ONE_VALUE = 1 << 5,	  /* one value a sample: record's count view (-e alloc, lock)
				     writes the counts alone */
};

/* What record keeps for a row's output, and how it writes it (profile_format.needs). */
enum {
	PF_NEEDS_LINES = 1 << 0,      /* the stacks with their interpreted frames' source lines */
	PF_NEEDS_TIMES = 1 << 1,      /* each sample's time (the window's timeline) */
	PF_NEEDS_SAMPLE_LOG = 1 << 2, /* written as samples come (.stacks: timestamped samples) */
	PF_NEEDS_HEATMAP = 1 << 3,    /* drawn from the window's heat map (.html) */
	PF_NEEDS_GRAPH = 1 << 4,      /* drawn with record's titles and units (the SVG) */
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

struct profile_format {
	const char *name;			    /* what -t and -f take and messages list */
	const char *alias;			    /* another name they take; NULL for none */
	const char *label;			    /* what messages call its content ("folded stacks") */
	const char *ext;			    /* the extension messages suggest */
	const char *exts[4];			    /* the extensions read and convert tell it by: case ignored,
				       each also with .gz after it (.pb: pprof not gzipped) */
	const char *text_exts[2];		    /* extensions that write it but, read, say only "text":
				       the content picks among the PF_TEXT rows */
	const char *record_exts[3];		    /* the extensions record tells it by: case kept, no .gz */
	unsigned cmds;				    /* PF_READ, PF_RECORD, ...: the commands that take it */
	unsigned traits;			    /* PF_STREAMS, PF_SAMPLE_INDEX, ... */
	unsigned needs;				    /* PF_NEEDS_*: what record keeps for it */
	bool (*sniff)(const char *buf, size_t len); /* whether content is this format;
						       NULL: never told by content */
	profile_read_fn read;			    /* NULL: not read (why_unread says why) */
	profile_write_fn write;			    /* NULL: not written from a stack table
						       (record writes .stacks as samples come and
						       .html from its heat map) */
	const char *why_unread;			    /* for a row without a reader */
};

/* The rows, in the order messages list them and content is told, and their number. */
extern const struct profile_format profile_formats[];
extern const size_t profile_formats_n;

/* The row -t or -f NAME names (its name or alias, case kept); NULL for none. */
const struct profile_format *profile_format_named(const char *name);
/* The row read and convert tell path by (exts and text_exts); NULL for none.
 * *raw: the name ends in .pb (a plain, not gzipped, protobuf); *text (may be
 * NULL): the name said only "text" (text_exts). */
const struct profile_format *profile_format_of_name(const char *path, bool *raw, bool *text);
/* The row record tells path by (record_exts; "-", standard output, is the
 * SVG); NULL for none. */
const struct profile_format *profile_format_for_record(const char *path);
/* The first row (in table order) whose sniff says buf[0..len) is its format,
 * among the rows with all of the traits given; NULL for none. */
const struct profile_format *profile_format_sniff(const char *buf, size_t len, unsigned traits);
/* The names (ext: the extensions messages suggest; labels: what messages call
 * their content) of the rows taken by cmd, as a list "a, b, c or d", into buf. */
void profile_format_list(char *buf, size_t len, unsigned cmd, bool ext);
void profile_format_labels(char *buf, size_t len, unsigned cmd);
/* Writes t to out as row f. 0, or -1 with one line in err (without "jflame: ";
 * a row without a writer says it cannot write that format). */
int profile_format_write(const struct profile_format *f, FILE *out, const struct stack_table *t,
			 const struct profile_write_opts *o, char *err, size_t errlen);

/* Reads path ("-": standard input; gzip or plain) into t (initialized): as
 * row from, or (NULL) as its name and then its content tell; sample_index
 * for a PF_SAMPLE_INDEX row (NULL: its default); flags PROFILE_READ_*. cmd
 * names the command in messages ("convert"). 0, or -1 with one line in err,
 * without "jflame: " (no stacks is an error). */
int profile_read(struct stack_table *t, const char *path, const struct profile_format *from, const char *sample_index,
		 unsigned flags, const char *cmd, char *err, size_t errlen);

#endif
