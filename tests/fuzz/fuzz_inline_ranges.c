/* fuzz_inline_ranges.c - libFuzzer target for inline_ranges_build: records made
 * from the bytes, ranges checked for coverage and against a per-byte model. */
/* module: jvmagent/inline_ranges.c */
#include "inline_ranges.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prints the message and aborts, which the fuzzer reports as a crash. */
static __attribute__((noreturn, format(printf, 1, 2))) void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fuzz_inline_ranges: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

#define MAX_PCS	  512
#define MAX_DEPTH 5
#define MAX_CODE  4096

static const char ids[4]; /* method ids: &ids[0] is the compiled method */
static const void *const root[] = { &ids[0] };

static int chain_eq(int da, const void *const *a, int db, const void *const *b)
{
	return da == db && memcmp(a, b, (size_t)da * sizeof(*a)) == 0;
}

static int range_eq(const struct inline_range *a, const struct inline_range *b)
{
	return a->start == b->start && a->end == b->end && chain_eq(a->depth, a->methods, b->depth, b->methods);
}

/* Per byte: which record's chain owns it (-1 root), following the header's
 * rules; then runs of bytes with equal chains become the expected ranges. */
static size_t model(uint64_t start, uint64_t end, const struct inline_pc *pcs, size_t npcs, struct inline_range *out)
{
	static int owner[MAX_CODE];
	uint64_t cur = start;
	size_t n = 0;

	for (uint64_t a = start; a < end; a++)
		owner[a - start] = -1;
	for (size_t i = 0; i < npcs; i++) {
		const struct inline_pc *r = &pcs[i];
		if (r->depth <= 0 || !r->methods || r->pc < cur || r->pc > end)
			continue;
		/* the bytes not yet owned up to and including pc, inside the code */
		for (; cur <= r->pc && cur < end; cur++)
			owner[cur - start] = r->depth == 1 ? -1 : (int)i;
	}
	for (uint64_t a = start; a < end; a++) {
		int o = owner[a - start];
		int depth = o < 0 ? 1 : pcs[o].depth;
		const void *const *m = o < 0 ? root : pcs[o].methods;
		if (n && out[n - 1].end == a && chain_eq(out[n - 1].depth, out[n - 1].methods, depth, m)) {
			out[n - 1].end = a + 1;
			continue;
		}
		out[n++] = (struct inline_range){ a, a + 1, depth, m };
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const void *chains[MAX_PCS][MAX_DEPTH];
	static struct inline_pc pcs[MAX_PCS];
	static struct inline_range out[MAX_PCS + 1], want[MAX_CODE];
	size_t npcs = 0, i = 0;

	if (size < 3)
		return 0;
	uint64_t start = 0x7f0000001000ULL + data[0] * 8;
	uint64_t len = (data[1] | (uint64_t)data[2] << 8) % MAX_CODE;
	uint64_t end = start + len;
	for (i = 3; i + 3 <= size && npcs < MAX_PCS; i += 3, npcs++) {
		/* pc: mostly ascending inside the code, sometimes anywhere near it */
		uint64_t off = (data[i] | (uint64_t)data[i + 1] << 8) % (len + 64);
		int depth = data[i + 2] & 7;
		if (depth > MAX_DEPTH)
			depth = -1;
		for (int d = 0; d < MAX_DEPTH; d++)
			chains[npcs][d] = &ids[(data[i + 2] >> (3 + d % 3 * 2)) % 4];
		if (depth >= 1)
			chains[npcs][depth - 1] = &ids[0]; /* outermost is the compiled method */
		pcs[npcs] = (struct inline_pc){ start + off - 32, depth,
						(data[i + 2] & 0xf8) == 0xf8 ? NULL : chains[npcs] };
	}

	size_t n = inline_ranges_build(start, end, root, pcs, npcs, out, MAX_PCS + 1);
	if (n > npcs + 1)
		fail("%zu ranges from %zu records", n, npcs);
	size_t nw = model(start, end, pcs, npcs, want);
	if (n != nw)
		fail("%zu ranges, the model has %zu", n, nw);
	for (size_t k = 0; k < n; k++) {
		if (!range_eq(&out[k], &want[k]))
			fail("range %zu differs from the model", k);
		if (out[k].depth == 1 && out[k].methods != root)
			fail("range %zu: depth 1 but not the root chain", k);
		if (out[k].start >= out[k].end || (k && out[k - 1].end != out[k].start))
			fail("range %zu: empty, a gap or an overlap", k);
	}
	if (n && (out[0].start != start || out[n - 1].end != end))
		fail("ranges do not cover the code");

	/* a short out: nothing past max, the written ranges are the answer's
	 * start, and the count is still exactly the number needed */
	size_t maxes[] = { 0, 1, n / 2, n ? n - 1 : 0 };
	for (size_t m = 0; m < sizeof(maxes) / sizeof(maxes[0]); m++) {
		size_t max = maxes[m];
		struct inline_range *small = max ? malloc(max * sizeof(*small)) : NULL;
		size_t got = inline_ranges_build(start, end, root, pcs, npcs, small, max);
		if (got != n)
			fail("max %zu: returned %zu, not the %zu needed", max, got, n);
		for (size_t k = 0; k < max && k < n; k++)
			if (!range_eq(&small[k], &out[k]))
				fail("max %zu: range %zu differs", max, k);
		free(small);
	}
	return 0;
}
