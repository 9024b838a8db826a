/* builtin-diff.c - `jflame diff`: two folded profiles (BEFORE, AFTER) to a
 * differential flame graph, a side-by-side compare page, or difffolded.pl's text. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "builtin.h"
#include "cli_io.h"
#include "cli_opts.h"
#include "format_table.h"
#include "fg_cli.h"
#include "diff_graph.h"
#include "flamegraph.h"
#include "folded.h"
#include "folded_diff.h"
#include "html_compare.h"
#include "name_normalize.h"
#include "out_file.h"
#include "stack_table.h"
#include "regress.h"
#include "regress_report.h"
#include "regress_cli.h"
#include "window_regress.h"
#include "msg.h"

#define MAX_OUTPUTS    8
#define MAX_WINDOWS    100000 /* files in a side's folder */
#define DEFAULT_TOP    20
#define DEFAULT_ALPHA  0.01
#define EXIT_REGRESSED 3

static const char usage[] = "usage: jflame diff [options] BEFORE AFTER [-o OUT.svg|OUT.html|OUT.folded]...\n"
			    "       jflame diff --report[=json] [--top N] [--fail-above PTS] BEFORE AFTER\n"
			    "       jflame diff --baseline first|previous:N|FILE DIR\n"
			    "\n"
			    "Compares two folded profiles (one 'frame;frame;... count' line per stack, plain\n"
			    "or gzip; '-' for standard input), as difffolded.pl and flamegraph.pl do:\n"
			    "\n"
			    "  .svg     a differential flame graph: the shape of AFTER, red where a frame's\n"
			    "           share of all samples grew, blue where it shrank, deeper for larger\n"
			    "           changes; each frame's tooltip gives the change (+D%) (default, to\n"
			    "           standard output when there is no -o)\n"
			    "  .html    a compare page: BEFORE and AFTER side by side, each its own flame\n"
			    "           graph with the same frames in the same place, coloured by change;\n"
			    "           hover shows both counts and highlights the twin, click zooms both\n"
			    "  .folded  difffolded.pl's text: 'stack BEFORE AFTER' per stack (also .collapsed)\n"
			    "\n"
			    "Report: which frames' shares of the samples changed beyond sampling noise.\n"
			    "BEFORE and AFTER may be any profile convert reads (folded, .stacks, pprof,\n"
			    "speedscope) or a folder of them: each file one window (record --window's\n"
			    "outputs), the windows of a side its replicates.\n"
			    "\n";

static const char usage_tail[] = "\n"
				 "Stacks only in BEFORE have no width in the SVG (its shape is AFTER's); draw\n"
				 "'jflame diff AFTER BEFORE --negate' to see them, or use the compare page.\n"
				 "BEFORE and AFTER may be the same file (nothing changed).\n"
				 "\n"
				 "Examples:\n"
				 "  jflame diff before.folded after.folded -o diff.svg\n"
				 "  jflame diff before.folded after.folded -o compare.html -o diff.svg\n"
				 "  jflame diff -n before.folded.gz after.folded > diff.svg\n"
				 "  jflame diff --report release.pb.gz build.pb.gz --fail-above 2\n"
				 "  jflame diff --report=json windows-before/ windows-after/ > report.json\n";

enum report_kind { REPORT_NONE, REPORT_TEXT, REPORT_JSON };

struct diff_cmd {
	struct fg_options o;
	bool normalize, strip_hex, no_legend, keep_ids;
	enum report_kind report;
	long top;
	double alpha, fail_above; /* fail_above < 0: not asked */
	bool no_normalize;
	bool top_given, alpha_given, confirm_given;
	const char *baseline; /* --baseline: replay a folder of windows */
	struct baseline_opts bo;
	const char *baseline_file;
	const char *before, *after;
	const char *outputs[MAX_OUTPUTS];
	enum diff_graph_kind kinds[MAX_OUTPUTS];
	size_t noutputs;
};

static const struct cli_cmd diff_cli = { "diff", usage, NULL, usage_tail, 22, 0 };

static int opt_report(void *to, char *arg)
{
	enum report_kind *report = to;
	if (!arg || strcmp(arg, "text") == 0) {
		*report = REPORT_TEXT;
	} else if (strcmp(arg, "json") == 0) {
		*report = REPORT_JSON;
	} else {
		msg_say("--report=%s: unknown report format; give --report (text) or --report=json\n", arg);
		return -1;
	}
	return 0;
}

