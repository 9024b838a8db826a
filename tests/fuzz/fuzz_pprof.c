/* fuzz_pprof.c - any bytes as a pprof profile (raw or gzip): protobuf-c decodes or
 * refuses it, ids and string indices are checked; what reads encodes and reads back.
 * module: native/formats/pprof.c native/formats/folded.c native/util/msg.c native/util/input_file.c native/model/stack_table.c native/util/str_index.c native/model/recording.c native/model/event_table.c native/util/str_intern.c native/util/grow.c */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pprof.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stack_table t, back;
	struct pprof_stats st;
	char err[1024];
	uint8_t *buf = NULL;
	size_t len = 0;

	stack_table_init(&t);
	stack_table_init(&back);
	/* the sample type by position, then by a name the input may hold */
	if (pprof_read(&t, data, size, "fuzz.pb", size % 3 ? NULL : "cpu", &st, err, sizeof(err)) == 0) {
		if (strlen(err) >= sizeof(err))
			abort();
		if (pprof_encode(&t, &buf, &len, err, sizeof(err)) != 0)
			abort();
		if (pprof_read(&back, buf, len, "again.pb", NULL, &st, err, sizeof(err)) != 0)
			abort(); /* what we write, we read */
		if (back.stacks.n != t.stacks.n || st.bad_refs || st.negative || st.no_frames)
			abort();
		if (t.total_count < ((uint64_t)1 << 62) && back.total_count != t.total_count)
			abort();
	}
	free(buf);
	stack_table_free(&t);
	stack_table_free(&back);
	return 0;
}
