/* sample_pipeline.h - one sampler sample at a time: its frames named (JIT code its agent has
 * not logged yet waits a while in the late queue), folded under its roots, handed to a sink. */
#ifndef JFLAME_SAMPLE_PIPELINE_H
#define JFLAME_SAMPLE_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/types.h>
#include "profile.h"
#include "stack_fold.h"
#include "symbolize.h"

/* A sample in JIT code its JVM's agent has not logged yet (the agent writes
 * every 100 ms, we read every 100 ms) waits up to SAMPLE_LATE_NS for the name. */
#define SAMPLE_LATE_NS 300000000ULL

#define FOLDED_TRUNCATED     1u /* marked [truncated]: its outermost frames are lost */
#define FOLDED_UNWIND_FAILED 2u /* a HotSpot walk that could not go on */

/* One named and folded sample, valid during the sink's call. */
struct folded_sample {
	const struct profile_sample *s; /* as taken: pid, tid, cpu, time, kind */
	const char *thread;
	const char *stack; /* the folded text, without source lines */
	size_t len;
	size_t roots_len;  /* of it (and of lines): the root frames ([Pod], [Con], process, thread) */
	bool oom;	   /* no memory for it: stack is unusable */
	const char *lines; /* with opts.lines: the folded text with source lines, else NULL */
	size_t lines_len;
	bool lines_oom;
	uint64_t weight;	    /* with weigh: ns or events the sample stands for; 0 else */
	const struct frame *frames; /* kernel frames leaf first, then user frames leaf first (.stacks) */
	size_t nframes;
	unsigned flags;	       /* FOLDED_* */
	unsigned stack_errors; /* kernel or user stack not read: each marked */
};

typedef void (*sample_sink_fn)(void *ctx, const struct folded_sample *fs);

struct sample_pipeline_opts {
	struct symbolizer *sy;	/* borrowed */
	bool lines;		/* folded text with source lines too */
	bool no_inline;		/* compiled frames without their inlined callees */
	bool weigh;		/* samples carry weights (off-CPU, wall, a perf event's period) */
	uint64_t sample_weight; /* with weigh: what an on-CPU sample weighs; 0: its period (the kernel's) */
	bool cache;		/* a raw stack seen before takes its folded text from then (the sink
				* then gets no frames: frames NULL, nframes 0) */
	sample_sink_fn sink;
	void *ctx;
};

struct sample_pipeline;

struct sample_pipeline *sample_pipeline_new(const struct sample_pipeline_opts *o);
/* The sampler's depth limits: a stack that reaches one is marked truncated. */
void sample_pipeline_set_depth(struct sample_pipeline *p, int max_user, int max_kernel);
/* now: a sample younger than SAMPLE_LATE_NS whose JIT code is not named yet
 * waits in the late queue (0: it is taken as it is). */
void sample_pipeline_add(struct sample_pipeline *p, const struct profile_sample *s, uint64_t now);
/* Tries the late samples again: named now, or too old to wait longer (all of
 * them, as they are, when now is 0). */
void sample_pipeline_release_late(struct sample_pipeline *p, uint64_t now);
/* Hands on, as they are, the late samples taken before end. */
void sample_pipeline_release_before(struct sample_pipeline *p, uint64_t end);
size_t sample_pipeline_nlate(const struct sample_pipeline *p);
/* How the cache of folded stacks did; false when there is none. With
 * JFLAME_STACK_CACHE=verify in the environment every hit is named and folded
 * again and compared: a difference is a mismatch (the first few are printed);
 * JFLAME_STACK_CACHE=off turns the cache off. */
struct sample_pipeline_cache_stats {
	uint64_t hits, misses, flushes, mismatches;
	bool verify;
};
bool sample_pipeline_cache_stats(const struct sample_pipeline *p, struct sample_pipeline_cache_stats *out);
void sample_pipeline_free(struct sample_pipeline *p);

/* Starts b (reset) with a sample's roots: [Pod] and [Con] where the process
 * runs in one, "[pid] process", and its thread's name. */
void sample_roots_fold(struct fold_buf *b, struct symbolizer *sy, pid_t pid, const char *thread);

/* Samples held (copies of their records: header, kernel stack and user
 * frames), in the order they came. */
struct sample_queue {
	struct profile_sample **v;
	size_t n;
};

/* Keeps a copy of s; false when max are held or there is no memory. */
bool sample_queue_push(struct sample_queue *q, size_t max, const struct profile_sample *s);
void sample_queue_free(struct sample_queue *q);

/* With JFLAME_AGENTLESS_CHECK=1 in the environment (a test's check): walked
 * samples of JVMs with the agent, and those whose compiled or stub frames the
 * JVM's memory names otherwise than the agent (the first few are printed).
 * NULL without it. */
struct sample_pipeline_check {
	uint64_t samples, different;
};
const struct sample_pipeline_check *sample_pipeline_check_stats(const struct sample_pipeline *p);

#endif
