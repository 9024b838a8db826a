/* profile_read.c - reads a profile in any format the commands take (folded,
 * perf script or .stacks, pprof, speedscope, JFR) into the stack store. */
#include "profile_read.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collapse.h"
#include "folded.h"
#include "input_file.h"
#include "jfr_read.h"
#include "msg.h"
#include "perf_script.h"
#include "pprof.h"
#include "speedscope.h"

/* ---- reading ---------------------------------------------------------------------- */

/* The checks and warnings after reading folded stacks into t. */
static int folded_done(const struct folded *f, const char *name, const char *cmd, unsigned flags, char *err,
		       size_t errlen)
{
	if (f->differential && !(flags & PROFILE_READ_BEFORE)) {
		snprintf(err, errlen,
			 "%s has two counts a line (a differential profile); %s takes one "
			 "(cut one column: awk '{print $1, $NF}')",
			 name, cmd);
		return -1;
	}
	if (f->n == 0) {
		char why[200];
		folded_none(f, why, sizeof(why));
		snprintf(err, errlen,
			 "no stacks in %s%s%s%s; give folded stacks ('frame;frame;... count' lines, "
			 "as jflame collapse writes)",
			 name, why[0] ? " (" : "", why, why[0] ? ")" : "");
		return -1;
	}
	folded_warn(f, NULL);
	return 0;
}

/* perf script samples, folded by collapse.c one at a time. */
struct stacks_reader {
	struct stack_table *t;
	struct collapse c;
	char thread[512];
	double first, last;
	bool have_time, any_period, oom;
	uint64_t period;
};

static int on_sample(void *ctx, const struct ps_sample *s)
{
	struct stacks_reader *x = ctx;
	char *text;
	size_t len;
	int r = collapse_fold(&x->c, s, &text, &len);
	if (r <= 0) { /* out of memory, another event, or out of range */
		x->oom = r < 0;
		return r < 0 ? 1 : 0;
	}
	x->c.kept++;
	uint64_t w = s->has_period && s->period > 0 ? s->period : 1;
	long id = stack_table_add(x->t, text, len, 1, w);
	/* named as speedscope's perf import names its profiles */
	int cn = (int)(s->comm.n < 256 ? s->comm.n : 256), tn;
	if (s->pid >= 0)
		tn = snprintf(x->thread, sizeof(x->thread), "%.*s pid: %ld tid: %ld", cn, s->comm.p, s->pid, s->tid);
	else
		tn = snprintf(x->thread, sizeof(x->thread), "%.*s tid: %ld", cn, s->comm.p, s->tid);
	if (id < 0 ||
	    stack_table_add_timed(x->t, (uint32_t)id, x->thread, (size_t)tn, s->has_time ? s->time : 0, w) != 0) {
		x->oom = true;
		return 1;
	}
	if (s->has_period && s->period > 0) {
		if (!x->any_period)
			x->period = s->period;
		x->any_period = true;
	}
	if (s->has_time) {
		if (!x->have_time || s->time < x->first)
			x->first = s->time;
		if (!x->have_time || s->time > x->last)
			x->last = s->time;
		x->have_time = true;
	}
	return 0;
}

/* Reads perf script text from path, or from buf when buf is not NULL. */
static int table_from_stacks(struct stack_table *t, const char *path, const char *buf, size_t len, const char *name,
			     char *err, size_t errlen)
{
	struct stacks_reader x = { .t = t };
	struct collapse_opts o = { .kernel = true, .jit = true };
	struct ps_stats st;
	int rc = -1;

	collapse_init(&x.c, &o, NULL); /* collapse_fold only: no recording */
	if (buf)
		perf_script_parse_buffer(buf, len, on_sample, &x, &st);
	else if (perf_script_parse_file(path, on_sample, &x, &st, err, errlen) != 0) {
		goto out;
	}
	if (x.oom) {
		snprintf(err, errlen, "out of memory reading %s", name);
		goto out;
	}
	if (st.real == 0) {
		snprintf(err, errlen,
			 "no samples in %s%s; give perf script output (perf record -g, then perf "
			 "script) or jflame record's .stacks",
			 name, st.bad_lines ? " (it does not look like perf script text)" : "");
		goto out;
	}
	if (st.bad_lines || st.long_lines)
		msg_warn("skipped %" PRIu64 " unrecognized and %" PRIu64 " overlong lines "
			 "(first: '%s')\n",
			 st.bad_lines, st.long_lines, st.first_bad);
	if (x.c.other_event)
		msg_say("kept only '%s' events; %" PRIu64 " samples of other events skipped\n", x.c.event,
			x.c.other_event);
	struct stack_meta *m = &t->meta;
	snprintf(m->event, sizeof(m->event), "%s", x.c.event);
	if (x.any_period) {
		bool clock = strncmp(x.c.event, "cpu-clock", 9) == 0 || strncmp(x.c.event, "task-clock", 10) == 0;
		m->has_weight = true;
		m->period = x.period;
		if (clock) {
			snprintf(m->weight_type, sizeof(m->weight_type), "cpu");
			snprintf(m->weight_unit, sizeof(m->weight_unit), "nanoseconds");
		} else {
			size_t en = strcspn(x.c.event, ":");
			snprintf(m->weight_type, sizeof(m->weight_type), "%.*s", (int)(en < 31 ? en : 31),
				 x.c.event[0] ? x.c.event : "events");
			snprintf(m->weight_unit, sizeof(m->weight_unit), "count");
		}
	}
	if (x.have_time)
		m->duration_ns = (int64_t)((x.last - x.first) * 1e9);
	rc = 0;
out:
	collapse_free(&x.c);
	return rc;
}

/* The samples a reader skipped (why: how many and why): one warning, or the
 * error when none are left. 0, or -1 with err. */
