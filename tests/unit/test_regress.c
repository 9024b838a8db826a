/* test_regress.c - which frames' shares changed beyond sampling noise
 * (native/model/regress.c): the p-value against values worked out here (the
 * normal through erfc, Student's t from its table, the exact binomial tail by
 * summing its terms for a frame seen a few times), Holm's correction done by
 * hand, how stacks are counted (a recursive frame once, self at the leaf,
 * empty windows not windows), windows as replicates (spread beyond sampling
 * makes a change noise, agreeing windows keep it significant), row order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "regress.h"

#define CHECK_NEAR(a, b, tol)                                                                      \
	do {                                                                                       \
		double a_ = (a), b_ = (b), t_ = (tol);                                             \
		check_count++;                                                                     \
		if (!(fabs(a_ - b_) <= t_))                                                        \
			CHECK_FAIL_("%s ~ %s: %.12g != %.12g (tolerance %g)", #a, #b, a_, b_, t_); \
	} while (0)

/* relative tolerance, for p-values that may be tiny */
#define CHECK_REL(a, b, rel) CHECK_NEAR(a, b, (rel)*fabs(b))

/* One window of folded text ("a;b;c 12" lines) on side. */
static void window(struct regress *r, enum regress_side side, const char *text)
{
	CHECK_EQ_INT(regress_window_begin(r, side), 0);
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		const char *sp = p + n;
		while (sp > p && sp[-1] != ' ')
			sp--;
		CHECK(sp > p);
		if (sp > p)
			CHECK_EQ_INT(regress_window_stack(r, p, (size_t)(sp - 1 - p), strtoull(sp, NULL, 10)), 0);
		p = nl ? nl + 1 : p + n;
	}
	regress_window_end(r);
}

static const struct regress_row *row(const struct regress *r, const char *frame)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (strcmp(r->rows[i].frame, frame) == 0)
			return &r->rows[i];
	CHECK_FAIL_("no row for frame '%s'", frame);
	return NULL;
}

/* The unscaled two-proportion z statistic with the pooled share, by hand. */
static double z_pooled(double x, double n, double y, double m)
{
	double p = (x + y) / (n + m);
	return fabs(x / n - y / m) / sqrt(p * (1 - p) * (1 / n + 1 / m));
}

/* Two-sided normal p-value: 2 Q(z) = erfc(z / sqrt 2). */
static double two_sided_normal(double z)
{
	return 0.5 * erfc(z / sqrt(2.0)) * 2.0;
}

/* Two-sided binomial tail of k of t at share q, the way exact_p doubles it:
 * the terms summed (lgamma for the binomial coefficients). */
static double two_sided_binomial(unsigned k, unsigned t, double q, bool upper)
{
	double sum = 0;
	for (unsigned i = upper ? k : 0; upper ? i <= t : i <= k; i++)
		sum += exp(lgamma(t + 1.0) - lgamma(i + 1.0) - lgamma(t - i + 1.0) + i * log(q) + (t - i) * log1p(-q));
	return fmin(1.0, 2 * sum);
}

/* The frame's expected samples on the smaller side, over phi: under 10, the
 * exact test is asked too. */
static bool few(double x, double n, double y, double m, double phi)
{
	return fmin(n, m) * (x + y) / (n + m) / phi < 10;
}

