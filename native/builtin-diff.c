/* builtin-diff.c - `jflame diff`: two folded profiles (BEFORE, AFTER) to a
 * differential flame graph, a side-by-side compare page, or difffolded.pl's text. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "cli_io.h"
#include "fg_cli.h"
#include "flamegraph.h"
#include "folded.h"
#include "folded_diff.h"
#include "html_compare.h"
#include "out_file.h"

#define MAX_OUTPUTS 8

static const char usage[] =
	"usage: jflame diff [options] BEFORE AFTER [-o OUT.svg|OUT.html|OUT.folded]...\n"
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
	"  -n, --normalize     scale BEFORE's counts to AFTER's total (difffolded.pl -n);\n"
	"                      the graphs compare shares of all samples anyway\n"
	"  -s, --strip-hex     write every 0x<hex> as 0x... before merging (difffolded.pl -s)\n"
	"      --keep-ids      match process frames by pid, and [Pod]/[Con] frames by id\n"
	"                      (default: '[1234] java' is '[*] java' on both sides, so\n"
	"                      two runs of a service line up; pods and containers alike)\n"
	"  -o, --output FILE   repeatable; the extension picks the format; '-' is the SVG\n"
	"                      on standard output; an output named twice is an error\n"
	"      --title TEXT    the title (default \"Differential Flame Graph\"; the compare\n"
	"                      page: \"Compare: BEFORE vs AFTER\")\n"
	"      --subtitle TEXT a second line (default: the inputs and their totals)\n"
	"      --negate        swap what counts as grew and shrank (SVG)\n"
	"      --width PX      SVG width (default 1200)\n"
	"      --height PX     SVG frame height (default 16)\n"
	"      --minwidth N[%] SVG: leave out frames narrower than N pixels or percent\n"
	"      --countname N   what the counts are (default samples)\n"
	"      --no-legend     no grew/shrank legend in the SVG\n"
	"  -h, --help          this text\n"
	"\n"
	"Stacks only in BEFORE have no width in the SVG (its shape is AFTER's); draw\n"
	"'jflame diff AFTER BEFORE --negate' to see them, or use the compare page.\n"
	"BEFORE and AFTER may be the same file (nothing changed).\n"
	"\n"
	"Examples:\n"
	"  jflame diff before.folded after.folded -o diff.svg\n"
	"  jflame diff before.folded after.folded -o compare.html -o diff.svg\n"
	"  jflame diff -n before.folded.gz after.folded > diff.svg\n";

enum out_kind { OUT_SVG, OUT_HTML, OUT_FOLDED };

struct diff_cmd {
	struct fg_options o;
	bool normalize, strip_hex, no_legend, keep_ids;
	const char *before, *after;
	const char *outputs[MAX_OUTPUTS];
	enum out_kind kinds[MAX_OUTPUTS];
	size_t noutputs;
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

static int output_kind(const char *path, enum out_kind *k)
{
	if (strcmp(path, "-") == 0 || ends_with(path, ".svg"))
		*k = OUT_SVG;
	else if (ends_with(path, ".html") || ends_with(path, ".htm"))
		*k = OUT_HTML;
	else if (ends_with(path, ".folded") || ends_with(path, ".collapsed") || ends_with(path, ".txt"))
		*k = OUT_FOLDED;
	else
		return -1;
	return 0;
}

static int parse_options(struct diff_cmd *c, int argc, char **argv)
{
	enum { O_NOLEGEND = FG_CLI_NEXT, O_KEEPIDS };
	static const struct option longopts[] = {
		{ "normalize", no_argument, NULL, 'n' },                  { "strip-hex", no_argument, NULL, 's' },
		{ "output", required_argument, NULL, 'o' },               { "title", required_argument, NULL, FG_CLI_TITLE },
		{ "subtitle", required_argument, NULL, FG_CLI_SUBTITLE }, { "negate", no_argument, NULL, FG_CLI_NEGATE },
		{ "width", required_argument, NULL, FG_CLI_WIDTH },       { "height", required_argument, NULL, FG_CLI_HEIGHT },
		{ "minwidth", required_argument, NULL, FG_CLI_MINWIDTH }, { "countname", required_argument, NULL, FG_CLI_COUNTNAME },
		{ "no-legend", no_argument, NULL, O_NOLEGEND },           { "help", no_argument, NULL, 'h' },
		{ "keep-ids", no_argument, NULL, O_KEEPIDS },             { NULL, 0, NULL, 0 },
	};
	int ch;
	memset(c, 0, sizeof(*c));
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "nso:h", longopts, NULL)) != -1) {
		int shared = fg_cli_option(&c->o, ch, optarg);
		if (shared < 0)
			return -1;
		if (shared > 0)
			continue;
		switch (ch) {
		case 'n':
			c->normalize = true;
			break;
		case 's':
			c->strip_hex = true;
			break;
		case 'o':
			if (c->noutputs < MAX_OUTPUTS && output_kind(optarg, &c->kinds[c->noutputs]) != 0) {
				fprintf(stderr, "jflame: -o %s: unknown output format; name it .svg, .html or .folded\n", optarg);
				return -1;
			}
			if (cli_output_add("diff", c->outputs, &c->noutputs, MAX_OUTPUTS, optarg) != 0)
				return -1;
			break;
		case O_KEEPIDS:
			c->keep_ids = true;
			break;
		case O_NOLEGEND:
			c->no_legend = true;
			break;
		default:
			return cli_option_other("diff", usage, ch, argv[optind - 1],
						optopt == 'o' ||
						(optopt >= FG_CLI_TITLE && optopt <= FG_CLI_COUNTNAME));
		}
	}
	if (argc - optind != 2) {
		fprintf(stderr, "jflame: jflame diff takes two folded profiles, BEFORE and AFTER (%d given); see jflame diff --help\n",
			argc - optind);
		return -1;
	}
	c->before = argv[optind];
	c->after = argv[optind + 1];
	if (strcmp(c->before, "-") == 0 && strcmp(c->after, "-") == 0) {
		fprintf(stderr, "jflame: only one of BEFORE and AFTER can be standard input\n");
		return -1;
	}
	if (c->noutputs == 0)
		c->outputs[c->noutputs++] = "-"; /* the SVG on standard output */
	return 0;
}

