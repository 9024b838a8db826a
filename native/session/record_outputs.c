/* record_outputs.c - a recording's outputs: which each event has (-o and the naming rule), and
 * a window closed: described, each output written in its format, pushed, said in one line. */
#include "record_outputs.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flamegraph.h"
#include "grow.h"
#include "heatmap.h"
#include "html_heatmap.h"
#include "out_file.h"
#include "out_name.h"
#include "pprof.h"
#include "format_table.h"
#include "push.h"
#include "record_windows.h"
#include "sampler.h"
#include "stack_table.h"
#include "symbolize.h"
#include "msg.h"

/* The stacks of rec with their numbers in folded and SVG outputs (the event's
 * view: samples, or weights in its unit), in t (initialized, empty): a view of
 * the window's store, its frames without their source lines (stacks that
 * differ only by lines are one); folded leaves the stacks whose number is 0
 * out. 0, or -1 out of memory. */
static int value_table(struct stack_table *t, const struct recording *rec, bool count_view, bool skip_zero)
{
	size_t n, cap = 0;
	int rc = 0;
	char *buf = NULL;
	struct event_view v = event_view(rec->ev, count_view);
	struct stack_count *s = recording_sorted(rec, &n);
	if (!s)
		return -1;
	for (size_t i = 0; i < n && rc == 0; i++) {
		uint64_t x = event_view_value(&v, s[i].count, s[i].weight);
		size_t len = strlen(s[i].stack);
		if (!x && skip_zero)
			continue;
		const char *text = stack_plain(s[i].stack, &len, rec->stacks.meta.lines, &buf, &cap);
		if (!text || stack_table_add(t, text, len, x, 0) < 0)
			rc = -1;
	}
	free(buf);
	free(s);
	return rc;
}

/* time modes and lock: microseconds, integers as flamegraph.pl wants them; alloc: bytes */
static int write_folded(FILE *f, const struct recording *rec, bool count_view, char *err, size_t errlen)
{
	struct stack_table t;
	int rc = -1;
	stack_table_init(&t);
	if (value_table(&t, rec, count_view, true) != 0)
		snprintf(err, errlen, "out of memory");
	else
		rc = profile_format_write(profile_format_named("folded"), f, &t, NULL, err, errlen);
	stack_table_free(&t);
	return rc;
}

static int write_svg(FILE *f, const struct recording *rec, bool count_view, char *err, size_t errlen)
{
	char title[400], subtitle[800];
	struct stack_table t;
	int rc = -1;
	stack_table_init(&t);
	/* time modes and lock: widths in microseconds, shown in ms; alloc: bytes */
	if (value_table(&t, rec, count_view, false) != 0) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	snprintf(title, sizeof(title), "%s: %s", rec->ev->title, rec->target);
	event_subtitle(subtitle, sizeof(subtitle), rec, count_view);
	struct event_view v = event_view(rec->ev, count_view);
	struct fg_options o = {
		.title = title,
		.subtitle = subtitle,
		.subtitle_warning = rec->ev->source == EVENT_AGENT ? rec->note[0] != '\0' : rec->fp_warning,
		.colors = "java",
		.legend = true,
		.hash = true,
		.countname = v.unit,
		.count_scale = v.unit_div > 1 ? v.unit_div : 0,
		.bytes = v.bytes,
	};
	rc = profile_format_write(profile_format_named("svg"), f, &t, &(struct profile_write_opts){ .graph = &o }, err,
				  errlen);
out:
	stack_table_free(&t);
	return rc;
}

/* A format with source lines (pprof, speedscope, JFR): counts are samples, weights
 * samples x 1e9/freq cpu ns; the window's store, whose interpreted frames carry
 * their source lines; the samples' times for a format that needs them. */
static int write_profile(FILE *f, const struct recording *rec, int64_t end_real_ns, const struct profile_format *format,
			 bool count_view, char *err, size_t errlen)
{
	struct stack_table t;
	int rc = -1;
	stack_table_init(&t);
	/* JFR's events carry the samples' times (the window's sample log) */
	if (stack_table_from_recording(&t, rec, end_real_ns) != 0 ||
	    ((format->needs & PF_NEEDS_TIMES) && stack_table_timeline_from(&t, &rec->stacks) != 0)) {
		snprintf(err, errlen, "out of memory");
	} else {
		if ((format->traits & PF_ONE_VALUE) && count_view && (rec->ev->flags & EVENT_COUNT_VIEW))
			t.meta.has_weight = false; /* one value a sample: the samples */
		rc = profile_format_write(format, f, &t, NULL, err, errlen);
	}
	stack_table_free(&t);
	return rc;
}