static void test_p_value_normal(void)
{
	static const struct {
		uint64_t x, n, y, m;
	} cases[] = {
		{ 160, 1000, 100, 1000 }, { 300, 10000, 200, 10000 },	{ 500, 1000, 450, 1000 },
		{ 90, 1000, 0, 2000 },	  { 1234, 50000, 1100, 40000 }, { 30, 60, 10, 140 },
		{ 999, 1000, 990, 1000 }, { 52, 20000, 70, 30000 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t x = cases[i].x, n = cases[i].n, y = cases[i].y, m = cases[i].m;
		CHECK(!few(x, n, y, m, 1.0)); /* counts where the normal alone is trusted */
		double z = z_pooled((double)x, (double)n, (double)y, (double)m);
		double want = two_sided_normal(z);
		double got = regress_p_value(x, n, y, m, 1.0, 0);
		CHECK_MSG(fabs(got - want) <= 1e-9 * want + 1e-15,
			  "case %zu: %llu/%llu vs %llu/%llu: p %.12g, want %.12g", i, (unsigned long long)x,
			  (unsigned long long)n, (unsigned long long)y, (unsigned long long)m, got, want);
		/* which side is which does not matter */
		CHECK_NEAR(regress_p_value(y, m, x, n, 1.0, 0), got, 1e-15);
		/* phi scales the variance: the statistic shrinks by sqrt(phi) */
		if (!few(x, n, y, m, 4.0))
			CHECK_REL(regress_p_value(x, n, y, m, 4.0, 0), two_sided_normal(z / 2), 1e-9);
	}
	/* 16% of 1000 against 10%: z = 0.06 / sqrt(0.13 * 0.87 * 0.002) = 3.9894 */
	CHECK_NEAR(regress_p_value(160, 1000, 100, 1000, 1.0, 0), 6.6247e-5, 1e-8);
	/* the textbook quantile: z = 1.959964 is p = 0.05 (phi chosen to give that z) */
	double z0 = z_pooled(600, 1000, 400, 1000);
	CHECK_NEAR(regress_p_value(600, 1000, 400, 1000, pow(z0 / 1.959964, 2), 0), 0.05, 1e-6);
	CHECK_NEAR(regress_p_value(600, 1000, 400, 1000, pow(z0 / 2.575829, 2), 0), 0.01, 1e-6);
	/* equal shares: no change at all */
	CHECK_NEAR(regress_p_value(10, 100, 20, 200, 1.0, 0), 1.0, 1e-12);
}

/* A frame expected a few times on a side (under 10 samples over phi): the
 * larger of the normal's p-value and the exact conditional binomial's. */
static void test_p_value_exact(void)
{
	/* 15 of 100 against none of 100: all 15 on one side, a fair coin: 2 / 2^15,
	 * above the normal's 5.65e-5 */
	CHECK(few(15, 100, 0, 100, 1));
	CHECK_NEAR(regress_p_value(15, 100, 0, 100, 1.0, 0), 2 * pow(0.5, 15), 1e-15);
	CHECK(regress_p_value(15, 100, 0, 100, 1.0, 0) > two_sided_normal(z_pooled(15, 100, 0, 100)));
	/* a frame new in a window of 1000 samples, absent from 5000 before: 8
	 * samples are (1/6)^8 x 2 = 1.2e-6, not the normal's 2.5e-10 */
	double p8 = regress_p_value(8, 1000, 0, 5000, 1.0, 0);
	CHECK_REL(p8, two_sided_binomial(8, 8, 1000.0 / 6000, true), 1e-9);
	CHECK_REL(p8, 2 * pow(1.0 / 6, 8), 1e-9);
	CHECK(p8 > 10 * two_sided_normal(z_pooled(8, 1000, 0, 5000)));
	/* phi 2: 16 samples count as 8 */
	CHECK_REL(regress_p_value(16, 1000, 0, 5000, 2.0, 0), p8, 1e-9);
	/* phi between: continuous, between the two */
	double p16 = regress_p_value(16, 1000, 0, 5000, 1.0, 0), p15 = regress_p_value(16, 1000, 0, 5000, 1.5, 0);
	CHECK(p16 < p15 && p15 < p8);
	/* one of a 5-sample window in a frame of 3 in 3000: 1 - (1 - 5/3005)^4,
	 * doubled (the normal would call it 1e-23) */
	double p1 = regress_p_value(1, 5, 3, 3000, 1.0, 0);
	CHECK_REL(p1, 2 * (1 - pow(1 - 5.0 / 3005, 4)), 1e-9);
	CHECK_REL(p1, two_sided_binomial(1, 4, 5.0 / 3005, true), 1e-9);
	CHECK(p1 > 0.01);
	/* shrank: none of 100 against 12 of 1000, (10/11)^12 doubled; sides swapped alike */
	double p0 = regress_p_value(0, 100, 12, 1000, 1.0, 0);
	CHECK_REL(p0, 2 * pow(10.0 / 11, 12), 1e-9);
	CHECK_REL(p0, two_sided_binomial(0, 12, 100.0 / 1100, false), 1e-9);
	CHECK_REL(regress_p_value(12, 1000, 0, 100, 1.0, 0), p0, 1e-9);
	/* a few counts both sides, against the summed tail: 9 of 2000 vs 3 of 4000 */
	CHECK(few(9, 2000, 3, 4000, 1));
	CHECK_REL(regress_p_value(9, 2000, 3, 4000, 1.0, 0),
		  fmax(two_sided_binomial(9, 12, 2000.0 / 6000, true), two_sided_normal(z_pooled(9, 2000, 3, 4000))),
		  1e-9);
	/* and with Student's t: still the larger of the two */
	CHECK(regress_p_value(9, 2000, 3, 4000, 1.0, 3) >= regress_p_value(9, 2000, 3, 4000, 1.0, 0));
	/* never NaN, never outside [0, 1], even where the tail underflows */
	double big = regress_p_value(4000, 4000, 0, 1000000, 1.0, 0);
	CHECK(big >= 0 && big < 1e-300);
	for (uint64_t x = 0; x <= 12; x++)
		for (uint64_t y = 0; y <= 12; y++)
			for (double phi = 1; phi <= 4; phi += 0.75) {
				double p = regress_p_value(x, 7, y, 1000, phi, x % 3);
				CHECK_MSG(p >= 0 && p <= 1, "%llu/7 vs %llu/1000 phi %g: p %g", (unsigned long long)x,
					  (unsigned long long)y, phi, p);
			}
}

static void test_p_value_student(void)
{
	/* two-sided critical values of Student's t (any table) */
	static const struct {
		double t, df, p;
	} table[] = {
		{ 2.776, 4, 0.05 },  { 4.604, 4, 0.01 }, { 2.228, 10, 0.05 }, { 3.169, 10, 0.01 },
		{ 12.706, 1, 0.05 }, { 2.571, 5, 0.05 }, { 2.042, 30, 0.05 }, { 1.812, 10, 0.10 },
	};
	double z0 = z_pooled(600, 1000, 400, 1000);
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		/* phi that makes the statistic t */
		double phi = pow(z0 / table[i].t, 2);
		CHECK(!few(600, 1000, 400, 1000, phi));
		double p = regress_p_value(600, 1000, 400, 1000, phi, table[i].df);
		CHECK_MSG(fabs(p - table[i].p) < 5e-4, "t %g df %g: p %.6f, want %.3f", table[i].t, table[i].df, p,
			  table[i].p);
		/* heavier tails than the normal: a larger p for the same statistic */
		CHECK(p > regress_p_value(600, 1000, 400, 1000, phi, 0));
	}
	/* very many df: the normal */
	double phi = pow(z0 / 1.959964, 2);
	CHECK_NEAR(regress_p_value(600, 1000, 400, 1000, phi, 1e7), 0.05, 1e-5);
}

