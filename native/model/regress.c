/* regress.c - which frames' shares of the samples changed beyond sampling noise
 * between two sides of windows: per-frame counts, a quasi-binomial test, Holm. */
#include "regress.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_sf_gamma.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

#define WELL_SAMPLED 5.0  /* samples a window from which a frame's own spread is trusted */
#define FEW	     10.0 /* expected samples (over phi) below which the normal is not trusted alone */

void regress_init(struct regress *r)
{
	memset(r, 0, sizeof(*r));
	str_index_init(&r->frames);
	gsl_set_error_handler_off(); /* GSL's default handler aborts; its errors come back as statuses */
}

void regress_free(struct regress *r)
{
	str_index_free(&r->frames);
	for (int k = 0; k < REGRESS_SIDES; k++)
		free(r->counts[k]);
	free(r->win_total);
	free(r->touched);
	free(r->stamp);
	free(r->rows);
	memset(r, 0, sizeof(*r));
}

/* Room for frame ids below need in every per-frame array (new ones zeroed but
 * touched's). One capacity, set when all grew: what grew stays, grown again next time. */
static int grow(struct regress *r, size_t need)
{
	size_t c[REGRESS_SIDES + 3];
	for (size_t k = 0; k < sizeof(c) / sizeof(c[0]); k++)
		c[k] = r->cap;
	for (int k = 0; k < REGRESS_SIDES; k++)
		if (ARRAY_GROW_ZEROED(r->counts[k], c[k], need) != 0)
			return -1;
	if (ARRAY_GROW_ZEROED(r->win_total, c[REGRESS_SIDES], need) != 0 ||
	    ARRAY_GROW(r->touched, c[REGRESS_SIDES + 1], need) != 0 ||
	    ARRAY_GROW_ZEROED(r->stamp, c[REGRESS_SIDES + 2], need) != 0)
		return -1;
	r->cap = c[0];
	return 0;
}

int regress_window_begin(struct regress *r, enum regress_side side)
{
	if (r->in_window)
		regress_window_end(r);
	r->in_window = true;
	r->side = side;
	r->win_samples = 0;
	r->ntouched = 0;
	return 0;
}

int regress_window_stack(struct regress *r, const char *stack, size_t len, uint64_t count)
{
	struct regress_counts *c;
	long leaf = -1;
	if (!r->in_window || count == 0)
		return 0;
	/* a stamp per stack: a frame that recurs is counted once (0 is "never") */
	if (++r->stack_no == 0) {
		memset(r->stamp, 0, r->cap * sizeof(*r->stamp));
		r->stack_no = 1;
	}
	for (size_t at = 0; at <= len;) {
		size_t end = at;
		while (end < len && stack[end] != ';')
			end++;
		long id = str_index_add(&r->frames, stack + at, end - at);
		if (id < 0 || grow(r, (size_t)id + 1) != 0)
			return -1;
		if (r->stamp[id] != r->stack_no) {
			r->stamp[id] = r->stack_no;
			if (r->win_total[id] == 0)
				r->touched[r->ntouched++] = (uint32_t)id;
			r->win_total[id] += count;
		}
		leaf = id;
		at = end + 1;
	}
	c = &r->counts[r->side][leaf];
	c->self += count;
	r->win_samples += count;
	return 0;
}

void regress_window_end(struct regress *r)
{
	if (!r->in_window)
		return;
	r->in_window = false;
	if (r->win_samples)
		r->windows[r->side]++;
	r->samples[r->side] += r->win_samples;
	for (size_t i = 0; i < r->ntouched; i++) {
		uint32_t id = r->touched[i];
		struct regress_counts *c = &r->counts[r->side][id];
		double x = (double)r->win_total[id];
		c->total += r->win_total[id];
		c->sq += x * x / (double)r->win_samples;
		r->win_total[id] = 0;
	}
	r->ntouched = 0;
}

