/* builtin-convert.c - `jflame convert`: between folded stacks, perf script text
 * (.stacks), pprof (.pb.gz) and speedscope JSON, and to an SVG flame graph. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "cli_io.h"
#include "cli_opts.h"
#include "event_table.h"
#include "profile_read.h"
#include "folded.h"
#include "out_file.h"
#include "format_table.h"
#include "stack_table.h"
#include "msg.h"

#define MAX_OUTPUTS 16

static const char usage[] = "usage: jflame convert [-f FORMAT] [-t FORMAT] [options] IN -o OUT [-o OUT]...\n"
			    "\n"
			    "Converts a profile between folded stacks, perf script text (jflame's .stacks),\n"
			    "pprof and speedscope JSON, or draws it as a flame graph. IN may be '-' for\n"
			    "standard input, plain or gzip. Formats go by extension, else by content:\n"
			    "\n"
			    "  folded      .folded .collapsed .txt   'frame;frame;... count' lines (flamegraph.pl)\n"
			    "  stacks      .stacks .perf .script .txt  perf script text (input only)\n"
			    "  pprof       .pb.gz .pprof (gzip), .pb (plain protobuf)  go tool pprof, Pyroscope\n"
			    "  speedscope  .json                     https://www.speedscope.app\n"
			    "  jfr         .jfr                      JDK Flight Recorder: JMC, IntelliJ, jfr print;\n"
			    "                                        read: the JDK's and async-profiler's recordings\n"
			    "  svg         .svg                      interactive flame graph (output only)\n"
			    "\n";

static const char usage_tail[] = "\n"
				 "Folded stacks keep jflame's frame annotations (_[j] JIT, _[i] inlined, _[0]\n"
				 "interpreted, _[k] kernel) through pprof and speedscope and back. perf script\n"
				 "input is folded as 'jflame collapse --all' folds it, counting samples (pprof's\n"
				 "second value and speedscope's weights are the samples' periods), and becomes\n"
				 "one speedscope profile per thread with its samples in time order. Writing\n"
				 ".stacks is jflame record's job: convert has no per-sample addresses to write.\n"
				 "JFR input (every chunk) is rooted '[pid] java' (when the recording has the\n"
				 "JVM's pid), then the thread; its frames carry the same annotations, from\n"
				 "their frame types.\n"
				 "\n"
				 "Examples:\n"
				 "  jflame convert cpu.folded -o cpu.pb.gz && go tool pprof -http=: cpu.pb.gz\n"
				 "  jflame convert run.stacks -o run.json        # open in speedscope.app\n"
				 "  jflame convert cpu.folded -o cpu.jfr         # open in JDK Mission Control\n"
				 "  jflame convert -F 99 cpu.folded -o cpu.pb.gz # samples taken at 99 Hz\n"
				 "  jflame convert profile.pb.gz -o cpu.folded && jflame svg cpu.folded > cpu.svg\n"
				 "  curl -s http://host:6060/debug/pprof/profile | jflame convert - -o cpu.svg\n"
				 "  jflame convert app.jfr -o cpu.svg             # JDK Flight Recorder's samples\n"
				 "  jflame convert --sample-index alloc app.jfr -o alloc.svg\n";

struct convert_cmd {
	const char *input;
	const char *outputs[MAX_OUTPUTS];
	const struct profile_format *writers[MAX_OUTPUTS];
	bool raw[MAX_OUTPUTS]; /* pprof without gzip (.pb) */
	size_t noutputs;
	const struct profile_format *from;
	const struct profile_format *to;
	long rate;
	const char *sample_index;
	const char *title;
};

static const struct cli_cmd convert_cli = { "convert", usage, NULL, usage_tail, 27, 0 };

/* -f or -t (letter): a row of the format table that cmds (PF_READ, PF_CONVERT) takes, into *f. */
static int format_take(const char *arg, unsigned cmds, char letter, const struct profile_format **f)
{
	const struct profile_format *x = profile_format_named(arg);
	char names[128];
	if (x && (x->cmds & cmds)) {
		*f = x;
		return 0;
	}
	profile_format_list(names, sizeof(names), cmds, false);
	msg_say("-%c takes %s, not '%s'\n", letter, names, arg);
	return -1;
}

static int opt_from(void *to, char *arg)
{
	return format_take(arg, PF_READ, 'f', to);
}

static int opt_to(void *to, char *arg)
{
	return format_take(arg, PF_CONVERT, 't', to);
}

static int opt_output(void *to, char *arg)
{
	struct convert_cmd *c = to;
	return cli_output_add("convert", c->outputs, &c->noutputs, MAX_OUTPUTS, arg);
}