static void test_p_value_degenerate(void)
{
	/* in none, or in all, of the samples on both sides: nothing to test */
	CHECK_EQ_INT(regress_p_value(0, 100, 0, 200, 1.0, 0) == 1.0, 1);
	CHECK_EQ_INT(regress_p_value(100, 100, 200, 200, 1.0, 0) == 1.0, 1);
	CHECK_EQ_INT(regress_p_value(0, 100, 0, 200, 5.0, 3) == 1.0, 1);
	CHECK_EQ_INT(regress_p_value(100, 100, 200, 200, 5.0, 3) == 1.0, 1);
	/* a side without samples */
	CHECK_EQ_INT(regress_p_value(0, 0, 10, 100, 1.0, 0) == 1.0, 1);
	CHECK_EQ_INT(regress_p_value(10, 100, 0, 0, 1.0, 0) == 1.0, 1);
	/* in all of one side and none of the other: as far apart as can be */
	CHECK(regress_p_value(100, 100, 0, 100, 1.0, 0) < 1e-40);
	/* never outside [0, 1] */
	for (uint64_t x = 0; x <= 20; x++)
		for (uint64_t y = 0; y <= 20; y++) {
			double p = regress_p_value(x, 20, y, 20, 1.0, 0);
			CHECK_MSG(p >= 0 && p <= 1, "%llu/20 vs %llu/20: p %g", (unsigned long long)x,
				  (unsigned long long)y, p);
		}
}

/* A frame in every stack (the root), and frames in none of one side. */
static void test_root_and_absent(void)
{
	struct regress r;
	regress_init(&r);
	window(&r, REGRESS_BEFORE, "main;a 30\nmain;b 70\n");
	window(&r, REGRESS_AFTER, "main;a 35\nmain;c 65\n");
	CHECK_EQ_INT(regress_test(&r, 0.01), 0);
	CHECK_EQ_INT(r.nrows, 4);
	const struct regress_row *m = row(&r, "main"), *b = row(&r, "b"), *c = row(&r, "c");
	if (m && b && c) {
		CHECK_EQ_INT(m->p == 1.0 && m->p_adj == 1.0, 1);
		CHECK(!m->significant);
		CHECK_NEAR(m->before, 1.0, 0);
		CHECK_NEAR(m->after, 1.0, 0);
		/* b gone, c new: both as far as 70 points */
		CHECK_NEAR(b->change, -0.70, 1e-12);
		CHECK_NEAR(c->change, 0.65, 1e-12);
		CHECK(b->significant && c->significant);
	}
	regress_free(&r);
}

/* Holm: the k-th smallest of n p-values (k from 0) times n - k, capped at 1,
 * never below the one before; significant when that is below alpha. */