/* The conditional test's two-sided p-value: given the t = x + y samples of the
 * frame on both sides, x is binomial(t, n / (n + m)) when nothing changed;
 * with the spread phi, x / phi of t / phi (a continuous binomial, through the
 * incomplete beta function). Exact where the normal is not: a frame seen a
 * few times. -1 when it cannot be computed. */
static double exact_p(uint64_t x, uint64_t n, uint64_t y, uint64_t m, double phi)
{
	double t = ((double)x + (double)y) / phi, k = (double)x / phi;
	double share = (double)n / ((double)n + (double)m);
	gsl_sf_result res;
	int st;
	if ((double)x * (double)m >= (double)y * (double)n) /* more on x's side than expected: P(X >= k) */
		st = k > 0 ? gsl_sf_beta_inc_e(k, t - k + 1.0, share, &res) : (res.val = 1.0, GSL_SUCCESS);
	else /* P(X <= k) = I_{1-share}(t - k, k + 1) */
		st = gsl_sf_beta_inc_e(t - k, k + 1.0, 1.0 - share, &res);
	if (st == GSL_EUNDRFLW)
		return 0.0;
	if (st != GSL_SUCCESS || !isfinite(res.val))
		return -1.0;
	return res.val * 2.0 > 1.0 ? 1.0 : res.val * 2.0;
}

double regress_p_value(uint64_t x, uint64_t n, uint64_t y, uint64_t m, double phi, double df)
{
	if (n == 0 || m == 0)
		return 1.0;
	double p = ((double)x + (double)y) / ((double)n + (double)m);
	if (p <= 0.0 || p >= 1.0)
		return 1.0; /* in none or all of the samples on both sides: no change */
	double se = sqrt(phi * p * (1.0 - p) * (1.0 / (double)n + 1.0 / (double)m));
	double z = fabs((double)x / (double)n - (double)y / (double)m) / se;
	double q = df > 0 ? gsl_cdf_tdist_Q(z, df) : gsl_cdf_ugaussian_Q(z);
	double pv = q * 2.0 > 1.0 ? 1.0 : q * 2.0;
	/* a frame expected a few times on a side: the normal understates the
	 * chance of it turning up in a short window; the exact test then too,
	 * and the larger of the two */
	if ((double)(n < m ? n : m) * p / phi >= FEW)
		return pv;
	double e = exact_p(x, n, y, m, phi);
	return e > pv ? e : pv;
}

/* Pearson's chi-square of one side's windows about the side's own share. */
static double spread(const struct regress_counts *c, uint64_t samples)
{
	if (samples == 0)
		return 0.0;
	double p = (double)c->total / (double)samples;
	if (p <= 0.0 || p >= 1.0)
		return 0.0;
	double chi = (c->sq - (double)c->total * (double)c->total / (double)samples) / (p * (1.0 - p));
	return chi > 0.0 ? chi : 0.0;
}

static int by_p(const void *a, const void *b)
{
	const struct regress_row *x = *(const struct regress_row *const *)a, *y = *(const struct regress_row *const *)b;
	return x->p < y->p ? -1 : x->p > y->p ? 1 : strcmp(x->frame, y->frame);
}

static int by_change(const void *a, const void *b)
{
	const struct regress_row *x = a, *y = b;
	double cx = fabs(x->change), cy = fabs(y->change);
	if (fabs(cx - cy) > 1e-12) /* equal changes compute a hair apart */
		return cx > cy ? -1 : 1;
	if ((x->change > 0) != (y->change > 0))
		return x->change > 0 ? -1 : 1; /* grew before shrank */
	return strcmp(x->frame, y->frame);
}

static int by_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Whether side k's windows measure the spread: the SPREAD windows when there
 * are two or more, else every side with more than one window. */
static bool measures_spread(const struct regress *r, int k)
{
	return r->windows[k] > 1 && (r->windows[REGRESS_SPREAD] < 2 || k == REGRESS_SPREAD);
}

/* The frame's own spread: its chi-square over the sides that measure it,
 * *mean the samples it has a window there. */
