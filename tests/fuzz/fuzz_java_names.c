/* fuzz_java_names.c - libFuzzer target for the class-signature and frame
 * renderings of the allocation and lock samples: any bytes, any buffer size. */
/* module: jvmagent/java_names.c */
#include "java_names.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check(const char *out, size_t len, size_t n, const char *what)
{
	if (len == 0) {
		if (n != 0)
			abort();
		return;
	}
	if (n >= len || strlen(out) != n) {
		fprintf(stderr, "fuzz_java_names: %s returned %zu for a %zu-byte buffer holding %zu\n", what, n, len,
			strlen(out));
		abort();
	}
	if (strpbrk(out, ";\n\r")) {
		fprintf(stderr, "fuzz_java_names: %s wrote a character that breaks a folded line\n", what);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* first byte: the buffer size; the rest: signature NUL method */
	size_t len = size ? data[0] : 0;
	char *in = malloc(size + 1);
	if (!in)
		return 0;
	if (size)
		memcpy(in, data + 1, size - 1);
	in[size ? size - 1 : 0] = '\0';
	const char *method = in + strlen(in) + 1 <= in + (size ? size - 1 : 0) ? in + strlen(in) + 1 : NULL;
	char *out = len ? malloc(len) : NULL;
	size_t n = java_class_name(out, len, 0, in);
	check(out, len, n, "java_class_name");
	char big[1024];
	n = java_class_name(big, sizeof(big), 0, in);
	check(big, sizeof(big), n, "java_class_name");
	n = java_frame_name(out, len, 0, in, method);
	check(out, len, n, "java_frame_name");
	free(out);
	free(in);
	return 0;
}
