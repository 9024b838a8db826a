/* fuzz_name_normalize.c - libFuzzer target for normalizing folded stacks: any bytes as a
 * stack and as one frame; the result is terminated, bounded, and normalizing it again changes nothing. */
/* module: native/formats/name_normalize.c native/util/str_intern.c */
#include "name_normalize.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), out[256], again[256];
	struct str_intern *si = str_intern_new();
	if (!s || !si)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	for (int thread = 0; thread < 2; thread++) {
		size_t n = name_normalize_frame((const char *)data, size, thread, out, sizeof(out));
		if (n >= sizeof(out) || out[n] != '\0' || n > size)
			abort();
		if (n < sizeof(out) - 1 && memchr(out, '\0', n) == NULL) {
			size_t m = name_normalize_frame(out, n, thread, again, sizeof(again));
			if (m != n || memcmp(out, again, n) != 0)
				abort(); /* idempotent */
		}
	}
	const char *r = name_normalize_stack(si, s);
	if (!r || strlen(r) > 2 * strlen(s) + 15)
		abort();
	const char *r2 = name_normalize_stack(si, r);
	if (!r2 || strcmp(r, r2) != 0)
		abort();
	str_intern_free(si);
	free(s);
	return 0;
}
