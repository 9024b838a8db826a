/* test_inline_ranges.c - unit tests for splitting compiled code into inline
 * chain ranges: splitting, merging, skipped records, and a too-small out. */
#include "check.h"
#include "inline_ranges.h"

#include <string.h>

/* Opaque method ids: only their addresses matter. */
static char m_root, m_a, m_b, m_c;

static const void *const root[] = { &m_root };
static const void *const chain_a[] = { &m_a, &m_root };	       /* a inlined into root */
static const void *const chain_a2[] = { &m_a, &m_root };       /* same chain, other array */
static const void *const chain_ba[] = { &m_b, &m_a, &m_root }; /* b inlined into a */
static const void *const chain_c[] = { &m_c, &m_root };
static const void *const self_only[] = { &m_root }; /* a depth-1 record */
static const void *const other_self[] = { &m_c };   /* depth 1, other id */

#define START 0x1000
#define END   0x1100
#define MAXR  64

/* One expected range; chain compared by value. */
struct want {
	uint64_t start, end;
	int depth;
	const void *const *methods;
};

static int same(const struct inline_range *r, const struct want *w)
{
	return r->start == w->start && r->end == w->end && r->depth == w->depth &&
	       memcmp(r->methods, w->methods, (size_t)w->depth * sizeof(void *)) == 0;
}

/* The ranges cover [start, end) in order, contiguously, without overlap, and
 * no two neighbours share a chain (those would have been merged). */
static void check_cover(const char *name, const struct inline_range *r, size_t n, uint64_t start, uint64_t end)
{
	if (start == end) {
		CHECK_MSG(n == 0, "%s: %zu ranges for empty code", name, n);
		return;
	}
	CHECK_MSG(n > 0, "%s: no ranges", name);
	if (n == 0)
		return;
	CHECK_MSG(r[0].start == start, "%s: first range starts at %#llx", name, (unsigned long long)r[0].start);
	CHECK_MSG(r[n - 1].end == end, "%s: last range ends at %#llx", name, (unsigned long long)r[n - 1].end);
	for (size_t i = 0; i < n; i++) {
		CHECK_MSG(r[i].start < r[i].end, "%s: range %zu is empty or reversed", name, i);
		CHECK_MSG(r[i].depth >= 1 && r[i].methods != NULL, "%s: range %zu has no chain", name, i);
		if (i == 0)
			continue;
		CHECK_MSG(r[i - 1].end == r[i].start, "%s: gap or overlap before range %zu", name, i);
		CHECK_MSG(!(r[i - 1].depth == r[i].depth &&
			    memcmp(r[i - 1].methods, r[i].methods, (size_t)r[i].depth * sizeof(void *)) == 0),
			  "%s: ranges %zu and %zu share a chain", name, i - 1, i);
	}
	/* the root chain of a depth-1 range is the one passed in */
	for (size_t i = 0; i < n; i++)
		CHECK_MSG(r[i].depth != 1 || r[i].methods[0] == &m_root, "%s: range %zu depth 1 but not root", name, i);
}

static void expect(const char *name, const struct inline_pc *pcs, size_t npcs, const struct want *w, size_t nw)
{
	struct inline_range out[MAXR];
	size_t n = inline_ranges_build(START, END, root, pcs, npcs, out, MAXR);

	CHECK_MSG(n == nw, "%s: %zu ranges, want %zu", name, n, nw);
	if (n > MAXR)
		n = MAXR;
	check_cover(name, out, n, START, END);
	for (size_t i = 0; i < n && i < nw; i++)
		CHECK_MSG(same(&out[i], &w[i]), "%s: range %zu is [%#llx,%#llx) depth %d", name, i,
			  (unsigned long long)out[i].start, (unsigned long long)out[i].end, out[i].depth);
}

#define EXPECT(name, pcs, ...)                                                                   \
	do {                                                                                     \
		static const struct want w_[] = { __VA_ARGS__ };                                 \
		expect(name, pcs, sizeof(pcs) / sizeof(pcs[0]), w_, sizeof(w_) / sizeof(w_[0])); \
	} while (0)

static void test_no_records(void)
{
	struct inline_range out[4];
	size_t n = inline_ranges_build(START, END, root, NULL, 0, out, 4);

	CHECK_EQ_INT(n, 1);
	CHECK(out[0].start == START && out[0].end == END && out[0].depth == 1 && out[0].methods == root);
	/* empty code: nothing */
	CHECK_EQ_INT(inline_ranges_build(START, START, root, NULL, 0, out, 4), 0);
}

