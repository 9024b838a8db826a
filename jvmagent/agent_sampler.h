/* agent_sampler.h - the agent's allocation and lock samples: the ring /tmp/jflame-<pid>.samples,
 * the control thread that turns their events on and off, and the stacks put into the ring. */
#ifndef JFLAME_AGENT_SAMPLER_H
#define JFLAME_AGENT_SAMPLER_H

#include <jvmti.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "sample_ring.h"

/* What the samples need of the rest of the agent (agent.c). */
struct agent_host {
	const atomic_bool *stood_down; /* read without a lock by every callback */
	pid_t pid;
	uint64_t process_start;
	void (*log)(const char *fmt, ...);	    /* a line on stderr */
	void (*status_error)(const char *fmt, ...); /* the status file's error, rewritten soon */
	void (*status_changed)(void);		    /* the status file rewritten soon */
};

struct agent_name_slot {
	jmethodID id;
	char *name;
};

/* The state agent_sampler.c, agent_alloc.c and agent_lock.c share. */
struct agent_sampler {
	struct agent_host host;
	struct sample_ring_writer ring;
	bool ring_ok, can_alloc, can_lock;
	bool can_park;		 /* Unsafe.park may be wrapped (false after a failed setup) */
	bool park_failed;	 /* the wrapper's setup failed (status park_hook=failed) */
	bool alloc_cap;		 /* holding can_generate_sampled_object_alloc_events (only while sampling) */
	uint64_t alloc_retry_ns; /* when to try for it again after another agent held it */
	char init_error[256];	 /* agent_error as agent_sampler_init left it */
	char path[64];
	atomic_uint active;	      /* SAMPLE_WANT_ bits whose events are on */
	_Atomic uint64_t interval;    /* the heap sampling interval in force */
	_Atomic uint64_t lock_min_ns; /* shorter contended enters are only counted */
	_Atomic uint64_t lock_on_ns;  /* when the lock events were last turned on */
	pthread_mutex_t lock;	      /* the control thread's state */
	pthread_cond_t wake;
	bool running, stop;
	pthread_mutex_t names_lock;
	struct agent_name_slot *names;
	size_t nnames;
};

static inline uint64_t agent_sampler_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The ring and the capabilities, in the agent's start (onload or attach). */
void agent_sampler_init(jvmtiEnv *jvmti, const struct agent_host *host);

/* Starts the control thread (a JVMTI agent thread) once the VM is live. */
void agent_sampler_start(jvmtiEnv *jvmti, JNIEnv *jni);

/* Asks the control thread to turn everything off and end; waits up to wait_ms. */
void agent_sampler_stop(int wait_ms);

/* Off from any thread the JVM knows (stand-down, VM death); the control thread may be gone. */
void agent_sampler_off(jvmtiEnv *jvmti);

/* The ring's path, "" when there is none. */
const char *agent_sampler_path(void);

/* At VM death: the ring's file goes (a reader keeps what it has open); the mapping stays. */
void agent_sampler_remove_file(void);

/* Adds a reason to the ring header's agent_error (the reader reports it). */
void agent_sampler_error(const char *fmt, ...);

/* The Java name of cls into out. */
void agent_sampler_class_name(jvmtiEnv *jvmti, jclass cls, char *out, size_t len);

/* The current thread's stack, leaf first, into the ring with cls as its class;
 * a top frame of method skip (the wrapped Unsafe.park) is left out. */
void agent_sampler_put(jvmtiEnv *jvmti, JNIEnv *jni, enum sample_kind kind, uint64_t value, uint64_t weight,
		       const char *cls, jmethodID skip);

#endif
