/* regress_report.c - a regress test's result as a table for people or as JSON
 * for machines (jflame diff --report, record's regression lines). */
#include "regress_report.h"

#include <inttypes.h>
#include <string.h>

#include "json_out.h"
#include "text_escape.h"

size_t regress_report_grew(const struct regress *r, double pts)
{
	size_t n = 0;
	for (size_t i = 0; i < r->nrows; i++)
		/* points as shown: 0.29 * 100 is 28.999999999999996 */
		if (r->rows[i].significant && r->rows[i].change > 0 && r->rows[i].change * 100.0 >= pts - 1e-9)
			n++;
	return n;
}

static size_t significant(const struct regress *r, bool grew)
{
	size_t n = 0;
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].significant && (r->rows[i].change > 0) == grew)
			n++;
	return n;
}

const char *regress_report_test_name(const struct regress *r, char *buf, size_t len)
{
	if (r->phi_df > 0 && r->windows[REGRESS_SPREAD] >= 2)
		snprintf(buf, len,
			 "quasi-binomial two-proportion test (the spread of each frame's share over %zu "
			 "recent windows, pooled spread %.2f; Student's t with %.0f df where a frame's own is larger), "
			 "Holm-corrected over %zu frames, alpha %g",
			 r->windows[REGRESS_SPREAD], r->phi_pooled, r->phi_df, r->nrows, r->alpha);
	else if (r->phi_df > 0)
		snprintf(buf, len,
			 "quasi-binomial two-proportion test (windows as replicates: %zu before, %zu after; "
			 "pooled spread %.2f; Student's t with %.0f df where a frame's own is larger), Holm-corrected "
			 "over %zu frames, alpha %g",
			 r->windows[REGRESS_BEFORE], r->windows[REGRESS_AFTER], r->phi_pooled, r->phi_df, r->nrows,
			 r->alpha);
	else
		snprintf(buf, len,
			 "two-proportion z-test (one window a side: samples taken as independent draws), "
			 "Holm-corrected over %zu frames, alpha %g",
			 r->nrows, r->alpha);
	return buf;
}

static size_t rows_shown(const struct regress *r, const struct regress_report_opts *o)
{
	return o->top && o->top < r->nrows ? o->top : r->nrows;
}

static void side_line(FILE *out, const char *label, const char *name, size_t windows, uint64_t samples)
{
	char esc[1024];
	text_escape(esc, sizeof(esc), name, strlen(name));
	fprintf(out, "%s %s (%zu window%s, %" PRIu64 " sample%s)\n", label, esc, windows, windows == 1 ? "" : "s",
		samples, samples == 1 ? "" : "s");
}

int regress_report_text(FILE *out, const struct regress *r, const struct regress_report_opts *o)
{
	char test[512];
	size_t shown = rows_shown(r, o);
	side_line(out, "BEFORE", o->before, r->windows[REGRESS_BEFORE], r->samples[REGRESS_BEFORE]);
	side_line(out, "AFTER ", o->after, r->windows[REGRESS_AFTER], r->samples[REGRESS_AFTER]);
	fprintf(out, "test: %s%s\n", regress_report_test_name(r, test, sizeof(test)),
		o->normalized ? "; names normalized (--no-normalize: as recorded)" : "");
	fprintf(out, "%10s  %-24s  %-22s  %-12s %s\n", "change", "total before \u2192 after",
		"self before \u2192 after", "verdict", "frame");
	for (size_t i = 0; i < shown; i++) {
		const struct regress_row *w = &r->rows[i];
		char total[64], self[64], verdict[32], name[4096];
		snprintf(total, sizeof(total), "%5.1f%% \u2192 %5.1f%%", w->before * 100, w->after * 100);
		snprintf(self, sizeof(self), "%5.1f%% \u2192 %5.1f%%", w->self_before * 100, w->self_after * 100);
		if (w->significant)
			snprintf(verdict, sizeof(verdict), "significant");
		else
			snprintf(verdict, sizeof(verdict), "noise");
		text_escape(name, sizeof(name), w->frame, strlen(w->frame));
		/* the arrow is three bytes and one column: pad by hand */
		fprintf(out, "%+6.1f pts  %-24s  %-22s  %-12s %s\n", w->change * 100, total, self, verdict, name);
	}
	if (shown < r->nrows)
		fprintf(out, "(%zu more frame%s; --top N shows more, --top 0 all)\n", r->nrows - shown,
			r->nrows - shown == 1 ? "" : "s");
	size_t up = significant(r, true), down = significant(r, false);
	fprintf(out, "%zu significant change%s: %zu grew, %zu shrank", up + down, up + down == 1 ? "" : "s", up, down);
	if (o->fail_above >= 0) {
		size_t bad = regress_report_grew(r, o->fail_above);
		fprintf(out, "; %zu grew by %g pts or more (--fail-above)%s", bad, o->fail_above,
			bad ? ": failing" : "");
	}
	fputc('\n', out);
	return ferror(out) ? -1 : 0;
}