/* The heat map of the samples, drawn from the window's sample log (pid 0, the
 * idle task, left out, as FlameScope does). */
static int write_heatmap(struct window *w, FILE *f, char *err, size_t errlen)
{
	const struct recording *rec = &w->rec;
	const struct stack_table *t = &rec->stacks;
	char subtitle[sizeof(rec->target) + sizeof(rec->frame_pointers) + 64];
	struct heatmap h;
	char *buf = NULL;
	size_t cap = 0;
	int rc = -1;
	snprintf(subtitle, sizeof(subtitle), "%s, %.1f s at %d Hz, %s", rec->target, rec->seconds, rec->freq,
		 rec->frame_pointers);
	struct heatmap_options ho = { .title = "CPU heat map", .subtitle = subtitle };
	if (heatmap_init(&h) != 0) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	double start = (double)w->start_ns / 1e9;
	for (size_t i = 0; i < t->ntimeline; i++) {
		const struct timed_sample *x = &t->timeline[i];
		size_t len = t->stacks.lens[x->stack];
		if (t->threads.lens[x->thread] == sizeof(RECORD_IDLE_THREAD) - 1 &&
		    memcmp(t->threads.strs[x->thread], RECORD_IDLE_THREAD, sizeof(RECORD_IDLE_THREAD) - 1) == 0)
			continue;
		const char *text = stack_plain(t->stacks.strs[x->stack], &len, t->meta.lines, &buf, &cap);
		if (!text || heatmap_add(&h, start + x->time, text, len, 1) != 0)
			goto oom;
	}
	if (heatmap_check(&h, &ho, err, errlen) == 0 && heatmap_write_html(f, &h, &ho, err, errlen) == 0)
		rc = 0;
	goto out;
oom:
	snprintf(err, errlen, "out of memory");
out:
	free(buf);
	heatmap_free(&h);
	return rc;
}

/* The path output i of window w goes to (its template expanded). */
int record_output_path(const struct record *r, const struct window *w, size_t i, char *out, size_t len, char *err,
		       size_t errlen)
{
	char host[256] = "";
	struct out_name_vars v = {
		.time_ns = w->start_real_ns,
		.pid = r->o.npids ? r->o.pids[0] : getpid(),
		.host = host,
		.seq = w->seq,
	};
	gethostname(host, sizeof(host) - 1);
	if (out_name_expand(r->o.outputs[i], &v, out, len) != 0) {
		snprintf(err, errlen, "output name '%s' is too long once expanded", r->o.outputs[i]);
		return -1;
	}
	return 0;
}

/* Writes window w's outputs (the .stacks file was written as samples came)
 * and lists their paths in wrote. A failed output does not stop the others:
 * the first error is in err. */
int record_outputs_write(struct record *r, struct window *w, enum rec_event ev, char *wrote, size_t wrote_len,
			 char *err, size_t errlen)
{
	const struct recording *rec = ev == EV_BPF ? &w->rec : &w->jrec[ev == EV_ALLOC ? J_ALLOC : J_LOCK];
	int64_t end_real_ns = w->start_real_ns + (int64_t)(w->rec.seconds * 1e9);
	size_t pos = 0;
	int rc = 0;
	char e[ERR_LEN];
	wrote[0] = '\0';
	for (size_t i = 0; i < r->o.noutputs; i++) {
		struct out_file of;
		char path[4096];
		int wr = 0;
		e[0] = '\0';
		if (r->o.out_ev[i] != ev)
			continue;
		const struct profile_format *fmt = r->o.formats[i];
		if (fmt->needs & PF_NEEDS_SAMPLE_LOG) {
			if (!w->stacks_open)
				continue;
			w->stacks_open = false;
			snprintf(path, sizeof(path), "%s", w->stacks_path);
			stacks_order_flush(&w->stacks_order, w->stacks.f);
			wr = out_file_commit(&w->stacks, e, sizeof(e));
		} else if (record_output_path(r, w, i, path, sizeof(path), e, sizeof(e)) != 0) {
			wr = -1;
		} else if (out_file_open(&of, path, e, sizeof(e)) != 0) {
			wr = -1;
		} else {
			if (fmt->needs & PF_NEEDS_GRAPH)
				wr = write_svg(of.f, rec, r->o.count_view, e, sizeof(e));
			else if (fmt->needs & PF_NEEDS_LINES)
				wr = write_profile(of.f, rec, end_real_ns, fmt, r->o.count_view, e, sizeof(e));
			else if (fmt->needs & PF_NEEDS_HEATMAP)
				wr = write_heatmap(w, of.f, e, sizeof(e));
			else
				wr = write_folded(of.f, rec, r->o.count_view, e, sizeof(e));
			if (wr != 0) {
				if (!e[0])
					snprintf(e, sizeof(e), "out of memory writing %.900s", path);
				out_file_abort(&of);
			} else {
				wr = out_file_commit(&of, e, sizeof(e));
			}
		}
		if (wr != 0) {
			if (!rc)
				snprintf(err, errlen, "%s", e);
			rc = -1;
			continue;
		}
		pos += (size_t)snprintf(wrote + pos, pos < wrote_len ? wrote_len - pos : 0, " %s",
					strcmp(path, "-") == 0 ? "standard output" : path);
		if (pos >= wrote_len)
			pos = wrote_len - 1;
		if ((r->o.keep || r->o.keep_bytes) && out_name_varies(r->o.outputs[i]) &&
		    out_name_rotate(r->o.outputs[i], r->o.keep, r->o.keep_bytes, e, sizeof(e)) < 0)
			msg_warn("%s\n", e);
	}
	return rc;
}