static void test_holm(void)
{
	struct regress r;
	regress_init(&r);
	/* 1000 samples a side; five frames, each its own stack */
	window(&r, REGRESS_BEFORE, "A 20\nB 20\nC 100\nD 100\nidle 760\n");
	window(&r, REGRESS_AFTER, "A 60\nB 60\nC 130\nD 100\nidle 650\n");
	CHECK_EQ_INT(regress_test(&r, 0.05), 0);
	CHECK_EQ_INT(r.nrows, 5);
	const struct regress_row *a = row(&r, "A"), *b = row(&r, "B"), *c = row(&r, "C"), *d = row(&r, "D"),
				 *idle = row(&r, "idle");
	if (!a || !b || !c || !d || !idle) {
		regress_free(&r);
		return;
	}
	/* raw p-values: the z-test of each (checked above) */
	double pa = regress_p_value(60, 1000, 20, 1000, 1, 0), pc = regress_p_value(130, 1000, 100, 1000, 1, 0),
	       pi = regress_p_value(650, 1000, 760, 1000, 1, 0);
	CHECK_NEAR(a->p, pa, 1e-15);
	CHECK_NEAR(b->p, pa, 1e-15);
	CHECK_NEAR(c->p, pc, 1e-15);
	CHECK_NEAR(idle->p, pi, 1e-15);
	CHECK_EQ_INT(d->p == 1.0, 1);
	/* the order by p: idle (110 points of 1000 lost), A = B, C, D */
	CHECK(pi < pa && pa < pc && pc < 1);
	/* idle first: times 5; A times 4; B (tied with A) times 3 but not below A */
	CHECK_REL(idle->p_adj, 5 * pi, 1e-12);
	CHECK_REL(a->p_adj, fmax(4 * pa, 5 * pi), 1e-12);
	CHECK_REL(b->p_adj, a->p_adj, 1e-12);
	CHECK(3 * pa < a->p_adj); /* the monotone step raised B */
	/* C: times 2; by hand p = 0.0355, so raw p < alpha but adjusted 0.071 is not */
	CHECK_NEAR(pc, 0.0355, 5e-4);
	CHECK_REL(c->p_adj, 2 * pc, 1e-12);
	CHECK(c->p < 0.05 && !c->significant);
	CHECK_EQ_INT(d->p_adj == 1.0, 1);
	CHECK(idle->significant && a->significant && b->significant && !d->significant);
	/* adjusted never below raw, and never above 1 */
	for (size_t i = 0; i < r.nrows; i++) {
		CHECK(r.rows[i].p_adj >= r.rows[i].p);
		CHECK(r.rows[i].p_adj <= 1.0);
		CHECK_EQ_INT(r.rows[i].significant, r.rows[i].p_adj < 0.05);
	}

	/* a stricter alpha on the same counts: the same p-values, fewer significant */
	CHECK_EQ_INT(regress_test(&r, 1e-6), 0);
	CHECK_EQ_INT(r.nrows, 5);
	a = row(&r, "A");
	idle = row(&r, "idle");
	if (a && idle) {
		CHECK_NEAR(a->p, pa, 1e-15);
		CHECK_EQ_INT(idle->significant, 5 * pi < 1e-6);
		CHECK_EQ_INT(a->significant, a->p_adj < 1e-6);
	}
	CHECK_NEAR(r.alpha, 1e-6, 0);
	regress_free(&r);

	/* a bigger table: adjusted p monotone in raw p, and the step-down by hand */
	regress_init(&r);
	window(&r, REGRESS_BEFORE, "f0 10\nf1 20\nf2 30\nf3 40\nf4 50\nf5 60\nf6 70\nf7 80\nrest 640\n");
	window(&r, REGRESS_AFTER, "f0 12\nf1 30\nf2 33\nf3 60\nf4 51\nf5 95\nf6 70\nf7 130\nrest 419\n");
	CHECK_EQ_INT(regress_test(&r, 0.01), 0);
	for (size_t i = 0; i < r.nrows; i++)
		for (size_t j = 0; j < r.nrows; j++)
			if (r.rows[i].p < r.rows[j].p)
				CHECK_MSG(r.rows[i].p_adj <= r.rows[j].p_adj, "%s (p %g, adj %g) vs %s (p %g, adj %g)",
					  r.rows[i].frame, r.rows[i].p, r.rows[i].p_adj, r.rows[j].frame, r.rows[j].p,
					  r.rows[j].p_adj);
	/* by hand: sort the raw p-values, step down */
	double ps[16];
	size_t n = r.nrows;
	CHECK_EQ_INT(n, 9);
	for (size_t i = 0; i < n && i < 16; i++)
		ps[i] = r.rows[i].p;
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && ps[j] < ps[j - 1]; j--) {
			double t = ps[j];
			ps[j] = ps[j - 1];
			ps[j - 1] = t;
		}
	for (size_t i = 0; i < n; i++) {
		double want = 0;
		for (size_t k = 0; k < n && ps[k] <= r.rows[i].p; k++)
			want = fmax(want, fmin(1.0, ps[k] * (double)(n - k)));
		CHECK_MSG(fabs(r.rows[i].p_adj - want) <= 1e-12 * want, "%s: adjusted %g, by hand %g", r.rows[i].frame,
			  r.rows[i].p_adj, want);
	}
	regress_free(&r);
}

/* A frame recurring in a stack counts once in total; self is the leaf only. */
static void test_counting(void)
{
	struct regress r;
	regress_init(&r);
	window(&r, REGRESS_BEFORE, "a;b;a 10\nb 5\nx;a;a;a 3\nmain;a;b 50\nmain;b;c 30\n");
	window(&r, REGRESS_AFTER, "main;c 10\n");
	CHECK_EQ_U64(r.samples[REGRESS_BEFORE], 98);
	CHECK_EQ_U64(r.samples[REGRESS_AFTER], 10);
	CHECK_EQ_INT(regress_test(&r, 0.01), 0);
	const struct regress_row *a = row(&r, "a"), *b = row(&r, "b"), *c = row(&r, "c"), *m = row(&r, "main"),
				 *x = row(&r, "x");
	if (a && b && c && m && x) {
		/* a: 10 (a;b;a once) + 3 (x;a;a;a once) + 50 = 63, never 10*2 + 3*3 + 50 */
		CHECK_NEAR(a->before * 98, 63, 1e-9);
		/* self a: only a;b;a and x;a;a;a end in a */
		CHECK_NEAR(a->self_before * 98, 13, 1e-9);
		/* b: 10 + 5 + 50 + 30, self 5 + 50 */
		CHECK_NEAR(b->before * 98, 95, 1e-9);
		CHECK_NEAR(b->self_before * 98, 55, 1e-9);
		CHECK_NEAR(c->before * 98, 30, 1e-9);
		CHECK_NEAR(c->self_before * 98, 30, 1e-9);
		CHECK_NEAR(m->before * 98, 80, 1e-9);
		CHECK_NEAR(m->self_before, 0, 0);
		CHECK_NEAR(x->before * 98, 3, 1e-9);
		CHECK_NEAR(x->self_before, 0, 0);
		/* AFTER: main;c only */
		CHECK_NEAR(c->after, 1.0, 1e-12);
		CHECK_NEAR(c->self_after, 1.0, 1e-12);
		CHECK_NEAR(m->after, 1.0, 1e-12);
		CHECK_NEAR(m->self_after, 0, 0);
		CHECK_NEAR(a->after, 0, 0);
		CHECK_NEAR(a->change, -63.0 / 98, 1e-12);
		/* recursion does not inflate the p-value's count either */
		CHECK_NEAR(a->p, regress_p_value(0, 10, 63, 98, 1, 0), 1e-15);
	}
	/* the same frame in two stacks of a window: both count */
	regress_free(&r);
	regress_init(&r);
	window(&r, REGRESS_BEFORE, "x;a 4\ny;a 6\nz 10\n");
	window(&r, REGRESS_AFTER, "a;a 10\nz 10\n");
	CHECK_EQ_INT(regress_test(&r, 0.01), 0);
	a = row(&r, "a");
	if (a) {
		CHECK_NEAR(a->before, 0.5, 1e-12);
		CHECK_NEAR(a->after, 0.5, 1e-12);
		CHECK_NEAR(a->self_after, 0.5, 1e-12);
		CHECK_NEAR(a->p, 1.0, 1e-12);
	}
	/* the same frame over several windows: summed, each window counting once */
	regress_free(&r);
	regress_init(&r);
	window(&r, REGRESS_BEFORE, "a;a 5\nb 5\n");
	window(&r, REGRESS_BEFORE, "a;b;a 7\nb 3\n");
	window(&r, REGRESS_AFTER, "a 1\nb 9\n");
	CHECK_EQ_INT(regress_test(&r, 0.01), 0);
	a = row(&r, "a");
	b = row(&r, "b");
	if (a && b) {
		CHECK_NEAR(a->before, 12.0 / 20, 1e-12);
		CHECK_NEAR(a->self_before, 12.0 / 20, 1e-12); /* both stacks end in a */
		CHECK_NEAR(b->before, 15.0 / 20, 1e-12);
		CHECK_NEAR(b->self_before, 8.0 / 20, 1e-12);
	}
	regress_free(&r);
}

