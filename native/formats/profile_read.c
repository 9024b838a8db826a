/* profile_read.c - the readers of the profile formats the commands take (folded,
 * perf script or .stacks, pprof, speedscope, JFR) into the stack store, with
 * their checks and warnings; the format table (render/format_table.c) picks one. */
#include "profile_read.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collapse.h"
#include "event_table.h"
#include "folded.h"
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
		const struct event_kind *e = event_kind_of_perf(x.c.event, strlen(x.c.event));
		bool clock = e && (e->flags & EVENT_CLOCK); /* its period is nanoseconds */
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

int profile_read_folded(struct stack_table *t, const struct profile_source *s, char *err, size_t errlen)
{
	struct folded fo;
	unsigned order = s->flags & PROFILE_READ_ORDER ? FOLDED_KEEP_ORDER : 0;
	int rc = s->buf ? folded_parse(&fo, t, s->buf, s->len, s->name, order, err, errlen) :
			  folded_read(&fo, t, s->path, 0, order, err, errlen);
	return rc != 0 ? -1 : folded_done(&fo, s->name, s->cmd, s->flags, err, errlen);
}

int profile_read_stacks(struct stack_table *t, const struct profile_source *s, char *err, size_t errlen)
{
	return table_from_stacks(t, s->buf ? NULL : s->path, s->buf, s->len, s->name, err, errlen);
}

int profile_read_pprof(struct stack_table *t, const struct profile_source *s, char *err, size_t errlen)
{
	struct pprof_stats st;
	int rc = pprof_read(t, s->buf, s->len, s->name, s->sample_index, &st, err, errlen);
	uint64_t skipped = st.bad_refs + st.no_frames + st.negative + st.too_long;
	if (rc == 0 && skipped) {
		char why[512];
		snprintf(why, sizeof(why),
			 "skipped %" PRIu64 " of %" PRIu64 " samples in %s (%" PRIu64 " refer to "
			 "a location, function or string that does not exist, %" PRIu64 " have no frames, %" PRIu64
			 " a negative value, %" PRIu64 " are longer than %u MiB)",
			 skipped, st.samples, s->name, st.bad_refs, st.no_frames, st.negative, st.too_long,
			 FOLDED_MAX_LINE >> 20);
		rc = skipped_said(t, why, err, errlen);
	}
	return rc;
}

int profile_read_speedscope(struct stack_table *t, const struct profile_source *s, char *err, size_t errlen)
{
	struct speedscope_stats st;
	int rc = speedscope_read(t, s->buf, s->len, s->name, &st, err, errlen);
	if (rc == 0 && st.too_long && t->stacks.n)
		msg_warn("skipped %" PRIu64 " samples in %s longer than %u MiB\n", st.too_long, s->name,
			 FOLDED_MAX_LINE >> 20);
	return rc;
}

int profile_read_jfr(struct stack_table *t, const struct profile_source *s, char *err, size_t errlen)
{
	struct jfr_stats st;
	int rc = jfr_read(t, s->buf, s->len, s->name, s->sample_index, &st, err, errlen);
	uint64_t skipped = st.bad_refs + st.bad_events + st.no_frames + st.too_long;
	if (rc == 0 && skipped) {
		char why[512];
		snprintf(why, sizeof(why),
			 "skipped %" PRIu64 " of %" PRIu64 " %s events in %s (%" PRIu64 " refer "
			 "to a thread, stack trace, method, class or string that is not in the file, %" PRIu64
			 " do not "
			 "parse, %" PRIu64 " have no frames, %" PRIu64 " are longer than %u MiB)",
			 skipped, st.events + st.bad_events, t->meta.event, s->name, st.bad_refs, st.bad_events,
			 st.no_frames, st.too_long, FOLDED_MAX_LINE >> 20);
		rc = skipped_said(t, why, err, errlen);
	}
	if (rc == 0 && t->stacks.n == 0) {
		snprintf(err, errlen,
			 "no %s events with stacks in %s (%" PRIu64 " chunks read); "
			 "--sample-index picks what to read: " JFR_EVENT_NAMES,
			 t->meta.event, s->name, st.chunks);
		rc = -1;
	}
	return rc;
}

const char *profile_input_name(const char *path)
{
	return strcmp(path, "-") ? path : "standard input";
}