static int opt_baseline(void *to, char *arg)
{
	struct diff_cmd *c = to;
	char e[256];
	if (baseline_parse(arg, &c->bo, &c->baseline_file, e, sizeof(e)) != 0) {
		msg_say("%s\n", e);
		return -1;
	}
	c->baseline = arg;
	return 0;
}

static int opt_output(void *to, char *arg)
{
	struct diff_cmd *c = to;
	if (c->noutputs < MAX_OUTPUTS && diff_graph_kind_of(arg, &c->kinds[c->noutputs]) != 0) {
		msg_say("-o %s: unknown output format; name it .svg, .html or .folded\n", arg);
		return -1;
	}
	return cli_output_add("diff", c->outputs, &c->noutputs, MAX_OUTPUTS, arg);
}

static int parse_options(struct diff_cmd *c, int argc, char **argv)
{
	const struct cli_opt rows[] = {
		ROW_CALL("report", 0, OPT_CALL_OPTIONAL, opt_report, &c->report, "[=FMT]",
			 "a table of frames ranked by the change of their total\n"
			 "share (with self share), each tested: 'significant' or\n"
			 "'noise' (text, the default; json for machines) on\n"
			 "standard output"),
		ROW_NUM("top", 0, OPT_LONG, &c->top, &c->top_given, 0, 1000000000L,
			"--top %s: give a number of rows, 0 for every frame", "N",
			"rows at most (default 20; 0: every frame)"),
		regress_cli_alpha(&c->alpha, &c->alpha_given, "family-wise error rate over all frames (default 0.01)"),
		ROW_NUM("fail-above", 0, OPT_SECONDS, &c->fail_above, NULL, 0, 100,
			"--fail-above %s: give points of the samples, 0 to 100 (e.g. 2 or 0.5)", "PTS",
			"exit with status 3 when a significant frame grew by PTS\n"
			"points of the samples or more (0 otherwise;\n"
			"implies --report)"),
		ROW_CALL("baseline", 0, OPT_CALL, opt_baseline, c, "SPEC",
			 "\n"
			 "replay a folder of windows (one positional: DIR) as\n"
			 "record --window --baseline SPEC would judge them:\n"
			 "first, previous:N or a saved profile; regression\n"
			 "lines and a count"),
		regress_cli_confirm(&c->bo.confirm, &c->confirm_given,
				    "--baseline: windows in a row a frame must grow in\n"
				    "(default 2)"),
		ROW("no-normalize", 0, OPT_FLAG, &c->no_normalize, NULL,
		    "compare names as recorded (default: lambda and\n"
		    "hidden-class addresses, GeneratedMethodAccessor numbers,\n"
		    "pids and pool thread numbers taken out, so two JVM runs\n"
		    "line up)"),
		ROW_TEXT(NULL, "\nGraphs:"),
		ROW("normalize", 'n', OPT_FLAG, &c->normalize, NULL,
		    "scale BEFORE's counts to AFTER's total\n"
		    "(difffolded.pl -n); the graphs compare shares of all\n"
		    "samples anyway"),
		ROW("strip-hex", 's', OPT_FLAG, &c->strip_hex, NULL,
		    "write every 0x<hex> as 0x... before merging\n"
		    "(difffolded.pl -s)"),
		ROW("keep-ids", 0, OPT_FLAG, &c->keep_ids, NULL,
		    "match process frames by pid, and [Pod]/[Con] frames by id\n"
		    "(default: '[1234] java' is '[*] java' on both sides, so\n"
		    "two runs of a service line up; pods and containers alike)"),
		ROW_CALL("output", 'o', OPT_CALL, opt_output, c, "FILE",
			 "repeatable; the extension picks the format; '-' is\n"
			 "the SVG on standard output; an output named twice is\n"
			 "an error"),
		fg_cli_row(&c->o, FG_CLI_TITLE,
			   "the title (default \"Differential Flame Graph\"; the\n"
			   "compare page: \"Compare: BEFORE vs AFTER\")"),
		fg_cli_row(&c->o, FG_CLI_SUBTITLE, "\na second line (default: the inputs and their totals)"),
		fg_cli_row(&c->o, FG_CLI_NEGATE, "swap what counts as grew and shrank (SVG)"),
		fg_cli_row(&c->o, FG_CLI_WIDTH, "SVG width (default 1200)"),
		fg_cli_row(&c->o, FG_CLI_HEIGHT, "SVG frame height (default 16)"),
		fg_cli_row(&c->o, FG_CLI_MINWIDTH, "SVG: leave out frames narrower than N pixels or percent"),
		fg_cli_row(&c->o, FG_CLI_COUNTNAME, "what the counts are (default samples)"),
		ROW("no-legend", 0, OPT_FLAG, &c->no_legend, NULL, "no grew/shrank legend in the SVG"),
		ROW_HELP("help", 'h', "this text"),
	};
	int next;
	memset(c, 0, sizeof(*c));
	c->top = DEFAULT_TOP;
	c->alpha = DEFAULT_ALPHA;
	c->fail_above = -1;
	c->bo.confirm = 2;
	int rc = cli_opts_parse(&diff_cli, rows, sizeof(rows) / sizeof(rows[0]), argc, argv, &next);
	if (rc != 0)
		return rc;
	if (c->confirm_given && !c->baseline) {
		msg_say("--confirm goes with --baseline (windows in a row a frame must grow in)\n");
		return -1;
	}
	if (c->baseline) {
		if (argc - next != 1 || c->report != REPORT_NONE || c->noutputs) {
			msg_say("jflame diff --baseline SPEC takes one folder of windows (and no --report or "
				"-o); see jflame diff --help\n");
			return -1;
		}
		c->after = argv[next];
		return 0;
	}
	if (argc - next != 2) {
		msg_say("jflame diff takes two folded profiles, BEFORE and AFTER (%d given); see jflame diff --help\n",
			argc - next);
		return -1;
	}
	c->before = argv[next];
	c->after = argv[next + 1];
	if (strcmp(c->before, "-") == 0 && strcmp(c->after, "-") == 0) {
		msg_say("only one of BEFORE and AFTER can be standard input\n");
		return -1;
	}
	if ((c->fail_above >= 0 || c->top_given || c->alpha_given) && c->report == REPORT_NONE && !c->baseline)
		c->report = REPORT_TEXT; /* they are the report's */
	if (c->noutputs == 0 && c->report == REPORT_NONE)
		c->outputs[c->noutputs++] = "-"; /* the SVG on standard output */
	for (size_t i = 0; i < c->noutputs; i++)
		if (c->report != REPORT_NONE && strcmp(c->outputs[i], "-") == 0) {
			msg_say("-o - and --report both write to standard output; name the graph's file\n");
			return -1;
		}
	return 0;
}