/* Windows without samples are not windows (not replicates, no df). */
static void test_empty_windows(void)
{
	struct regress r;
	regress_init(&r);
	window(&r, REGRESS_BEFORE, "");
	window(&r, REGRESS_BEFORE, "main;a 0\nmain;b 0\n");
	window(&r, REGRESS_BEFORE, "main;a 40\nmain;b 60\n");
	window(&r, REGRESS_BEFORE, "");
	window(&r, REGRESS_AFTER, "main;a 0\n");
	window(&r, REGRESS_AFTER, "main;a 70\nmain;b 30\n");
	window(&r, REGRESS_AFTER, "");
	CHECK_EQ_INT(r.windows[REGRESS_BEFORE], 1);
	CHECK_EQ_INT(r.windows[REGRESS_AFTER], 1);
	CHECK_EQ_U64(r.samples[REGRESS_BEFORE], 100);
	CHECK_EQ_U64(r.samples[REGRESS_AFTER], 100);
	CHECK_EQ_INT(regress_test(&r, 0.01), 0);
	CHECK_NEAR(r.phi_df, 0, 0);
	const struct regress_row *a = row(&r, "a");
	if (a) {
		CHECK_NEAR(a->p, regress_p_value(70, 100, 40, 100, 1, 0), 1e-15);
		CHECK_NEAR(a->before, 0.4, 1e-12);
		CHECK_NEAR(a->after, 0.7, 1e-12);
	}
	regress_free(&r);

	/* a side with nothing at all: no test */
	regress_init(&r);
	window(&r, REGRESS_BEFORE, "a 5\n");
	window(&r, REGRESS_AFTER, "a 0\n");
	CHECK_EQ_INT(regress_test(&r, 0.01), -1);
	CHECK_EQ_INT(r.nrows, 0);
	regress_free(&r);
	regress_init(&r);
	CHECK_EQ_INT(regress_test(&r, 0.01), -1);
	regress_free(&r);

	/* a stack outside a window is not counted; begin ends a window left open */
	regress_init(&r);
	CHECK_EQ_INT(regress_window_stack(&r, "a", 1, 5), 0);
	CHECK_EQ_INT(regress_window_begin(&r, REGRESS_BEFORE), 0);
	CHECK_EQ_INT(regress_window_stack(&r, "a", 1, 5), 0);
	CHECK_EQ_INT(regress_window_begin(&r, REGRESS_BEFORE), 0);
	CHECK_EQ_INT(regress_window_stack(&r, "b", 1, 5), 0);
	CHECK_EQ_INT(regress_window_begin(&r, REGRESS_AFTER), 0);
	CHECK_EQ_INT(regress_window_stack(&r, "a", 1, 2), 0);
	CHECK_EQ_INT(regress_test(&r, 0.01), 0); /* ends the last window */
	CHECK_EQ_INT(r.windows[REGRESS_BEFORE], 2);
	CHECK_EQ_INT(r.windows[REGRESS_AFTER], 1);
	CHECK_EQ_U64(r.samples[REGRESS_BEFORE], 10);
	CHECK_EQ_U64(r.samples[REGRESS_AFTER], 2);
	regress_free(&r);
}

/* Pearson's chi-square of one side's windows (counts x of ns) about the
 * side's share, by hand. */
static double chi_square(const double *x, const double *ns, size_t k)
{
	double X = 0, N = 0, chi = 0;
	for (size_t i = 0; i < k; i++) {
		X += x[i];
		N += ns[i];
	}
	double p = X / N;
	if (p <= 0 || p >= 1)
		return 0;
	for (size_t i = 0; i < k; i++)
		chi += (x[i] - ns[i] * p) * (x[i] - ns[i] * p) / (ns[i] * p * (1 - p));
	return chi;
}

static void windows_of(struct regress *r, enum regress_side side, const double *x, const double *ns, size_t k)
{
	char text[256];
	for (size_t i = 0; i < k; i++) {
		snprintf(text, sizeof(text), "main;work;burst %.0f\nmain;work %.0f\nmain;other %.0f\n", x[i],
			 ns[i] / 2 - x[i], ns[i] / 2);
		window(r, side, text);
	}
}

