/* fuzz_speedscope.c - any bytes as a speedscope file: json-c parses or refuses it,
 * frame indices and events are checked; what reads writes and reads back.
 * module: native/formats/speedscope.c native/formats/folded.c native/util/msg.c native/util/input_file.c native/model/stack_table.c native/util/str_index.c native/model/recording.c native/model/event_table.c native/util/str_intern.c native/util/grow.c */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "speedscope.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stack_table t, back;
	struct speedscope_stats st;
	char err[1024], *out = NULL;
	size_t len = 0;

	stack_table_init(&t);
	stack_table_init(&back);
	if (speedscope_read(&t, (const char *)data, size, "fuzz.json", &st, err, sizeof(err)) == 0) {
		FILE *f = open_memstream(&out, &len);
		if (!f || speedscope_write(f, &t, err, sizeof(err)) != 0)
			abort();
		fclose(f);
		if (speedscope_read(&back, out, len, "again.json", &st, err, sizeof(err)) != 0)
			abort(); /* what we write, we read */
		if (t.total_count < ((uint64_t)1 << 52) && back.total_count != t.total_count)
			abort();
	}
	free(out);
	stack_table_free(&t);
	stack_table_free(&back);
	return 0;
}
