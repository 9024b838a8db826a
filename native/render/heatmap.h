/* heatmap.h - the subsecond-offset heat map's model (FlameScope's): timestamped
 * folded samples, binned by second (columns) and offset in the second (rows). */
#ifndef JFLAME_HEATMAP_H
#define JFLAME_HEATMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "call_tree.h"
#include "collapse.h"
#include "perf_script.h"
#include "recording.h"

/* Times are kept in ticks of 100 ns (exact for perf's microsecond times). */
#define HEATMAP_TICKS_PER_SEC 10000000LL
#define HEATMAP_MAX_ROWS      1000
#define HEATMAP_DEFAULT_ROWS  50
/* The page draws one column per second: a longer span is refused. */
#define HEATMAP_MAX_SECONDS 100000

struct heatmap_sample {
	int64_t tick;  /* time in ticks */
	uint32_t node; /* its stack: a call_tree node */
	uint32_t weight;
};

struct heatmap {
	struct call_tree *tree;
	struct heatmap_sample *samples;
	size_t n, cap;
	int64_t min_tick, max_tick;
	uint64_t total;	   /* sum of the weights */
	uint64_t bad_time; /* times that are not finite, negative or beyond 1e11 s: left out */
};

struct heatmap_options {
	const char *title;    /* NULL: "CPU heat map" */
	const char *subtitle; /* NULL: none */
	int rows;	      /* per second, 1..HEATMAP_MAX_ROWS; 0: HEATMAP_DEFAULT_ROWS */
	uint64_t idle;	      /* idle samples left out, for the page to say so */
};

int heatmap_init(struct heatmap *h);
void heatmap_free(struct heatmap *h);

/* Adds a sample at t_seconds (any clock; the map starts at the earliest
 * sample's whole second) of the folded stack (frames root first joined by ';')
 * that stands for weight samples (0: nothing added). Samples may come in any
 * order. 0, or -1 when out of memory. A caller filters idle samples itself
 * (jflame record: pid 0). */
int heatmap_add(struct heatmap *h, double t_seconds, const char *folded_stack, size_t len, uint64_t weight);

/* Where a time falls: the column (whole seconds since t0_sec) and the row
 * (its offset within its second, rows rows a second; row 0 is offset 0). */
struct heatmap_cell {
	int64_t col;
	int row;
};
struct heatmap_cell heatmap_cell_of(int64_t tick, int64_t t0_sec, int rows);
/* The map's first second (the earliest sample's, floored) and its number of columns. */
int64_t heatmap_t0(const struct heatmap *h);
int64_t heatmap_columns(const struct heatmap *h);

/* Whether the map can be drawn with these options: samples, rows in range, a
 * span of at most HEATMAP_MAX_SECONDS. 0, or -1 with one line in err. */
int heatmap_check(const struct heatmap *h, const struct heatmap_options *o, char *err, size_t errlen);

/* Writes the map's data as one JSON object (what the HTML page embeds):
 *   "title", "subtitle", "rows", "cols", "t0" (seconds), "total", "idle",
 *   the call tree's members (call_tree_write_json), and
 *   "samples":[dbin,node,count,...]: per cell and stack, sorted by cell;
 *   a cell's bin is col * rows + row, written as the difference to the previous one.
 * 0, or -1 with err (a span too long, out of memory, a write error). */
int heatmap_write_json(FILE *out, const struct heatmap *h, const struct heatmap_options *o, char *err, size_t errlen);

/* Whether a perf script sample is the idle task's, as FlameScope leaves them
 * out: the process "swapper" (pid 0), or a leaf frame of the idle loop
 * (cpuidle_*, do_idle, cpu_idle*, default_idle, arch_cpu_idle, intel_idle,
 * poll_idle, native_safe_halt, acpi_idle_*, mwait_idle*, cpu_startup_entry, …). */
bool heatmap_is_idle(const struct ps_sample *s);

/* Feeds perf script samples (a ps_sample_fn) into a heat map: folded with
 * jflame collapse's rules (collapse_opts; jflame heatmap turns on the kernel
 * and JIT annotations, which pick the frames' colours), one count per sample;
 * JIT frames named as perf-map-agent names them (Lpkg/Class;::method) read
 * pkg/Class.method. */
struct heatmap_reader {
	struct heatmap *h;
	struct collapse c;
	bool keep_idle;
	uint64_t idle, untimed;
	bool oom;
};
int heatmap_reader_init(struct heatmap_reader *r, struct heatmap *h, const struct collapse_opts *o, bool keep_idle);
void heatmap_reader_free(struct heatmap_reader *r);
int heatmap_reader_sample(void *ctx, const struct ps_sample *s);

#endif
