/* fuzz_folded_diff.c - any bytes as two folded profiles (split at the first
 * NUL, or in half) merged as jflame diff merges them, with -n and -s from the
 * input, then written as difffolded.pl's text and as the compare page's tree.
 * module: native/formats/folded_diff.c native/formats/folded.c native/util/input_file.c native/render/call_tree.c native/util/json_out.c native/util/str_intern.c native/render/flamegraph.c native/render/palette.c native/render/svg_out.c native/render/frame_tree.c */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call_tree.h"
#include "folded.h"
#include "folded_diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t n1 = nul ? (size_t)(nul - data) : size / 2, n2 = size - n1 - (nul ? 1 : 0);
	char *t1 = malloc(n1 + 1), *t2 = malloc(n2 + 1);
	struct folded a, b;
	struct folded_diff d;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	if (!t1 || !t2) {
		free(t1);
		free(t2);
		return 0;
	}
	memcpy(t1, data, n1);
	memcpy(t2, data + size - n2, n2);
	char err[256];
	if (folded_parse(&a, t1, n1, "a", err, sizeof(err)) == 0 && folded_parse(&b, t2, n2, "b", err, sizeof(err)) == 0 &&
	    folded_diff_build(&d, &a, &b, &(struct folded_diff_opts){ size & 1, size & 2, size & 4 }) == 0) {
		FILE *f = fopen("/dev/null", "w");
		struct call_tree *t = call_tree_new();
		if (f) {
			folded_diff_write(f, &d);
			for (size_t i = 0; t && i < d.n; i++)
				if (call_tree_node(t, d.stacks[i].frames, strlen(d.stacks[i].frames)) < 0)
					break;
			if (t)
				call_tree_write_json(t, f);
			fclose(f);
		}
		call_tree_free(t);
		folded_diff_free(&d);
	}
	if (a.text != t1)
		free(t1);
	if (b.text != t2)
		free(t2);
	folded_free(&a);
	folded_free(&b);
	return 0;
}
