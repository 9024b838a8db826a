/* agent_sampler.c - the agent's allocation and lock samples: the ring, the control thread
 * that turns the events on and off (agent_alloc.c, agent_lock.c), the stacks put into the ring. */
#define _GNU_SOURCE
#include <jvmti.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agent_alloc.h"
#include "agent_lock.h"
#include "agent_sampler.h"
#include "deadline.h"
#include "glibc_compat.h"
#include "java_names.h"
#include "sample_ring.h"

/* The ring /tmp/jflame-<pid>.samples (sample_ring.h): SampledObjectAlloc and
 * MonitorContendedEnter/Entered are on only while a reader (jflame) beats and
 * asks for them; the control thread, a JVMTI agent thread, turns them on and
 * off (HotSpot refuses SetEventNotificationMode from threads it does not know). */
#define STACK_DEPTH  512
#define CONTROL_MS   100
#define NAME_SLOTS   8192 /* method names cached (a power of two); emptied when 3/4 full */
#define FRAMES_BYTES SAMPLE_RING_MAX_RECORD
#define ERR_LEN	     512

static struct agent_sampler smp = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.wake = PTHREAD_COND_INITIALIZER,
	.names_lock = PTHREAD_MUTEX_INITIALIZER,
};

static __thread pid_t tls_tid;

static pid_t current_tid(void)
{
	if (!tls_tid)
		tls_tid = (pid_t)syscall(SYS_gettid);
	return tls_tid;
}

/* Adds a reason to the ring header's agent_error (the reader reports it). */
void agent_sampler_error(const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	if (!smp.ring_ok)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	char *e = smp.ring.h->agent_error;
	size_t cap = sizeof(smp.ring.h->agent_error), n = strnlen(e, cap - 1);
	if (strstr(e, msg))
		return;
	for (const char *p = n ? "; " : ""; *p && n + 1 < cap; p++)
		e[n++] = *p;
	for (const char *p = msg; *p && n + 1 < cap; p++)
		e[n++] = *p;
	e[n] = '\0';
}

/* "pkg/Class.method" of m into out, from the cache or looked up (and cached). */
static void frame_name(jvmtiEnv *jvmti, JNIEnv *jni, jmethodID m, char *out, size_t len)
{
	size_t slot = ((uintptr_t)m >> 3) * 0x9E3779B97F4A7C15ULL >> 51 & (NAME_SLOTS - 1);
	pthread_mutex_lock(&smp.names_lock);
	if (smp.names) {
		for (size_t i = slot; smp.names[i].id; i = (i + 1) & (NAME_SLOTS - 1)) {
			if (smp.names[i].id == m) {
				snprintf(out, len, "%s", smp.names[i].name);
				pthread_mutex_unlock(&smp.names_lock);
				return;
			}
		}
	}
	pthread_mutex_unlock(&smp.names_lock);

	char *name = NULL, *csig = NULL;
	jclass cls = NULL;
	if ((*jvmti)->GetMethodName(jvmti, m, &name, NULL, NULL) != JVMTI_ERROR_NONE)
		name = NULL;
	if ((*jvmti)->GetMethodDeclaringClass(jvmti, m, &cls) == JVMTI_ERROR_NONE && cls &&
	    (*jvmti)->GetClassSignature(jvmti, cls, &csig, NULL) != JVMTI_ERROR_NONE)
		csig = NULL;
	java_frame_name(out, len, 0, csig, name);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)csig);
	if (cls && jni)
		(*jni)->DeleteLocalRef(jni, cls);
	if (!name || !csig)
		return; /* not cached: maybe a method of a class going away */

	char *copy = strdup(out);
	if (!copy)
		return;
	pthread_mutex_lock(&smp.names_lock);
	if (!smp.names || smp.nnames >= NAME_SLOTS / 4 * 3) {
		/* full (or first): start afresh, which also forgets methods of unloaded classes */
		if (smp.names)
			for (size_t i = 0; i < NAME_SLOTS; i++)
				free(smp.names[i].name);
		free(smp.names);
		smp.names = calloc(NAME_SLOTS, sizeof(*smp.names));
		smp.nnames = 0;
	}
	if (smp.names) {
		size_t i = slot;
		while (smp.names[i].id && smp.names[i].id != m)
			i = (i + 1) & (NAME_SLOTS - 1);
		if (!smp.names[i].id) {
			smp.names[i] = (struct agent_name_slot){ m, copy };
			smp.nnames++;
			copy = NULL;
		}
	}
	pthread_mutex_unlock(&smp.names_lock);
	free(copy);
}

