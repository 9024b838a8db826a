/* replay_agent.c - the JVM's share of an attach-time map replay (bench only): loaded into a
 * running JVM (jattach PID load /path/libreplay.so true OUTFILE), it enables CompiledMethodLoad
 * and DynamicCodeGenerated with callbacks that only count, times the two GenerateEvents calls
 * that jflame's Agent_OnAttach makes and writes "dynamic=N dynamic_ns=T compiled=N compiled_ns=T"
 * to OUTFILE. What is left of jflame's Agent_OnAttach time is jflame's own work. */
#include <jvmti.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static long n_compiled, n_dynamic;

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void JNICALL on_load(jvmtiEnv *j, jmethodID m, jint size, const void *addr, jint n,
			    const jvmtiAddrLocationMap *map, const void *info)
{
	(void)j, (void)m, (void)size, (void)addr, (void)n, (void)map, (void)info;
	n_compiled++;
}

static void JNICALL on_code(jvmtiEnv *j, const char *name, const void *addr, jint len)
{
	(void)j, (void)name, (void)addr, (void)len;
	n_dynamic++;
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
	jvmtiEnv *j;
	jvmtiCapabilities caps;
	jvmtiEventCallbacks cb;
	(void)reserved;
	if (!options || !*options || (*vm)->GetEnv(vm, (void **)&j, JVMTI_VERSION_1_2) != JNI_OK)
		return JNI_ERR;
	memset(&caps, 0, sizeof(caps));
	caps.can_generate_compiled_method_load_events = 1;
	memset(&cb, 0, sizeof(cb));
	cb.CompiledMethodLoad = on_load;
	cb.DynamicCodeGenerated = on_code;
	if ((*j)->AddCapabilities(j, &caps) || (*j)->SetEventCallbacks(j, &cb, sizeof(cb)) ||
	    (*j)->SetEventNotificationMode(j, JVMTI_ENABLE, JVMTI_EVENT_COMPILED_METHOD_LOAD, NULL) ||
	    (*j)->SetEventNotificationMode(j, JVMTI_ENABLE, JVMTI_EVENT_DYNAMIC_CODE_GENERATED, NULL))
		return JNI_ERR;
	long long t0 = now_ns();
	if ((*j)->GenerateEvents(j, JVMTI_EVENT_DYNAMIC_CODE_GENERATED))
		return JNI_ERR;
	long long t1 = now_ns();
	if ((*j)->GenerateEvents(j, JVMTI_EVENT_COMPILED_METHOD_LOAD))
		return JNI_ERR;
	long long t2 = now_ns();
	/* stop counting: later compiles are not ours to time */
	(*j)->SetEventNotificationMode(j, JVMTI_DISABLE, JVMTI_EVENT_COMPILED_METHOD_LOAD, NULL);
	(*j)->SetEventNotificationMode(j, JVMTI_DISABLE, JVMTI_EVENT_DYNAMIC_CODE_GENERATED, NULL);
	FILE *f = fopen(options, "w");
	if (!f)
		return JNI_ERR;
	fprintf(f, "dynamic=%ld dynamic_ns=%lld compiled=%ld compiled_ns=%lld\n", n_dynamic, t1 - t0, n_compiled,
		t2 - t1);
	return fclose(f) == 0 ? JNI_OK : JNI_ERR;
}
