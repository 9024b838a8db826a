/* agent_alloc.h - the agent's allocation samples: JVMTI SampledObjectAlloc events, and the
 * solo capability behind them, held only while a reader asks for them. */
#ifndef JFLAME_AGENT_ALLOC_H
#define JFLAME_AGENT_ALLOC_H

#include <jvmti.h>
#include <stdint.h>

#include "agent_sampler.h"

/* At the agent's start: whether this JVM can sample allocations (s->can_alloc). */
void agent_alloc_start(struct agent_sampler *s, jvmtiEnv *jvmti, const jvmtiCapabilities *potential);

/* The allocation event's callback into cb. */
void agent_alloc_callbacks(jvmtiEventCallbacks *cb);

/* From the control thread: allocation samples on when want has SAMPLE_WANT_ALLOC
 * (every interval bytes), else off. Returns active with its alloc bit as it now is. */
uint32_t agent_alloc_apply(struct agent_sampler *s, jvmtiEnv *jvmti, uint32_t want, uint32_t interval, uint32_t active);

/* The allocation event off, from any thread the JVM knows. */
void agent_alloc_stop(struct agent_sampler *s, jvmtiEnv *jvmti);

#endif
