/* agent_samples.h - the agents' allocation and lock samples (-e alloc, -e lock): each target
 * JVM's sample ring found, asked for the events and read, each sample folded for a sink. */
#ifndef JFLAME_AGENT_SAMPLES_H
#define JFLAME_AGENT_SAMPLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbolize.h"

#define AGENT_ALLOC 0 /* struct agent_sample's kind */
#define AGENT_LOCK  1

/* One allocation or lock sample, folded; valid during the sink's call. */
struct agent_sample {
	int kind;	   /* AGENT_ALLOC, AGENT_LOCK */
	uint64_t ts_ns;	   /* CLOCK_MONOTONIC */
	const char *stack; /* the folded text */
	size_t len;
	bool oom;	 /* no memory for it: stack is unusable */
	bool truncated;	 /* marked [truncated]: its outermost frames are lost */
	uint64_t weight; /* bytes (allocations) or ns blocked (locks) */
};

typedef void (*agent_sink_fn)(void *ctx, const struct agent_sample *as);

struct agent_samples_opts {
	struct symbolizer *sy; /* borrowed */
	bool alloc, lock;      /* the events asked for */
	uint64_t alloc_interval, lock_min_ns;
	const pid_t *pids; /* the target JVMs (borrowed) */
	size_t npids;
	bool every_jvm; /* -a or a launched command: every JVM the symbolizer has seen */
	bool no_attach; /* --no-attach: said in the warning of a JVM without the agent */
	bool tty;	/* a progress line on stderr is cleared before a warning */
	agent_sink_fn sink;
	void *ctx;
};

/* What the rings counted, over every ring so far. */
struct agent_samples_stats {
	uint64_t dropped;      /* samples lost in the rings (full, or failed validation) */
	uint64_t lock_short;   /* monitor waits under lock_min_ns: counted, not recorded */
	char agent_error[256]; /* the last error an agent reported, "pid N: ..." */
};

struct agent_samples;

struct agent_samples *agent_samples_new(const struct agent_samples_opts *o);
/* Every turn of the main loop (final: once more after it, then closed): the
 * target JVMs' rings are found, asked for the events (the agent turns them
 * off 5 s after the last ask) and read; a JVM that exited has its ring read
 * to the end and closed. */
void agent_samples_poll(struct agent_samples *a, uint64_t now, bool final);
/* Whether every target pid (opts.pids) has the events on, or is known never
 * to (exited, no agent, an agent that cannot): -d's clock starts then. */
bool agent_samples_targets_on(const struct agent_samples *a, uint64_t now);
/* Zeros when a is NULL. */
const struct agent_samples_stats *agent_samples_stats(const struct agent_samples *a);
/* Every ring still open is asked for no events and closed. */
void agent_samples_free(struct agent_samples *a);

#endif