void agent_sampler_class_name(jvmtiEnv *jvmti, jclass cls, char *out, size_t len)
{
	char *sig = NULL;
	if (!cls || (*jvmti)->GetClassSignature(jvmti, cls, &sig, NULL) != JVMTI_ERROR_NONE)
		sig = NULL;
	java_class_name(out, len, 0, sig);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
}

void agent_sampler_put(jvmtiEnv *jvmti, JNIEnv *jni, enum sample_kind kind, uint64_t value, uint64_t weight,
		       const char *cls, jmethodID skip)
{
	struct scratch {
		jvmtiFrameInfo frames[STACK_DEPTH];
		const char *names[STACK_DEPTH];
		char text[FRAMES_BYTES];
	} *s = malloc(sizeof(*s));
	jint count = 0;
	uint32_t flags = 0;
	size_t n = 0, first = 0, used = 0;

	if (!s) {
		__atomic_fetch_add(&smp.ring.h->dropped, 1, __ATOMIC_RELAXED);
		return;
	}
	if ((*jvmti)->GetStackTrace(jvmti, NULL, 0, STACK_DEPTH, s->frames, &count) != JVMTI_ERROR_NONE)
		count = 0;
	if (count == STACK_DEPTH) {
		jint depth = 0;
		if ((*jvmti)->GetFrameCount(jvmti, NULL, &depth) != JVMTI_ERROR_NONE || depth > STACK_DEPTH)
			flags |= SAMPLE_TRUNCATED;
	}
	if (skip && count > 0 && s->frames[0].method == skip)
		first = 1;
	for (; first + n < (size_t)count; n++) {
		if (sizeof(s->text) - used < 64) {
			flags |= SAMPLE_TRUNCATED;
			break;
		}
		char *out = s->text + used;
		frame_name(jvmti, jni, s->frames[first + n].method, out, sizeof(s->text) - used);
		s->names[n] = out;
		used += strlen(out) + 1;
	}
	sample_ring_put(&smp.ring, kind, current_tid(), agent_sampler_now_ns(), value, weight, flags, cls, s->names, n);
	free(s);
}

static void publish_active(uint32_t active)
{
	if (atomic_load(&smp.active) != active)
		smp.host.status_changed();
	atomic_store(&smp.active, active);
	__atomic_store_n(&smp.ring.h->alloc_interval_active,
			 (active & SAMPLE_WANT_ALLOC) ? (uint32_t)atomic_load(&smp.interval) : 0, __ATOMIC_RELAXED);
	__atomic_store_n(&smp.ring.h->active, active, __ATOMIC_RELEASE);
}

/* Turns the events on or off as the reader asks (none when off is set). */
static void control_apply(jvmtiEnv *jvmti, JNIEnv *jni, bool off)
{
	uint32_t interval = SAMPLE_RING_DEFAULT_ALLOC_INTERVAL, active = atomic_load(&smp.active);
	uint64_t min_ns = 0;
	uint32_t want = off || *smp.host.stood_down ?
				0 :
				sample_ring_wanted(&smp.ring, agent_sampler_now_ns(), &interval, &min_ns);

	want &= (smp.can_alloc ? SAMPLE_WANT_ALLOC : 0) | (smp.can_lock ? SAMPLE_WANT_LOCK : 0);
	if (interval > INT32_MAX)
		interval = INT32_MAX;
	active = agent_alloc_apply(&smp, jvmti, want, interval, active);
	active = agent_lock_apply(&smp, jvmti, jni, want, min_ns, active);
	publish_active(active);
}

static void JNICALL control_loop(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
	(void)arg;
	pthread_mutex_lock(&smp.lock);
	while (!smp.stop) {
		pthread_mutex_unlock(&smp.lock);
		control_apply(jvmti, jni, false);
		pthread_mutex_lock(&smp.lock);
		if (smp.stop)
			break;
		struct timespec ts = deadline_after_ms(CONTROL_MS);
		pthread_cond_timedwait(&smp.wake, &smp.lock, &ts);
	}
	pthread_mutex_unlock(&smp.lock);
	control_apply(jvmti, jni, true);
	pthread_mutex_lock(&smp.lock);
	smp.running = false;
	pthread_cond_broadcast(&smp.wake);
	pthread_mutex_unlock(&smp.lock);
}

