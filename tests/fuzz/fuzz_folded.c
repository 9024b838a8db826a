/* fuzz_folded.c - any bytes as folded stacks: lines with and without counts,
 * two-column differential lines, NULs; parsed in place without overruns.
 * module: native/formats/folded.c native/util/input_file.c */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct folded f;
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	memset(&f, 0, sizeof(f));
	char err[256];
	folded_parse(&f, text, size, "fuzz", err, sizeof(err));
	for (size_t i = 0; i < f.n; i++)
		(void)strlen(f.stacks[i].frames);
	folded_free(&f);
	return 0;
}
