/* park_hook.c - lock samples for java.util.concurrent locks: Unsafe.park bound (JNI RegisterNatives)
 * to a wrapper while a reader asks; the JVM's own park learnt from Unsafe.registerNatives. */
#define _GNU_SOURCE
#include "park_hook.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

typedef void(JNICALL *park_fn)(JNIEnv *jni, jobject unsafe, jboolean absolute, jlong time);
typedef jint(JNICALL *register_natives_fn)(JNIEnv *jni, jclass cls, const JNINativeMethod *methods, jint n);

/*
 * JDK 15 and later log "Re-registering of platform native method" (a warning on
 * the JVM's stdout) when RegisterNatives rebinds a native of a boot class and
 * the Java frame calling it is not a boot class's. So park is bound from a
 * native method of this class, defined in the boot loader:
 *
 *   package jflame.agent;
 *   final class ParkBinder {
 *       private static native void bind0(long entry);
 *       static void bind(long entry) { bind0(entry); }
 *   }
 *
 * (class file version 52, javap -v shows the same constants and code).
 */
#define BINDER_NAME "jflame/agent/ParkBinder"
static const unsigned char binder_class[] =
	"\xca\xfe\xba\xbe\x00\x00\x00\x34" /* magic, version 52.0 */
	"\x00\x0b"			   /* constant_pool_count: #1..#10 */
	"\x07\x00\x02"			   /* #1 Class #2 */
	"\x01\x00\x17" BINDER_NAME	   /* #2 Utf8 */
	"\x07\x00\x04"			   /* #3 Class #4 */
	"\x01\x00\x10"
	"java/lang/Object" /* #4 Utf8 */
	"\x01\x00\x05"
	"bind0" /* #5 Utf8 */
	"\x01\x00\x04"
	"(J)V" /* #6 Utf8 */
	"\x01\x00\x04"
	"bind" /* #7 Utf8 */
	"\x01\x00\x04"
	"Code"				   /* #8 Utf8 */
	"\x0a\x00\x01\x00\x0a"		   /* #9 Methodref #1.#10 */
	"\x0c\x00\x05\x00\x06"		   /* #10 NameAndType bind0:(J)V */
	"\x00\x30\x00\x01\x00\x03"	   /* final super, this #1, super #3 */
	"\x00\x00\x00\x00\x00\x02"	   /* no interfaces or fields, 2 methods */
	"\x01\x0a\x00\x05\x00\x06\x00\x00" /* private static native bind0(J)V */
	"\x00\x08\x00\x07\x00\x06\x00\x01" /* static bind(J)V, 1 attribute: */
	"\x00\x08\x00\x00\x00\x11"	   /* Code, 17 bytes: */
	"\x00\x02\x00\x02\x00\x00\x00\x05" /* max_stack 2, max_locals 2, 5 bytes of code: */
	"\x1e\xb8\x00\x09\xb1"		   /* lload_0; invokestatic #9; return */
	"\x00\x00\x00\x00"		   /* no exception table, no attributes */
	"\x00\x00";			   /* no class attributes */