/* Reads one side's folded stacks into t; refuses differential input and empty profiles. */
static int read_side(struct stack_table *t, const char *path, const char *which, char *err, size_t errlen)
{
	const char *name = cli_input_name(path);
	struct folded fs, *f = &fs;
	if (folded_read(f, t, path, 0, 0, err, errlen) != 0)
		return -1;
	if (f->differential) {
		snprintf(err, errlen,
			 "%s (%s) has lines with two counts: it is already a differential profile; "
			 "give jflame diff two plain folded profiles",
			 name, which);
		return -1;
	}
	if (f->n == 0 || f->total == 0) {
		char why[200];
		folded_none(f, why, sizeof(why));
		snprintf(err, errlen,
			 "no %s in %s (%s%s%s); give folded stacks ('frame;frame;... count' lines, "
			 "as jflame collapse writes)",
			 f->n ? "samples" : "stacks", name, which, why[0] ? ", " : "", why);
		return -1;
	}
	folded_warn(f, name);
	return 0;
}

/* ---- the report ------------------------------------------------------------------- */

/* One side: a profile file, or a folder whose profile files are its windows. */
struct diff_side {
	const char *path;
	struct stack_table *wins;
	char **names; /* each window's file */
	size_t nwins, empty;
	bool folder;
};

static void side_free(struct diff_side *d)
{
	for (size_t i = 0; i < d->nwins; i++) {
		stack_table_free(&d->wins[i]);
		free(d->names[i]);
	}
	free(d->wins);
	free(d->names);
	memset(d, 0, sizeof(*d));
}

static bool is_profile_name(const char *name)
{
	bool raw;
	if (name[0] == '.')
		return false; /* hidden, and record's files being written */
	const struct profile_format *f = profile_format_of_name(name, &raw, NULL);
	return f && f->read;
}

static int add_window(struct diff_side *d, const char *path, char *err, size_t errlen)
{
	struct stack_table *w = realloc(d->wins, (d->nwins + 1) * sizeof(*w));
	if (w)
		d->wins = w;
	char **names = realloc(d->names, (d->nwins + 1) * sizeof(*names));
	if (names)
		d->names = names;
	char *name = strdup(path);
	if (!w || !names || !name) {
		free(name);
		snprintf(err, errlen, "out of memory reading %s", path);
		return -1;
	}
	d->names[d->nwins] = name;
	stack_table_init(&w[d->nwins]);
	int rc = profile_read(&w[d->nwins], path, NULL, NULL, 0, "diff", err, errlen);
	d->nwins++; /* freed with the side, read or not */
	return rc != 0 ? -1 : 0;
}

