/* fuzz_hsperf.c - hsperfdata images of any shape: never read outside the buffer.
 * module: native/attach/hsperf.c native/util/target_file.c native/util/msg.c native/util/text_escape.c native/util/str_intern.c */
#include <stddef.h>
#include <stdint.h>

#include "hsperf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char out[128];
	hsperf_find_string(data, size, "sun.rt.jvmCapabilities", out, sizeof(out));
	hsperf_find_string(data, size, "", out, 1);
	int64_t v;
	hsperf_find_long(data, size, "sun.rt.createVmEndTime", &v);
	return 0;
}