/* ---- which outputs each event has ------------------------------------------- */

/* The event table's words (cpu once for its rows), and the row of each. */
static size_t event_words(const char **words, const struct event_kind **rows, size_t max)
{
	size_t n, k = 0;
	const struct event_kind *e = event_kinds(&n);
	for (size_t i = 0; i < n && k < max; i++) {
		if (event_kind_of_word(e[i].word) != &e[i])
			continue; /* a word said before */
		rows[k] = &e[i];
		words[k++] = e[i].word;
	}
	return k;
}

/* Adds one output of event ev (its name copied). */
static int add_spec(struct record_opts *o, const char *name, const struct profile_format *f, enum rec_event ev)
{
	static char names[MAX_SPECS][4096];
	if (o->noutputs == MAX_SPECS) {
		msg_say("too many outputs once expanded per event (at most %d)\n", MAX_SPECS);
		return -1;
	}
	if (strlen(name) >= sizeof(names[0])) {
		msg_say("output name '%.200s...' is too long\n", name);
		return -1;
	}
	snprintf(names[o->noutputs], sizeof(names[0]), "%s", name);
	o->outputs[o->noutputs] = names[o->noutputs];
	o->formats[o->noutputs] = f;
	o->out_ev[o->noutputs++] = ev;
	return 0;
}

/* The naming rule of several events (out_name.h): each -o becomes the
 * outputs of the events it holds. .stacks and .html hold the sampler's
 * samples only (they are per-sample timelines of CPU or off-CPU time). */
