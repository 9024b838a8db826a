/* fuzz_folded.c - any bytes as folded stacks: lines with and without counts,
 * two-column differential lines, NULs; parsed into the stack store without overruns.
 * module: native/formats/folded.c native/util/msg.c native/util/input_file.c native/model/stack_table.c native/util/str_index.c native/model/recording.c native/model/event_table.c native/util/str_intern.c native/util/grow.c */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "folded.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct folded f;
	struct stack_table t;
	char err[256];
	stack_table_init(&t);
	if (folded_parse(&f, &t, (const char *)data, size, "fuzz", size & 1 ? FOLDED_KEEP_ORDER : 0, err,
			 sizeof(err)) == 0) {
		for (size_t i = 0; i < t.stacks.n; i++)
			(void)strlen(t.stacks.strs[i]);
		for (size_t i = 0; i < t.nsteps; i++)
			(void)t.stacks.strs[t.steps[i].stack];
	}
	stack_table_free(&t);
	return 0;
}