static struct park_hook {
	pthread_mutex_t lock; /* bind and unbind */
	bool tried, ready;    /* the lookups done; and they worked */
	atomic_bool bound;    /* read without the lock (the status file) */
	char why[200];	      /* why not ready */
	jvmtiEnv *jvmti;
	park_hook_record_fn record;
	jclass unsafe, binder;		  /* global references */
	jclass aqs, aqls, stamped, latch; /* the blocker rule's classes (global references) */
	jfieldID blocker;		  /* java.lang.Thread.parkBlocker */
	jmethodID park, bind, register_natives;
	register_natives_fn jni_register_natives; /* the JNI function, while learning */
	_Atomic park_fn orig;			  /* the JVM's own park (Unsafe_Park in libjvm) */
	atomic_bool recording;			  /* the wrapper looks at blockers */
} ph = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The blocker rule (docs/recording.md): a lock is an AbstractQueuedSynchronizer (but not a
 * CountDownLatch's), an AbstractQueuedLongSynchronizer, or a StampedLock. A
 * Condition's await parks with its ConditionObject as blocker, which is none of
 * these; LockSupport.park() without a blocker has none. */
static bool is_lock(JNIEnv *jni, jobject b)
{
	if ((*jni)->IsInstanceOf(jni, b, ph.aqs))
		return !(*jni)->IsInstanceOf(jni, b, ph.latch);
	return (*jni)->IsInstanceOf(jni, b, ph.aqls) || (*jni)->IsInstanceOf(jni, b, ph.stamped);
}

/* The current thread's park blocker when it is a lock (a local reference), else NULL. */
static jobject lock_blocker(JNIEnv *jni)
{
	jthread t = NULL;
	jobject b = NULL;
	if ((*ph.jvmti)->GetCurrentThread(ph.jvmti, &t) != JVMTI_ERROR_NONE || !t)
		goto out;
	b = (*jni)->GetObjectField(jni, t, ph.blocker);
	if (b && !is_lock(jni, b)) {
		(*jni)->DeleteLocalRef(jni, b);
		b = NULL;
	}
out:
	if (t)
		(*jni)->DeleteLocalRef(jni, t);
	return b;
}

/* Unsafe.park(boolean, long) while bound: the JVM's park, timed when the blocker is a lock. */
static void JNICALL jflame_unsafe_park(JNIEnv *jni, jobject unsafe, jboolean absolute, jlong time)
{
	park_fn orig = atomic_load_explicit(&ph.orig, memory_order_acquire);
	jobject blocker = atomic_load_explicit(&ph.recording, memory_order_relaxed) ? lock_blocker(jni) : NULL;
	uint64_t t0 = blocker ? now_ns() : 0;

	orig(jni, unsafe, absolute, time);
	if (!blocker)
		return;
	uint64_t t1 = now_ns();
	if (atomic_load_explicit(&ph.recording, memory_order_relaxed) && !(*jni)->ExceptionCheck(jni))
		ph.record(ph.jvmti, jni, blocker, t0, t1, ph.park);
	(*jni)->DeleteLocalRef(jni, blocker);
}

/* ParkBinder.bind0(long): Unsafe.park bound to entry (an exception, if any, stays pending). */
static void JNICALL binder_bind0(JNIEnv *jni, jclass cls, jlong entry)
{
	JNINativeMethod m = { "park", "(ZJ)V", (void *)(uintptr_t)entry };
	(void)cls;
	(*jni)->RegisterNatives(jni, ph.unsafe, &m, 1);
}

/* RegisterNatives while learning: Unsafe's own table is read, not registered again
 * (its functions are bound already); every other class's goes through. */
static jint JNICALL learn_register_natives(JNIEnv *jni, jclass cls, const JNINativeMethod *methods, jint n)
{
	if (!(*jni)->IsSameObject(jni, cls, ph.unsafe))
		return ph.jni_register_natives(jni, cls, methods, n);
	for (jint i = 0; i < n; i++)
		if (strcmp(methods[i].name, "park") == 0 && strcmp(methods[i].signature, "(ZJ)V") == 0)
			atomic_store_explicit(&ph.orig, (park_fn)methods[i].fnPtr, memory_order_release);
	return 0; /* Unsafe.registerNatives insists on success */
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

/* A global reference to a class by its JVM name, or NULL (no exception left pending). */
static jclass global_class(JNIEnv *jni, const char *name)
{
	jclass local = (*jni)->FindClass(jni, name), global = NULL;
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	if (local) {
		global = (*jni)->NewGlobalRef(jni, local);
		(*jni)->DeleteLocalRef(jni, local);
	}
	return global;
}

/* Calls Unsafe.registerNatives with RegisterNatives replaced in the JNI function
 * table (as JVMTI allows agents to), which gives the JVM's own park. */
static int learn_original(jvmtiEnv *jvmti, JNIEnv *jni, char *err, size_t errlen)
{
	jniNativeInterface *table = NULL;
	jvmtiError e = (*jvmti)->GetJNIFunctionTable(jvmti, &table);
	int rc = 0;

	if (e != JVMTI_ERROR_NONE)
		return fail(err, errlen, "could not read the JNI function table (JVMTI error %d)", (int)e);
	ph.jni_register_natives = table->RegisterNatives;
	table->RegisterNatives = learn_register_natives;
	e = (*jvmti)->SetJNIFunctionTable(jvmti, table);
	if (e != JVMTI_ERROR_NONE) {
		rc = fail(err, errlen, "could not replace RegisterNatives in the JNI function table (JVMTI error %d)",
			  (int)e);
		goto out;
	}
	(*jni)->CallStaticVoidMethod(jni, ph.unsafe, ph.register_natives);
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	table->RegisterNatives = ph.jni_register_natives;
	e = (*jvmti)->SetJNIFunctionTable(jvmti, table);
	if (e != JVMTI_ERROR_NONE) /* our RegisterNatives passes everything else through: harmless */
		rc = fail(err, errlen, "could not restore the JNI function table (JVMTI error %d)", (int)e);
	else if (!atomic_load(&ph.orig))
		rc = fail(err, errlen, "Unsafe.registerNatives did not register park(ZJ)V");
out:
	(*jvmti)->Deallocate(jvmti, (unsigned char *)table);
	return rc;
}

/* The classes, methods and fields the wrapper and the binder use; once. */
static int look_up(jvmtiEnv *jvmti, JNIEnv *jni, char *err, size_t errlen)
{
	const char *missing = NULL;
	jclass thread = NULL;
	int rc = 0;

	if (!(ph.unsafe = global_class(jni, "jdk/internal/misc/Unsafe")))
		ph.unsafe = global_class(jni, "sun/misc/Unsafe"); /* JDK 8 */
	if (!ph.unsafe)
		missing = "class jdk.internal.misc.Unsafe";
	else if (!(thread = global_class(jni, "java/lang/Thread")))
		missing = "class java.lang.Thread";
	else if (!(ph.aqs = global_class(jni, "java/util/concurrent/locks/AbstractQueuedSynchronizer")) ||
		 !(ph.aqls = global_class(jni, "java/util/concurrent/locks/AbstractQueuedLongSynchronizer")) ||
		 !(ph.stamped = global_class(jni, "java/util/concurrent/locks/StampedLock")) ||
		 !(ph.latch = global_class(jni, "java/util/concurrent/CountDownLatch$Sync")))
		missing = "a java.util.concurrent lock class";
	else if (!(ph.park = (*jni)->GetMethodID(jni, ph.unsafe, "park", "(ZJ)V")))
		missing = "method Unsafe.park(boolean, long)";
	else if (!(ph.register_natives = (*jni)->GetStaticMethodID(jni, ph.unsafe, "registerNatives", "()V")))
		missing = "method Unsafe.registerNatives()";
	else if (!(ph.blocker = (*jni)->GetFieldID(jni, thread, "parkBlocker", "Ljava/lang/Object;")))
		missing = "field Thread.parkBlocker";
	if ((*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	if (missing) {
		rc = fail(err, errlen, "this JVM has no %s", missing);
		goto out;
	}

	jclass local = (*jni)->DefineClass(jni, BINDER_NAME, NULL, (const jbyte *)binder_class,
					   (jsize)(sizeof(binder_class) - 1));
	if ((*jni)->ExceptionCheck(jni)) /* defined already: another copy of the agent */
		(*jni)->ExceptionClear(jni);
	if (local) {
		ph.binder = (*jni)->NewGlobalRef(jni, local);
		(*jni)->DeleteLocalRef(jni, local);
	} else {
		ph.binder = global_class(jni, BINDER_NAME);
	}
	JNINativeMethod bind0 = { "bind0", "(J)V", (void *)binder_bind0 };
	if (!ph.binder || (*jni)->RegisterNatives(jni, ph.binder, &bind0, 1) != 0 ||
	    !(ph.bind = (*jni)->GetStaticMethodID(jni, ph.binder, "bind", "(J)V"))) {
		if ((*jni)->ExceptionCheck(jni))
			(*jni)->ExceptionClear(jni);
		rc = fail(err, errlen, "could not define the helper class %s", BINDER_NAME);
		goto out;
	}
	rc = learn_original(jvmti, jni, err, errlen);
out:
	if (thread)
		(*jni)->DeleteGlobalRef(jni, thread);
	return rc;
}

/* Binds park to entry through ParkBinder.bind. */
static int bind_park(JNIEnv *jni, park_fn entry)
{
	(*jni)->CallStaticVoidMethod(jni, ph.binder, ph.bind, (jlong)(uintptr_t)entry);
	if (!(*jni)->ExceptionCheck(jni))
		return 0;
	(*jni)->ExceptionClear(jni);
	return -1;
}

int park_hook_bind(jvmtiEnv *jvmti, JNIEnv *jni, park_hook_record_fn record, char *err, size_t errlen)
{
	int rc = 0;

	pthread_mutex_lock(&ph.lock);
	if (ph.bound)
		goto out;
	if (!ph.tried) {
		ph.tried = true;
		ph.jvmti = jvmti;
		ph.record = record;
		ph.ready = look_up(jvmti, jni, ph.why, sizeof(ph.why)) == 0;
	}
	if (!ph.ready) {
		rc = fail(err, errlen, "%s", ph.why);
		goto out;
	}
	if (bind_park(jni, jflame_unsafe_park) != 0) {
		rc = fail(err, errlen, "the JVM refused to bind Unsafe.park to jflame's wrapper");
		goto out;
	}
	ph.bound = true;
	atomic_store(&ph.recording, true);
out:
	pthread_mutex_unlock(&ph.lock);
	return rc;
}

int park_hook_unbind(JNIEnv *jni)
{
	int rc = 0;
	pthread_mutex_lock(&ph.lock);
	atomic_store(&ph.recording, false);
	if (ph.bound && jni) {
		rc = bind_park(jni, atomic_load(&ph.orig));
		if (rc == 0)
			ph.bound = false;
	}
	pthread_mutex_unlock(&ph.lock);
	return rc;
}

bool park_hook_bound(void)
{
	return atomic_load(&ph.bound);
}
