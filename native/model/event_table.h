/* event_table.h - the events record takes, one row each (event_table.c): where a
 * sample comes from, what it weighs, how graphs draw it and what files call it. */
#ifndef JFLAME_EVENT_TABLE_H
#define JFLAME_EVENT_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct recording;
struct stack_meta;

/* Where an event's samples come from. */
enum event_source {
	EVENT_SAMPLER, /* the BPF sampler: a perf event, sched_switch, or both */
	EVENT_AGENT,   /* the JVMTI agents' sample rings (jvmagent/sample_ring.c) */
};

/* What a sample weighs: the recording's weights. */
enum event_weigh {
	EVENT_WEIGH_NONE,   /* counts only; a sample is 1e9/Hz ns of CPU (the meta's period says it) */
	EVENT_WEIGH_TIME,   /* ns: a block's measured time; a CPU sample 1e9/Hz */
	EVENT_WEIGH_PERIOD, /* the sample's period: the perf events it stands for */
	EVENT_WEIGH_AGENT,  /* what the agent measured: bytes (alloc), ns blocked (lock) */
};

/* How the JFR writer (formats/jfr_write.c) records a sample. */
enum event_jfr {
	EVENT_JFR_EXECUTION,   /* jdk.ExecutionSample, STATE_RUNNABLE */
	EVENT_JFR_ALLOCATION,  /* jdk.ObjectAllocationSample */
	EVENT_JFR_MONITOR,     /* jdk.JavaMonitorEnter */
	EVENT_JFR_WALL_OFFCPU, /* profiler.WallClockSample, STATE_SLEEPING */
	EVENT_JFR_WALL,	       /* profiler.WallClockSample, STATE_DEFAULT */
};

/* flags */
#define EVENT_PERF	 0x01u /* the sampler opens the row's perf event on every CPU */
#define EVENT_BLOCKS	 0x02u /* the sampler times blocks off the CPU (sched_switch) */
#define EVENT_CLOCK	 0x04u /* the perf event is time: a sample is 1e9/Hz ns */
#define EVENT_MIN_BLOCK	 0x08u /* shorter waits than a threshold are counted, not recorded */
#define EVENT_COUNT_VIEW 0x10u /* --count draws samples instead of the weights */
#define EVENT_INTERVAL	 0x20u /* the recording's interval is the meta's period (alloc, a period) */

struct event_kind {
	const char *name; /* what -e takes */
	const char *word; /* in output names (cpu.svg, %e) and record's lines: cpu for cpu, cpu-clock, cycles */
	const char *help; /* record --help's words */
	enum event_source source;
	unsigned flags;	    /* EVENT_* */
	int agent;	    /* EVENT_AGENT: the agents' sample kind (AGENT_ALLOC 0, AGENT_LOCK 1); else -1 */
	uint32_t perf_type; /* EVENT_PERF: perf_event_attr's type and config */
	uint64_t perf_config;
	const char *perf_name; /* the event as perf names it (.stacks, subtitles, files) */
	const char *fallback;  /* a row taken instead where the perf event is missing (a VM) */
	uint64_t period;       /* EVENT_PERF: a sample every this many events (record -c
				  changes it); 0: -F Hz */
	enum event_weigh weigh;
	/* pprof's ValueTypes: the counts, and the weights (weight_type NULL: none) */
	const char *count_type, *count_unit, *weight_type, *weight_unit;
	const char *title; /* graphs' titles: "CPU", "Off-CPU", ... */
	const char *what;  /* subtitles: what the graph shows, "CPU samples" */
	const char *none;  /* a window without samples: "used no CPU" */
	/* graphs draw the weights divided by draw_div (else the counts); their
	 * tooltips say draw_unit (NULL: samples) of draw_unit_div, or bytes */
	bool draw_weight, draw_bytes;
	uint64_t draw_div, draw_unit_div;
	const char *draw_unit;
	enum event_jfr jfr;
	/* the subtitle of a graph of a recording of the row */
	void (*subtitle)(char *out, size_t len, const struct recording *rec, bool count_view);
};

/* What a graph of a recording draws: a stack's value, and its unit. */
struct event_view {
	bool weight;	   /* the stack's weight (else its count) */
	uint64_t div;	   /* divided by this (rounded) */
	const char *unit;  /* flamegraph's countname; NULL samples */
	uint64_t unit_div; /* flamegraph's count_scale */
	bool bytes;	   /* the values are bytes */
};

/* Every row, in --help's order; *n their number. */
const struct event_kind *event_kinds(size_t *n);
/* The row -e NAME names; NULL none. */
const struct event_kind *event_kind_named(const char *name);
/* The row whose output word is word (sampler rows: the first); NULL none. */
const struct event_kind *event_kind_of_word(const char *word);
/* The row of a perf event as perf script prints it ("cpu-clock:ppp",
 * "task-clock" is cpu-clock's); NULL none. */
const struct event_kind *event_kind_of_perf(const char *perf_event, size_t len);
/* The row a stack store's meta describes (pprof's types); the cpu row when none does. */
const struct event_kind *event_kind_of_meta(const struct stack_meta *m);
/* The words of the rows of source src (and with the word * names too), "a, b or c". */
void event_kind_list(char *out, size_t len, enum event_source src, bool any);
/* What one on-CPU sample of the row weighs at freq Hz: ns for EVENT_WEIGH_TIME;
 * 0 else (EVENT_WEIGH_PERIOD: each sample weighs its own period, the kernel's). */
uint64_t event_sample_weight(const struct event_kind *e, int freq);
/* The period .stacks prints for one sample at freq Hz (perf script's): ns for a
 * clock, the row's period, else 1. */
uint64_t event_stacks_period(const struct event_kind *e, int freq);
/* What a graph of the row draws; count_view (--count) draws samples where the row allows. */
struct event_view event_view(const struct event_kind *e, bool count_view);
/* A stack's value in that view. */
uint64_t event_view_value(const struct event_view *v, uint64_t count, uint64_t weight);
/* The subtitle of a graph of rec (its event's words, its totals and notes). */
void event_subtitle(char *out, size_t len, const struct recording *rec, bool count_view);
/* "512 KiB" */
void event_human_bytes(char *out, size_t len, double v);

#endif
