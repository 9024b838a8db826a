/* window_regress.c - record --baseline: after each window, its regressions against
 * the baseline said in one line each, drawn as a differential graph, handed to a command. */
#include "window_regress.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "msg.h"
#include "format_table.h"
#include "diff_graph.h"
#include "folded_diff.h"
#include "out_file.h"
#include "out_name.h"
#include "regress_report.h"
#include "stack_table.h"

#define LINES_MAX    5	/* regression lines a window */
#define HOOKS_MAX    16 /* commands running at once; more are skipped (said) */
#define HOOK_WAIT_MS 5000

struct window_regress {
	struct window_regress_opts o;
	struct baseline *b;
	pid_t hooks[HOOKS_MAX];
	size_t nhooks;
	uint64_t judged, regressed; /* windows compared, and with a regression */
};

static int read_profile(struct window_regress *w, char *err, size_t errlen)
{
	struct stack_table t;
	int rc = -1;
	stack_table_init(&t);
	if (profile_read(&t, w->o.file, NULL, NULL, 0, "record --baseline", err, errlen) != 0)
		goto out;
	for (size_t i = 0; i < t.stacks.n; i++)
		if (baseline_add_profile_stack(w->b, t.stacks.strs[i], t.stacks.lens[i], t.counts[i]) != 0) {
			snprintf(err, errlen, "out of memory reading %s", w->o.file);
			goto out;
		}
	if (t.total_count == 0) {
		snprintf(err, errlen,
			 "--baseline %s has no samples; give a profile with samples (record's "
			 ".folded or .pb.gz)",
			 w->o.file);
		goto out;
	}
	rc = 0;
out:
	stack_table_free(&t);
	return rc;
}

struct window_regress *window_regress_new(const struct window_regress_opts *o, char *err, size_t errlen)
{
	struct window_regress *w = calloc(1, sizeof(*w));
	if (!w || !(w->b = baseline_new(&o->b))) {
		snprintf(err, errlen, "out of memory for --baseline");
		free(w);
		return NULL;
	}
	w->o = *o;
	if (o->b.kind == BASELINE_PROFILE && read_profile(w, err, errlen) != 0) {
		window_regress_free(w);
		return NULL;
	}
	return w;
}

static void reap(struct window_regress *w, bool wait_all)
{
	for (int waited = 0;; waited += 50) {
		size_t k = 0;
		for (size_t i = 0; i < w->nhooks; i++)
			if (waitpid(w->hooks[i], NULL, WNOHANG) == 0)
				w->hooks[k++] = w->hooks[i]; /* still running */
		w->nhooks = k;
		if (!wait_all || !k || waited >= HOOK_WAIT_MS)
			break;
		struct timespec ts = { 0, 50 * 1000000L };
		nanosleep(&ts, NULL);
	}
}

void window_regress_free(struct window_regress *w)
{
	if (!w)
		return;
	reap(w, true);
	if (w->nhooks)
		msg_say("%zu --on-regression command%s still running; not waiting for %s\n", w->nhooks,
			w->nhooks == 1 ? "" : "s", w->nhooks == 1 ? "it" : "them");
	baseline_free(w->b);
	free(w);
}

