/* sample_gate.h - the sampler's samples on their way to the pipeline: those of a JVM being
 * attached to are held until its attach ends (its JIT names come from the map the attach makes). */
#ifndef JFLAME_SAMPLE_GATE_H
#define JFLAME_SAMPLE_GATE_H

#include "attach_queue.h"
#include "record_session.h"

/* The sampler's callback (ctx: the struct record): held, or handed to sample_pipeline_add(). */
void sample_gate_add(void *ctx, const struct profile_sample *s, size_t size);
/* Hands the held samples of pid (every one when pid is 0) on, in order. */
void sample_gate_release(struct record *r, pid_t pid);
/* Hands on the held samples (held or late) taken before end. */
void sample_gate_release_before(struct record *r, uint64_t end);
/* The attach queue's callback (ctx: the struct record): said, and the JVM's samples released. */
void sample_gate_attached(void *ctx, pid_t pid, enum attach_outcome outcome, const struct attach_info *info,
			  const char *msg);
/* -p: the JVM targets without an agent get it. */
void sample_gate_attach_targets(struct record *r);
/* The attaches still under way at the end: finished, stopped or killed; the queue freed. */
void sample_gate_finish(struct record *r);

#endif
