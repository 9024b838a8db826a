/* fuzz_folded_diff.c - any bytes as two folded profiles (split at the first
 * NUL, or in half) merged as jflame diff merges them, with -n and -s from the
 * input, then written as difffolded.pl's text and as the compare page's tree.
 * module: native/formats/folded_diff.c native/formats/folded.c native/util/msg.c native/util/input_file.c native/render/call_tree.c native/util/json_out.c native/util/str_intern.c native/render/flamegraph.c native/render/palette.c native/render/svg_out.c native/render/frame_tree.c native/model/stack_table.c native/util/str_index.c native/model/recording.c native/model/event_table.c native/util/grow.c native/util/u64_map.c */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "call_tree.h"
#include "folded.h"
#include "folded_diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t n1 = nul ? (size_t)(nul - data) : size / 2, n2 = size - n1 - (nul ? 1 : 0);
	struct folded fa, fb;
	struct stack_table a, b;
	struct folded_diff d;
	char err[256];
	stack_table_init(&a);
	stack_table_init(&b);
	if (folded_parse(&fa, &a, (const char *)data, n1, "a", 0, err, sizeof(err)) == 0 &&
	    folded_parse(&fb, &b, (const char *)data + size - n2, n2, "b", 0, err, sizeof(err)) == 0 &&
	    folded_diff_build(&d, &a, &b, &(struct folded_diff_opts){ size & 1, size & 2, size & 4 }) == 0) {
		FILE *f = fopen("/dev/null", "w");
		struct call_tree *t = call_tree_new();
		if (f) {
			folded_diff_write(f, &d);
			for (size_t i = 0; t && i < d.t.stacks.n; i++)
				if (call_tree_node(t, d.t.stacks.strs[i], d.t.stacks.lens[i]) < 0)
					break;
			if (t)
				call_tree_write_json(t, f);
			fclose(f);
		}
		call_tree_free(t);
		folded_diff_free(&d);
	}
	stack_table_free(&a);
	stack_table_free(&b);
	return 0;
}