static int outputs_expand(struct record_opts *o)
{
	size_t nev = ev_count(o);
	for (size_t i = 0; i < o->nuser_outputs; i++) {
		const char *name = o->user_outputs[i];
		const struct profile_format *f = o->user_formats[i];
		bool timeline = (f->needs & (PF_NEEDS_SAMPLE_LOG | PF_NEEDS_HEATMAP)) != 0;
		const char *what = f->needs & PF_NEEDS_SAMPLE_LOG ? "the .stacks output (timestamped samples)" :
								    "the .html heat map";
		char buf[4096];
		const char *words[32];
		const struct event_kind *rows[32];
		int w = out_name_event_word(name, words, event_words(words, rows, 32));
		enum rec_event named = EV_N;
		if (w >= 0 && rows[w]->source == EVENT_AGENT)
			named = (enum rec_event)(EV_AGENT + rows[w]->agent);
		else if (w >= 0 && ev_on(o, EV_BPF) && event_kind_of_word(o->ev[EV_BPF]->word) == rows[w])
			named = EV_BPF;
		else if (w >= 0)
			named = EV_N + 1; /* names a sampler event not recorded */
		if (out_name_has_event(name)) {
			bool any = false;
			for (int ev = 0; ev < EV_N; ev++) {
				if (!ev_on(o, (enum rec_event)ev) || (timeline && ev != EV_BPF))
					continue;
				if (out_name_for_event(name, ev_word(o, (enum rec_event)ev), buf, sizeof(buf)) != 0 ||
				    add_spec(o, buf, f, (enum rec_event)ev) != 0)
					return -1;
				any = true;
			}
			if (!any) {
				msg_say("%s holds the sampler's samples (cpu, offcpu, wall, a perf event); '%s' has "
					"nothing to hold with -e %s%s%s\n",
					what, name, ev_word(o, EV_ALLOC), ev_count(o) > 1 ? "," : "",
					ev_word(o, EV_LOCK));
				return -1;
			}
			continue;
		}
		if (nev == 1) { /* one event: every output holds it, whatever its name */
			enum rec_event ev = ev_on(o, EV_BPF) ? EV_BPF : ev_on(o, EV_ALLOC) ? EV_ALLOC : EV_LOCK;
			if (timeline && ev != EV_BPF) {
				msg_say("%s holds the sampler's samples, not %s; write %s to .svg, "
					".folded, .pb.gz, .json or .jfr\n",
					what, ev_word(o, ev), ev_word(o, ev));
				return -1;
			}
			if (add_spec(o, name, f, ev) != 0)
				return -1;
			continue;
		}
		if (w == -2) {
			msg_say("output '%s' names more than one event; name it for one (cpu.svg, "
				"alloc.svg) or use %%e\n",
				name);
			return -1;
		}
		if (named != EV_N && (named > EV_N || !ev_on(o, named))) {
			msg_say("output '%s' is named for %s, which is not recorded; add it to -e or "
				"rename the output\n",
				name, words[w]);
			return -1;
		}
		if (named != EV_N) {
			if (timeline && named != EV_BPF) {
				msg_say("%s holds the sampler's samples, not %s ('%s')\n", what, ev_word(o, named),
					name);
				return -1;
			}
			if (add_spec(o, name, f, named) != 0)
				return -1;
			continue;
		}
		if (timeline) { /* the sampler's event only, under its own name */
			if (!ev_on(o, EV_BPF)) {
				msg_say("%s holds the sampler's samples (cpu, offcpu, wall, a perf event); '%s' has "
					"nothing to hold with -e alloc,lock\n",
					what, name);
				return -1;
			}
			if (add_spec(o, name, f, EV_BPF) != 0)
				return -1;
			continue;
		}
		for (int ev = 0; ev < EV_N; ev++) {
			if (!ev_on(o, (enum rec_event)ev))
				continue;
			if (out_name_insert_event(name, ev_word(o, (enum rec_event)ev), buf, sizeof(buf)) != 0 ||
			    add_spec(o, buf, f, (enum rec_event)ev) != 0) {
				msg_say("output name '%.200s' is too long\n", name);
				return -1;
			}
		}
	}
	return 0;
}

int record_outputs_plan(struct record_opts *o, bool (*same_file)(const char *a, const char *b))
{
	if (o->nuser_outputs == 0 && !o->push) { /* with --push, files only when asked for */
		o->user_outputs[0] = "jflame.svg";
		o->user_formats[0] = profile_format_named("svg");
		o->nuser_outputs = 1;
	}
	for (size_t i = 0; i < o->nuser_outputs; i++) {
		char err[512];
		const char *why = NULL;
		if (strcmp(o->user_outputs[i], "-") == 0) {
			/* one flame graph on standard output, written at the end */
			if (ev_count(o) > 1)
				why = "it holds one event's flame graph; name files for several events (cpu.svg, alloc.svg)";
			else if (o->window_ns)
				why = "--window writes a flame graph per window; name files (cpu-%t.svg)";
			else if (o->command)
				why = "the launched command writes there too; name a file";
		}
		if (why) {
			msg_say("-o - (standard output): %s\n", why);
			return -1;
		}
		if (out_name_check(o->user_outputs[i], err, sizeof(err)) != 0) {
			msg_say("%s\n", err);
			return -1;
		}
	}
	if (outputs_expand(o) != 0)
		return -1;
	size_t nstacks = 0;
	for (size_t i = 0; i < o->noutputs; i++) {
		char err[512];
		for (size_t j = 0; j < i; j++) {
			if (same_file(o->outputs[i], o->outputs[j])) {
				msg_say("output %s is named twice once the events are in the names; give each "
					"output once\n",
					o->outputs[i]);
				return -1;
			}
		}
		if (out_name_check(o->outputs[i], err, sizeof(err)) != 0) {
			msg_say("%s\n", err);
			return -1;
		}
		if ((o->keep || o->keep_bytes) && out_name_varies(o->outputs[i]) &&
		    !out_name_fixed_dir(o->outputs[i])) {
			msg_say("--keep rotates files in one directory; '%s' has fields in its directory "
				"part: put %%t or %%n in the file name only\n",
				o->outputs[i]);
			return -1;
		}
		nstacks += (o->formats[i]->needs & PF_NEEDS_SAMPLE_LOG) != 0;
	}
	if (nstacks > 1) {
		msg_say("only one .stacks output at a time\n");
		return -1;
	}
	return 0;
}

