/* baseline.h - record --baseline: each window compared with a baseline (the first
 * window, the previous N, or a saved profile) by the regress test. */
#ifndef JFLAME_BASELINE_H
#define JFLAME_BASELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "change_track.h"
#include "recording.h"
#include "regress.h"

enum baseline_kind { BASELINE_FIRST, BASELINE_PREVIOUS, BASELINE_PROFILE };

struct baseline_opts {
	enum baseline_kind kind;
	size_t previous;  /* BASELINE_PREVIOUS: windows averaged (their replicates) */
	double alpha;	  /* the test's family-wise error rate */
	unsigned confirm; /* windows in a row a frame must grow in to be a regression (0 taken as 1) */
	bool no_normalize;
};

struct baseline;

/* NULL when out of memory. */
struct baseline *baseline_new(const struct baseline_opts *o);
void baseline_free(struct baseline *b);

/* BASELINE_PROFILE: the saved profile's stacks (folded text) and counts, one
 * window. 0, or -1 when out of memory. */
int baseline_add_profile_stack(struct baseline *b, const char *stack, size_t len, uint64_t count);

/* Compares a window's stacks with the baseline, then takes the window into
 * it as the kind says (the first window; the newest N) and into the recent
 * windows (the last 20) whose spread is the test's noise. 1 when it was
 * compared (its result in *out, valid until the next call: rows by change,
 * each with its streak),
 * 0 when not yet: no baseline, or fewer than 3 recent windows to learn the
 * noise from (baseline_judged_from says from which window on); -1 when out
 * of memory. */
int baseline_window(struct baseline *b, const struct recording *window, uint64_t seq, const struct regress **out);

/* What the lasting-change tracker said after the last baseline_window (seq
 * its window's number): changes found (beyond what one window shows, as
 * windows accumulate), still there, gone. Valid until the next call. */
void baseline_changes(const struct baseline *b, const struct change_event **ev, size_t *n);

/* Whether a row of the last comparison is a regression: it grew beyond the
 * noise in this window and the confirm - 1 windows before it, and it was not
 * said before (a lasting change is said once, then still and gone). */
bool baseline_regression(const struct baseline *b, const struct regress_row *row);
/* The rows of the last comparison that are regressions. */
size_t baseline_regressions(const struct baseline *b, const struct regress *r);

/* The baseline the last comparison used, summed over its windows, and the
 * window as compared (names normalized as they were): for a differential
 * graph. Valid until the next baseline_window. */
const struct recording *baseline_before(const struct baseline *b);
/* The recent windows needed before a window is judged (3). */
size_t baseline_history_min(void);
const struct recording *baseline_after(const struct baseline *b);

/* --confirm N: 1..10 windows in a row. 0, or -1 with a message in err. */
int baseline_parse_confirm(const char *arg, unsigned *confirm, char *err, size_t errlen);

/* "first", "previous:N" (N 1..1000) or anything else (a file): 0, or -1 with
 * a message in err for a bad previous:N. *file set for a file. */
int baseline_parse(const char *arg, struct baseline_opts *o, const char **file, char *err, size_t errlen);

#endif
