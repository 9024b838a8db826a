/* regress_report.h - a regress test's result as a table for people or as JSON
 * for machines (jflame diff --report, record's regression lines). */
#ifndef JFLAME_REGRESS_REPORT_H
#define JFLAME_REGRESS_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "regress.h"

struct regress_report_opts {
	const char *before, *after; /* what each side is (file or folder names) */
	size_t top;		    /* rows at most (0: every frame) */
	double fail_above;	    /* points; < 0 when not asked */
	bool normalized;	    /* names normalized (lambda addresses, pids, ...) */
};

/* How many significant frames grew by at least pts points (pts < 0: grew at all). */
size_t regress_report_grew(const struct regress *r, double pts);

/* The test's name and how it was applied, one line ("quasi-binomial ...").
 * Written into buf (len bytes); returns buf. */
const char *regress_report_test_name(const struct regress *r, char *buf, size_t len);

/* The table: a header with the sides and the test, then a row per frame
 * ranked by the change of its total share. 0, or -1 on a write error. */
int regress_report_text(FILE *out, const struct regress *r, const struct regress_report_opts *o);
/* The same as one JSON object. 0, or -1 on a write error. */
int regress_report_json(FILE *out, const struct regress *r, const struct regress_report_opts *o);

#endif