/* The same counts summed into one window a side: the plain z-test. */
static double z_test_summed(const double *xb, const double *nb, size_t kb, const double *xa, const double *na,
			    size_t ka, bool *significant)
{
	struct regress r;
	double sb[2] = { 0, 0 }, sa[2] = { 0, 0 };
	char text[256];
	for (size_t i = 0; i < kb; i++) {
		sb[0] += xb[i];
		sb[1] += nb[i];
	}
	for (size_t i = 0; i < ka; i++) {
		sa[0] += xa[i];
		sa[1] += na[i];
	}
	regress_init(&r);
	snprintf(text, sizeof(text), "main;work;burst %.0f\nmain;work %.0f\nmain;other %.0f\n", sb[0],
		 sb[1] / 2 - sb[0], sb[1] / 2);
	window(&r, REGRESS_BEFORE, text);
	snprintf(text, sizeof(text), "main;work;burst %.0f\nmain;work %.0f\nmain;other %.0f\n", sa[0],
		 sa[1] / 2 - sa[0], sa[1] / 2);
	window(&r, REGRESS_AFTER, text);
	CHECK_EQ_INT(regress_test(&r, 0.01), 0);
	CHECK_NEAR(r.phi_df, 0, 0);
	const struct regress_row *w = row(&r, "burst");
	double p = w ? w->p : -1;
	*significant = w && w->significant;
	regress_free(&r);
	return p;
}

static void test_replicates(void)
{
	/* a bursty frame: 0%..40% of a window, 10% on average before, 17% after */
	static const double nb[] = { 1000, 1000, 1000, 1000 }, xb[] = { 0, 200, 20, 180 };
	static const double na[] = { 1000, 1000, 1000, 1000 }, xa[] = { 300, 40, 250, 90 };
	struct regress r;
	bool z_sig;
	double z_p = z_test_summed(xb, nb, 4, xa, na, 4, &z_sig);
	/* one window a side: 400/4000 vs 680/4000 is very significant */
	CHECK(z_sig);
	CHECK(z_p < 1e-15);

	regress_init(&r);
	windows_of(&r, REGRESS_BEFORE, xb, nb, 4);
	windows_of(&r, REGRESS_AFTER, xa, na, 4);
	CHECK_EQ_INT(r.windows[REGRESS_BEFORE], 4);
	CHECK_EQ_INT(r.windows[REGRESS_AFTER], 4);
	CHECK_EQ_INT(regress_test(&r, 0.01), 0);
	CHECK_NEAR(r.phi_df, 6, 0); /* (4 - 1) + (4 - 1) */
	const struct regress_row *w = row(&r, "burst");
	if (w) {
		double chi = chi_square(xb, nb, 4) + chi_square(xa, na, 4), phi = chi / 6;
		CHECK(phi > 50); /* far more spread than sampling gives */
		CHECK_NEAR(w->before, 0.10, 1e-12);
		CHECK_NEAR(w->after, 0.17, 1e-12);
		double z = z_pooled(680, 4000, 400, 4000);
		CHECK_REL(z_p, two_sided_normal(z), 1e-9);
		/* Student's t with 6 df of the statistic scaled by sqrt(phi) */
		CHECK_REL(w->p, regress_p_value(680, 4000, 400, 4000, phi, 6), 1e-9);
		/* t = z / sqrt(phi) ~ 1.2 with 6 df: p ~ 0.27; few samples once scaled
		 * by phi (400 / 60): the exact test's larger p */
		CHECK(w->p > 0.1);
		CHECK(w->p > z_p * 1e10);
		CHECK(!w->significant);
	}
	/* the steady frames in the same windows: work (burst's caller) and other
	 * are exactly half of every window */
	const struct regress_row *o = row(&r, "other");
	if (o) {
		CHECK_EQ_INT(o->p == 1.0, 1);
		CHECK(!o->significant);
	}
	regress_free(&r);

	/* windows that agree (spread like sampling, or less): an obvious change
	 * stays significant, tested with the normal (phi not below 1) */
	static const double ga[] = { 100, 98, 103, 99 }, gb[] = { 200, 205, 195, 201 };
	z_p = z_test_summed(ga, nb, 4, gb, na, 4, &z_sig);
	CHECK(z_sig);
	regress_init(&r);
	windows_of(&r, REGRESS_BEFORE, ga, nb, 4);
	windows_of(&r, REGRESS_AFTER, gb, na, 4);
	CHECK_EQ_INT(regress_test(&r, 0.01), 0);
	CHECK_NEAR(r.phi_df, 6, 0);
	w = row(&r, "burst");
	if (w) {
		double chi = chi_square(ga, nb, 4) + chi_square(gb, na, 4);
		CHECK(chi / 6 < 1);
		CHECK_NEAR(w->p, z_p, 1e-15 + 1e-12 * z_p); /* phi 1, the normal: the z-test's p */
		CHECK(w->significant);
		CHECK(w->p_adj < 1e-10);
	}
	regress_free(&r);

	/* windows that spread a little beyond sampling (phi between 1 and 2) on
	 * one side only; the other side a single window: df = 3 */
	static const double sa[] = { 100, 120, 90, 110 }, one_n[] = { 4000 }, one_x[] = { 1000 };
	regress_init(&r);
	windows_of(&r, REGRESS_BEFORE, sa, nb, 4);
	windows_of(&r, REGRESS_AFTER, one_x, one_n, 1);
	CHECK_EQ_INT(regress_test(&r, 0.01), 0);
	CHECK_NEAR(r.phi_df, 3, 0);
	w = row(&r, "burst");
	if (w) {
		double phi = chi_square(sa, nb, 4) / 3;
		CHECK(phi > 1 && phi < 2);
		CHECK_REL(w->p, regress_p_value(1000, 4000, 420, 4000, phi, 3), 1e-9);
		CHECK(w->p > regress_p_value(1000, 4000, 420, 4000, 1, 0));
		/* 10.5% -> 25%: t = 16.97 / sqrt(1.77) = 12.8 with 3 df, p ~ 0.001, x4 frames */
		CHECK(w->p < 0.002);
		CHECK(w->significant);
	}
	regress_free(&r);
}

