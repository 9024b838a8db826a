/* record_windows.c - a recording's windows: the folded samples of the sampler and of the
 * agents go into the window of their time, with its .stacks file and heat map; opened, freed. */
#include "record_windows.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"
#include "heatmap.h"
#include "out_name.h"
#include "record_outputs.h"
#include "sampler.h"
#include "symbolize.h"
#include "msg.h"

/* perf script's text: "comm pid/tid [cpu] secs: period event:", frames leaf first. */
static void write_stacks_sample(struct record *r, struct window *w, const struct profile_sample *s, uint64_t offcpu_ns,
				const char *thread, const struct frame *f, size_t n)
{
	FILE *out = stacks_order_begin(&w->stacks_order, w->stacks.f);
	/* the perf event taken (cpu's fallback where the CPU has no cycles), by its row */
	const struct event_kind *took = r->sampler ? sampler_event(r->sampler) : NULL;
	const char *event = took ? took->perf_name : "cpu-clock";
	uint64_t period = took ? event_stacks_period(took, r->o.freq) : 1000000000ULL / (uint64_t)r->o.freq;
	if (took && took->weigh == EVENT_WEIGH_PERIOD && !took->period)
		period = s->weight_ns;	      /* the events it stands for, the kernel's period */
	if (s->kind == PROFILE_KIND_OFFCPU) { /* as perf's offcpu-time: the period is the time blocked */
		event = "offcpu-time";
		period = offcpu_ns;
	}
	fprintf(out, "%s %u/%u [%03u] %" PRIu64 ".%06" PRIu64 ": %" PRIu64 " %s:\n", thread, s->pid, s->tid, s->cpu,
		(uint64_t)(s->ts_ns / 1000000000ULL), (uint64_t)(s->ts_ns % 1000000000ULL) / 1000, period, event);
	for (size_t i = 0; i < n; i++) {
		if (f[i].line > 0) /* perf script -F+srcline puts "file:line" under its frame */
			fprintf(out, "\t%16" PRIx64 " %s (%s)\n  %s:%d\n", (uint64_t)f[i].addr, f[i].name, f[i].dso,
				f[i].file ? f[i].file : "??", f[i].line);
		else
			fprintf(out, "\t%16" PRIx64 " %s (%s)\n", (uint64_t)f[i].addr, f[i].name, f[i].dso);
	}
	fputc('\n', out);
	stacks_order_end(&w->stacks_order, s->ts_ns, w->stacks.f);
}

/* The window a sample taken at ts belongs to: the current one, or the next
 * when ts is past the current one's end (opened then). NULL when there is no
 * memory for a window. */
static struct window *window_for(struct record *r, uint64_t ts)
{
	struct window *w = &r->win[r->cur], *next = &r->win[!r->cur];
	if (!w->open && record_window_open(r, w, w->start_ns, w->seq) != 0)
		return NULL;
	if (ts < w->end_ns)
		return w;
	if (!next->open && record_window_open(r, next, w->end_ns, w->seq + 1) != 0)
		return w; /* no memory for another window: it stays in this one */
	return next;
}

/* The pipeline's sink: a named and folded sample goes into the window of its
 * time, with its counts, and into the .stacks and heat map outputs. */
/* A sample's time (seconds since its window began) in the timeline of rec's
 * store, which holds its stack: the window's sample log, what a .jfr output's
 * events are stamped with and the heat map is drawn from. thread: "" or
 * RECORD_IDLE_THREAD (the idle task's samples, which the heat map leaves out). */
static void add_time(struct window *w, struct recording *rec, const char *stack, size_t len, uint64_t ts_ns,
		     uint64_t weight, const char *thread)
{
	long id = str_index_find(&rec->stacks.stacks, stack, len);
	double t = ts_ns > w->start_ns ? (double)(ts_ns - w->start_ns) / 1e9 : 0;
	if (id < 0 || stack_table_add_timed(&rec->stacks, (uint32_t)id, thread, strlen(thread), t, weight) != 0)
		w->oom++;
}