/* A record owns the code after the previous record's pc up to and including
 * its own pc (a caller frame's return address names its call site's chain):
 * each range ends one byte past its record's pc. */
static void test_split(void)
{
	static const struct inline_pc pcs[] = {
		{ 0x1010, 2, chain_a },
		{ 0x1020, 3, chain_ba },
		{ 0x1030, 2, chain_a },
		{ 0x1048, 2, chain_c },
	};
	EXPECT("split", pcs, { 0x1000, 0x1011, 2, chain_a }, { 0x1011, 0x1021, 3, chain_ba },
	       { 0x1021, 0x1031, 2, chain_a }, { 0x1031, 0x1049, 2, chain_c }, { 0x1049, END, 1, root });
}

/* A record at the end of the code ends its range there, not one byte past. */
static void test_record_at_end(void)
{
	static const struct inline_pc pcs[] = {
		{ 0x1080, 3, chain_ba },
		{ END, 2, chain_a },
	};
	EXPECT("record at end", pcs, { 0x1000, 0x1081, 3, chain_ba }, { 0x1081, END, 2, chain_a });
}

static void test_merge_identical(void)
{
	static const struct inline_pc pcs[] = {
		{ 0x1010, 2, chain_a }, { 0x1020, 2, chain_a2 }, /* equal ids in another array */
		{ 0x1030, 2, chain_a }, { 0x1040, 3, chain_ba }, { 0x1050, 3, chain_ba },
	};
	EXPECT("merge identical", pcs, { 0x1000, 0x1031, 2, chain_a }, { 0x1031, 0x1051, 3, chain_ba },
	       { 0x1051, END, 1, root });
}

/* Not merged: same methods in another order, or a prefix of another chain. */
static void test_no_merge_different(void)
{
	static const void *const chain_ab[] = { &m_a, &m_b, &m_root };
	static const struct inline_pc pcs[] = {
		{ 0x1010, 3, chain_ba },
		{ 0x1020, 3, chain_ab },
		{ 0x1030, 2, chain_ba }, /* b, a: not chain_ba */
		{ 0x1040, 2, chain_a },
	};
	static const void *const b_a[] = { &m_b, &m_a };
	EXPECT("no merge", pcs, { 0x1000, 0x1011, 3, chain_ba }, { 0x1011, 0x1021, 3, chain_ab },
	       { 0x1021, 0x1031, 2, b_a }, { 0x1031, 0x1041, 2, chain_a }, { 0x1041, END, 1, root });
}

static void test_depth1_is_root(void)
{
	static const struct inline_pc only_self[] = {
		{ 0x1010, 1, self_only },
		{ 0x1020, 1, other_self },
		{ 0x1030, 1, self_only },
	};
	EXPECT("depth 1 only", only_self, { START, END, 1, root });

	static const struct inline_pc mixed[] = {
		{ 0x1010, 2, chain_a },
		{ 0x1020, 1, other_self },
		{ 0x1030, 1, self_only },
		{ 0x1040, 2, chain_a },
	};
	EXPECT("depth 1 between", mixed, { 0x1000, 0x1011, 2, chain_a }, { 0x1011, 0x1031, 1, root },
	       { 0x1031, 0x1041, 2, chain_a }, { 0x1041, END, 1, root });
}

static void test_skipped(void)
{
	static const struct inline_pc outside[] = {
		{ 0x0900, 2, chain_a }, /* before the code */
		{ START, 2, chain_c },	/* at the start: owns just that byte */
		{ 0x1040, 3, chain_ba },
		{ END + 1, 2, chain_a }, /* past the end */
		{ 0xffffffffffffffffULL, 2, chain_a },
	};
	EXPECT("outside", outside, { 0x1000, 0x1001, 2, chain_c }, { 0x1001, 0x1041, 3, chain_ba },
	       { 0x1041, END, 1, root });

	static const struct inline_pc unordered[] = {
		{ 0x1050, 2, chain_a }, { 0x1020, 3, chain_ba }, /* below the current position */
		{ 0x1050, 2, chain_c },				 /* at the previous pc: already owned */
		{ 0x1060, 2, chain_c }, { 0x1058, 3, chain_ba },
	};
	EXPECT("unordered", unordered, { 0x1000, 0x1051, 2, chain_a }, { 0x1051, 0x1061, 2, chain_c },
	       { 0x1061, END, 1, root });

	static const struct inline_pc empty_chains[] = {
		{ 0x1010, 0, chain_a }, { 0x1020, -1, chain_a }, { 0x1030, 2, NULL },
		{ 0x1040, 2, chain_c }, { 0x1050, 0, NULL },
	};
	EXPECT("empty chains", empty_chains, { 0x1000, 0x1041, 2, chain_c }, { 0x1041, END, 1, root });
}

