/* fuzz_agent_status.c - status files as a hostile JVM could write them: the
 * reader's parse never overruns and leaves every field one NUL-ended line.
 * module: native/attach/agent_files.c native/util/text_escape.c native/util/target_file.c native/util/msg.c native/util/str_intern.c */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_files.h"

static void one_line(const char *field, size_t cap, const char *what)
{
	size_t n = strnlen(field, cap);
	if (n == cap || memchr(field, '\n', n)) {
		fprintf(stderr, "fuzz_agent_status: %s is not one NUL-ended line\n", what);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct agent_status st;
	agent_status_parse((const char *)data, size, &st);
	one_line(st.state, sizeof(st.state), "state");
	one_line(st.mode, sizeof(st.mode), "mode");
	one_line(st.options, sizeof(st.options), "options");
	one_line(st.version, sizeof(st.version), "agent_version");
	one_line(st.error, sizeof(st.error), "error");
	if (st.frame_pointers < -1 || st.frame_pointers > 1)
		abort();
	(void)agent_status_live(&st);
	return 0;
}
