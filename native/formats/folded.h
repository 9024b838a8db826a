/* folded.h - reads folded stacks ("a;b;c 12", and flamegraph.pl's differential
 * "a;b;c 10 14") from a file, plain or gzip, into the stack store. */
#ifndef JFLAME_FOLDED_H
#define JFLAME_FOLDED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stack_table.h"

/* What reading folded text found besides its stacks (which go into a stack_table). */
struct folded {
	uint64_t n;	    /* lines with a stack and a count */
	bool differential;  /* some line had two counts: before after (the table's befores) */
	uint64_t bad_lines; /* no count, a bad count, a NUL: skipped */
	char first_bad[80];
	uint64_t long_lines; /* longer than FOLDED_MAX_LINE: skipped */
	uint64_t first_long; /* the line number of the first of them */
	uint64_t total, total_before;
};

#define FOLDED_MAX_LINE (16u << 20)
/* Counts, and the total of each column, stay below 2^63 (pprof's int64). */
#define FOLDED_MAX_COUNT (UINT64_C(1) << 63)

/* A folded stack built frame by frame ("a;b;c"), by the readers of other
 * formats (pprof, speedscope); at most FOLDED_MAX_LINE bytes. */
struct folded_line {
	char *buf; /* not NUL-terminated */
	size_t len, cap;
};
enum { FOLDED_PUSH_OK, FOLDED_PUSH_LONG, FOLDED_PUSH_OOM };
/* Appends frame s[0..n) (after a ';' unless it is the first). With clean, what
 * a folded frame cannot hold becomes harmless: ';' -> ':', line breaks and
 * NULs -> ' '. FOLDED_PUSH_OK, or why not (the line is then unchanged). */
int folded_line_push(struct folded_line *l, const char *s, size_t n, bool clean);
void folded_line_free(struct folded_line *l);

enum {
	FOLDED_KEEP_ORDER = 1 << 0, /* also the lines in order, as the table's steps (flame charts) */
};

/* Parses text[0..len) into t (initialized; a line with two counts adds to its
 * befores, see stack_table_add_diff), and what else it finds into f (zeroed
 * first); flags FOLDED_*; name is the input's name for messages. 0, or -1 with
 * one line in err: out of memory, or a count of 2^63 or more, or counts adding
 * up to that (with the line number). */
int folded_parse(struct folded *f, struct stack_table *t, const char *text, size_t len, const char *name,
		 unsigned flags, char *err, size_t errlen);
/* Reads path ("-" for stdin; gzip or plain) and parses it. Gzip input and
 * standard input are read into memory, at most max bytes once unpacked (0:
 * INPUT_MAX_GZIP for gzip, INPUT_MAX_BYTES for plain standard input); plain
 * files are mapped while read. 0, or -1 with err. */
int folded_read(struct folded *f, struct stack_table *t, const char *path, size_t max, unsigned flags, char *err,
		size_t errlen);

/* Warns (standard error, util/msg.h) about the lines reading f skipped
 * (without a count, longer than FOLDED_MAX_LINE); in_name, when not NULL,
 * names the input. */
void folded_warn(const struct folded *f, const char *in_name);
/* Why f has no stacks, when its lines were skipped: "no line ends in a
 * count", "line 3 is longer than the 16 MiB line limit", both, or "" (into buf). */
const char *folded_none(const struct folded *f, char *buf, size_t len);

#endif
