/* builtin-heatmap.c - `jflame heatmap`: timestamped samples (.stacks, perf script
 * text, JFR) to FlameScope's subsecond-offset heat map, one self-contained HTML page. */
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "builtin.h"
#include "cli_io.h"
#include "cli_opts.h"
#include "format_table.h"
#include "collapse.h"
#include "heatmap.h"
#include "html_heatmap.h"
#include "out_file.h"
#include "msg.h"

#define MAX_INPUTS 256

static const char usage[] = "usage: jflame heatmap [--rows N] [--title TEXT] [--include-idle] [--pid] [--tid]\n"
			    "                      [--event EVENT] [-o OUT.html] [FILE...]\n"
			    "\n"
			    "Draws timestamped samples - jflame record's .stacks, `perf script` text (plain\n"
			    "or gzip; standard input when no FILE or '-'), or the jdk.ExecutionSample events\n"
			    "of JFR recordings (.jfr) - as a subsecond-offset heat map (FlameScope's): one\n"
			    "column per second from the first sample's second, rows for the offset within the\n"
			    "second, darker cells for more samples. Click a start and an end cell to see the\n"
			    "flame graph of exactly that time range, with zoom and search; a button goes back\n"
			    "to the map. One self-contained HTML page: no network. Samples of the idle task\n"
			    "(swapper, pid 0, or an idle-loop leaf frame) are left out, as FlameScope does.\n"
			    "Stacks are folded as jflame collapse --all folds them (the kernel and JIT\n"
			    "annotations pick the frames' colours; perf-map-agent's Lpkg/Class;::method reads\n"
			    "pkg/Class.method), and every sample counts once (its period does not weigh). The\n"
			    "FILEs are merged; one given twice is an error.\n"
			    "\n";

static const char usage_tail[] =
	"\n"
	"Examples:\n"
	"  jflame record -a -d 120 -o run.stacks; jflame heatmap run.stacks -o run.html\n"
	"  perf record -F 49 -a -g -- sleep 120; perf script | jflame heatmap -o perf.html\n"
	"  jflame heatmap --rows 100 perf.script.gz -o fine.html\n"
	"  java -XX:StartFlightRecording=filename=app.jfr ...; jflame heatmap app.jfr -o app.html\n";

struct heatmap_cmd {
	struct collapse_opts co;
	struct heatmap_options o;
	bool keep_idle;
	const char *output;
	size_t noutput;
	const char *inputs[MAX_INPUTS];
	size_t ninputs;
};

/* a name another format owns (the input .stacks among them): not overwritten with a page */
static bool other_format(const char *path)
{
	static const char *const ext[] = { ".svg",   ".folded", ".collapsed", ".stacks", ".json",
					   ".pb.gz", ".gz",	".txt",	      ".perf",	 ".data" };
	size_t n = strlen(path);
	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		size_t k = strlen(ext[i]);
		if (n > k && strcmp(path + n - k, ext[i]) == 0)
			return true;
	}
	return false;
}

static const struct cli_cmd heatmap_cli = { "heatmap", usage, NULL, usage_tail, 23, 0 };

static int opt_output(void *to, char *arg)
{
	struct heatmap_cmd *c = to;
	if (other_format(arg)) {
		msg_say("-o %s: jflame heatmap writes an HTML page; name it .html\n", arg);
		return -1;
	}
	return cli_output_add("heatmap", &c->output, &c->noutput, 1, arg);
}

static int parse_options(struct heatmap_cmd *c, int argc, char **argv)
{
	_Static_assert(HEATMAP_MAX_ROWS == 1000, "--rows' message and help say 1000");
	const struct cli_opt rows[] = {
		ROW_NUM("rows", 0, OPT_INT, &c->o.rows, NULL, 1, HEATMAP_MAX_ROWS,
			"--rows takes rows per second from 1 to 1000 (50: 20 ms each), not '%s'", "N",
			"rows per second, 1 to 1000 (default 50: 20 ms each)"),
		ROW("title", 0, OPT_STRING, &c->o.title, "TEXT", "the page's title (default \"CPU heat map\")"),
		ROW("include-idle", 0, OPT_FLAG, &c->keep_idle, NULL, "keep the idle task's samples"),
		ROW("pid", 0, OPT_FLAG, &c->co.pid, NULL, ""),
		ROW("tid", 0, OPT_FLAG, &c->co.tid, NULL,
		    "root frames name-PID or name-PID/TID\n"
		    "(as jflame collapse)"),
		ROW("event", 0, OPT_STRING, &c->co.event, "EVENT", "keep this event instead of the first seen"),
		ROW_CALL("output", 'o', OPT_CALL, opt_output, c, "FILE",
			 "write FILE, once ('-' or none: standard output)"),
		ROW_HELP("help", 'h', "this text"),
	};
	int next;
	memset(c, 0, sizeof(*c));
	c->o.rows = HEATMAP_DEFAULT_ROWS;
	c->co.kernel = c->co.jit = true; /* the annotations pick the colours */
	int rc = cli_opts_parse(&heatmap_cli, rows, sizeof(rows) / sizeof(rows[0]), argc, argv, &next);
	if (rc != 0)
		return rc;
	return cli_inputs(c->inputs, &c->ninputs, MAX_INPUTS, argc, argv, next);
}

struct page_out {
	const struct heatmap *h;
	const struct heatmap_options *o;
};

static int write_page(FILE *f, void *ctx, char *err, size_t errlen)
{
	const struct page_out *p = ctx;
	if (heatmap_write_html(f, p->h, p->o, err, errlen) != 0)
		return -1;
	return 0;
}

