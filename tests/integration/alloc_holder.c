/* alloc_holder.c - a minimal JVMTI agent that takes the solo capability
 * can_generate_sampled_object_alloc_events at startup and keeps it, as
 * another profiler (async-profiler in alloc mode) would: jflame's agent must
 * then say so and keep everything else working (test_agent_samples.py). */
#include <jvmti.h>
#include <stdio.h>
#include <string.h>

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	jvmtiEnv *jvmti = NULL;
	jvmtiCapabilities c;
	(void)options;
	(void)reserved;
	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK || !jvmti)
		return JNI_ERR;
	memset(&c, 0, sizeof(c));
	c.can_generate_sampled_object_alloc_events = 1;
	jvmtiError e = (*jvmti)->AddCapabilities(jvmti, &c);
	fprintf(stderr, "alloc-holder: %s\n", e == JVMTI_ERROR_NONE ? "holding allocation sampling" : "refused");
	return JNI_OK;
}
