/* builtin-collapse.c - `jflame collapse`: perf script text (plain, gzip or
 * stdin; also jflame's .stacks) to folded stacks, as stackcollapse-perf.pl does. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "cli_io.h"
#include "cli_opts.h"
#include "collapse.h"
#include "out_file.h"
#include "format_table.h"
#include "recording.h"
#include "msg.h"

#define MAX_INPUTS 256

static const char usage[] = "usage: jflame collapse [--pid] [--tid] [--kernel] [--jit] [--all] [--addrs]\n"
			    "                       [--from SEC] [--to SEC] [--event EVENT] [-o FILE] [FILE...]\n"
			    "\n"
			    "Folds the samples of `perf script` text (plain or gzip; standard input when no\n"
			    "FILE or '-') into one line per unique stack, root first, with its count: the\n"
			    "input of flamegraph.pl and `jflame svg`. Behaves as stackcollapse-perf.pl does:\n"
			    "the root frame is the process name, Java and C++ names are tidied, an inline\n"
			    "chain A->B is split into A;B_[i], an unknown symbol becomes [its module].\n"
			    "Samples are weighted by their period where perf prints one; only one kind of\n"
			    "event is kept (the first seen, or --event). Also reads jflame's .stacks files.\n"
			    "The FILEs are merged; one given twice is an error (it would count twice).\n"
			    "\n";

static const char usage_tail[] =
	"\n"
	"Examples:\n"
	"  perf record -F 99 -g -p 4242 -- sleep 30; perf script | jflame collapse --all > out.folded\n"
	"  jflame collapse --from 10 --to 12 run.stacks > burst.folded\n"
	"  jflame collapse perf.script.gz -o out.folded\n";

struct collapse_cmd {
	struct collapse_opts o;
	const char *output;
	size_t noutput;
	const char *inputs[MAX_INPUTS];
	size_t ninputs;
};

static const struct cli_cmd collapse_cli = { "collapse", usage, NULL, usage_tail, 23, 0 };

static int opt_all(void *to, char *arg)
{
	struct collapse_opts *o = to;
	(void)arg;
	o->kernel = o->jit = true;
	return 0;
}

static int opt_output(void *to, char *arg)
{
	struct collapse_cmd *c = to;
	return cli_output_add("collapse", &c->output, &c->noutput, 1, arg);
}

static int parse_options(struct collapse_cmd *c, int argc, char **argv)
{
	const struct cli_opt rows[] = {
		ROW("pid", 0, OPT_FLAG, &c->o.pid, NULL, "root frame name-PID"),
		ROW("tid", 0, OPT_FLAG, &c->o.tid, NULL, "root frame name-PID/TID"),
		ROW("kernel", 0, OPT_FLAG, &c->o.kernel, NULL, "annotate kernel frames _[k]"),
		ROW("jit", 0, OPT_FLAG, &c->o.jit, NULL,
		    "annotate JIT frames (/tmp/perf-PID.map) _[j] and\n"
		    "interpreted ones ([interpreted], from jflame\n"
		    "record) _[0]"),
		ROW_CALL("all", 0, OPT_CALL_FLAG, opt_all, &c->o, NULL, "both annotations"),
		ROW("addrs", 0, OPT_FLAG, &c->o.addrs, NULL, "[module <address>] for frames without a symbol"),
		ROW_NUM("from", 0, OPT_SECONDS, &c->o.from, &c->o.has_from, 0, 1e9,
			"--from takes seconds after the first sample, such as 10 or 2.5, not '%s'", "SEC",
			"keep samples from SEC seconds after the first sample"),
		ROW_NUM("to", 0, OPT_SECONDS, &c->o.to, &c->o.has_to, 0, 1e9,
			"--to takes seconds after the first sample, such as 10 or 2.5, not '%s'", "SEC",
			"... until SEC seconds after it"),
		ROW("event", 0, OPT_STRING, &c->o.event, "EVENT",
		    "keep this event (e.g. cycles) instead of the first seen"),
		ROW_CALL("output", 'o', OPT_CALL, opt_output, c, "FILE",
			 "write FILE, once ('-' or none: standard output)"),
		ROW_HELP("help", 'h', "this text"),
	};
	int next;
	memset(c, 0, sizeof(*c));
	int rc = cli_opts_parse(&collapse_cli, rows, sizeof(rows) / sizeof(rows[0]), argc, argv, &next);
	if (rc != 0)
		return rc;
	if (c->o.has_from && c->o.has_to && c->o.to <= c->o.from) {
		msg_say("--to %g is not after --from %g\n", c->o.to, c->o.from);
		return -1;
	}
	return cli_inputs(c->inputs, &c->ninputs, MAX_INPUTS, argc, argv, next);
}

/* the folded row of the writer table, from the recording's stack store */
static int write_folded(FILE *f, void *ctx, char *err, size_t errlen)
{
	if (profile_format_write(profile_format_named("folded"), f, ctx, NULL, err, errlen) != 0)
		return -1;
	return 0;
}

int cmd_collapse(int argc, char **argv)
{
	struct collapse_cmd cmd;
	struct recording rec;
	struct collapse c;
	struct cli_script_lines lines;
	char err[1024] = "";
	int rc = 1;

	out_file_clean_on_signals(); /* an interrupted run leaves no temporary file */
	int p = parse_options(&cmd, argc, argv);
	if (p != 0)
		return p > 0 ? 0 : 2;
	if (recording_init(&rec) != 0) {
		msg_say("out of memory\n");
		return 1;
	}
	collapse_init(&c, &cmd.o, &rec);
	int r = cli_scripts_read(cmd.inputs, cmd.ninputs, collapse_sample, &c, &c.oom, &lines, err, sizeof(err));
	if (r > 0 && c.too_big_line)
		snprintf(err, sizeof(err),
			 "%s:%" PRIu64 ": the samples' periods add up to 2^63 or more; jflame "
			 "takes totals below 9223372036854775808",
			 cli_input_name(lines.oom_input), c.too_big_line);
	else if (r > 0)
		snprintf(err, sizeof(err), "out of memory folding %s", lines.oom_input);
	if (r != 0)
		goto out;
	if (lines.real == 0) {
		/* no header with a frame, a time or an event: text that is not perf
		 * script's (random bytes read as "name 123" headers) folds to garbage */
		snprintf(err, sizeof(err), "no samples in %s%s; make the input with perf record -g, then perf script",
			 cmd.ninputs == 1 && strcmp(cmd.inputs[0], "-") == 0 ? "standard input" : cmd.inputs[0],
			 lines.bad ? " (it does not look like perf script output)" : "");
		goto out;
	}
	cli_scripts_warn(&lines, 127, &c); /* the first bad line as it always was: cut to 127 bytes */
	if (c.kept == 0) {
		snprintf(err, sizeof(err), "no samples left after the filters (%" PRIu64 " outside the time range)",
			 c.out_of_range);
		goto out;
	}
	if (cli_output_write(cmd.output, write_folded, &rec.stacks, err, sizeof(err)) != 0)
		goto out;
	rc = 0;
out:
	if (rc != 0 && err[0])
		msg_say("%s\n", err);
	collapse_free(&c);
	recording_free(&rec);
	return rc;
}
