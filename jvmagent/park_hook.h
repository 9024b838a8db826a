/* park_hook.h - lock samples for java.util.concurrent locks: while lock samples are on, the
 * native jdk.internal.misc.Unsafe.park is bound to a wrapper that times parks on a lock. */
#ifndef JFLAME_PARK_HOOK_H
#define JFLAME_PARK_HOOK_H

#include <jvmti.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Called by the wrapper on the parked thread when a park on a lock ended: blocker
 * is the lock (a local reference), t0 and t1 when the park began and ended
 * (CLOCK_MONOTONIC ns), park Unsafe.park's method (the top frame of the thread's stack). */
typedef void (*park_hook_record_fn)(jvmtiEnv *jvmti, JNIEnv *jni, jobject blocker, uint64_t t0, uint64_t t1,
				    jmethodID park);

/* Binds Unsafe.park to the wrapper. The first time it looks up the classes,
 * defines the helper class that binds and learns the JVM's own park function.
 * 0, or -1 with a one-line reason in err (park then runs as before; later
 * calls fail at once). From a Java thread (the control thread). */
int park_hook_bind(jvmtiEnv *jvmti, JNIEnv *jni, park_hook_record_fn record, char *err, size_t errlen);

/* Binds the JVM's own park again; a no-op when not bound. 0, or -1 when the
 * JVM refused (the wrapper then only passes parks through). */
int park_hook_unbind(JNIEnv *jni);

/* Whether park is bound to the wrapper. */
bool park_hook_bound(void);

#endif