/* The differential graph of the last comparison into path. 0, or -1 with err. */
static int write_diff(struct window_regress *w, const char *path, const struct window_regress_window *win, char *err,
		      size_t errlen)
{
	struct folded_diff d = { 0 };
	struct out_file of;
	bool opened = false;
	char subtitle[512];
	int rc = -1;
	struct folded_diff_opts fo = { 0 };
	if (folded_diff_build(&d, &baseline_before(w->b)->stacks, &baseline_after(w->b)->stacks, &fo) != 0) {
		snprintf(err, errlen, "out of memory drawing %s", path);
		goto out;
	}
	if (out_file_open(&of, path, err, errlen) != 0)
		goto out;
	opened = true;
	snprintf(subtitle, sizeof(subtitle),
		 "window %llu from %s (%llu samples) against the baseline (%llu samples). "
		 "Widths: the window; red grew, blue shrank",
		 (unsigned long long)win->seq, win->when, (unsigned long long)d.total_after,
		 (unsigned long long)d.total_before);
	enum diff_graph_kind k = DIFF_GRAPH_SVG;
	diff_graph_kind_of(path, &k); /* record checked the name */
	struct compare_options co = { "Regression: baseline vs window", subtitle, "baseline", "window" };
	struct fg_options go = { 0 };
	go.title = "Regression: Differential Flame Graph";
	go.subtitle = subtitle;
	go.differential = true;
	go.legend = true;
	int wr = diff_graph_write(of.f, path, k, &d, &d, &go, &co, err, errlen);
	if (wr != 0)
		goto out;
	opened = false;
	if (out_file_commit(&of, err, errlen) != 0)
		goto out;
	rc = 0;
out:
	if (opened)
		out_file_abort(&of);
	folded_diff_free(&d);
	return rc;
}

static void set_env(const char *k, const char *v)
{
	setenv(k, v ? v : "", 1);
}

/* The command, with the facts in its environment; not waited for. */
static void run_hook(struct window_regress *w, const struct regress_row *top, size_t grew,
		     const struct window_regress_window *win, const char *diff)
{
	char num[64];
	reap(w, false);
	if (w->nhooks >= HOOKS_MAX) {
		msg_warn("window %llu: --on-regression not run: %d commands still running\n",
			 (unsigned long long)win->seq, HOOKS_MAX);
		return;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		msg_warn("window %llu: --on-regression not run: fork: %s\n", (unsigned long long)win->seq,
			 strerror(errno));
		return;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		if (null >= 0)
			dup2(null, 0);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		snprintf(num, sizeof(num), "%llu", (unsigned long long)win->seq);
		set_env("JFLAME_WINDOW", num);
		set_env("JFLAME_WINDOW_START", win->when);
		set_env("JFLAME_FRAME", top->frame);
		snprintf(num, sizeof(num), "%.1f", top->before * 100);
		set_env("JFLAME_BEFORE", num);
		snprintf(num, sizeof(num), "%.1f", top->after * 100);
		set_env("JFLAME_AFTER", num);
		snprintf(num, sizeof(num), "%+.1f", top->change * 100);
		set_env("JFLAME_CHANGE", num);
		snprintf(num, sizeof(num), "%zu", grew);
		set_env("JFLAME_REGRESSIONS", num);
		set_env("JFLAME_FILES", win->wrote);
		set_env("JFLAME_DIFF", diff);
		execl("/bin/sh", "sh", "-c", w->o.on_regression, (char *)NULL);
		_exit(127);
	}
	w->hooks[w->nhooks++] = pid;
}

void window_regress_counts(const struct window_regress *w, uint64_t *judged, uint64_t *regressed)
{
	*judged = w->judged;
	*regressed = w->regressed;
}

/* Whether the judge named frame in this window. */
static bool judge_named(const struct baseline *b, const struct regress *r, const char *frame)
{
	for (size_t i = 0; r && i < r->nrows; i++)
		if (baseline_regression(b, &r->rows[i]) && strcmp(r->rows[i].frame, frame) == 0)
			return true;
	return false;
}