/* The pooled spread: the median over the frames with 5 samples a window or
 * more of their own spread (5 such frames at least), never below 1; a frame
 * is tested with the larger of the pooled and its own (Student's t only with
 * its own). 2 windows a side, 7 frames (each a stack of its own): 6 well
 * sampled, 1 rare. */
static void test_pooled_spread(void)
{
	enum { W = 4, F = 7 };
	static const char *const names[F] = { "f0", "f1", "f2", "f3", "f4", "f5", "rare" };
	static const double c[W][F] = {
		{ 100, 150, 200, 120, 80, 300, 1 }, /* BEFORE */
		{ 130, 140, 160, 125, 95, 310, 0 },
		{ 110, 200, 190, 118, 60, 305, 0 }, /* AFTER */
		{ 140, 210, 150, 130, 100, 280, 2 },
	};
	double ns[W] = { 0 }, own[F], well[F], x[2][F] = { { 0 } };
	size_t nwell = 0;
	struct regress r;
	char text[512];
	regress_init(&r);
	for (int w = 0; w < W; w++) {
		size_t k = 0;
		text[0] = '\0';
		for (int f = 0; f < F; f++) {
			if (c[w][f] > 0)
				k += (size_t)snprintf(text + k, sizeof(text) - k, "%s %.0f\n", names[f], c[w][f]);
			ns[w] += c[w][f];
			x[w / 2][f] += c[w][f];
		}
		window(&r, w < 2 ? REGRESS_BEFORE : REGRESS_AFTER, text);
	}
	CHECK_EQ_INT(regress_test(&r, 0.01), 0);
	CHECK_NEAR(r.phi_df, 2, 0);
	/* by hand: each frame's chi-square over both sides' windows, over 2 df */
	for (int f = 0; f < F; f++) {
		double xb[2] = { c[0][f], c[1][f] }, xa[2] = { c[2][f], c[3][f] };
		own[f] = (chi_square(xb, ns, 2) + chi_square(xa, ns + 2, 2)) / 2;
		if ((c[0][f] + c[1][f] + c[2][f] + c[3][f]) / W >= 5)
			well[nwell++] = own[f];
	}
	CHECK_EQ_INT(nwell, 6); /* rare: under 1 sample a window */
	for (size_t i = 1; i < nwell; i++)
		for (size_t j = i; j > 0 && well[j] < well[j - 1]; j--) {
			double t = well[j];
			well[j] = well[j - 1];
			well[j - 1] = t;
		}
	double pooled = fmax(1.0, (well[2] + well[3]) / 2);
	CHECK(pooled > 1);
	CHECK_NEAR(r.phi_pooled, pooled, 1e-12);
	int used_own = 0, used_pooled = 0;
	for (int f = 0; f < F; f++) {
		const struct regress_row *w = row(&r, names[f]);
		if (!w)
			continue;
		uint64_t xb = (uint64_t)x[0][f], xa = (uint64_t)x[1][f];
		uint64_t nb = (uint64_t)(ns[0] + ns[1]), na = (uint64_t)(ns[2] + ns[3]);
		double want = own[f] > pooled ? regress_p_value(xa, na, xb, nb, own[f], 2) :
						regress_p_value(xa, na, xb, nb, pooled, 0);
		used_own += own[f] > pooled;
		used_pooled += own[f] <= pooled;
		CHECK_MSG(fabs(w->p - want) <= 1e-12 * want + 1e-15, "%s: own %g pooled %g: p %.12g, want %.12g",
			  names[f], own[f], pooled, w->p, want);
	}
	CHECK(used_own > 0 && used_pooled > 0);
	regress_free(&r);

	/* four well-sampled frames are too few to pool: 1 */
	regress_init(&r);
	window(&r, REGRESS_BEFORE, "a 100\nb 300\nc 200\nd 400\n");
	window(&r, REGRESS_BEFORE, "a 300\nb 100\nc 400\nd 200\n");
	window(&r, REGRESS_AFTER, "a 100\nb 300\nc 200\nd 400\n");
	window(&r, REGRESS_AFTER, "a 300\nb 100\nc 400\nd 200\n");
	CHECK_EQ_INT(regress_test(&r, 0.01), 0);
	CHECK_NEAR(r.phi_pooled, 1.0, 0);
	regress_free(&r);

	/* frames that agree across windows: the median is below 1, the pooled spread 1 */
	regress_init(&r);
	window(&r, REGRESS_BEFORE, "a 100\nb 200\nc 300\nd 150\ne 250\n");
	window(&r, REGRESS_BEFORE, "a 101\nb 199\nc 301\nd 149\ne 250\n");
	window(&r, REGRESS_AFTER, "a 100\nb 200\nc 300\nd 150\ne 250\n");
	window(&r, REGRESS_AFTER, "a 99\nb 201\nc 300\nd 151\ne 249\n");
	CHECK_EQ_INT(regress_test(&r, 0.01), 0);
	CHECK_NEAR(r.phi_pooled, 1.0, 0);
	const struct regress_row *w = row(&r, "a");
	if (w)
		CHECK_NEAR(w->p, regress_p_value(199, 2000, 201, 2000, 1, 0), 1e-15);
	/* one window a side: no spread known */
	regress_free(&r);
	regress_init(&r);
	window(&r, REGRESS_BEFORE, "a 100\nb 200\nc 300\nd 150\ne 250\n");
	window(&r, REGRESS_AFTER, "a 300\nb 200\nc 100\nd 150\ne 250\n");
	CHECK_EQ_INT(regress_test(&r, 0.01), 0);
	CHECK_NEAR(r.phi_pooled, 1.0, 0);
	CHECK_NEAR(r.phi_df, 0, 0);
	regress_free(&r);
}

