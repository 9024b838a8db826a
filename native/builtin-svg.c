/* builtin-svg.c - `jflame svg`: folded stacks (flamegraph.pl's input, also its
 * two-column differential form) or any profile convert reads to an interactive SVG. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "cli_io.h"
#include "cli_num.h"
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
			    "\n"
			    "  --title TEXT        the title (default \"Flame Graph\")\n"
			    "  --subtitle TEXT     a second line\n"
			    "  --width PX          image width (default 1200)\n"
			    "  --height PX         frame height (default 16)\n"
			    "  --minwidth N[%]     leave out frames narrower than N pixels, or N percent of\n"
			    "                      the total (default 0.1 px)\n"
			    "  --fonttype FONT     (default Verdana)\n"
			    "  --fontsize SIZE     (default 12)\n"
			    "  --countname NAME    what the counts are (default samples)\n"
			    "  --nametype TEXT     label of the hover line (default \"Function:\")\n"
			    "  --colors PALETTE    java (default: JIT, inlined, interpreted, JVM, GC, compiler,\n"
			    "                      kernel, native, metadata), hot, mem, io, js, red, green,\n"
			    "                      blue, aqua, yellow, purple, orange\n"
			    "  --hash              colour by a hash of the name (same name, same colour)\n"
			    "  --random            colours varied per frame (a fixed seed: same input, same SVG)\n"
			    "  --reverse           reverse each stack (leaf at the root) before merging\n"
			    "  --inverted          icicle graph: roots at the top\n"
			    "  --flamechart        keep the input order (time), don't sort by name\n"
			    "  --negate            differential input: swap grew and shrank\n"
			    "  --notes TEXT        put TEXT into the SVG's notes\n"
			    "  --no-legend         no legend row (the java palette draws one)\n"
			    "  -o, --output FILE   write FILE, once ('-' or none: standard output)\n"
			    "  -h, --help          this text\n"
			    "\n"
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

static int parse_options(struct svg_cmd *c, int argc, char **argv)
{
	enum {
		O_FONTTYPE = FG_CLI_NEXT,
		O_FONTSIZE,
		O_NAMETYPE,
		O_COLORS,
		O_HASH,
		O_RANDOM,
		O_REVERSE,
		O_INVERTED,
		O_FLAMECHART,
		O_NOTES,
		O_NOLEGEND
	};
	static const struct option longopts[] = {
		{ "title", required_argument, NULL, FG_CLI_TITLE },
		{ "subtitle", required_argument, NULL, FG_CLI_SUBTITLE },
		{ "width", required_argument, NULL, FG_CLI_WIDTH },
		{ "height", required_argument, NULL, FG_CLI_HEIGHT },
		{ "minwidth", required_argument, NULL, FG_CLI_MINWIDTH },
		{ "fonttype", required_argument, NULL, O_FONTTYPE },
		{ "fontsize", required_argument, NULL, O_FONTSIZE },
		{ "countname", required_argument, NULL, FG_CLI_COUNTNAME },
		{ "nametype", required_argument, NULL, O_NAMETYPE },
		{ "colors", required_argument, NULL, O_COLORS },
		{ "color", required_argument, NULL, O_COLORS },
		{ "hash", no_argument, NULL, O_HASH },
		{ "random", no_argument, NULL, O_RANDOM },
		{ "reverse", no_argument, NULL, O_REVERSE },
		{ "inverted", no_argument, NULL, O_INVERTED },
		{ "flamechart", no_argument, NULL, O_FLAMECHART },
		{ "negate", no_argument, NULL, FG_CLI_NEGATE },
		{ "notes", required_argument, NULL, O_NOTES },
		{ "no-legend", no_argument, NULL, O_NOLEGEND },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const palettes[] = { "java",	 "hot",	 "mem",	 "io",	   "js",     "red",
						"green", "blue", "aqua", "yellow", "purple", "orange" };
	int ch, idx = 0;
	double d;
	memset(c, 0, sizeof(*c));
	c->o.colors = "java";
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long_only(argc, argv, "o:h", longopts, &idx)) != -1) {
		int shared = fg_cli_option(&c->o, ch, optarg);
		if (shared < 0)
			return -1;
		if (shared > 0)
			continue;
		switch (ch) {
		case O_FONTTYPE:
			c->o.fonttype = optarg;
			break;
		case O_FONTSIZE:
			if (cli_parse_seconds(optarg, 1, 100, &d) != 0) {
				msg_say("--fontsize takes a size from 1 to 100, not '%s'\n", optarg);
				return -1;
			}
			c->o.fontsize = d;
			break;
		case O_NAMETYPE:
			c->o.nametype = optarg;
			break;
		case O_COLORS: {
			bool ok = false;
			for (size_t i = 0; i < sizeof(palettes) / sizeof(palettes[0]); i++)
				ok = ok || strcmp(optarg, palettes[i]) == 0;
			if (!ok) {
				msg_say("--colors takes java, hot, mem, io, js, red, green, blue, aqua, yellow, "
					"purple or orange, not '%s'\n",
					optarg);
				return -1;
			}
			c->o.colors = optarg;
			break;
		}
		case O_HASH:
			c->o.hash = true;
			break;
		case O_RANDOM:
			c->o.hash = false;
			break;
		case O_REVERSE:
			c->o.reverse = true;
			break;
		case O_INVERTED:
			c->o.inverted = true;
			break;
		case O_FLAMECHART:
			c->o.flamechart = true;
			break;
		case O_NOTES:
			c->o.notes = optarg;
			break;
		case O_NOLEGEND:
			c->no_legend = true;
			break;
		case 'o':
			if (cli_output_add("svg", &c->output, &c->noutput, 1, optarg) != 0)
				return -1;
			break;
		default:
			return cli_option_other("svg", usage, ch, argv[optind - 1], optopt != 0);
		}
	}
	if (optind + 1 < argc) {
		msg_say("jflame svg draws one input; concatenate folded files first (cat a b | jflame svg)\n");
		return -1;
	}
	c->input = optind < argc ? argv[optind] : "-";
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
