/* baseline.c - record --baseline: each window compared with a baseline (the first
 * window, the previous N, or a saved profile) by the regress test. */
#include "baseline.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "change_track.h"
#include "cli_num.h"
#include "grow.h"
#include "name_normalize.h"
#include "regress_report.h"

#define PREVIOUS_MAX 1000
#define HISTORY	     20 /* recent windows that show how much shares move */
#define HISTORY_MIN  3	/* ... needed before a window is judged */
#define CONFIRM_MAX  10

struct baseline {
	struct baseline_opts o;
	struct str_intern *si;	/* normalized names */
	struct recording *wins; /* the baseline's windows (a ring for previous:N) */
	size_t nwins, cap, next;
	struct recording hist[HISTORY]; /* the windows before this one (a ring) */
	size_t nhist, hist_next;
	struct recording before, after; /* what the last comparison compared */
	struct regress r;
	struct str_index grew;	 /* the frames that grew significantly in the last window judged */
	unsigned *streak;	 /* ... and in how many windows in a row */
	struct change_track *ct; /* lasting changes, as windows accumulate */
	const struct change_event *ev;
	size_t nev;
};

struct baseline *baseline_new(const struct baseline_opts *o)
{
	struct baseline *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->o = *o;
	b->cap = o->kind == BASELINE_PREVIOUS ? o->previous : 1;
	b->wins = calloc(b->cap, sizeof(*b->wins));
	b->si = str_intern_new();
	regress_init(&b->r);
	str_index_init(&b->grew);
	const struct change_track_opts co = { o->kind == BASELINE_FIRST	   ? CHANGE_REF_FIRST :
					      o->kind == BASELINE_PREVIOUS ? CHANGE_REF_PREVIOUS :
									     CHANGE_REF_FILE,
					      o->previous, o->alpha, o->confirm };
	b->ct = change_track_new(&co);
	if (!b->wins || !b->si || !b->ct || recording_init(&b->before) != 0 || recording_init(&b->after) != 0) {
		baseline_free(b);
		return NULL;
	}
	if (o->kind == BASELINE_PROFILE) {
		if (recording_init(&b->wins[0]) != 0) {
			baseline_free(b);
			return NULL;
		}
		b->nwins = 1;
	}
	return b;
}

void baseline_free(struct baseline *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->cap && b->wins; i++)
		if (i < b->nwins)
			recording_free(&b->wins[i]);
	free(b->wins);
	for (size_t i = 0; i < b->nhist; i++)
		recording_free(&b->hist[i]);
	recording_free(&b->before);
	recording_free(&b->after);
	regress_free(&b->r);
	str_index_free(&b->grew);
	free(b->streak);
	change_track_free(b->ct);
	str_intern_free(b->si);
	free(b);
}

/* A stack as it is compared: its names normalized unless asked not to. */
static const char *compared(struct baseline *b, const char *stack, size_t *len)
{
	if (b->o.no_normalize)
		return stack;
	const char *s = name_normalize_stack(b->si, stack);
	if (s)
		*len = strlen(s);
	return s;
}

int baseline_add_profile_stack(struct baseline *b, const char *stack, size_t len, uint64_t count)
{
	const char *s = compared(b, stack, &len);
	return s && b->o.kind == BASELINE_PROFILE && recording_add(&b->wins[0], s, len, count) == 0 ?
		       change_track_add_ref_stack(b->ct, s, len, count) :
		       -1;
}

/* dst (initialized, emptied first) = src with its names as compared. */
static int copy_compared(struct baseline *b, struct recording *dst, const struct recording *src)
{
	recording_free(dst);
	if (recording_init(dst) != 0)
		return -1;
	const struct stack_table *t = &src->stacks;
	for (size_t i = 0; i < t->stacks.n; i++) {
		size_t len = t->stacks.lens[i];
		const char *s = compared(b, t->stacks.strs[i], &len);
		if (!s || recording_add(dst, s, len, t->counts[i]) != 0)
			return -1;
	}
	return 0;
}

