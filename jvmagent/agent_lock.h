/* agent_lock.h - the agent's lock samples: JVMTI MonitorContendedEnter/Entered events, and
 * java.util.concurrent lock waits through the Unsafe.park wrapper (park_hook.h). */
#ifndef JFLAME_AGENT_LOCK_H
#define JFLAME_AGENT_LOCK_H

#include <jvmti.h>
#include <stdint.h>

#include "agent_sampler.h"

/* At the agent's start: takes the monitor events' capability when the JVM offers it (s->can_lock). */
void agent_lock_start(struct agent_sampler *s, jvmtiEnv *jvmti, const jvmtiCapabilities *potential);

/* The monitor events' callbacks into cb. */
void agent_lock_callbacks(jvmtiEventCallbacks *cb);

/* From the control thread: lock samples on (waits under min_ns only counted) when want has
 * SAMPLE_WANT_LOCK, else off. Returns active with its lock bit as it now is. */
uint32_t agent_lock_apply(struct agent_sampler *s, jvmtiEnv *jvmti, JNIEnv *jni, uint32_t want, uint64_t min_ns,
			  uint32_t active);

/* The monitor events off, from any thread the JVM knows (park is bound back by agent_lock_apply). */
void agent_lock_stop(struct agent_sampler *s, jvmtiEnv *jvmti);

/* For the status file: lock events "on" or "off"; the park hook "on", "off" or "failed". */
const char *agent_lock_events_state(void);
const char *agent_lock_park_state(void);

#endif