/* SPREAD windows (two or more) measure the spread instead of BEFORE's and
 * AFTER's own windows; they are not compared, and their samples are no
 * side's. */
static void test_spread_side(void)
{
	static const double ns[] = { 1000, 1000, 1000 }, xs[] = { 100, 160, 70 };
	struct regress r;
	regress_init(&r);
	window(&r, REGRESS_BEFORE, "main;work;burst 100\nmain;work 400\nmain;other 500\n");
	window(&r, REGRESS_BEFORE, "main;work;burst 300\nmain;work 200\nmain;other 500\n");
	window(&r, REGRESS_AFTER, "main;work;burst 250\nmain;work 250\nmain;other 500\n");
	windows_of(&r, REGRESS_SPREAD, xs, ns, 3);
	CHECK_EQ_INT(r.windows[REGRESS_SPREAD], 3);
	CHECK_EQ_U64(r.samples[REGRESS_SPREAD], 3000);
	CHECK_EQ_INT(regress_test(&r, 0.01), 0);
	CHECK_NEAR(r.phi_df, 2, 0);	  /* SPREAD's 3 - 1; BEFORE's two windows do not count */
	CHECK_NEAR(r.phi_pooled, 1.0, 0); /* 4 frames: too few to pool */
	const struct regress_row *w = row(&r, "burst");
	if (w) {
		double own = chi_square(xs, ns, 3) / 2;
		CHECK(own > 1);
		CHECK_NEAR(w->before, 0.2, 1e-12);
		CHECK_NEAR(w->after, 0.25, 1e-12);
		CHECK_REL(w->p, regress_p_value(250, 1000, 400, 2000, own, 2), 1e-12);
	}
	regress_free(&r);

	/* one SPREAD window: not enough; the sides' own windows measure it */
	regress_init(&r);
	window(&r, REGRESS_BEFORE, "main;work;burst 100\nmain;work 400\nmain;other 500\n");
	window(&r, REGRESS_BEFORE, "main;work;burst 300\nmain;work 200\nmain;other 500\n");
	window(&r, REGRESS_AFTER, "main;work;burst 250\nmain;work 250\nmain;other 500\n");
	windows_of(&r, REGRESS_SPREAD, xs, ns, 1);
	CHECK_EQ_INT(regress_test(&r, 0.01), 0);
	CHECK_NEAR(r.phi_df, 1, 0);
	w = row(&r, "burst");
	if (w) {
		static const double xb[] = { 100, 300 };
		double own = chi_square(xb, ns, 2) / 1;
		CHECK_REL(w->p, regress_p_value(250, 1000, 400, 2000, own, 1), 1e-12);
		CHECK(!w->significant);
	}
	regress_free(&r);
}

static void test_rows_order(void)
{
	struct regress r;
	regress_init(&r);
	/* 100 samples a side; changes: drop -35, big +30, grow1 and grow2 +10 (a
	 * tie: by name), shrink -10 (as large: after those that grew), small -5,
	 * main 0 (the root) */
	window(&r, REGRESS_BEFORE, "main;shrink 20\nmain;grow2 10\nmain;grow1 10\nmain;small 15\nmain;drop 45\n");
	window(&r, REGRESS_AFTER,
	       "main;big 30\nmain;grow1 20\nmain;grow2 20\nmain;shrink 10\nmain;small 10\nmain;drop 10\n");
	CHECK_EQ_INT(regress_test(&r, 0.01), 0);
	static const char *const want[] = { "drop", "big", "grow1", "grow2", "shrink", "small", "main" };
	CHECK_EQ_INT(r.nrows, 7);
	for (size_t i = 0; i < r.nrows && i < 7; i++)
		CHECK_MSG(strcmp(r.rows[i].frame, want[i]) == 0, "row %zu is %s, want %s", i, r.rows[i].frame, want[i]);
	for (size_t i = 1; i < r.nrows; i++)
		CHECK(fabs(r.rows[i - 1].change) >= fabs(r.rows[i].change));
	const struct regress_row *drop = row(&r, "drop"), *g1 = row(&r, "grow1"), *sh = row(&r, "shrink");
	if (drop && g1 && sh) {
		CHECK_NEAR(drop->change, -0.35, 1e-12);
		CHECK(drop->significant);
		CHECK_EQ_INT(g1->change == -sh->change, 1); /* an exact tie in size */
	}
	regress_free(&r);
}

int main(void)
{
	test_p_value_normal();
	test_p_value_student();
	test_p_value_exact();
	test_p_value_degenerate();
	test_root_and_absent();
	test_holm();
	test_counting();
	test_empty_windows();
	test_replicates();
	test_pooled_spread();
	test_spread_side();
	test_rows_order();
	return check_report("regress");
}
