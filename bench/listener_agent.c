/* listener_agent.c - the floor for any JIT-map agent: a JVMTI agent that asks for
 * CompiledMethodLoad and DynamicCodeGenerated and does nothing with them (bench only). */
#include <jvmti.h>
#include <string.h>

static void JNICALL on_load(jvmtiEnv *j, jmethodID m, jint size, const void *addr, jint n,
			    const jvmtiAddrLocationMap *map, const void *info)
{
	(void)j, (void)m, (void)size, (void)addr, (void)n, (void)map, (void)info;
}

static void JNICALL on_code(jvmtiEnv *j, const char *name, const void *addr, jint len)
{
	(void)j, (void)name, (void)addr, (void)len;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	jvmtiEnv *j;
	jvmtiCapabilities caps;
	jvmtiEventCallbacks cb;
	(void)options, (void)reserved;
	if ((*vm)->GetEnv(vm, (void **)&j, JVMTI_VERSION_1_2) != JNI_OK)
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
	return JNI_OK;
}