/* A recording read through the format table, whose samples carry their times
 * (a PF_TIMED row: JFR): named for it (.jfr, .jfr.gz), or a regular file
 * whose first bytes say it (a pipe is left unread: its bytes are perf
 * script's, streamed here). Its row, or NULL. */
static const struct profile_format *timed_row(const char *path)
{
	bool raw;
	char magic[64];
	struct stat st;
	if (strcmp(path, "-") == 0)
		return NULL;
	const struct profile_format *row = profile_format_of_name(path, &raw, NULL);
	if (row && (row->traits & PF_TIMED))
		return row;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return NULL;
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(magic, 1, sizeof(magic), f) : 0;
	if (f)
		fclose(f);
	return profile_format_sniff(magic, n, PF_TIMED);
}

/* Adds the CPU samples of a JFR recording to the map, each once at its time
 * (its stack folded as convert folds it). 0, or -1 with one line in err. */
static int jfr_add(struct heatmap *h, const char *path, const struct profile_format *row, uint64_t *samples, char *err,
		   size_t errlen)
{
	struct stack_table t;
	int rc;
	stack_table_init(&t);
	rc = profile_read(&t, path, row, NULL, 0, "heatmap", err, errlen);
	for (size_t i = 0; rc == 0 && i < t.ntimeline; i++) {
		const struct timed_sample *s = &t.timeline[i];
		if (heatmap_add(h, s->time, t.stacks.strs[s->stack], t.stacks.lens[s->stack], 1) != 0) {
			snprintf(err, errlen, "out of memory reading %s", cli_input_name(path));
			rc = -1;
		}
	}
	if (rc == 0)
		*samples += t.ntimeline;
	stack_table_free(&t);
	return rc;
}

int cmd_heatmap(int argc, char **argv)
{
	struct heatmap_cmd cmd;
	struct heatmap h;
	struct heatmap_reader r;
	struct cli_script_lines lines;
	char err[1024] = "", subtitle[1024];
	bool reader = false;
	int rc = 1;

	out_file_clean_on_signals(); /* an interrupted run leaves no temporary file */
	int p = parse_options(&cmd, argc, argv);
	if (p != 0)
		return p > 0 ? 0 : 2;
	if (heatmap_init(&h) != 0) {
		msg_say("out of memory\n");
		return 1;
	}
	if (heatmap_reader_init(&r, &h, &cmd.co, cmd.keep_idle) != 0) {
		snprintf(err, sizeof(err), "out of memory");
		goto out;
	}
	reader = true;
	/* JFR recordings are read whole; the rest as perf script text */
	const char *scripts[MAX_INPUTS];
	size_t nscripts = 0;
	uint64_t jfr_samples = 0;
	for (size_t i = 0; i < cmd.ninputs; i++) {
		const struct profile_format *row = timed_row(cmd.inputs[i]);
		if (!row)
			scripts[nscripts++] = cmd.inputs[i];
		else if (jfr_add(&h, cmd.inputs[i], row, &jfr_samples, err, sizeof(err)) != 0)
			goto out;
	}
	memset(&lines, 0, sizeof(lines));
	int rd = nscripts ? cli_scripts_read(scripts, nscripts, heatmap_reader_sample, &r, &r.oom, &lines, err,
					     sizeof(err)) :
			    0;
	if (rd > 0)
		snprintf(err, sizeof(err), "out of memory reading %s", cli_input_name(lines.oom_input));
	if (rd != 0)
		goto out;
	const char *name = cli_input_name(cmd.inputs[0]);
	if (lines.real == 0 && jfr_samples == 0) {
		snprintf(err, sizeof(err),
			 "no samples in %s%s; give jflame record's .stacks or perf script output "
			 "(perf record -g, then perf script)",
			 name, lines.bad ? " (it does not look like perf script output)" : "");
		goto out;
	}
	if (nscripts)
		cli_scripts_warn(&lines, 159, &r.c); /* the first bad line as it always was: cut to 159 bytes */
	if (r.untimed)
		msg_warn("%" PRIu64 " samples without a timestamp left out\n", r.untimed);
	if (h.bad_time)
		msg_warn("%" PRIu64 " samples with an impossible timestamp left out\n", h.bad_time);
	if (h.n == 0) {
		if (r.untimed == lines.samples && !jfr_samples)
			snprintf(err, sizeof(err),
				 "the samples in %s have no timestamps; the heat map needs them "
				 "(perf script prints them unless -F leaves out time)",
				 name);
		else if (r.idle)
			snprintf(err, sizeof(err),
				 "all %" PRIu64 " timed samples in %s are of the idle task; "
				 "nothing to map (--include-idle keeps them)",
				 r.idle, name);
		else
			snprintf(err, sizeof(err), "no samples left in %s after the filters", name);
		goto out;
	}
	int64_t cols = heatmap_columns(&h);
	snprintf(subtitle, sizeof(subtitle),
		 "%.400s%s: %" PRIu64 " samples over %" PRId64 " s; %d rows a second (%.3g ms each)%s", name,
		 cmd.ninputs > 1 ? " and more" : "", h.total, cols, cmd.o.rows, 1000.0 / cmd.o.rows,
		 r.idle	       ? "; idle task left out" :
		 cmd.keep_idle ? "; idle task kept" :
				 "");
	cmd.o.subtitle = subtitle;
	cmd.o.idle = r.idle;
	if (heatmap_check(&h, &cmd.o, err, sizeof(err)) != 0) {
		goto out;
	}
	struct page_out page = { &h, &cmd.o };
	if (cli_output_write(cli_output_path(cmd.output), write_page, &page, err, sizeof(err)) != 0)
		goto out;
	rc = 0;
out:
	if (rc != 0 && err[0])
		msg_say("%s\n", err);
	if (reader)
		heatmap_reader_free(&r);
	heatmap_free(&h);
	return rc;
}
