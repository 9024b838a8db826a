/* fuzz_profile_format.c - any bytes as the start of a profile to sniff, and as a
 * file name: a format comes back, nothing is read past the end.
 * module: native/formats/profile_format.c */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profile_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *name = malloc(size + 1);
	bool raw;
	if (!name)
		return 0;
	enum profile_format f = profile_format_sniff((const char *)data, size);
	if (f != PFMT_UNKNOWN && f != PFMT_FOLDED && f != PFMT_STACKS && f != PFMT_PPROF && f != PFMT_SPEEDSCOPE &&
	    f != PFMT_JFR)
		abort(); /* content never says SVG, HTML or "text" */
	if (f == PFMT_JFR && (size < 4 || memcmp(data, "FLR\0", 4) != 0))
		abort(); /* JFR only by its magic */
	memcpy(name, data, size);
	name[size] = '\0';
	f = profile_format_of_name(name, &raw);
	if (raw && f != PFMT_PPROF)
		abort();
	(void)profile_format_label(f);
	(void)profile_format_named(name);
	free(name);
	return 0;
}
