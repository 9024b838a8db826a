/* fuzz_jfr.c - any bytes as a JFR recording, read for each kind of event: chunk headers,
 * metadata, constant pools and events are checked against their sizes and descriptions.
 * module: native/formats/jfr_read.c native/formats/folded.c native/util/msg.c native/util/input_file.c native/model/stack_table.c native/util/str_index.c native/model/recording.c native/model/event_table.c native/util/str_intern.c native/util/grow.c */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jfr_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const kinds[] = { NULL, "alloc", "lock", "wall", "native" };
	struct stack_table t;
	struct jfr_stats st;
	char err[1024];

	stack_table_init(&t);
	err[0] = '\0';
	int rc = jfr_read(&t, data, size, "fuzz.jfr", kinds[size % 5], &st, err, sizeof(err));
	if (rc != 0 && (!err[0] || strchr(err, '\n')))
		abort(); /* a refusal is one line */
	if (rc == 0) {
		uint64_t total = 0;
		for (size_t i = 0; i < t.stacks.n; i++) {
			if (t.stacks.lens[i] == 0 || memchr(t.stacks.strs[i], '\n', t.stacks.lens[i]))
				abort(); /* folded stacks: frames, no line breaks */
			total += t.counts[i];
		}
		if (total != t.total_count && total < ((uint64_t)1 << 62))
			abort();
	}
	stack_table_free(&t);
	return 0;
}
