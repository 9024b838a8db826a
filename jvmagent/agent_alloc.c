/* agent_alloc.c - the agent's allocation samples: SampledObjectAlloc into the sample ring,
 * turned on and off by the control thread (agent_sampler.c) as the reader asks. */
#include <jvmti.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "agent_alloc.h"
#include "agent_sampler.h"
#include "sample_ring.h"

static struct agent_sampler *smp; /* for the JVMTI callback, which has no context */

static void JNICALL on_sampled_object_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object, jclass klass,
					    jlong size)
{
	char cls[1024];
	(void)thread;
	(void)object;
	if (*smp->host.stood_down || !(atomic_load_explicit(&smp->active, memory_order_relaxed) & SAMPLE_WANT_ALLOC))
		return;
	agent_sampler_class_name(jvmti, klass, cls, sizeof(cls));
	uint64_t sz = size > 0 ? (uint64_t)size : 0;
	agent_sampler_put(jvmti, jni, SAMPLE_ALLOC, sz, sample_ring_alloc_weight(sz, atomic_load(&smp->interval)), cls,
			  NULL);
}

void agent_alloc_start(struct agent_sampler *s, jvmtiEnv *jvmti, const jvmtiCapabilities *potential)
{
	smp = s;
	/* taken when a reader asks (agent_alloc_apply): only one environment may hold it */
	jint version = 0;
	(*jvmti)->GetVersionNumber(jvmti, &version);
	smp->can_alloc = potential->can_generate_sampled_object_alloc_events ||
			 ((version & JVMTI_VERSION_MASK_MAJOR) >> JVMTI_VERSION_SHIFT_MAJOR) >= 11;
	if (!smp->can_alloc)
		agent_sampler_error("this JVM cannot sample allocations (JVMTI "
				    "can_generate_sampled_object_alloc_events, JDK 11 or later)");
}

void agent_alloc_callbacks(jvmtiEventCallbacks *cb)
{
	cb->SampledObjectAlloc = on_sampled_object_alloc;
}

uint32_t agent_alloc_apply(struct agent_sampler *s, jvmtiEnv *jvmti, uint32_t want, uint32_t interval, uint32_t active)
{
	jvmtiError e;

	/* Allocation sampling is a solo capability (one JVMTI environment at a
	 * time): held only while sampling, so async-profiler & co. can have it otherwise. */
	if ((want & SAMPLE_WANT_ALLOC) && !s->alloc_cap) {
		jvmtiCapabilities c = { 0 };
		c.can_generate_sampled_object_alloc_events = 1;
		if (agent_sampler_now_ns() < s->alloc_retry_ns) {
			want &= ~SAMPLE_WANT_ALLOC;
		} else if ((e = (*jvmti)->AddCapabilities(jvmti, &c)) == JVMTI_ERROR_NONE) {
			s->alloc_cap = true;
			if (s->alloc_retry_ns) /* no longer another agent's */
				memcpy(s->ring.h->agent_error, s->init_error, sizeof(s->init_error));
			s->alloc_retry_ns = 0;
		} else {
			want &= ~SAMPLE_WANT_ALLOC;
			s->alloc_retry_ns = agent_sampler_now_ns() + SAMPLE_RING_BEAT_NS;
			agent_sampler_error("another JVMTI agent samples allocations (JVMTI allows one at a time; "
					    "error %d)",
					    (int)e);
		}
	}
	if ((want & SAMPLE_WANT_ALLOC) && (!(active & SAMPLE_WANT_ALLOC) || interval != atomic_load(&s->interval))) {
		e = (*jvmti)->SetHeapSamplingInterval(jvmti, (jint)interval);
		if (e == JVMTI_ERROR_NONE) {
			atomic_store(&s->interval, interval);
			if (!(active & SAMPLE_WANT_ALLOC)) {
				atomic_fetch_or(&s->active, SAMPLE_WANT_ALLOC);
				e = (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE,
								       JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
			}
		}
		if (e == JVMTI_ERROR_NONE) {
			active |= SAMPLE_WANT_ALLOC;
		} else {
			s->can_alloc = false; /* not again every 100 ms */
			active &= ~SAMPLE_WANT_ALLOC;
			agent_sampler_error("the JVM refused to sample allocations (JVMTI error %d)", (int)e);
			s->host.log(
				"the JVM refused to sample allocations (JVMTI error %d); allocation samples stay off",
				(int)e);
		}
	} else if (!(want & SAMPLE_WANT_ALLOC) && (active & SAMPLE_WANT_ALLOC)) {
		active &= ~SAMPLE_WANT_ALLOC;
		atomic_fetch_and(&s->active, ~SAMPLE_WANT_ALLOC);
		(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
	}
	if (!(active & SAMPLE_WANT_ALLOC) && s->alloc_cap) {
		jvmtiCapabilities c = { 0 };
		c.can_generate_sampled_object_alloc_events = 1;
		if ((*jvmti)->RelinquishCapabilities(jvmti, &c) == JVMTI_ERROR_NONE)
			s->alloc_cap = false;
	}
	return active;
}

void agent_alloc_stop(struct agent_sampler *s, jvmtiEnv *jvmti)
{
	if (s->can_alloc)
		(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL);
}