static void json_side(FILE *out, const char *key, const char *name, size_t windows, uint64_t samples)
{
	fprintf(out, "\"%s\":{\"input\":", key);
	json_out_str(out, name, strlen(name));
	fprintf(out, ",\"windows\":%zu,\"samples\":%" PRIu64 "}", windows, samples);
}

/* %.10g, but never a bare nan (not JSON) */
static void json_num(FILE *out, double v)
{
	if (v != v)
		v = 1.0;
	fprintf(out, "%.10g", v);
}

int regress_report_json(FILE *out, const struct regress *r, const struct regress_report_opts *o)
{
	char test[512];
	size_t shown = rows_shown(r, o);
	fputc('{', out);
	json_side(out, "before", o->before, r->windows[REGRESS_BEFORE], r->samples[REGRESS_BEFORE]);
	fputc(',', out);
	json_side(out, "after", o->after, r->windows[REGRESS_AFTER], r->samples[REGRESS_AFTER]);
	fprintf(out, ",\"test\":{\"name\":");
	regress_report_test_name(r, test, sizeof(test));
	json_out_str(out, test, strlen(test));
	fprintf(out, ",\"method\":\"%s\",\"correction\":\"holm\",\"alpha\":", r->phi_df > 0 ? "quasi-binomial" : "z");
	json_num(out, r->alpha);
	fprintf(out, ",\"replicate_df\":%.0f,\"phi_pooled\":", r->phi_df);
	json_num(out, r->phi_pooled);
	fprintf(out, ",\"frames_tested\":%zu,\"normalized\":%s}", r->nrows, o->normalized ? "true" : "false");
	fprintf(out, ",\"significant\":{\"grew\":%zu,\"shrank\":%zu}", significant(r, true), significant(r, false));
	if (o->fail_above >= 0) {
		fprintf(out, ",\"fail_above\":");
		json_num(out, o->fail_above);
		fprintf(out, ",\"failed\":%s", regress_report_grew(r, o->fail_above) ? "true" : "false");
	}
	fprintf(out, ",\"frames_shown\":%zu,\"frames\":[", shown);
	for (size_t i = 0; i < shown; i++) {
		const struct regress_row *w = &r->rows[i];
		fprintf(out, "%s{\"frame\":", i ? "," : "");
		json_out_str(out, w->frame, strlen(w->frame));
		fprintf(out, ",\"change_pts\":");
		json_num(out, w->change * 100);
		fprintf(out, ",\"total_before\":");
		json_num(out, w->before * 100);
		fprintf(out, ",\"total_after\":");
		json_num(out, w->after * 100);
		fprintf(out, ",\"self_before\":");
		json_num(out, w->self_before * 100);
		fprintf(out, ",\"self_after\":");
		json_num(out, w->self_after * 100);
		fprintf(out, ",\"p\":");
		json_num(out, w->p);
		fprintf(out, ",\"p_adjusted\":");
		json_num(out, w->p_adj);
		fprintf(out, ",\"significant\":%s}", w->significant ? "true" : "false");
	}
	fprintf(out, "]}\n");
	return ferror(out) ? -1 : 0;
}