static int add_window(struct regress *r, enum regress_side side, const struct recording *w)
{
	regress_window_begin(r, side);
	const struct stack_table *t = &w->stacks;
	for (size_t i = 0; i < t->stacks.n; i++)
		if (regress_window_stack(r, t->stacks.strs[i], t->stacks.lens[i], t->counts[i]) != 0)
			return -1;
	regress_window_end(r);
	return 0;
}

static int sum_into(struct recording *dst, const struct recording *w)
{
	const struct stack_table *t = &w->stacks;
	for (size_t i = 0; i < t->stacks.n; i++)
		if (recording_add(dst, t->stacks.strs[i], t->stacks.lens[i], t->counts[i]) != 0)
			return -1;
	return 0;
}

/* Each row's streak: 1 + its streak in the window judged before (when it
 * grew significantly there too); then this window's growers for the next.
 * A window not judged breaks every streak (grew NULL). */
static int count_streaks(struct baseline *b, struct regress *grew)
{
	struct str_index next;
	unsigned *streak = NULL;
	size_t n = 0, cap = 0;
	str_index_init(&next);
	for (size_t i = 0; grew && i < grew->nrows; i++) {
		struct regress_row *w = &grew->rows[i];
		if (!w->significant || w->change <= 0) {
			w->streak = 0;
			continue;
		}
		long was = str_index_find(&b->grew, w->frame, strlen(w->frame));
		w->streak = 1 + (was >= 0 ? b->streak[was] : 0);
		if (ARRAY_GROW(streak, cap, n + 1) != 0 ||
		    str_index_add(&next, w->frame, strlen(w->frame)) != (long)n) {
			free(streak);
			str_index_free(&next);
			return -1;
		}
		streak[n++] = w->streak;
	}
	str_index_free(&b->grew);
	free(b->streak);
	b->grew = next;
	b->streak = streak;
	return 0;
}

bool baseline_regression(const struct baseline *b, const struct regress_row *row)
{
	return row->significant && row->change > 0 && !row->known && row->streak >= (b->o.confirm ? b->o.confirm : 1);
}

size_t baseline_regressions(const struct baseline *b, const struct regress *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->nrows; i++)
		n += baseline_regression(b, &r->rows[i]);
	return n;
}

/* The window into the lasting-change tracker: what the judge named is a
 * change it knows (since the streak's first window), then its test. */
static int track(struct baseline *b, uint64_t seq, bool compared_now)
{
	for (size_t i = 0; compared_now && i < b->r.nrows; i++) {
		struct regress_row *w = &b->r.rows[i];
		if (!baseline_regression(b, w))
			continue;
		/* said before: still and gone are the tracker's to say */
		if (change_track_active(b->ct, w->frame))
			w->known = true;
		else if (change_track_note(b->ct, w->frame, seq >= w->streak ? seq - w->streak + 1 : 1, seq,
					   w->before) != 0)
			return -1;
	}
	return change_track_window(b->ct, &b->after, seq, &b->ev, &b->nev);
}