static int parse_options(struct convert_cmd *c, int argc, char **argv)
{
	const struct cli_opt rows[] = {
		ROW_CALL("output", 'o', OPT_CALL, opt_output, c, "FILE",
			 "write FILE (format by extension; may repeat, each\n"
			 "once; '-' is standard output and needs -t)"),
		ROW_CALL("from-format", 'f', OPT_CALL, opt_from, &c->from, "FMT",
			 "read IN as FMT (folded, stacks, pprof,\n"
			 "speedscope, jfr)"),
		ROW_CALL("to-format", 't', OPT_CALL, opt_to, &c->to, "FMT",
			 "write every output as FMT (folded, pprof,\n"
			 "speedscope, jfr, svg)"),
		ROW_NUM("rate", 'F', OPT_LONG, &c->rate, NULL, 1, 1000000,
			"-F takes samples per second from 1 to 1000000, not '%s'", "HZ",
			"the rate the samples were taken at: pprof and\n"
			"speedscope then also get CPU time\n"
			"(count x 1e9/HZ ns)"),
		ROW("sample-index", 0, OPT_STRING, &c->sample_index, "N|TYPE",
		    "pprof input: the sample type to count (default 0,\n"
		    "the first; e.g. 1 or cpu), as go tool pprof\n"
		    "-sample_index; JFR input: the events, as record's\n"
		    "-e: cpu (default, jdk.ExecutionSample), wall, alloc,\n"
		    "lock or native"),
		ROW("title", 0, OPT_STRING, &c->title, "TEXT", "the SVG's title and the speedscope profile's name"),
		ROW_HELP("help", 'h', "this text"),
	};
	int next;
	memset(c, 0, sizeof(*c));
	int rc = cli_opts_parse(&convert_cli, rows, sizeof(rows) / sizeof(rows[0]), argc, argv, &next);
	if (rc != 0)
		return rc;
	if (next == argc) {
		msg_say("give the profile to convert: jflame convert IN -o OUT (see jflame convert --help)\n");
		return -1;
	}
	if (next + 1 < argc) {
		msg_say("jflame convert takes one input, not '%s' too; give outputs with -o\n", argv[next + 1]);
		return -1;
	}
	c->input = argv[next];
	if (c->noutputs == 0) {
		msg_say("say where to write: -o OUT (the extension picks the format; -o - -t FORMAT for "
			"standard output)\n");
		return -1;
	}
	if (c->to && c->noutputs > 1) {
		msg_say("-t names the format of a single output; with several -o let the extensions tell\n");
		return -1;
	}
	char names[128], exts[128];
	profile_format_list(names, sizeof(names), PF_CONVERT, false);
	profile_format_list(exts, sizeof(exts), PF_CONVERT, true);
	for (size_t i = 0; i < c->noutputs; i++) {
		bool raw = false;
		const struct profile_format *w = profile_format_of_name(c->outputs[i], &raw, NULL);
		if (c->to) {
			w = c->to;
			raw = false;
		} else if (strcmp(c->outputs[i], "-") == 0) {
			msg_say("-o - (standard output) needs -t FORMAT: %s\n", names);
			return -1;
		}
		if (w && (w->needs & PF_NEEDS_SAMPLE_LOG)) {
			msg_say("convert does not write .stacks ('%s'): only jflame record has each sample's "
				"addresses and times; record with -o run.stacks\n",
				c->outputs[i]);
			return -1;
		}
		if (!w || !(w->cmds & PF_CONVERT)) {
			msg_say("cannot tell the format of '%s'; name it %s, or give -t FORMAT\n", c->outputs[i], exts);
			return -1;
		}
		c->writers[i] = w;
		c->raw[i] = raw;
	}
	return 0;
}

/* One output of the table, written by its row of the writer table. */
struct table_out {
	const struct stack_table *t;
	const struct profile_format *w;
	struct profile_write_opts o;
};

static int write_table(FILE *out, void *ctx, char *err, size_t errlen)
{
	const struct table_out *x = ctx;
	return profile_format_write(x->w, out, x->t, &x->o, err, errlen) != 0 ? -1 : 0;
}

int cmd_convert(int argc, char **argv)
{
	struct convert_cmd cmd;
	struct stack_table t;
	char err[1024] = "";
	int rc = 1;

	out_file_clean_on_signals(); /* an interrupted run leaves no temporary file */
	int p = parse_options(&cmd, argc, argv);
	if (p != 0)
		return p > 0 ? 0 : 2;
	stack_table_init(&t);
	if (profile_read(&t, cmd.input, cmd.from, cmd.sample_index, 0, "convert", err, sizeof(err)) != 0) {
		goto out;
	}
	if (!t.meta.name[0] && strcmp(cmd.input, "-") != 0) {
		const char *base = strrchr(cmd.input, '/');
		snprintf(t.meta.name, sizeof(t.meta.name), "%s", base ? base + 1 : cmd.input);
	}
	if (cmd.title)
		snprintf(t.meta.name, sizeof(t.meta.name), "%s", cmd.title);
	if (cmd.rate) {
		/* the counts are samples taken every 1e9/rate ns of CPU */
		uint64_t period = 1000000000ULL / (uint64_t)cmd.rate;
		if (t.total_count >= FOLDED_MAX_COUNT / period) {
			snprintf(err, sizeof(err),
				 "-F %ld: %" PRIu64 " samples of %" PRIu64 " ns each make 2^63 ns or "
				 "more; are the counts samples?",
				 cmd.rate, t.total_count, period);
			goto out;
		}
		for (size_t i = 0; i < t.stacks.n; i++)
			t.weights[i] = t.counts[i] * period;
		t.total_weight = t.total_count * period;
		t.meta.has_weight = true;
		t.meta.period = period;
		const struct event_kind *cpu = event_kind_named("cpu"); /* CPU samples weigh CPU ns */
		snprintf(t.meta.weight_type, sizeof(t.meta.weight_type), "%s", cpu->weight_type);
		snprintf(t.meta.weight_unit, sizeof(t.meta.weight_unit), "%s", cpu->weight_unit);
		for (size_t i = 0; i < t.ntimeline; i++)
			t.timeline[i].weight = period;
	}
	for (size_t i = 0; i < cmd.noutputs; i++) {
		struct table_out w = { &t, cmd.writers[i], { .raw = cmd.raw[i], .title = cmd.title } };
		if (cli_output_write(cli_output_path(cmd.outputs[i]), write_table, &w, err, sizeof(err)) != 0)
			goto out;
	}
	rc = 0;
out:
	if (rc != 0 && err[0])
		msg_say("%s\n", err);
	stack_table_free(&t);
	return rc;
}
