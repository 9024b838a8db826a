/* fuzz_jvm_app.c - any bytes as a JVM's /proc cmdline and environ (split at
 * the first 0xff byte): the application name is found or not, never read
 * past either, always NUL-terminated within its buffer.
 * module: native/symbolize/jvm_app.c */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jvm_app.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *split = memchr(data, 0xff, size);
	size_t cl = split ? (size_t)(split - data) : size;
	char *c = malloc(cl ? cl : 1), *e = malloc(size - cl ? size - cl : 1), out[32];
	if (!c || !e)
		goto out;
	memcpy(c, data, cl);
	if (split)
		memcpy(e, split + 1, size - cl - 1);
	size_t n = jvm_app_name(c, cl, e, split ? size - cl - 1 : 0, out, sizeof(out));
	if (n >= sizeof(out) || strlen(out) != n)
		abort();
out:
	free(c);
	free(e);
	return 0;
}