/* The ring and the capabilities, in start() (onload or attach). */
void agent_sampler_init(jvmtiEnv *jvmti, const struct agent_host *host)
{
	char err[ERR_LEN - 32];
	jvmtiCapabilities pot = { 0 };

	smp.host = *host;
	if (!smp.ring_ok) {
		snprintf(smp.path, sizeof(smp.path), "/tmp/jflame-%d.samples", (int)smp.host.pid);
		if (sample_ring_create(&smp.ring, smp.path, SAMPLE_RING_DEFAULT_DATA, smp.host.pid,
				       smp.host.process_start, err, sizeof(err)) != 0) {
			smp.host.log("%s; allocation and lock samples are off", err);
			smp.host.status_error("no sample ring: %s", err);
			smp.path[0] = '\0';
			return;
		}
		pthread_condattr_t attr;
		pthread_condattr_init(&attr);
		pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
		pthread_cond_init(&smp.wake, &attr);
		pthread_condattr_destroy(&attr);
		smp.ring_ok = true;
	}
	smp.ring.h->agent_error[0] = '\0';
	smp.can_alloc = smp.can_lock = false;
	atomic_store(&smp.interval, SAMPLE_RING_DEFAULT_ALLOC_INTERVAL);
	if ((*jvmti)->GetPotentialCapabilities(jvmti, &pot) != JVMTI_ERROR_NONE)
		memset(&pot, 0, sizeof(pot));
	agent_alloc_start(&smp, jvmti, &pot);
	agent_lock_start(&smp, jvmti, &pot);
	memcpy(smp.init_error, smp.ring.h->agent_error, sizeof(smp.init_error));
}

/* The control thread: a daemon java.lang.Thread "jflame-control" run as a JVMTI agent thread. */
void agent_sampler_start(jvmtiEnv *jvmti, JNIEnv *jni)
{
	if (!smp.ring_ok || !(smp.can_alloc || smp.can_lock) || *smp.host.stood_down)
		return;
	if (!jni) {
		agent_sampler_error("no JNI environment to start the control thread");
		return;
	}
	pthread_mutex_lock(&smp.lock);
	bool running = smp.running;
	pthread_mutex_unlock(&smp.lock);
	if (running)
		return;
	jclass tc = (*jni)->FindClass(jni, "java/lang/Thread");
	jmethodID ctor = tc ? (*jni)->GetMethodID(jni, tc, "<init>", "(Ljava/lang/String;)V") : NULL;
	jstring name = ctor ? (*jni)->NewStringUTF(jni, "jflame-control") : NULL;
	jobject t = name ? (*jni)->NewObject(jni, tc, ctor, name) : NULL;
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	jvmtiError e = JVMTI_ERROR_INTERNAL;
	if (t) {
		pthread_mutex_lock(&smp.lock);
		smp.running = true;
		smp.stop = false;
		pthread_mutex_unlock(&smp.lock);
		e = (*jvmti)->RunAgentThread(jvmti, t, control_loop, NULL, JVMTI_THREAD_NORM_PRIORITY);
		if (e != JVMTI_ERROR_NONE) {
			pthread_mutex_lock(&smp.lock);
			smp.running = false;
			pthread_mutex_unlock(&smp.lock);
		}
	}
	if (e != JVMTI_ERROR_NONE) {
		agent_sampler_error("failed to start the control thread (JVMTI error %d)", (int)e);
		smp.host.log("failed to start the jflame-control thread (JVMTI error %d); allocation and lock "
			     "samples are off",
			     (int)e);
	}
	if (t)
		(*jni)->DeleteLocalRef(jni, t);
	if (name)
		(*jni)->DeleteLocalRef(jni, name);
	if (tc)
		(*jni)->DeleteLocalRef(jni, tc);
}

void agent_sampler_stop(int wait_ms)
{
	pthread_mutex_lock(&smp.lock);
	smp.stop = true;
	pthread_cond_broadcast(&smp.wake);
	if (wait_ms > 0 && smp.running) {
		struct timespec ts = deadline_after_ms(wait_ms);
		while (smp.running && pthread_cond_timedwait(&smp.wake, &smp.lock, &ts) == 0)
			;
	}
	pthread_mutex_unlock(&smp.lock);
}

void agent_sampler_off(jvmtiEnv *jvmti)
{
	atomic_store(&smp.active, 0);
	if (!jvmti || !smp.ring_ok)
		return;
	agent_alloc_stop(&smp, jvmti);
	agent_lock_stop(&smp, jvmti);
	/* Unsafe.park is bound back by the control thread (a thread that may call Java);
	 * until then the wrapper records nothing */
	publish_active(0);
}

const char *agent_sampler_path(void)
{
	return smp.path;
}

void agent_sampler_remove_file(void)
{
	struct stat a, b;
	if (smp.ring_ok && smp.path[0] && compat_lstat(smp.path, &a) == 0 && compat_fstat(smp.ring.fd, &b) == 0 &&
	    a.st_dev == b.st_dev && a.st_ino == b.st_ino)
		unlink(smp.path);
}