/* Ranges whose chains never repeat: with a short out, nothing is written past
 * max, what is written is the start of the full answer and the count is exact. */
static void test_small_max(void)
{
	static const struct inline_pc pcs[] = {
		{ 0x1010, 2, chain_a }, { 0x1020, 3, chain_ba }, { 0x1030, 2, chain_a },
		{ 0x1040, 2, chain_c }, { 0x1050, 3, chain_ba },
	};
	struct inline_range full[MAXR];
	size_t need = inline_ranges_build(START, END, root, pcs, 5, full, MAXR);

	CHECK_EQ_INT(need, 6);
	for (size_t max = 0; max <= need; max++) {
		struct inline_range out[MAXR];
		memset(out, 0xa5, sizeof(out));
		size_t n = inline_ranges_build(START, END, root, pcs, 5, max ? out : NULL, max);
		CHECK_MSG(n == need, "max %zu: returned %zu, want %zu", max, n, need);
		for (size_t i = 0; i < max; i++)
			CHECK_MSG(out[i].start == full[i].start && out[i].end == full[i].end &&
					  out[i].depth == full[i].depth && out[i].methods == full[i].methods,
				  "max %zu: range %zu differs from the full answer", max, i);
		CHECK_MSG(check_filled(out + max, sizeof(out) - max * sizeof(out[0]), 0xa5), "max %zu: wrote past max",
			  max);
	}
}

/*
 * Regression (fixed in jvmagent/inline_ranges.c, emit()): once out is full (n > max),
 * emit() stops merging a range into its predecessor and counts it as a new
 * range, so a call with a short array returns more than the number needed.
 * Records at 0x1010 a, 0x1020 a, 0x1030 a, 0x1040 (depth 1), code to 0x1100:
 * the answer is 2 ranges ([0x1000,0x1031) a, [0x1031,0x1100) root); with
 * max 0 inline_ranges_build returns 5, with max 1 it returns 3.
 */
static void regression_small_max_count_with_merges(void)
{
	static const struct inline_pc pcs[] = {
		{ 0x1010, 2, chain_a },
		{ 0x1020, 2, chain_a },
		{ 0x1030, 2, chain_a2 },
		{ 0x1040, 1, self_only },
	};
	struct inline_range full[MAXR];
	size_t need = inline_ranges_build(START, END, root, pcs, 4, full, MAXR);

	CHECK_EQ_INT(need, 2);
	for (size_t max = 0; max <= need; max++) {
		struct inline_range out[MAXR];
		memset(out, 0xa5, sizeof(out));
		size_t n = inline_ranges_build(START, END, root, pcs, 4, max ? out : NULL, max);
		CHECK_MSG(n == need, "max %zu: returned %zu, want %zu", max, n, need);
		CHECK_MSG(check_filled(out + max, sizeof(out) - max * sizeof(out[0]), 0xa5), "max %zu: wrote past max",
			  max);
	}
}

/* Many records in a long method: deterministic pseudo-random chains. */
static void test_many_records(void)
{
	static const void *const *chains[] = { root, chain_a, chain_ba, chain_c, chain_a2 };
	static const int depths[] = { 1, 2, 3, 2, 2 };
	static struct inline_pc pcs[5000];
	static struct inline_range out[6000];
	uint32_t x = 12345;
	uint64_t pc = START;

	for (size_t i = 0; i < 5000; i++) {
		x = x * 1103515245 + 12345;
		pc += 1 + (x >> 16) % 16;
		pcs[i] = (struct inline_pc){ pc, depths[(x >> 8) % 5], chains[(x >> 8) % 5] };
	}
	size_t n = inline_ranges_build(START, pc + 100, root, pcs, 5000, out, 6000);
	CHECK(n <= 6000);
	check_cover("many", out, n < 6000 ? n : 6000, START, pc + 100);
}

int main(void)
{
	test_no_records();
	test_split();
	test_record_at_end();
	test_merge_identical();
	test_no_merge_different();
	test_depth1_is_root();
	test_skipped();
	test_small_max();
	regression_small_max_count_with_merges();
	test_many_records();
	return check_report("inline_ranges");
}
