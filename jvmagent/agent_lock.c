/* agent_lock.c - the agent's lock samples: contended monitor enters and parks on
 * java.util.concurrent locks, timed and put into the sample ring with their stacks. */
#include <jvmti.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "agent_lock.h"
#include "agent_sampler.h"
#include "park_hook.h"
#include "sample_ring.h"

static struct agent_sampler *smp;      /* for the JVMTI callbacks, which have no context */
static __thread uint64_t tls_enter_ns; /* when this thread began waiting for a monitor; 0: not */

static void JNICALL on_monitor_contended_enter(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object)
{
	(void)jvmti;
	(void)jni;
	(void)thread;
	(void)object;
	if (*smp->host.stood_down || !(atomic_load_explicit(&smp->active, memory_order_relaxed) & SAMPLE_WANT_LOCK))
		return;
	tls_enter_ns = agent_sampler_now_ns();
}

/* A wait for object (a monitor, or a j.u.c lock a park waited for) from t0 to t1
 * ended on this thread: one lock record, or a count when under --lock-min. A wait
 * that began before the events were last turned on is not this recording's (a
 * monitor enter seen by an earlier one whose entered was not). */
static void lock_wait_ended(jvmtiEnv *jvmti, JNIEnv *jni, jobject object, uint64_t t0, uint64_t t1, jmethodID skip)
{
	char cls[1024];
	uint64_t ns = t1 > t0 ? t1 - t0 : 0;
	if (*smp->host.stood_down || !(atomic_load_explicit(&smp->active, memory_order_relaxed) & SAMPLE_WANT_LOCK) ||
	    t0 < atomic_load_explicit(&smp->lock_on_ns, memory_order_relaxed))
		return;
	if (ns < atomic_load_explicit(&smp->lock_min_ns, memory_order_relaxed)) {
		__atomic_fetch_add(&smp->ring.h->lock_short, 1, __ATOMIC_RELAXED);
		return;
	}
	jclass k = jni && object ? (*jni)->GetObjectClass(jni, object) : NULL;
	agent_sampler_class_name(jvmti, k, cls, sizeof(cls));
	if (k)
		(*jni)->DeleteLocalRef(jni, k);
	agent_sampler_put(jvmti, jni, SAMPLE_LOCK, ns, ns, cls, skip);
}

static void JNICALL on_monitor_contended_entered(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jobject object)
{
	uint64_t t0 = tls_enter_ns, t1 = agent_sampler_now_ns();
	(void)thread;
	tls_enter_ns = 0;
	if (t0)
		lock_wait_ended(jvmti, jni, object, t0, t1, NULL);
}

/* Unsafe.park is bound to jflame's wrapper (park_hook.c) while lock samples are on. */
static void park_on(struct agent_sampler *s, jvmtiEnv *jvmti, JNIEnv *jni)
{
	char err[200];
	if (!s->can_park || park_hook_bind(jvmti, jni, lock_wait_ended, err, sizeof(err)) == 0)
		return;
	s->can_park = false; /* said once, not tried again */
	s->park_failed = true;
	agent_sampler_error("%s; java.util.concurrent lock waits are not recorded", err);
	s->host.log("%s; java.util.concurrent lock waits are not recorded (contended monitors are)", err);
	s->host.status_error("park hook: %s", err);
}

static void park_off(struct agent_sampler *s, JNIEnv *jni)
{
	if (park_hook_unbind(jni) != 0) {
		static bool told;
		if (!told)
			s->host.log("the JVM refused to bind Unsafe.park back; jflame's wrapper passes parks through");
		told = true;
	}
}

const char *agent_lock_events_state(void)
{
	return smp && (atomic_load(&smp->active) & SAMPLE_WANT_LOCK) ? "on" : "off";
}

const char *agent_lock_park_state(void)
{
	return park_hook_bound() ? "on" : smp && smp->park_failed ? "failed" : "off";
}

void agent_lock_start(struct agent_sampler *s, jvmtiEnv *jvmti, const jvmtiCapabilities *potential)
{
	jvmtiCapabilities c;

	smp = s;
	if (potential->can_generate_monitor_events) {
		memset(&c, 0, sizeof(c));
		c.can_generate_monitor_events = 1;
		smp->can_lock = (*jvmti)->AddCapabilities(jvmti, &c) == JVMTI_ERROR_NONE;
	}
	if (!smp->can_lock)
		agent_sampler_error("this JVM offers no monitor contention events (JVMTI can_generate_monitor_events)");
	smp->can_park = smp->can_lock;
}

void agent_lock_callbacks(jvmtiEventCallbacks *cb)
{
	cb->MonitorContendedEnter = on_monitor_contended_enter;
	cb->MonitorContendedEntered = on_monitor_contended_entered;
}

uint32_t agent_lock_apply(struct agent_sampler *s, jvmtiEnv *jvmti, JNIEnv *jni, uint32_t want, uint64_t min_ns,
			  uint32_t active)
{
	jvmtiError e;

	atomic_store(&s->lock_min_ns, min_ns);
	if ((want & SAMPLE_WANT_LOCK) && !(active & SAMPLE_WANT_LOCK)) {
		atomic_store(&s->lock_on_ns, agent_sampler_now_ns());
		atomic_fetch_or(&s->active, SAMPLE_WANT_LOCK);
		e = (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_MONITOR_CONTENDED_ENTER, NULL);
		if (e == JVMTI_ERROR_NONE)
			e = (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE,
							       JVMTI_EVENT_MONITOR_CONTENDED_ENTERED, NULL);
		if (e == JVMTI_ERROR_NONE) {
			active |= SAMPLE_WANT_LOCK;
			park_on(s, jvmti, jni);
		} else {
			(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, JVMTI_EVENT_MONITOR_CONTENDED_ENTER,
							   NULL);
			s->can_lock = false;
			agent_sampler_error("the JVM refused monitor contention events (JVMTI error %d)", (int)e);
			s->host.log("the JVM refused monitor contention events (JVMTI error %d); lock samples stay off",
				    (int)e);
		}
	} else if (!(want & SAMPLE_WANT_LOCK) && (active & SAMPLE_WANT_LOCK)) {
		active &= ~SAMPLE_WANT_LOCK;
		atomic_fetch_and(&s->active, ~SAMPLE_WANT_LOCK);
		(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, JVMTI_EVENT_MONITOR_CONTENDED_ENTER, NULL);
		(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, JVMTI_EVENT_MONITOR_CONTENDED_ENTERED, NULL);
	}
	if (!(active & SAMPLE_WANT_LOCK) && park_hook_bound())
		park_off(s, jni); /* also after agent_sampler_off turned the events off from another thread */
	return active;
}

void agent_lock_stop(struct agent_sampler *s, jvmtiEnv *jvmti)
{
	if (s->can_lock) {
		(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, JVMTI_EVENT_MONITOR_CONTENDED_ENTER, NULL);
		(*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, JVMTI_EVENT_MONITOR_CONTENDED_ENTERED, NULL);
	}
}
