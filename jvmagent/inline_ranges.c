/* inline_ranges.c - turns JVMTI per-PC inline records into contiguous address
 * ranges, each owned by one inline chain (the unfold option). */
#include "inline_ranges.h"

#include <string.h>

static int same_chain(int da, const void *const *a, int db, const void *const *b)
{
	return da == db && (da == 0 || memcmp(a, b, (size_t)da * sizeof(*a)) == 0);
}

static size_t emit(struct inline_range *out, size_t max, size_t n, uint64_t start, uint64_t end,
		   int depth, const void *const *methods)
{
	if (end <= start)
		return n;
	if (n > 0 && n <= max) {
		struct inline_range *prev = &out[n - 1];
		if (prev->end == start && same_chain(prev->depth, prev->methods, depth, methods)) {
			prev->end = end;
			return n;
		}
	}
	if (n < max)
		out[n] = (struct inline_range){ start, end, depth, methods };
	return n + 1;
}

size_t inline_ranges_build(uint64_t code_start, uint64_t code_end, const void *const *root,
			   const struct inline_pc *pcs, size_t npcs,
			   struct inline_range *out, size_t max)
{
	uint64_t cur = code_start;
	size_t n = 0;

	for (size_t i = 0; i < npcs; i++) {
		const struct inline_pc *r = &pcs[i];
		if (r->depth <= 0 || !r->methods || r->pc <= cur || r->pc > code_end)
			continue;
		if (r->depth == 1)
			n = emit(out, max, n, cur, r->pc, 1, root);
		else
			n = emit(out, max, n, cur, r->pc, r->depth, r->methods);
		cur = r->pc;
	}
	if (cur < code_end)
		n = emit(out, max, n, cur, code_end, 1, root);
	return n;
}