/* Reads one side; refuses differential input and empty profiles. */
static int read_side(struct folded *f, const char *path, const char *which, char *err, size_t errlen)
{
	const char *name = cli_input_name(path);
	if (folded_read(f, path, 0, err, errlen) != 0)
		return -1;
	if (f->differential) {
		snprintf(err, errlen, "jflame: %s (%s) has lines with two counts: it is already a differential profile; "
			 "give jflame diff two plain folded profiles", name, which);
		return -1;
	}
	if (f->n == 0 || f->total == 0) {
		char why[200];
		cli_folded_none(f, why, sizeof(why));
		snprintf(err, errlen, "jflame: no %s in %s (%s%s%s); give folded stacks ('frame;frame;... count' lines, "
			 "as jflame collapse writes)", f->n ? "samples" : "stacks", name, which, why[0] ? ", " : "", why);
		return -1;
	}
	cli_folded_warn(f, name);
	return 0;
}

int cmd_diff(int argc, char **argv)
{
	struct diff_cmd cmd;
	struct folded before = { 0 }, after = { 0 };
	struct folded_diff raw = { 0 }, norm = { 0 };
	struct out_file of[MAX_OUTPUTS];
	size_t opened = 0, committed = 0;
	char err[1024] = "", subtitle[1100], page_sub[1024];
	int rc = 1;

	out_file_clean_on_signals(); /* an interrupted run leaves no temporary file */
	int p = parse_options(&cmd, argc, argv);
	if (p != 0)
		return p > 0 ? 0 : 2;
	if (read_side(&before, cmd.before, "BEFORE", err, sizeof(err)) != 0 ||
	    read_side(&after, cmd.after, "AFTER", err, sizeof(err)) != 0)
		goto out;
	struct folded_diff_opts as_read = { .strip_hex = cmd.strip_hex, .merge_ids = !cmd.keep_ids };
	struct folded_diff_opts scaled = as_read;
	scaled.normalize = true;
	if (folded_diff_build(&raw, &before, &after, &as_read) != 0 ||
	    (cmd.normalize && folded_diff_build(&norm, &before, &after, &scaled) != 0)) {
		snprintf(err, sizeof(err), "jflame: out of memory merging the profiles");
		goto out;
	}
	const struct folded_diff *d = cmd.normalize ? &norm : &raw;
	const char *page_subtitle = cmd.o.subtitle;
	if (!cmd.o.subtitle) {
		snprintf(page_sub, sizeof(page_sub), "BEFORE %.300s: %" PRIu64 " samples; AFTER %.300s: %" PRIu64 " samples",
			 cli_input_name(cmd.before), raw.total_before, cli_input_name(cmd.after), raw.total_after);
		snprintf(subtitle, sizeof(subtitle), "%s%s. Widths: AFTER; red grew, blue shrank", page_sub,
			 cmd.normalize ? " (BEFORE normalized to AFTER's total)" : "");
		cmd.o.subtitle = subtitle;
		page_subtitle = page_sub;
	}
	for (size_t i = 0; i < cmd.noutputs; i++) {
		if (out_file_open(&of[i], cli_output_path(cmd.outputs[i]), err, sizeof(err)) != 0)
			goto out;
		opened++;
		int w;
		if (cmd.kinds[i] == OUT_SVG) {
			struct fg_options o = cmd.o;
			o.differential = true;
			o.legend = !cmd.no_legend;
			if (!o.title)
				o.title = "Differential Flame Graph";
			w = flamegraph_write(of[i].f, d->stacks, d->n, &o, err, sizeof(err));
		} else if (cmd.kinds[i] == OUT_HTML) {
			struct compare_options co = { cmd.o.title, page_subtitle, cli_input_name(cmd.before), cli_input_name(cmd.after) };
			w = compare_write_html(of[i].f, raw.stacks, raw.n, &co, err, sizeof(err));
		} else {
			w = folded_diff_write(of[i].f, d);
			if (w != 0)
				snprintf(err, sizeof(err), "jflame: failed to write %.900s", of[i].path);
		}
		if (w != 0) {
			if (strncmp(err, "jflame: ", 8) != 0) {
				char e2[1024];
				snprintf(e2, sizeof(e2), "jflame: %s", err);
				snprintf(err, sizeof(err), "%s", e2);
			}
			goto out;
		}
	}
	/* every output written: now they replace their targets */
	for (; committed < opened; committed++)
		if (out_file_commit(&of[committed], err, sizeof(err)) != 0) {
			committed++; /* a failed commit removes its own temporary file */
			goto out;
		}
	rc = 0;
out:
	for (size_t i = committed; i < opened; i++)
		out_file_abort(&of[i]);
	if (rc != 0 && err[0])
		fprintf(stderr, "%s\n", err);
	folded_diff_free(&raw);
	folded_diff_free(&norm);
	folded_free(&before);
	folded_free(&after);
	return rc;
}