static int skipped_said(const struct stack_table *t, const char *why, char *err, size_t errlen)
{
	if (t->stacks.n == 0) {
		snprintf(err, errlen, "no stacks left: %s", why);
		return -1;
	}
	msg_warn("%s\n", why);
	return 0;
}

int profile_read(struct stack_table *t, const char *path, enum profile_format from, const char *sample_index,
		 unsigned flags, const char *cmd, char *err, size_t errlen)
{
	const char *name = profile_input_name(path);
	bool raw;
	enum profile_format f = from ? from : profile_format_of_name(path, &raw);
	struct folded fo;
	unsigned order = flags & PROFILE_READ_ORDER ? FOLDED_KEEP_ORDER : 0;
	char *buf = NULL;
	size_t len = 0;
	int rc = -1;

	if (f == PFMT_SVG) {
		snprintf(err, errlen,
			 "%s is an SVG; %s reads folded stacks, perf script text, pprof, "
			 "speedscope JSON or JFR (the folded stacks behind an SVG are not in it)",
			 name, cmd);
		return -1;
	}
	/* folded and perf script files stream from their readers */
	if (f == PFMT_FOLDED) {
		if (folded_read(&fo, t, path, 0, order, err, errlen) != 0) {
			goto out;
		}
		rc = folded_done(&fo, name, cmd, flags, err, errlen);
		goto out;
	}
	if (f == PFMT_STACKS) {
		rc = table_from_stacks(t, path, NULL, 0, name, err, errlen);
		goto out;
	}
	if (input_file_read(path, 0, &buf, &len, err, errlen) != 0) {
		goto out;
	}
	enum profile_format seen = profile_format_sniff(buf, len);
	if (f == PFMT_TEXT)
		f = seen == PFMT_STACKS ? PFMT_STACKS : PFMT_FOLDED;
	if (f == PFMT_UNKNOWN)
		f = seen == PFMT_UNKNOWN && (flags & PROFILE_READ_FOLDED) ? PFMT_FOLDED : seen;
	switch (f) {
	case PFMT_FOLDED:
		if (folded_parse(&fo, t, buf, len, name, order, err, errlen) != 0) {
			goto out;
		}
		rc = folded_done(&fo, name, cmd, flags, err, errlen);
		break;
	case PFMT_STACKS:
		rc = table_from_stacks(t, NULL, buf, len, name, err, errlen);
		break;
	case PFMT_PPROF: {
		struct pprof_stats st;
		rc = pprof_read(t, buf, len, name, sample_index, &st, err, errlen);
		uint64_t skipped = st.bad_refs + st.no_frames + st.negative + st.too_long;
		if (rc == 0 && skipped) {
			char why[512];
			snprintf(why, sizeof(why),
				 "skipped %" PRIu64 " of %" PRIu64 " samples in %s (%" PRIu64 " refer to "
				 "a location, function or string that does not exist, %" PRIu64
				 " have no frames, %" PRIu64 " a negative value, %" PRIu64 " are longer than %u MiB)",
				 skipped, st.samples, name, st.bad_refs, st.no_frames, st.negative, st.too_long,
				 FOLDED_MAX_LINE >> 20);
			rc = skipped_said(t, why, err, errlen);
		}
		break;
	}
	case PFMT_SPEEDSCOPE: {
		struct speedscope_stats st;
		rc = speedscope_read(t, buf, len, name, &st, err, errlen);
		if (rc == 0 && st.too_long && t->stacks.n)
			msg_warn("skipped %" PRIu64 " samples in %s longer than %u MiB\n", st.too_long, name,
				 FOLDED_MAX_LINE >> 20);
		break;
	}
	case PFMT_JFR: {
		struct jfr_stats st;
		rc = jfr_read(t, buf, len, name, sample_index, &st, err, errlen);
		uint64_t skipped = st.bad_refs + st.bad_events + st.no_frames + st.too_long;
		if (rc == 0 && skipped) {
			char why[512];
			snprintf(why, sizeof(why),
				 "skipped %" PRIu64 " of %" PRIu64 " %s events in %s (%" PRIu64 " refer "
				 "to a thread, stack trace, method, class or string that is not in the file, %" PRIu64
				 " do not "
				 "parse, %" PRIu64 " have no frames, %" PRIu64 " are longer than %u MiB)",
				 skipped, st.events + st.bad_events, t->meta.event, name, st.bad_refs, st.bad_events,
				 st.no_frames, st.too_long, FOLDED_MAX_LINE >> 20);
			rc = skipped_said(t, why, err, errlen);
		}
		if (rc == 0 && t->stacks.n == 0) {
			snprintf(err, errlen,
				 "no %s events with stacks in %s (%" PRIu64 " chunks read); "
				 "--sample-index picks what to read: " JFR_EVENT_NAMES,
				 t->meta.event, name, st.chunks);
			rc = -1;
		}
		break;
	}
	default:
		snprintf(err, errlen,
			 "cannot tell the format of %s (%s); give -f folded, stacks, pprof, "
			 "speedscope or jfr",
			 name, len == 0 ? "it is empty" : "not folded stacks, perf script text, pprof, JSON or JFR");
		break;
	}
out:
	if (rc == 0 && sample_index && f != PFMT_PPROF && f != PFMT_JFR) {
		snprintf(err, errlen, "--sample-index is for pprof and JFR input; %s is %s", name,
			 profile_format_label(f));
		rc = -1;
	}
	if (rc == 0 && t->stacks.n == 0) {
		snprintf(err, errlen, "no stacks in %s; nothing to %s", name, cmd);
		rc = -1;
	}
	free(buf);
	return rc;
}

const char *profile_input_name(const char *path)
{
	return strcmp(path, "-") ? path : "standard input";
}
