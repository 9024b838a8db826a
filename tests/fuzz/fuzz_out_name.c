/* fuzz_out_name.c - any bytes as an output-name template and a file name:
 * checked, expanded into a small and a large buffer, matched, its %e
 * replaced and an event inserted; an expanded
 * template with a fixed directory matches its own file part.
 * module: native/util/out_name.c native/util/grow.c */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>

#include "out_name.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), out[4096], small[24], err[512];
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	char *name = strchr(s, '\n');
	if (name)
		*name++ = '\0';
	struct out_name_vars v = { .time_ns = (int64_t)(size * 1000003ULL) * 1000000000LL,
				   .pid = (pid_t)size,
				   .host = "h",
				   .seq = size,
				   .event = "alloc" };
	static const char *const words[] = { "cpu", "offcpu", "wall", "alloc", "lock" };
	if (out_name_check(s, err, sizeof(err)) == 0) {
		out_name_varies(s);
		out_name_event_word(s, words, 5);
		if (out_name_has_event(s) && out_name_for_event(s, "lock", out, sizeof(out)) == 0 &&
		    (out_name_has_event(out) || out_name_check(out, err, sizeof(err)) != 0))
			abort(); /* %e replaced: no %e left, still a template */
		out_name_insert_event(s, "wall", small, sizeof(small));
		out_name_expand(s, &v, small, sizeof(small));
		const char *slash = strrchr(s, '/'), *file = slash ? slash + 1 : s;
		if (out_name_expand(file, &v, out, sizeof(out)) == 0 && out_name_fixed_dir(s) && !strchr(out, '/') &&
		    strlen(out) <= NAME_MAX && !out_name_matches(file, out) && strlen(file) < 64)
			abort(); /* what a template names, it matches (a file name is at most NAME_MAX bytes) */
	}
	if (name)
		out_name_matches(s, name);
	free(s);
	return 0;
}
