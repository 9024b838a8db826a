/* regress.h - which frames' shares of the samples changed beyond sampling noise
 * between two sides (BEFORE, AFTER), each one or more windows of folded stacks. */
#ifndef JFLAME_REGRESS_H
#define JFLAME_REGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "str_index.h"

/* BEFORE and AFTER are compared; SPREAD windows (the same program's recent
 * windows) only tell how much a frame's share moves from window to window. */
enum regress_side { REGRESS_BEFORE, REGRESS_AFTER, REGRESS_SPREAD };
#define REGRESS_SIDES 3

/* One frame's counts on one side: samples whose stack holds it (total,
 * counted once per sample however often it recurs), samples it is the leaf of
 * (self), and the sum over windows of total^2 / window samples (for the
 * between-window spread). */
struct regress_counts {
	uint64_t total, self;
	double sq;
};

/* A frame's verdict. Shares are fractions of each side's samples. */
struct regress_row {
	const char *frame;
	double before, after;		/* total (inclusive) share */
	double self_before, self_after; /* self share */
	double change;			/* after - before, in share (x100: points) */
	double p, p_adj;		/* two-sided p-value; Holm-adjusted over the frames tested */
	bool significant;		/* p_adj < alpha */
	unsigned streak;		/* record --baseline: windows in a row, this one the last, in which
					 * it grew significantly (0 elsewhere) */
	bool known;			/* record --baseline: a lasting change said before (not again) */
};

struct regress {
	struct str_index frames;		      /* frame names, numbered as first seen */
	struct regress_counts *counts[REGRESS_SIDES]; /* per side, per frame */
	size_t cap;
	uint64_t samples[REGRESS_SIDES]; /* per side */
	size_t windows[REGRESS_SIDES];	 /* per side: windows added that had samples */
	/* a window being added */
	uint64_t *win_total;	   /* per frame: this window's total */
	uint32_t *touched, *stamp; /* frames with a total in this window; last stack each was seen in */
	size_t ntouched;
	uint32_t stack_no;
	bool in_window;
	enum regress_side side;
	uint64_t win_samples;
	/* the result of regress_test */
	struct regress_row *rows; /* ordered by |change|, largest first */
	size_t nrows;
	double phi_df;	   /* degrees of freedom of the spread (0: one window a side) */
	double phi_pooled; /* the spread of all well-sampled frames (median; 1: none known) */
	double alpha;
};

void regress_init(struct regress *r);
void regress_free(struct regress *r);

/* Windows are added one at a time: begin, its stacks, end. A stack is its
 * frames root first joined by ';' (folded text, already normalized when
 * names should be). 0, or -1 when out of memory (or more than 2^32 frames). */
int regress_window_begin(struct regress *r, enum regress_side side);
int regress_window_stack(struct regress *r, const char *stack, size_t len, uint64_t count);
void regress_window_end(struct regress *r);

/* Tests every frame seen: a quasi-binomial two-proportion test of its total
 * share, Holm's step-down correction over all frames at family-wise error
 * alpha. The binomial variance is scaled by phi, the largest of 1 (sampling
 * alone), the frame's own spread (Pearson's chi-square of its share over the
 * SPREAD windows when there are two or more, else over the windows of each
 * side with more than one, each about its own mean, over their degrees of
 * freedom) and the pooled spread (the median of that over frames with at
 * least 5 samples a window: moves every frame makes, such as a thread mix
 * shifting on a busy host). See regress_p_value for the p-value. Fills rows.
 * 0, or -1 when out of memory or BEFORE or AFTER has no samples. */
int regress_test(struct regress *r, double alpha);

/* The two-sided p-value of one frame's change: x samples of n on one side,
 * y of m on the other, phi the spread factor (>= 1) and df the degrees of
 * freedom it was estimated with (0: none, known). The larger of two: the
 * normal approximation (Student's t with df when df > 0) and the exact
 * conditional test (x / phi of the (x + y) / phi samples, binomial with the
 * share n / (n + m)), which the normal understates for a frame seen a few
 * times. Public for tests. */
double regress_p_value(uint64_t x, uint64_t n, uint64_t y, uint64_t m, double phi, double df);

#endif