/* ---- a window written ------------------------------------------------------ */

/* What a window's outputs say about it: time, rate, counts, targets and the
 * frame-pointer finding. Samples lost in the ring buffer count in the window
 * open when they are noticed. */
void record_window_describe(struct record *r, struct window *w, double seconds)
{
	struct recording *rec = &w->rec;
	struct sampler_stats st;
	char *fp = rec->frame_pointers;
	size_t fplen = sizeof(rec->frame_pointers);
	pid_t seen[64];
	size_t nseen;
	const pid_t *targets;
	size_t ntargets;
	int on = 0, off = 0, unknown = 0, walked = 0, walked_on = 0, walked_off = 0;
	pid_t off_pid = 0, unknown_pid = 0;

	sampler_read_stats(r->sampler, &st);
	rec->seconds = seconds;
	rec->freq = r->o.freq;
	/* the row recorded, and the perf event it took (cpu's where the CPU has no cycles) */
	rec->ev = r->o.ev[EV_BPF] ? r->o.ev[EV_BPF] : rec->ev;
	const struct event_kind *took = sampler_event(r->sampler);
	if (rec->ev->period) /* a sample every N events: the meta's period */
		rec->interval = r->o.period ? r->o.period : rec->ev->period;
	if (rec->ev->flags & EVENT_BLOCKS) /* sched_switch, with wall's cpu-clock */
		snprintf(rec->event, sizeof(rec->event), "%s%ssched_switch", took ? took->perf_name : "",
			 took ? "+" : "");
	else
		snprintf(rec->event, sizeof(rec->event), "%s", took ? took->perf_name : rec->ev->perf_name);
	if (rec->ev->flags & EVENT_BLOCKS) {
		rec->min_block_ns = r->o.min_block_ns;
		rec->short_blocks = st.short_blocks - r->short_before;
		rec->short_ns = st.short_ns - r->short_ns_before;
		r->short_before = st.short_blocks;
		r->short_ns_before = st.short_ns;
	}
	rec->lost = st.dropped - r->dropped_before;
	rec->samples = r->o.window_ns ? w->handled + rec->lost : st.samples;
	r->dropped_before = st.dropped;
	rec->truncated = w->truncated;
	rec->unwind_failed = w->unwind_failed;
	rec->stack_errors = w->stack_errors;
	if (r->o.all) {
		snprintf(rec->target, sizeof(rec->target), "all processes");
		nseen = symbolizer_processes(r->sy, seen, 64);
		targets = seen;
		ntargets = nseen;
	} else {
		/* whole entries only: a name cut in the middle would not be UTF-8 */
		size_t pos = 0;
		for (size_t i = 0; i < r->o.npids; i++) {
			char one[128];
			int k = snprintf(one, sizeof(one), "%spid %d (%s)", i ? ", " : "", (int)r->o.pids[i],
					 symbolizer_process_name(r->sy, r->o.pids[i]));
			if (k < 0 || (size_t)k >= sizeof(one) || pos + (size_t)k >= sizeof(rec->target))
				break;
			memcpy(rec->target + pos, one, (size_t)k + 1);
			pos += (size_t)k;
		}
		targets = r->o.pids;
		ntargets = r->o.npids;
	}
	if (r->o.command && !r->o.all) { /* the launched command's JVMs, alive or not */
		nseen = 0;
		for (size_t i = 0; i < r->njvm_facts && nseen < 64; i++)
			seen[nseen++] = r->jvm_facts[i].pid;
		targets = seen;
		ntargets = nseen;
	}
	for (size_t i = 0; i < ntargets; i++) {
		const struct jvm_fact *was = NULL;
		for (size_t k = 0; k < r->njvm_facts && !was; k++)
			if (r->jvm_facts[k].pid == targets[i])
				was = &r->jvm_facts[k];
		bool alive_jvm = symbolizer_is_jvm(r->sy, targets[i]);
		if (!alive_jvm && !was)
			continue;
		/* what is known now, else as it was last seen (a JVM that exited and was forgotten) */
		int v = alive_jvm ? symbolizer_frame_pointers(r->sy, targets[i]) : -1;
		if (v < 0 && was)
			v = was->fp;
		if ((alive_jvm && symbolizer_walks_hotspot(r->sy, targets[i])) || (was && was->walked)) {
			walked++; /* frame pointers do not matter to it */
			walked_on += v > 0;
			walked_off += v == 0;
			continue;
		}
		if (v > 0)
			on++;
		else if (v == 0)
			off++, off_pid = off_pid ? off_pid : targets[i];
		else
			unknown++, unknown_pid = unknown_pid ? unknown_pid : targets[i];
	}
	rec->fp_warning = off || unknown;
	if (off)
		snprintf(fp, fplen,
			 "WARNING frame pointers: off in pid %d%s: Java frames below compiled code are lost; "
			 "restart it with -XX:+PreserveFramePointer",
			 (int)off_pid, off > 1 ? " and others" : "");
	else if (unknown)
		snprintf(fp, fplen,
			 "WARNING frame pointers: unknown in pid %d%s (no jflame agent): Java frames "
			 "are not named; start it with -agentpath:libjflame-agent.so",
			 (int)unknown_pid, unknown > 1 ? " and others" : "");
	else if (walked)
		snprintf(fp, fplen, "Java stacks: HotSpot walker%s",
			 walked_on || on ? (walked_off ? "; frame pointers: "
							 "on in some JVMs (not needed)" :
							 "; frame pointers: on") :
			 walked_off	 ? "; frame pointers: off "
					   "(not needed)" :
					   "");
	else if (on)
		snprintf(fp, fplen, "frame pointers: on");
	else
		snprintf(fp, fplen, "frame pointers: n/a (no JVM)");
	/* compiled frames named from the JVMs' own debug info (no agent) */
	const struct symbolizer_inline *inl = symbolizer_inline_stats(r->sy);
	size_t used = strlen(fp);
	if (inl->unsupported_pid && !r->o.no_inline)
		snprintf(fp + used, fplen - used,
			 "; inlined frames not shown in pid %d (debug info of a layout this "
			 "jflame does not read)",
			 (int)inl->unsupported_pid);
	else if (inl->safepoint_only_pid && !r->o.no_inline)
		snprintf(fp + used, fplen - used,
			 "; inlining placed at safepoints only in pid %d (no "
			 "-XX:+DebugNonSafepoints)",
			 (int)inl->safepoint_only_pid);
	used = strlen(fp);
	if (walked && r->kf.note[0]) /* the walker's depth on an older kernel */
		snprintf(fp + used, fplen - used, "; %s", r->kf.note);
	used = strlen(fp);
	if (inl->bad)
		snprintf(fp + used, fplen - used,
			 "; %" PRIu64 " compiled frames without inlining (debug info did not "
			 "decode)",
			 inl->bad);
	/* the agents' recordings: drops in the rings (shared by alloc and lock)
	 * count in the window open when they are noticed */
	const struct agent_samples_stats *ast = agent_samples_stats(r->agents);
	for (int k = 0; k < 2; k++) {
		struct recording *j = &w->jrec[k];
		if (!ev_on(&r->o, (enum rec_event)(EV_AGENT + k)))
			continue;
		j->seconds = seconds;
		snprintf(j->target, sizeof(j->target), "%s", rec->target);
		j->ev = r->o.ev[EV_AGENT + k];
		snprintf(j->event, sizeof(j->event), "%s", j->ev->perf_name);
		j->interval = r->o.alloc_interval;
		if (k == J_LOCK) {
			j->min_block_ns = r->o.lock_min_ns;
			j->short_blocks = ast->lock_short - r->ring_short_before;
			r->ring_short_before = ast->lock_short;
		}
		j->lost = ast->dropped - r->ring_dropped_before[k];
		r->ring_dropped_before[k] = ast->dropped;
		j->samples = w->jhandled[k];
		j->truncated = w->jtruncated[k];
		snprintf(j->frame_pointers, sizeof(j->frame_pointers), "Java stacks from JVMTI (the agent)");
		snprintf(j->note, sizeof(j->note), "%s", ast->agent_error);
	}
}