/* The tracker's lines: lasting changes found, still there, gone. How many were found. */
static size_t say_changes(struct window_regress *w, const struct regress *r, const struct window_regress_window *win,
			  FILE *out, struct regress_row *top)
{
	const struct change_event *ev;
	size_t nev, found = 0;
	baseline_changes(w->b, &ev, &nev);
	for (size_t i = 0; i < nev; i++) {
		const struct change_event *e = &ev[i];
		unsigned long long n = (unsigned long long)win->seq, since = (unsigned long long)e->since;
		double pts = (e->after - e->before) * 100;
		if (e->what == CHANGE_FOUND) {
			if (!found++ && top)
				*top = (struct regress_row){ .frame = e->frame,
							     .before = e->before,
							     .after = e->after,
							     .change = e->after - e->before,
							     .p = e->p,
							     .significant = true };
			if (found <= LINES_MAX)
				msg_to(out,
				       "regression in window %llu (%s): %s %.1f%% \u2192 %.1f%% (%+.1f pts since window %llu)\n",
				       n, win->when, e->frame, e->before * 100, e->after * 100, pts, since);
		} else if (e->what == CHANGE_STILL && !judge_named(w->b, r, e->frame)) {
			msg_to(out,
			       "regression in window %llu (%s): %s still %+.1f pts since window %llu (%.1f%% \u2192 %.1f%%)\n",
			       n, win->when, e->frame, pts, since, e->before * 100, e->after * 100);
		} else if (e->what == CHANGE_GONE) {
			msg_to(out, "change gone in window %llu (%s): %s back to %.1f%% (%.1f%% before window %llu)\n",
			       n, win->when, e->frame, e->after * 100, e->before * 100, since);
		}
	}
	if (found > LINES_MAX)
		msg_to(out, "regression in window %llu (%s): and %zu more lasting changes\n",
		       (unsigned long long)win->seq, win->when, found - LINES_MAX);
	return found;
}

int window_regress_check(struct window_regress *w, const struct recording *rec, const struct window_regress_window *win)
{
	const struct regress *r;
	char diff[4096] = "", err[1024] = "";
	FILE *out = w->o.out ? w->o.out : stderr;
	struct regress_row lasting = { 0 };
	int c = baseline_window(w->b, rec, win->seq, &r);
	if (c < 0) {
		msg_warn("window %llu: out of memory comparing it with the baseline\n", (unsigned long long)win->seq);
		return -1;
	}
	reap(w, false);
	if (c == 0) {
		say_changes(w, NULL, win, out, NULL);
		return 0;
	}
	w->judged++;
	size_t grew = baseline_regressions(w->b, r), said = 0;
	const struct regress_row *top = NULL;
	for (size_t i = 0; i < r->nrows; i++) {
		const struct regress_row *x = &r->rows[i];
		if (!baseline_regression(w->b, x))
			continue;
		if (!top)
			top = x;
		if (said++ < LINES_MAX)
			msg_to(out, "regression in window %llu (%s): %s %.1f%% \u2192 %.1f%% (%+.1f pts)\n",
			       (unsigned long long)win->seq, win->when, x->frame, x->before * 100, x->after * 100,
			       x->change * 100);
	}
	if (grew > LINES_MAX)
		msg_to(out, "regression in window %llu (%s): and %zu more frames grew\n", (unsigned long long)win->seq,
		       win->when, grew - LINES_MAX);
	size_t found = say_changes(w, r, win, out, &lasting);
	if (!top && found)
		top = &lasting;
	grew += found;
	if (!grew)
		return 0;
	w->regressed++;
	if (w->o.diff_out) {
		char host[256] = "";
		gethostname(host, sizeof(host) - 1);
		struct out_name_vars v = {
			.time_ns = win->start_real_ns, .pid = win->pid, .host = host, .seq = win->seq
		};
		if (out_name_expand(w->o.diff_out, &v, diff, sizeof(diff)) != 0) {
			msg_warn("window %llu: --diff-out '%s' is too long once expanded\n",
				 (unsigned long long)win->seq, w->o.diff_out);
			diff[0] = '\0';
		} else if (write_diff(w, diff, win, err, sizeof(err)) != 0) {
			msg_warn("window %llu: %s\n", (unsigned long long)win->seq, err);
			diff[0] = '\0';
		} else {
			msg_to(out, "regression in window %llu (%s): differential graph %s\n",
			       (unsigned long long)win->seq, win->when, diff);
		}
	}
	if (w->o.on_regression)
		run_hook(w, top, grew, win, diff);
	return (int)(grew > INT32_MAX ? INT32_MAX : grew);
}