/* The entry of pid in w's bytes of distinct stacks (added); NULL when out of memory. */
static struct pid_bytes *pid_slot(struct window *w, uint32_t pid)
{
	uint32_t i;
	if (ARRAY_GROW(w->pid_bytes, w->pid_bytes_cap, w->npid_bytes + 1) != 0 ||
	    (i = u64_map_add(&w->pid_ids, pid, (uint32_t)w->npid_bytes)) == U64_MAP_NONE)
		return NULL;
	if (i == w->npid_bytes)
		w->pid_bytes[w->npid_bytes++] = (struct pid_bytes){ .pid = pid };
	return &w->pid_bytes[i];
}

/* Whether a sample's stack fits the window's caps: one it has already does;
 * a new one is charged to its process. false: past a cap (said once per
 * process), to be kept as its roots and WINDOW_CAPPED_FRAME. */
static bool stack_fits(struct record *r, struct window *w, const struct folded_sample *fs)
{
	struct pid_bytes *pb = pid_slot(w, fs->s->pid);
	if (!pb)
		return false;
	/* the window's one store holds the stack with its lines when outputs want them */
	const char *text = r->want_lines ? fs->lines : fs->stack;
	uint64_t len = r->want_lines ? fs->lines_len : fs->len;
	bool known = str_index_find(&w->rec.stacks.stacks, text, len) >= 0;
	if (pb->bytes + len <= WINDOW_PID_STACK_BYTES && w->stack_bytes + len <= WINDOW_STACK_BYTES) {
		if (!known) {
			pb->bytes += len;
			w->stack_bytes += len;
		}
		return true;
	}
	if (known)
		return true;
	if (!pb->said) {
		pb->said = true;
		msg_warn("pid %u: more than %llu MiB of distinct stacks in window %" PRIu64 " (%llu MiB of all "
			 "processes'): its new stacks are kept as %s under its thread\n",
			 fs->s->pid, WINDOW_PID_STACK_BYTES >> 20, w->seq, WINDOW_STACK_BYTES >> 20,
			 WINDOW_CAPPED_FRAME);
	}
	w->capped++;
	return false;
}

/* A sample past the caps: its roots, then WINDOW_CAPPED_FRAME. NULL when out of memory. */
static char *capped_stack(const struct folded_sample *fs, size_t *len)
{
	size_t roots = fs->roots_len <= fs->len ? fs->roots_len : fs->len;
	char *c = malloc(roots + 1 + sizeof(WINDOW_CAPPED_FRAME));
	if (!c)
		return NULL;
	memcpy(c, fs->stack, roots);
	*len = roots;
	if (roots)
		c[(*len)++] = ';';
	memcpy(c + *len, WINDOW_CAPPED_FRAME, sizeof(WINDOW_CAPPED_FRAME));
	*len += sizeof(WINDOW_CAPPED_FRAME) - 1;
	return c;
}

/* The part of a block (taken as the time before it went out) within the
 * recording: a block begun before the start (the sampler is on a little
 * earlier), or sent after -d's time was up (a late end of a busy loop, the
 * drain), counts its time inside only. */
static uint64_t offcpu_inside(const struct record *r, const struct profile_sample *s)
{
	uint64_t to = s->ts_ns < r->stop_ns ? s->ts_ns : r->stop_ns;
	uint64_t from = s->ts_ns > s->weight_ns ? s->ts_ns - s->weight_ns : 0;
	if (from < r->start_ns)
		from = r->start_ns;
	return to > from ? to - from : 0;
}