/* Writes window w, which ended at end_ns, says so in one line, and frees it.
 * A window's outputs that cannot be written are warned about; the recording
 * goes on. -1 when some output failed. */
int record_window_close(struct record *r, struct window *w, uint64_t end_ns)
{
	char wrote[8192], err[ERR_LEN] = "", when[32];
	struct out_name_vars v = { .time_ns = w->start_real_ns };
	int rc;
	if (end_ns > w->end_ns)
		end_ns = w->end_ns;
	record_window_describe(r, w, end_ns > w->start_ns ? (double)(end_ns - w->start_ns) / 1e9 : 0);
	const struct recording *rec = &w->rec;
	out_name_expand("%t", &v, when, sizeof(when));
	if (r->tty_progress)
		fprintf(stderr, "\r\033[K");
	rc = 0;
	if (ev_on(&r->o, EV_BPF)) {
		rc = record_outputs_write(r, w, EV_BPF, wrote, sizeof(wrote), err, sizeof(err));
		if (r->pusher)
			record_outputs_push(r, w);
		msg_say("window %" PRIu64 " from %s, %.1f s: %s%s%" PRIu64 " samples (%" PRIu64 " lost, %" PRIu64
			" truncated, %" PRIu64 " unwind failed, %" PRIu64 " failed stack reads); wrote%s\n",
			w->seq, when, rec->seconds,
			ev_on(&r->o, EV_ALLOC) || ev_on(&r->o, EV_LOCK) ? r->o.ev[EV_BPF]->word : "",
			ev_on(&r->o, EV_ALLOC) || ev_on(&r->o, EV_LOCK) ? ": " : "", rec->samples, rec->lost,
			rec->truncated, rec->unwind_failed, rec->stack_errors, wrote[0] ? wrote : " nothing");
		if (rc != 0)
			msg_warn("window %" PRIu64 ": %s\n", w->seq, err);
		if (r->window_done) {
			/* --baseline compares stacks as folded output has them: without lines */
			struct record_window_done wd = { w->seq, w->start_real_ns, when,
							 wrote[0] == ' ' ? wrote + 1 : wrote,
							 r->o.npids ? r->o.pids[0] : getpid() };
			struct recording plain;
			if (!rec->stacks.meta.lines) {
				r->window_done(r->window_done_ctx, rec, &wd);
			} else if (recording_copy_plain(&plain, rec) == 0) {
				r->window_done(r->window_done_ctx, &plain, &wd);
				recording_free(&plain);
			} else {
				msg_warn("window %" PRIu64 ": out of memory comparing it with the baseline\n", w->seq);
			}
		}
	}
	for (int ev = EV_ALLOC; ev <= EV_LOCK; ev++) {
		const struct recording *j = &w->jrec[ev == EV_ALLOC ? J_ALLOC : J_LOCK];
		char total[32];
		int jrc = 0;
		if (!ev_on(&r->o, (enum rec_event)ev))
			continue;
		wrote[0] = '\0';
		if (j->total) /* an empty one writes nothing */
			jrc = record_outputs_write(r, w, (enum rec_event)ev, wrote, sizeof(wrote), err, sizeof(err));
		if (ev == EV_ALLOC)
			event_human_bytes(total, sizeof(total), (double)j->total_weight);
		else
			snprintf(total, sizeof(total), "%.1f ms", (double)j->total_weight / 1e6);
		msg_say("window %" PRIu64 " from %s, %.1f s: %s: %" PRIu64 " samples, %s (%" PRIu64
			" dropped); wrote%s\n",
			w->seq, when, j->seconds, ev_word(&r->o, (enum rec_event)ev), j->samples, total, j->lost,
			wrote[0] ? wrote : " nothing");
		if (jrc != 0) {
			msg_warn("window %" PRIu64 ": %s\n", w->seq, err);
			rc = -1;
		}
	}
	if (w->oom)
		msg_warn("window %" PRIu64 ": out of memory, %" PRIu64 " samples not kept\n", w->seq, w->oom);
	r->closed++;
	if (ev_on(&r->o, EV_BPF)) {
		r->total_samples += rec->samples;
		r->total_lost += rec->lost;
	}
	for (int k = 0; k < 2; k++) {
		r->total_samples += w->jrec[k].samples;
		r->total_lost += w->jrec[k].lost;
	}
	record_window_free(w);
	return rc;
}

