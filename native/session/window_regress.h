/* window_regress.h - record --baseline: after each window, its regressions against
 * the baseline said in one line each, drawn as a differential graph, handed to a command. */
#ifndef JFLAME_WINDOW_REGRESS_H
#define JFLAME_WINDOW_REGRESS_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

#include "baseline.h"
#include "recording.h"

struct window_regress_opts {
	struct baseline_opts b;
	const char *file;	   /* BASELINE_PROFILE: the saved profile */
	const char *diff_out;	   /* --diff-out: a template (%t %n ...), .svg .html or .folded; NULL none */
	const char *on_regression; /* --on-regression: a shell command; NULL none */
	FILE *out;		   /* where the regression lines go (NULL: stderr) */
};

struct window_regress;

/* NULL with one line in err, without "jflame: " (the saved profile unreadable, out of memory). */
struct window_regress *window_regress_new(const struct window_regress_opts *o, char *err, size_t errlen);
/* Waits (at most a few seconds) for the commands still running, then frees. */
void window_regress_free(struct window_regress *w);

/* What a window is, for the lines, names and the command's environment. */
struct window_regress_window {
	uint64_t seq;
	int64_t start_real_ns;
	const char *when;  /* its start as %t writes it */
	const char *wrote; /* its outputs' paths, space-separated (may be "") */
	pid_t pid;	   /* %p */
};

/* Compares rec (a closed window) with the baseline, takes it in, and for a
 * window with frames that grew beyond noise prints the regression lines,
 * writes the differential graph and starts the command. The number of
 * frames that grew (0 also before there is a baseline), -1 when out of
 * memory (said in a warning; the recording goes on). */
int window_regress_check(struct window_regress *w, const struct recording *rec,
			 const struct window_regress_window *win);

/* Windows compared with the baseline so far, and those with a regression. */
void window_regress_counts(const struct window_regress *w, uint64_t *judged, uint64_t *regressed);

#endif