int baseline_window(struct baseline *b, const struct recording *window, uint64_t seq, const struct regress **out)
{
	int compared_now = 0;
	*out = NULL;
	b->ev = NULL;
	b->nev = 0;
	if (copy_compared(b, &b->after, window) != 0)
		return -1;
	if (b->nwins > 0 && b->after.total > 0 && b->nhist >= HISTORY_MIN) {
		regress_free(&b->r);
		regress_init(&b->r);
		recording_free(&b->before);
		if (recording_init(&b->before) != 0)
			return -1;
		for (size_t i = 0; i < b->nwins; i++)
			if (add_window(&b->r, REGRESS_BEFORE, &b->wins[i]) != 0 ||
			    sum_into(&b->before, &b->wins[i]) != 0)
				return -1;
		if (add_window(&b->r, REGRESS_AFTER, &b->after) != 0)
			return -1;
		for (size_t i = 0; i < b->nhist; i++)
			if (add_window(&b->r, REGRESS_SPREAD, &b->hist[i]) != 0)
				return -1;
		if (b->r.samples[REGRESS_BEFORE] > 0) {
			if (regress_test(&b->r, b->o.alpha) != 0)
				return -1;
			*out = &b->r;
			compared_now = 1;
		}
	}
	if (count_streaks(b, compared_now ? &b->r : NULL) != 0)
		return -1;
	/* the window into the baseline: the first one (while it has no samples,
	 * the next), or the newest N */
	if (b->after.total == 0)
		return compared_now;
	if (track(b, seq, compared_now) != 0)
		return -1;
	/* the window into the history of how shares move, unless something in
	 * it grew beyond that: a regression is not noise (else it would hide
	 * itself in the windows after it) */
	if (compared_now && regress_report_grew(&b->r, -1) > 0)
		goto baseline;
	size_t h = b->hist_next;
	if (b->nhist < HISTORY) {
		if (recording_init(&b->hist[h]) != 0)
			return -1;
		b->nhist++;
	}
	b->hist_next = (b->hist_next + 1) % HISTORY;
	if (copy_compared(b, &b->hist[h], window) != 0)
		return -1;
baseline:
	if (b->o.kind == BASELINE_FIRST && (b->nwins == 0 || b->wins[0].total == 0)) {
		if (b->nwins == 0 && recording_init(&b->wins[0]) != 0)
			return -1;
		b->nwins = 1;
		return copy_compared(b, &b->wins[0], window) != 0 ? -1 : compared_now;
	}
	if (b->o.kind == BASELINE_PREVIOUS) {
		size_t slot = b->next;
		if (b->nwins < b->cap) {
			if (recording_init(&b->wins[slot]) != 0)
				return -1;
			b->nwins++;
		}
		b->next = (b->next + 1) % b->cap;
		return copy_compared(b, &b->wins[slot], window) != 0 ? -1 : compared_now;
	}
	return compared_now;
}

void baseline_changes(const struct baseline *b, const struct change_event **ev, size_t *n)
{
	*ev = b->ev;
	*n = b->nev;
}

size_t baseline_history_min(void)
{
	return HISTORY_MIN;
}

const struct recording *baseline_before(const struct baseline *b)
{
	return &b->before;
}

const struct recording *baseline_after(const struct baseline *b)
{
	return &b->after;
}

int baseline_parse_confirm(const char *arg, unsigned *confirm, char *err, size_t errlen)
{
	long n = 0;
	if (cli_parse_long(arg, 1, CONFIRM_MAX, &n) != 0) {
		snprintf(err, errlen, "--confirm %s: give the windows in a row a frame must grow in, 1 to %d (e.g. 2)",
			 arg, CONFIRM_MAX);
		return -1;
	}
	*confirm = (unsigned)n;
	return 0;
}

int baseline_parse(const char *arg, struct baseline_opts *o, const char **file, char *err, size_t errlen)
{
	*file = NULL;
	if (strcmp(arg, "first") == 0) {
		o->kind = BASELINE_FIRST;
		return 0;
	}
	if (strncmp(arg, "previous", 8) == 0 && (arg[8] == ':' || arg[8] == '\0')) {
		long n = 0;
		if (arg[8] != ':' || cli_parse_long(arg + 9, 1, PREVIOUS_MAX, &n) != 0) {
			snprintf(err, errlen,
				 "--baseline %s: give previous:N with N the windows to average, 1 to %d "
				 "(e.g. previous:5)",
				 arg, PREVIOUS_MAX);
			return -1;
		}
		o->kind = BASELINE_PREVIOUS;
		o->previous = (size_t)n;
		return 0;
	}
	o->kind = BASELINE_PROFILE;
	*file = arg;
	return 0;
}
