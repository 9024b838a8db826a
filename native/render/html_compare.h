/* html_compare.h - the compare view: BEFORE and AFTER flame graphs side by side
 * in one self-contained HTML page, the same frames aligned, coloured by change. */
#ifndef JFLAME_HTML_COMPARE_H
#define JFLAME_HTML_COMPARE_H

#include <stddef.h>
#include <stdio.h>

#include "stack_table.h"

struct compare_options {
	const char *title;	 /* NULL: "Compare: BEFORE vs AFTER" */
	const char *subtitle;	 /* NULL: none */
	const char *before_name; /* what the sides are called ("before.folded") */
	const char *after_name;
};

/* Writes the page from a differential stack table (counts: AFTER's, befores:
 * BEFORE's). No network, no external scripts. 0, or -1 with one line in err
 * ("no samples" when both sides are empty, before anything is written). */
int compare_write_html(FILE *out, const struct stack_table *t, const struct compare_options *o, char *err,
		       size_t errlen);

#endif