void record_windows_add_folded(void *ctx, const struct folded_sample *fs_in)
{
	struct record *r = ctx;
	const struct profile_sample *s = fs_in->s;
	struct window *w = window_for(r, s->ts_ns);
	struct folded_sample capped, inside;
	const struct folded_sample *fs = fs_in;
	uint64_t offcpu_ns = 0;
	char *cut = NULL;
	if (s->kind == PROFILE_KIND_OFFCPU) {
		offcpu_ns = offcpu_inside(r, s);
		if (offcpu_ns == 0) {
			r->offcpu_outside++;
			return;
		}
		if (fs->weight && offcpu_ns != fs->weight) {
			inside = *fs;
			inside.weight = offcpu_ns;
			fs = &inside;
		}
	}
	if (!w) {
		r->no_window++;
		return;
	}
	if (!fs->oom && !stack_fits(r, w, fs)) {
		capped = *fs;
		capped.stack = capped.lines = cut = capped_stack(fs, &capped.len);
		capped.lines_len = capped.len;
		capped.oom = capped.lines_oom = cut == NULL;
		fs = &capped;
	}
	w->handled++;
	if (fs->flags & FOLDED_UNWIND_FAILED)
		w->unwind_failed++;
	if (fs->flags & FOLDED_TRUNCATED)
		w->truncated++;
	w->stack_errors += fs->stack_errors;
	/* one store: the stack with its frames' source lines where an output wants
	 * them (folded output and graphs leave them out), and the sample log */
	const char *text = r->want_lines ? fs->lines : fs->stack;
	size_t len = r->want_lines ? fs->lines_len : fs->len;
	if ((r->want_lines ? fs->lines_oom : fs->oom) || recording_add_weighted(&w->rec, text, len, 1, fs->weight) != 0)
		w->oom++;
	else if (r->want_times || r->want_heatmap)
		add_time(w, &w->rec, text, len, s->ts_ns, fs->weight, s->pid == 0 ? RECORD_IDLE_THREAD : "");
	if (w->stacks_open)
		write_stacks_sample(r, w, s, offcpu_ns, fs->thread, fs->frames, fs->nframes);
	free(cut);
}

/* The agents' samples' sink: into the window of their time, with its counts. */
void record_windows_add_agent(void *ctx, const struct agent_sample *as)
{
	struct record *r = ctx;
	struct window *w = window_for(r, as->ts_ns);
	if (!w) {
		r->no_window++;
		return;
	}
	r->ring_samples++;
	w->jhandled[as->kind]++;
	if (as->truncated)
		w->jtruncated[as->kind]++;
	if (as->oom || recording_add_weighted(&w->jrec[as->kind], as->stack, as->len, 1, as->weight) != 0)
		w->oom++;
	else if (r->want_times)
		add_time(w, &w->jrec[as->kind], as->stack, as->len, as->ts_ns, as->weight, "");
}

void record_window_free(struct window *w)
{
	recording_free(&w->rec);
	recording_free(&w->jrec[J_ALLOC]);
	recording_free(&w->jrec[J_LOCK]);
	if (w->stacks_open)
		out_file_abort(&w->stacks);
	stacks_order_free(&w->stacks_order);
	free(w->pid_bytes);
	w->pid_bytes = NULL;
	w->npid_bytes = w->pid_bytes_cap = 0;
	u64_map_free(&w->pid_ids);
	w->stacks_open = false;
	w->open = false;
}

int record_window_open_err(struct record *r, struct window *w, uint64_t start_ns, uint64_t seq, char *err,
			   size_t errlen)
{
	memset(w, 0, sizeof(*w));
	w->seq = seq;
	w->start_ns = start_ns;
	w->end_ns = r->o.window_ns ? start_ns + r->o.window_ns : UINT64_MAX;
	w->start_real_ns = (int64_t)start_ns + r->real_minus_mono_ns;
	if (recording_init(&w->rec) != 0 || (ev_on(&r->o, EV_ALLOC) && recording_init(&w->jrec[J_ALLOC]) != 0) ||
	    (ev_on(&r->o, EV_LOCK) && recording_init(&w->jrec[J_LOCK]) != 0)) {
		record_window_free(w);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < r->o.noutputs; i++) {
		if (!(r->o.formats[i]->needs & PF_NEEDS_SAMPLE_LOG))
			continue;
		if (record_output_path(r, w, i, w->stacks_path, sizeof(w->stacks_path), err, errlen) != 0 ||
		    out_file_open(&w->stacks, w->stacks_path, err, errlen) != 0) {
			record_window_free(w);
			return -1;
		}
		w->stacks_open = true;
	}
	w->rec.stacks.meta.lines = r->want_lines; /* its frames carry their source lines */
	w->open = true;
	return 0;
}

/* Opens window seq from start_ns. A window after the first that cannot be
 * opened is said in a warning; its samples stay in the window before. */
int record_window_open(struct record *r, struct window *w, uint64_t start_ns, uint64_t seq)
{
	char err[ERR_LEN];
	if (record_window_open_err(r, w, start_ns, seq, err, sizeof(err)) == 0)
		return 0;
	msg_warn("window %" PRIu64 ": %s\n", seq, err);
	return -1;
}