/* Reads a side: a file is one window, a folder's profile files (by name
 * order, which is time order for record's -o NAME-%t) are its windows. */
static int side_read(struct diff_side *d, const char *path, const char *which, char *err, size_t errlen)
{
	struct dirent **names = NULL;
	struct stat st;
	int n = 0, rc = -1;
	memset(d, 0, sizeof(*d));
	d->path = path;
	if (strcmp(path, "-") == 0 || stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
		return add_window(d, path, err, errlen);
	d->folder = true;
	n = scandir(path, &names, NULL, versionsort); /* cpu-2 before cpu-10 */
	if (n < 0) {
		snprintf(err, errlen, "failed to read the folder %s (%s): %s", path, which, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char file[4096];
		if (!is_profile_name(names[i]->d_name))
			continue;
		if (d->nwins >= MAX_WINDOWS) {
			snprintf(err, errlen,
				 "%s (%s) holds more than %d profiles; give a folder of at most that many "
				 "windows",
				 path, which, MAX_WINDOWS);
			goto out;
		}
		snprintf(file, sizeof(file), "%s/%s", path, names[i]->d_name);
		if (stat(file, &st) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (st.st_size == 0) { /* a window with nothing in it (an idle time) */
			d->empty++;
			continue;
		}
		if (add_window(d, file, err, errlen) != 0)
			goto out;
	}
	if (d->empty && d->nwins)
		msg_say("%s: skipped %zu empty window file%s\n", path, d->empty, d->empty == 1 ? "" : "s");
	if (d->nwins == 0) {
		snprintf(err, errlen,
			 "no profiles in the folder %s (%s); give a file, or a folder of window "
			 "files (.folded, .stacks, .pb.gz, .json)",
			 path, which);
		goto out;
	}
	rc = 0;
out:
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

/* The report to standard output; *regressed when --fail-above trips. */
static int write_report(FILE *out, const struct diff_cmd *c, const struct diff_side side[2], bool *regressed, char *err,
			size_t errlen)
{
	struct regress r;
	struct str_intern *si = NULL;
	int rc = -1;
	regress_init(&r);
	if (!c->no_normalize && !(si = str_intern_new()))
		goto oom;
	for (int k = 0; k < 2; k++) {
		for (size_t w = 0; w < side[k].nwins; w++) {
			const struct stack_table *t = &side[k].wins[w];
			regress_window_begin(&r, k == 0 ? REGRESS_BEFORE : REGRESS_AFTER);
			for (size_t i = 0; i < t->stacks.n; i++) {
				const char *stack = t->stacks.strs[i];
				size_t len = t->stacks.lens[i];
				if (si) {
					stack = name_normalize_stack(si, stack);
					if (!stack)
						goto oom;
					len = strlen(stack);
				}
				if (regress_window_stack(&r, stack, len, t->counts[i]) != 0)
					goto oom;
			}
			regress_window_end(&r);
		}
	}
	if (r.samples[REGRESS_BEFORE] == 0 || r.samples[REGRESS_AFTER] == 0) {
		const char *which = r.samples[REGRESS_BEFORE] == 0 ? "BEFORE" : "AFTER";
		snprintf(err, errlen, "no samples in %s (%s): every stack has a count of 0; give profiles with samples",
			 cli_input_name(r.samples[REGRESS_BEFORE] == 0 ? side[0].path : side[1].path), which);
		goto out;
	}
	if (regress_test(&r, c->alpha) != 0)
		goto oom;
	struct regress_report_opts o = { cli_input_name(side[0].path), cli_input_name(side[1].path), (size_t)c->top,
					 c->fail_above, !c->no_normalize };
	int w = c->report == REPORT_JSON ? regress_report_json(out, &r, &o) : regress_report_text(out, &r, &o);
	if (w != 0 || fflush(out) != 0) {
		snprintf(err, errlen, "out of memory writing the report");
		goto out;
	}
	*regressed = c->fail_above >= 0 && regress_report_grew(&r, c->fail_above) > 0;
	rc = 0;
	goto out;
oom:
	snprintf(err, errlen, "out of memory comparing the profiles");
out:
	str_intern_free(si);
	regress_free(&r);
	return rc;
}

/* --baseline: the folder's windows in order, each compared with the baseline
 * as record --baseline does; its lines on standard output. */
static int replay(const struct diff_cmd *c, char *err, size_t errlen)
{
	struct diff_side d;
	struct window_regress *wr = NULL;
	int rc = -1;
	if (side_read(&d, c->after, "windows", err, errlen) != 0)
		goto out;
	if (!d.folder) {
		snprintf(err, errlen,
			 "%s is not a folder; --baseline replays a folder of windows (record --window "
			 "-o DIR/cpu-%%n.folded)",
			 c->after);
		goto out;
	}
	struct window_regress_opts o = { .b = c->bo, .file = c->baseline_file, .out = stdout };
	o.b.alpha = c->alpha;
	o.b.no_normalize = c->no_normalize;
	if (!(wr = window_regress_new(&o, err, errlen))) {
		goto out;
	}
	for (size_t i = 0; i < d.nwins; i++) {
		struct recording rec;
		const struct stack_table *t = &d.wins[i];
		if (recording_init(&rec) != 0)
			goto oom;
		for (size_t k = 0; k < t->stacks.n; k++)
			if (recording_add(&rec, t->stacks.strs[k], t->stacks.lens[k], t->counts[k]) != 0) {
				recording_free(&rec);
				goto oom;
			}
		const char *base = strrchr(d.names[i], '/');
		struct window_regress_window w = { i + 1, 0, base ? base + 1 : d.names[i], "", getpid() };
		int r = window_regress_check(wr, &rec, &w);
		recording_free(&rec);
		if (r < 0)
			goto oom;
	}
	uint64_t judged, regressed;
	window_regress_counts(wr, &judged, &regressed);
	msg_to(stdout,
	       "%zu windows; %" PRIu64 " compared with the baseline (from window %zu on), %" PRIu64
	       " with a regression (%.1f%%)\n",
	       d.nwins, judged, baseline_history_min() + 1, regressed,
	       judged ? 100.0 * (double)regressed / (double)judged : 0.0);
	if (fflush(stdout) != 0) {
		snprintf(err, errlen, "failed to write to standard output: %s", strerror(errno));
		goto out;
	}
	rc = 0;
	goto out;
oom:
	snprintf(err, errlen, "out of memory replaying %s", c->after);
out:
	window_regress_free(wr);
	side_free(&d);
	return rc;
}

/* A side's windows summed, for the graphs. */
static int side_sum(struct stack_table *sum, const struct diff_side *d, char *err, size_t errlen)
{
	for (size_t w = 0; w < d->nwins; w++)
		for (size_t i = 0; i < d->wins[w].stacks.n; i++)
			if (stack_table_add(sum, d->wins[w].stacks.strs[i], d->wins[w].stacks.lens[i],
					    d->wins[w].counts[i], 0) < 0) {
				snprintf(err, errlen, "out of memory reading %s", cli_input_name(d->path));
				return -1;
			}
	return 0;
}

/* The graphs read folded files as they always have (their messages, their
 * checks); folders and other formats through their windows. */
static bool graph_reads_folded(const char *path)
{
	bool raw;
	struct stat st;
	if (strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return false;
	const struct profile_format *f = profile_format_of_name(path, &raw, NULL);
	return !f || (f->traits & PF_FALLBACK);
}

int cmd_diff(int argc, char **argv)
{
	struct diff_cmd cmd;
	struct folded_diff raw = { 0 }, norm = { 0 };
	struct out_file of[MAX_OUTPUTS];
	size_t opened = 0, committed = 0;
	char err[1024] = "", subtitle[1100], page_sub[1024];
	struct diff_side sides[2] = { { 0 }, { 0 } };
	FILE *report = NULL;
	char *report_text = NULL;
	size_t report_len = 0;
	struct stack_table sums[2];
	bool regressed = false;
	int rc = 1;

	stack_table_init(&sums[0]);
	stack_table_init(&sums[1]);

	out_file_clean_on_signals(); /* an interrupted run leaves no temporary file */
	int p = parse_options(&cmd, argc, argv);
	if (p != 0)
		return p > 0 ? 0 : 2;
	if (cmd.baseline) {
		rc = replay(&cmd, err, sizeof(err)) == 0 ? 0 : 1;
		goto out;
	}
	if (cmd.report != REPORT_NONE) {
		/* the report is printed once the graphs are written too */
		if (!(report = open_memstream(&report_text, &report_len))) {
			snprintf(err, sizeof(err), "out of memory");
			goto out;
		}
		if (side_read(&sides[0], cmd.before, "BEFORE", err, sizeof(err)) != 0 ||
		    side_read(&sides[1], cmd.after, "AFTER", err, sizeof(err)) != 0 ||
		    write_report(report, &cmd, sides, &regressed, err, sizeof(err)) != 0)
			goto out;
		if (cmd.noutputs == 0) {
			rc = regressed ? EXIT_REGRESSED : 0;
			goto out;
		}
	}
	for (int k = 0; k < 2; k++) {
		const char *path = k ? cmd.after : cmd.before, *which = k ? "AFTER" : "BEFORE";
		/* standard input is read once: the report's windows draw the graph too */
		if (graph_reads_folded(path) && !(sides[k].nwins && strcmp(path, "-") == 0)) {
			if (read_side(&sums[k], path, which, err, sizeof(err)) != 0)
				goto out;
			continue;
		}
		if (!sides[k].nwins && side_read(&sides[k], path, which, err, sizeof(err)) != 0)
			goto out;
		if (side_sum(&sums[k], &sides[k], err, sizeof(err)) != 0)
			goto out;
		if (sums[k].total_count == 0) {
			snprintf(err, sizeof(err), "no samples in %s (%s)", cli_input_name(path), which);
			goto out;
		}
	}
	struct folded_diff_opts as_read = { .strip_hex = cmd.strip_hex, .merge_ids = !cmd.keep_ids };
	struct folded_diff_opts scaled = as_read;
	scaled.normalize = true;
	if (folded_diff_build(&raw, &sums[0], &sums[1], &as_read) != 0 ||
	    (cmd.normalize && folded_diff_build(&norm, &sums[0], &sums[1], &scaled) != 0)) {
		snprintf(err, sizeof(err), "out of memory merging the profiles");
		goto out;
	}
	const struct folded_diff *d = cmd.normalize ? &norm : &raw;
	const char *page_subtitle = cmd.o.subtitle;
	if (!cmd.o.subtitle) {
		snprintf(page_sub, sizeof(page_sub),
			 "BEFORE %.300s: %" PRIu64 " samples; AFTER %.300s: %" PRIu64 " samples",
			 cli_input_name(cmd.before), raw.total_before, cli_input_name(cmd.after), raw.total_after);
		snprintf(subtitle, sizeof(subtitle), "%s%s. Widths: AFTER; red grew, blue shrank", page_sub,
			 cmd.normalize ? " (BEFORE normalized to AFTER's total)" : "");
		cmd.o.subtitle = subtitle;
		page_subtitle = page_sub;
	}
	for (size_t i = 0; i < cmd.noutputs; i++) {
		if (out_file_open(&of[i], cli_output_path(cmd.outputs[i]), err, sizeof(err)) != 0) {
			goto out;
		}
		opened++;
		struct fg_options o = cmd.o;
		o.differential = true;
		o.legend = !cmd.no_legend;
		if (!o.title)
			o.title = "Differential Flame Graph";
		struct compare_options co = { cmd.o.title, page_subtitle, cli_input_name(cmd.before),
					      cli_input_name(cmd.after) };
		int w = diff_graph_write(of[i].f, of[i].path, cmd.kinds[i], d, &raw, &o, &co, err, sizeof(err));
		if (w != 0) {
			goto out;
		}
	}
	/* every output written: now they replace their targets */
	for (; committed < opened; committed++)
		if (out_file_commit(&of[committed], err, sizeof(err)) != 0) {
			committed++; /* a failed commit removes its own temporary file */
			goto out;
		}
	rc = regressed ? EXIT_REGRESSED : 0;
out:
	for (size_t i = committed; i < opened; i++)
		out_file_abort(&of[i]);
	if (report)
		fclose(report);
	if ((rc == 0 || rc == EXIT_REGRESSED) && report_text &&
	    (fwrite(report_text, 1, report_len, stdout) != report_len || fflush(stdout) != 0)) {
		snprintf(err, sizeof(err), "failed to write the report to standard output: %s", strerror(errno));
		rc = 1;
	}
	free(report_text);
	if (rc != 0 && rc != EXIT_REGRESSED && err[0])
		msg_say("%s\n", err);
	folded_diff_free(&raw);
	folded_diff_free(&norm);
	for (int k = 0; k < 2; k++) {
		side_free(&sides[k]);
		stack_table_free(&sums[k]);
	}
	return rc;
}
