/* builtin-svg.c - `jflame svg`: folded stacks (flamegraph.pl's input, also its
 * two-column differential form) or any profile convert reads to an interactive SVG. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "cli_io.h"
#include "cli_opts.h"
#include "profile_read.h"
#include "fg_cli.h"
#include "flamegraph.h"
#include "out_file.h"
#include "format_table.h"
#include "msg.h"

static const char usage[] = "usage: jflame svg [options] [FILE...] > graph.svg\n"
			    "\n"
			    "Draws folded stacks (one 'frame;frame;... count' line per stack, plain or gzip,\n"
			    "standard input when no FILE) as an interactive flame graph, as flamegraph.pl\n"
			    "does, with its options (one or two dashes). It also draws what jflame convert\n"
			    "reads (perf script text, pprof, speedscope JSON), told by the file's name or\n"
			    "content; text it does not recognize is read as folded stacks.\n"
			    "\n";

static const char usage_tail[] = "\n"
				 "Two counts on a line ('stack BEFORE AFTER', as difffolded.pl writes) draw a\n"
				 "differential graph: the shape of AFTER, red grew, blue shrank.\n"
				 "Lines without a count are skipped and counted in one warning.\n"
				 "\n"
				 "Examples:\n"
				 "  jflame svg --title 'Kafka producer' out.folded > out.svg\n"
				 "  jflame collapse perf.script | jflame svg --colors hot --minwidth 0.5% > cpu.svg\n";

struct svg_cmd {
	struct fg_options o;
	bool no_legend;
	const char *output;
	size_t noutput;
	const char *input;
};

static const struct cli_cmd svg_cli = { "svg", usage, NULL, usage_tail, 22, CLI_LONG_ONLY | CLI_NO_LETTERS };

static int opt_colors(void *to, char *arg)
{
	static const char *const palettes[] = { "java",	 "hot",	 "mem",	 "io",	   "js",     "red",
						"green", "blue", "aqua", "yellow", "purple", "orange" };
	for (size_t i = 0; i < sizeof(palettes) / sizeof(palettes[0]); i++)
		if (strcmp(arg, palettes[i]) == 0) {
			*(const char **)to = arg;
			return 0;
		}
	msg_say("--colors takes java, hot, mem, io, js, red, green, blue, aqua, yellow, purple or orange, not '%s'\n",
		arg);
	return -1;
}

static int opt_output(void *to, char *arg)
{
	struct svg_cmd *c = to;
	return cli_output_add("svg", &c->output, &c->noutput, 1, arg);
}

static int parse_options(struct svg_cmd *c, int argc, char **argv)
{
	const struct cli_opt rows[] = {
		fg_cli_row(&c->o, FG_CLI_TITLE, "the title (default \"Flame Graph\")"),
		fg_cli_row(&c->o, FG_CLI_SUBTITLE, "a second line"),
		fg_cli_row(&c->o, FG_CLI_WIDTH, "image width (default 1200)"),
		fg_cli_row(&c->o, FG_CLI_HEIGHT, "frame height (default 16)"),
		fg_cli_row(&c->o, FG_CLI_MINWIDTH,
			   "leave out frames narrower than N pixels, or N percent of\n"
			   "the total (default 0.1 px)"),
		ROW("fonttype", 0, OPT_STRING, &c->o.fonttype, "FONT", "(default Verdana)"),
		ROW_NUM("fontsize", 0, OPT_SECONDS, &c->o.fontsize, NULL, 1, 100,
			"--fontsize takes a size from 1 to 100, not '%s'", "SIZE", "(default 12)"),
		fg_cli_row(&c->o, FG_CLI_COUNTNAME, "what the counts are (default samples)"),
		ROW("nametype", 0, OPT_STRING, &c->o.nametype, "TEXT",
		    "label of the hover line (default \"Function:\")"),
		ROW_CALL("colors", 0, OPT_CALL, opt_colors, &c->o.colors, "PALETTE",
			 "java (default: JIT, inlined, interpreted, JVM, GC,\n"
			 "compiler, kernel, native, metadata), hot, mem, io, js,\n"
			 "red, green, blue, aqua, yellow, purple, orange"),
		ROW_CALL("color", 0, OPT_CALL, opt_colors, &c->o.colors, "PALETTE", NULL),
		ROW("hash", 0, OPT_FLAG, &c->o.hash, NULL, "colour by a hash of the name (same name, same colour)"),
		ROW("random", 0, OPT_UNSET, &c->o.hash, NULL,
		    "colours varied per frame (a fixed seed: same input,\n"
		    "same SVG)"),
		ROW("reverse", 0, OPT_FLAG, &c->o.reverse, NULL,
		    "reverse each stack (leaf at the root) before merging"),
		ROW("inverted", 0, OPT_FLAG, &c->o.inverted, NULL, "icicle graph: roots at the top"),
		ROW("flamechart", 0, OPT_FLAG, &c->o.flamechart, NULL,
		    "keep the input order (time), don't sort by name"),
		fg_cli_row(&c->o, FG_CLI_NEGATE, "differential input: swap grew and shrank"),
		ROW("notes", 0, OPT_STRING, &c->o.notes, "TEXT", "put TEXT into the SVG's notes"),
		ROW("no-legend", 0, OPT_FLAG, &c->no_legend, NULL, "no legend row (the java palette draws one)"),
		ROW_CALL("output", 'o', OPT_CALL, opt_output, c, "FILE",
			 "write FILE, once ('-' or none: standard output)"),
		ROW_HELP("help", 'h', "this text"),
	};
	int next;
	memset(c, 0, sizeof(*c));
	c->o.colors = "java";
	int rc = cli_opts_parse(&svg_cli, rows, sizeof(rows) / sizeof(rows[0]), argc, argv, &next);
	if (rc != 0)
		return rc;
	if (next + 1 < argc) {
		msg_say("jflame svg draws one input; concatenate folded files first (cat a b | jflame svg)\n");
		return -1;
	}
	c->input = next < argc ? argv[next] : "-";
	return 0;
}

struct svg_out {
	const struct stack_table *t;
	const struct fg_options *o;
};

static int write_svg(FILE *out, void *ctx, char *err, size_t errlen)
{
	const struct svg_out *w = ctx;
	return profile_format_write(profile_format_named("svg"), out, w->t,
				    &(struct profile_write_opts){ .graph = w->o }, err, errlen) != 0 ?
		       -1 :
		       0;
}

int cmd_svg(int argc, char **argv)
{
	struct svg_cmd cmd;
	struct stack_table t;
	char err[1024] = "";
	int rc = 1;

	stack_table_init(&t);
	out_file_clean_on_signals(); /* an interrupted run leaves no temporary file */
	int p = parse_options(&cmd, argc, argv);
	if (p != 0) {
		stack_table_free(&t);
		return p > 0 ? 0 : 2;
	}
	unsigned flags = PROFILE_READ_BEFORE | PROFILE_READ_FOLDED | (cmd.o.flamechart ? PROFILE_READ_ORDER : 0);
	if (profile_read(&t, cmd.input, NULL, NULL, flags, "svg", err, sizeof(err)) != 0) {
		goto out;
	}
	cmd.o.differential = t.befores != NULL;
	cmd.o.legend = !cmd.no_legend;
	struct svg_out w = { &t, &cmd.o };
	if (cli_output_write(cmd.output, write_svg, &w, err, sizeof(err)) != 0)
		goto out;
	rc = 0;
out:
	if (rc != 0 && err[0])
		msg_say("%s\n", err);
	stack_table_free(&t);
	return rc;
}
