/* fuzz_profile_format.c - any bytes as the start of a profile, asked of every
 * format's content test: nothing is read past the end, and the tests that
 * exclude each other (binary and text, perf script and folded) never both say yes.
 * module: native/formats/format_sniff.c */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format_sniff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy of exactly size bytes: ASan catches a read past it */
	char *buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	bool jfr = format_sniff_jfr(buf, size), json = format_sniff_speedscope(buf, size);
	bool pprof = format_sniff_pprof(buf, size), stacks = format_sniff_stacks(buf, size);
	bool folded = format_sniff_folded(buf, size);
	if (jfr && (size < 4 || memcmp(data, "FLR\0", 4) != 0))
		abort(); /* JFR only by its magic */
	if (pprof && (stacks || folded))
		abort(); /* binary is never text */
	if (stacks && folded)
		abort(); /* a frame line makes it perf script text */
	(void)json;
	free(buf);
	return 0;
}
