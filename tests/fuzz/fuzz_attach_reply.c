/* fuzz_attach_reply.c - whatever a JVM (or an impostor on its socket) replies to
 * an attach `load`: parsed without reading past the reply or overflowing msg.
 * module: native/attach/attach.c native/attach/hsperf.c native/attach/proc_info.c native/attach/agent_files.c native/symbolize/jit_syms.c native/util/str_intern.c native/util/text_escape.c native/util/target_file.c native/util/msg.c native/util/grow.c native/util/u64_map.c */
#include <stddef.h>
#include <stdint.h>

#include "attach.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char msg[128], tiny[1];
	int rc;
	attach_parse_load_reply((const char *)data, size, &rc, msg, sizeof(msg));
	attach_parse_load_reply((const char *)data, size, &rc, tiny, sizeof(tiny));
	return 0;
}
