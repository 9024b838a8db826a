/* stack_table.h - the stack store: folded stacks numbered in the order first seen, with
 * sample counts and weights, samples in time order, and what they measure. */
#ifndef JFLAME_STACK_TABLE_H
#define JFLAME_STACK_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "str_index.h"

struct recording;

/* One sample of a timestamped input (perf script text), in input order. */
struct timed_sample {
	double time;	 /* seconds, as perf script printed it */
	uint64_t weight; /* its period (1 when not printed) */
	uint32_t stack;	 /* index into the table's stacks */
	uint32_t thread; /* index into the table's threads */
};

/* What the numbers are, in pprof's words (ValueType type/unit). */
struct stack_meta {
	char count_type[32], count_unit[32];   /* the counts: "samples"/"count" by default */
	bool has_weight;		       /* weights below mean something */
	char weight_type[32], weight_unit[32]; /* "cpu"/"nanoseconds", "cycles"/"count" */
	uint64_t period;		       /* weight units between samples; 0 unknown */
	int64_t time_ns;		       /* start, ns since the epoch; 0 unknown */
	int64_t duration_ns;		       /* 0 unknown */
	char event[64];			       /* "cpu-clock", "cycles"; "" unknown */
	char name[256];			       /* what was profiled; "" unknown */
	char comment[1024];		       /* notes, one per line */
	bool lines;			       /* frames may end in a source line (STACK_LINE_MARK) */
};

/* One line of an input in the order read (a flame chart draws them so):
 * its stack, count, and count before (differential input). */
struct stack_step {
	uint32_t stack; /* index into the table's stacks */
	uint64_t count, before;
};

struct stack_table {
	struct str_index stacks; /* folded text, frames root first joined by ';' */
	uint64_t *counts;	 /* per stack: samples (what folded output prints) */
	uint64_t *weights;	 /* per stack: sum of weights (when has_weight) */
	uint64_t *befores;	 /* per stack: the count before, for a differential
				     profile ("stack before after" input, jflame diff);
				     NULL for any other */
	size_t cap;
	uint64_t total_count, total_weight, total_before;
	struct stack_step *steps; /* the input's lines in order, when its reader was
				     asked to keep them (flame charts); else none */
	size_t nsteps, steps_cap;
	struct str_index threads; /* names of the timeline's threads ("comm pid: 1 tid: 2") */
	struct timed_sample *timeline;
	size_t ntimeline, timeline_cap;
	struct stack_meta meta;
};

/* A frame of a table with meta.lines (record's, for pprof and speedscope) may
 * end in a source line: "name" STACK_LINE_MARK "File.java:123" (record never
 * puts the mark in a name; folded output never carries it). Tables read from
 * files have no lines: their frames are names whatever bytes they hold. */
#define STACK_LINE_MARK '\x1f'

/* Splits frame[0..n) at its line mark: the length of its name, and *file /
 * *file_len / *line the source line after the mark (*line 0, *file_len 0 when
 * the frame has none or it does not parse). */
size_t stack_frame_line(const char *frame, size_t n, const char **file, size_t *file_len, int64_t *line);

/* Copies the stack in[0..n) to out (room for n bytes) without its frames'
 * source lines (the line mark and what follows it up to the frame's end): the
 * stack as folded output and graphs show it. Its length. */
size_t stack_strip_lines(const char *in, size_t n, char *out);
/* The stack text[0..*len) as folded output shows it: itself when it has no
 * lines (lines false), else stripped into *buf (grown to *cap bytes; the
 * caller frees it), *len its new length. NULL when out of memory. */
const char *stack_plain(const char *text, size_t *len, bool lines, char **buf, size_t *cap);

void stack_table_init(struct stack_table *t);
void stack_table_free(struct stack_table *t);
/* Adds count and weight to the stack frames[0..len) (sums saturate). Its
 * index, or -1 when out of memory. */
long stack_table_add(struct stack_table *t, const char *frames, size_t len, uint64_t count, uint64_t weight);
/* Adds count (after) and before to the stack frames[0..len) of a
 * differential profile (befores is made on the first call). Its index, or -1
 * when out of memory. */
long stack_table_add_diff(struct stack_table *t, const char *frames, size_t len, uint64_t before, uint64_t count);
/* Appends a line of the input, in order (stack: an index from stack_table_add). 0, or -1 when out of memory. */
int stack_table_add_step(struct stack_table *t, uint32_t stack, uint64_t count, uint64_t before);
/* Adds one timestamped sample of stack (an index from stack_table_add) taken
 * on thread[0..len). 0, or -1 when out of memory. */
int stack_table_add_timed(struct stack_table *t, uint32_t stack, const char *thread, size_t len, double time,
			  uint64_t weight);
/* Fills an empty table from a recording: counts are samples, weights its
 * own or count x 1e9/freq cpu nanoseconds; target, duration, rate and losses
 * go into meta, and meta.lines when the recording's frames carry source
 * lines (its store's meta.lines: record's with a pprof, speedscope or JFR
 * output). now_ns: the wall clock at the end of the recording (0 unknown).
 * 0, or -1 when out of memory. */
int stack_table_from_recording(struct stack_table *t, const struct recording *rec, int64_t now_ns);
/* Copies src's timeline into t, each sample onto the stack of t with the same
 * text (a sample whose stack t lacks is left out). 0, or -1 when out of memory. */
int stack_table_timeline_from(struct stack_table *t, const struct stack_table *src);
/* The meta of stack_table_from_recording alone (for tables filled otherwise). */
void stack_table_meta_from_recording(struct stack_table *t, const struct recording *rec, int64_t now_ns);
/* Stack indices sorted by their text (byte order), for writers that want a
 * stable order. Caller frees; NULL when out of memory. */
uint32_t *stack_table_sorted(const struct stack_table *t);
/* Splits the stack's text into frames: calls fn for every non-empty frame,
 * root first; stops and returns fn's nonzero result. */
int stack_table_frames(const char *stack, int (*fn)(void *ctx, const char *frame, size_t len), void *ctx);

#endif
