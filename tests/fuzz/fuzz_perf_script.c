/* fuzz_perf_script.c - any text (or bytes) as perf script input, folded with
 * every option on: no read outside the input, no crash, no leak.
 * module: native/formats/perf_script.c native/formats/collapse.c native/model/recording.c native/model/event_table.c native/util/str_intern.c native/model/stack_table.c native/util/str_index.c native/util/grow.c */
#include <stddef.h>
#include <stdint.h>

#include "collapse.h"
#include "perf_script.h"
#include "recording.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct collapse_opts o = { .pid = size & 1,
				   .tid = size & 2,
				   .kernel = true,
				   .jit = true,
				   .addrs = true,
				   .has_from = true,
				   .from = 0.001,
				   .has_to = true,
				   .to = 1000 };
	struct recording rec;
	struct collapse c;
	struct ps_stats st;
	if (recording_init(&rec) != 0)
		return 0;
	collapse_init(&c, &o, &rec);
	perf_script_parse_buffer((const char *)data, size, collapse_sample, &c, &st);
	collapse_free(&c);
	recording_free(&rec);
	return 0;
}