static double frame_spread(const struct regress *r, size_t i, double *mean)
{
	double chi = 0, samples = 0, windows = 0;
	for (int k = 0; k < REGRESS_SIDES; k++) {
		if (!measures_spread(r, k))
			continue;
		chi += spread(&r->counts[k][i], r->samples[k]);
		samples += (double)r->counts[k][i].total;
		windows += (double)r->windows[k];
	}
	*mean = windows > 0 ? samples / windows : 0;
	return chi;
}

int regress_test(struct regress *r, double alpha)
{
	struct regress_row **order = NULL;
	double *phis = NULL, *own = NULL;
	size_t n = r->frames.n, nphis = 0;
	int rc = -1;
	if (r->in_window)
		regress_window_end(r);
	uint64_t nb = r->samples[REGRESS_BEFORE], na = r->samples[REGRESS_AFTER];
	if (nb == 0 || na == 0)
		return -1;
	free(r->rows);
	r->nrows = 0;
	r->rows = calloc(n ? n : 1, sizeof(*r->rows));
	order = malloc((n ? n : 1) * sizeof(*order));
	phis = malloc((n ? n : 1) * sizeof(*phis));
	own = calloc(n ? n : 1, sizeof(*own)); /* each frame's own spread (0: none measured) */
	if (!r->rows || !order || !phis || !own)
		goto out;
	r->alpha = alpha;
	/* windows beyond the first on each side measure the spread */
	double df = 0;
	for (int k = 0; k < REGRESS_SIDES; k++)
		if (measures_spread(r, k))
			df += (double)r->windows[k] - 1;
	r->phi_df = df;
	/* the pooled spread: the median over frames sampled well enough to show it */
	r->phi_pooled = 1.0;
	if (df > 0) {
		for (size_t i = 0; i < n; i++) {
			double mean;
			own[i] = frame_spread(r, i, &mean) / df;
			if (mean >= WELL_SAMPLED)
				phis[nphis++] = own[i];
		}
		if (nphis >= 5) {
			qsort(phis, nphis, sizeof(*phis), by_double);
			double med = nphis % 2 ? phis[nphis / 2] : (phis[nphis / 2 - 1] + phis[nphis / 2]) / 2;
			if (med > 1.0)
				r->phi_pooled = med;
		}
	}
	for (size_t i = 0; i < n; i++) {
		const struct regress_counts *b = &r->counts[REGRESS_BEFORE][i], *a = &r->counts[REGRESS_AFTER][i];
		struct regress_row *w = &r->rows[i];
		w->frame = r->frames.strs[i];
		w->before = (double)b->total / (double)nb;
		w->after = (double)a->total / (double)na;
		w->self_before = (double)b->self / (double)nb;
		w->self_after = (double)a->self / (double)na;
		w->change = w->after - w->before;
		/* sampling alone (1), the pooled spread, or the frame's own, whichever
		 * is largest; its own is an estimate from few windows: Student's t
		 * with their df (the pooled one, a median over many frames, is not) */
		double phi = r->phi_pooled, tdf = 0.0;
		if (own[i] > phi) {
			phi = own[i];
			tdf = df;
		}
		w->p = regress_p_value(a->total, na, b->total, nb, phi, tdf);
		order[i] = w;
	}
	/* Holm: the k-th smallest of n p-values times (n - k), never below the one before */
	qsort(order, n, sizeof(*order), by_p);
	double run = 0.0;
	for (size_t k = 0; k < n; k++) {
		double adj = order[k]->p * (double)(n - k);
		if (adj > 1.0)
			adj = 1.0;
		if (adj < run)
			adj = run;
		run = adj;
		order[k]->p_adj = adj;
		order[k]->significant = adj < alpha;
	}
	qsort(r->rows, n, sizeof(*r->rows), by_change);
	r->nrows = n;
	rc = 0;
out:
	free(order);
	free(phis);
	free(own);
	return rc;
}