/* ---- pushing ------------------------------------------------------------------ */

/* The stacks of one series in a window: a JVM's, or every other process's. */
struct series {
	pid_t pid; /* 0: the processes that are not JVMs */
	char pod[128], con[128];
	struct stack_table t;
};

/* The series a folded stack belongs to, and where its frames start once the
 * roots that become labels ([Pod], [Con], and a JVM's [pid]) are cut off. */
static struct series *series_of(struct record *r, struct series **all, size_t *n, size_t *cap, const char *stack,
				const char **rest)
{
	const char *pod = NULL, *con = NULL, *p = stack;
	size_t podn = 0, conn = 0;
	unsigned pid = 0;
	for (;;) {
		const char *semi = strchr(p, ';');
		size_t len = semi ? (size_t)(semi - p) : strlen(p);
		if (len > 5 && strncmp(p, "[Pod]", 5) == 0)
			pod = p + 5, podn = len - 5;
		else if (len > 5 && strncmp(p, "[Con]", 5) == 0)
			con = p + 5, conn = len - 5;
		else if (sscanf(p, "[%u] ", &pid) == 1)
			break;
		if (!semi)
			return NULL;
		p = semi + 1;
	}
	bool jvm = symbolizer_is_jvm(r->sy, (pid_t)pid);
	const char *after = strchr(p, ';');
	*rest = jvm ? (after ? after + 1 : p + strlen(p)) : p; /* others keep their "[pid] name" */
	pid_t key = jvm ? (pid_t)pid : 0;
	for (size_t i = 0; i < *n; i++)
		if ((*all)[i].pid == key)
			return &(*all)[i];
	if (ARRAY_GROW(*all, *cap, *n + 1) != 0)
		return NULL;
	struct series *s = &(*all)[(*n)++];
	memset(s, 0, sizeof(*s));
	s->pid = key;
	if (jvm) {
		snprintf(s->pod, sizeof(s->pod), "%.*s", (int)(podn < 127 ? podn : 127), pod ? pod : "");
		snprintf(s->con, sizeof(s->con), "%.*s", (int)(conn < 127 ? conn : 127), con ? con : "");
	}
	stack_table_init(&s->t);
	return s;
}

