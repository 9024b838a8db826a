/* inline_ranges.c - turns JVMTI per-PC inline records into contiguous address
 * ranges, each owned by one inline chain (the unfold option). */
#include "inline_ranges.h"

#include <string.h>

static int same_chain(int da, const void *const *a, int db, const void *const *b)
{
	return da == db && (da == 0 || memcmp(a, b, (size_t)da * sizeof(*a)) == 0);
}

/* The range being built, stored into out (when it fits) once the next starts. */
struct builder {
	struct inline_range cur;
	int have;
	struct inline_range *out;
	size_t max, n;
};

static void finish(struct builder *b)
{
	if (!b->have)
		return;
	if (b->n < b->max)
		b->out[b->n] = b->cur;
	b->n++;
	b->have = 0;
}

static void emit(struct builder *b, uint64_t start, uint64_t end, int depth, const void *const *methods)
{
	if (end <= start)
		return;
	if (b->have && b->cur.end == start && same_chain(b->cur.depth, b->cur.methods, depth, methods)) {
		b->cur.end = end;
		return;
	}
	finish(b);
	b->cur = (struct inline_range){ start, end, depth, methods };
	b->have = 1;
}

size_t inline_ranges_build(uint64_t code_start, uint64_t code_end, const void *const *root, const struct inline_pc *pcs,
			   size_t npcs, struct inline_range *out, size_t max)
{
	struct builder b = { .out = out, .max = max };
	uint64_t cur = code_start;

	for (size_t i = 0; i < npcs; i++) {
		const struct inline_pc *r = &pcs[i];
		if (r->depth <= 0 || !r->methods || r->pc < cur || r->pc > code_end)
			continue;
		/* the record's pc itself is its chain's: a caller's return address */
		uint64_t stop = r->pc < code_end ? r->pc + 1 : code_end;
		if (stop <= cur)
			continue;
		if (r->depth == 1)
			emit(&b, cur, stop, 1, root);
		else
			emit(&b, cur, stop, r->depth, r->methods);
		cur = stop;
	}
	if (cur < code_end)
		emit(&b, cur, code_end, 1, root);
	finish(&b);
	return b.n;
}