/* Hands window w to the pusher: one pprof per series, named and labelled as
 * Pyroscope's own clients do. */
void record_outputs_push(struct record *r, struct window *w)
{
	const struct recording *src = &w->rec; /* with source lines where an output wants them */
	uint64_t period = r->o.freq > 0 ? 1000000000ULL / (uint64_t)r->o.freq : 0;
	int64_t end_real = w->start_real_ns + (int64_t)(w->rec.seconds * 1e9);
	struct series *all = NULL;
	size_t n = 0, ns = 0, series_cap = 0;
	char host[256] = "", pidbuf[16], err[ERR_LEN];
	struct stack_count *sc = recording_sorted(src, &n);
	gethostname(host, sizeof(host) - 1);
	for (size_t i = 0; sc && i < n; i++) {
		const char *rest;
		struct series *s = series_of(r, &all, &ns, &series_cap, sc[i].stack, &rest);
		if (s && *rest)
			stack_table_add(&s->t, rest, strlen(rest), sc[i].count,
					recording_weighted(&w->rec) ? sc[i].weight : sc[i].count * period);
	}
	free(sc);
	for (size_t i = 0; i < ns; i++) {
		struct series *s = &all[i];
		const char *keys[MAX_LABELS + 6], *values[MAX_LABELS + 6];
		size_t k = 0;
		char *body = NULL;
		size_t len = 0;
		FILE *f;
		for (size_t j = 0; j < r->o.nlabels; j++, k++)
			keys[k] = r->o.label_keys[j], values[k] = r->o.label_values[j];
		const char *app = r->o.app ? r->o.app : s->pid ? symbolizer_app_name(r->sy, s->pid) : "jflame-host";
		snprintf(pidbuf, sizeof(pidbuf), "%d", (int)s->pid);
		keys[k] = "service_name", values[k++] = app;
		keys[k] = "host", values[k++] = host;
		if (s->pid) {
			keys[k] = "pid", values[k++] = pidbuf;
			keys[k] = "process", values[k++] = symbolizer_process_name(r->sy, s->pid);
			keys[k] = "pod", values[k++] = s->pod;
			keys[k] = "container", values[k++] = s->con;
		}
		stack_table_meta_from_recording(&s->t, &w->rec, end_real);
		s->t.meta.lines = src->stacks.meta.lines;
		struct push_profile *prof = calloc(1, sizeof(*prof));
		if (!prof || !(f = open_memstream(&body, &len)) ||
		    (pprof_write(f, &s->t, false, err, sizeof(err)) != 0 ? (fclose(f), 1) : fclose(f) != 0) ||
		    !(prof->name = push_series_name(app, keys, values, k))) {
			free(body);
			if (prof)
				free(prof->name);
			free(prof);
			msg_warn("window %" PRIu64 " not pushed: out of memory\n", w->seq);
		} else {
			prof->pprof = (uint8_t *)body;
			prof->len = len;
			prof->from_ns = w->start_real_ns;
			prof->until_ns = end_real;
			prof->sample_rate = r->o.freq;
			push_enqueue(r->pusher, prof);
			r->pushed_profiles++;
		}
		stack_table_free(&s->t);
	}
	free(all);
}
