/* builtin-convert.c - `jflame convert`: between folded stacks, perf script text
 * (.stacks), pprof (.pb.gz) and speedscope JSON, and to an SVG flame graph. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builtin.h"
#include "cli_io.h"
#include "cli_num.h"
#include "collapse.h"
#include "flamegraph.h"
#include "folded.h"
#include "input_file.h"
#include "out_file.h"
#include "perf_script.h"
#include "pprof.h"
#include "profile_format.h"
#include "speedscope.h"
#include "stack_table.h"

#define MAX_OUTPUTS 16

static const char usage[] =
	"usage: jflame convert [-f FORMAT] [-t FORMAT] [options] IN -o OUT [-o OUT]...\n"
	"\n"
	"Converts a profile between folded stacks, perf script text (jflame's .stacks),\n"
	"pprof and speedscope JSON, or draws it as a flame graph. IN may be '-' for\n"
	"standard input, plain or gzip. Formats go by extension, else by content:\n"
	"\n"
	"  folded      .folded .collapsed .txt   'frame;frame;... count' lines (flamegraph.pl)\n"
	"  stacks      .stacks .perf .script .txt  perf script text (input only)\n"
	"  pprof       .pb.gz .pprof (gzip), .pb (plain protobuf)  go tool pprof, Pyroscope\n"
	"  speedscope  .json                     https://www.speedscope.app\n"
	"  svg         .svg                      interactive flame graph (output only)\n"
	"\n"
	"  -o, --output FILE        write FILE (format by extension; may repeat, each\n"
	"                           once; '-' is standard output and needs -t)\n"
	"  -f, --from-format FMT    read IN as FMT (folded, stacks, pprof, speedscope)\n"
	"  -t, --to-format FMT      write every output as FMT (folded, pprof, speedscope, svg)\n"
	"  -F, --rate HZ            the rate the samples were taken at: pprof and\n"
	"                           speedscope then also get CPU time (count x 1e9/HZ ns)\n"
	"      --sample-index N|TYPE  pprof input: the sample type to count (default 0,\n"
	"                           the first; e.g. 1 or cpu), as go tool pprof -sample_index\n"
	"      --title TEXT         the SVG's title and the speedscope profile's name\n"
	"  -h, --help               this text\n"
	"\n"
	"Folded stacks keep jflame's frame annotations (_[j] JIT, _[i] inlined, _[0]\n"
	"interpreted, _[k] kernel) through pprof and speedscope and back. perf script\n"
	"input is folded as 'jflame collapse --all' folds it, counting samples (pprof's\n"
	"second value and speedscope's weights are the samples' periods), and becomes\n"
	"one speedscope profile per thread with its samples in time order. Writing\n"
	".stacks is jflame record's job: convert has no per-sample addresses to write.\n"
	"\n"
	"Examples:\n"
	"  jflame convert cpu.folded -o cpu.pb.gz && go tool pprof -http=: cpu.pb.gz\n"
	"  jflame convert run.stacks -o run.json        # open in speedscope.app\n"
	"  jflame convert -F 99 cpu.folded -o cpu.pb.gz # samples taken at 99 Hz\n"
	"  jflame convert profile.pb.gz -o cpu.folded && jflame svg cpu.folded > cpu.svg\n"
	"  curl -s http://host:6060/debug/pprof/profile | jflame convert - -o cpu.svg\n";

struct convert_cmd {
	const char *input;
	const char *outputs[MAX_OUTPUTS];
	enum profile_format formats[MAX_OUTPUTS];
	bool raw[MAX_OUTPUTS]; /* pprof without gzip (.pb) */
	size_t noutputs;
	enum profile_format from, to;
	long rate;
	const char *sample_index;
	const char *title;
};

static int parse_format(const char *opt, const char *arg, bool output, enum profile_format *f)
{
	enum profile_format x = profile_format_named(arg);
	if (x != PFMT_UNKNOWN && !(output && x == PFMT_STACKS) && !(!output && x == PFMT_SVG)) {
		*f = x;
		return 0;
	}
	fprintf(stderr, "jflame: %s takes %s, not '%s'\n", opt,
		output ? "folded, pprof, speedscope or svg" : "folded, stacks, pprof or speedscope", arg);
	return -1;
}

static int parse_options(struct convert_cmd *c, int argc, char **argv)
{
	enum { O_SAMPLE_INDEX = 256, O_TITLE };
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },      { "from-format", required_argument, NULL, 'f' },
		{ "to-format", required_argument, NULL, 't' },   { "rate", required_argument, NULL, 'F' },
		{ "sample-index", required_argument, NULL, O_SAMPLE_INDEX },
		{ "title", required_argument, NULL, O_TITLE },   { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;
	memset(c, 0, sizeof(*c));
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "o:f:t:F:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'o':
			if (cli_output_add("convert", c->outputs, &c->noutputs, MAX_OUTPUTS, optarg) != 0)
				return -1;
			break;
		case 'f':
			if (parse_format("-f", optarg, false, &c->from) != 0)
				return -1;
			break;
		case 't':
			if (parse_format("-t", optarg, true, &c->to) != 0)
				return -1;
			break;
		case 'F':
			if (cli_parse_long(optarg, 1, 1000000, &c->rate) != 0) {
				fprintf(stderr, "jflame: -F takes samples per second from 1 to 1000000, not '%s'\n", optarg);
				return -1;
			}
			break;
		case O_SAMPLE_INDEX:
			c->sample_index = optarg;
			break;
		case O_TITLE:
			c->title = optarg;
			break;
		default:
			return cli_option_other("convert", usage, ch, argv[optind - 1], optopt != 0);
		}
	}
	if (optind == argc) {
		fprintf(stderr, "jflame: give the profile to convert: jflame convert IN -o OUT (see jflame convert --help)\n");
		return -1;
	}
	if (optind + 1 < argc) {
		fprintf(stderr, "jflame: jflame convert takes one input, not '%s' too; give outputs with -o\n",
			argv[optind + 1]);
		return -1;
	}
	c->input = argv[optind];
	if (c->noutputs == 0) {
		fprintf(stderr, "jflame: say where to write: -o OUT (the extension picks the format; -o - -t FORMAT for "
			"standard output)\n");
		return -1;
	}
	if (c->to && c->noutputs > 1) {
		fprintf(stderr, "jflame: -t names the format of a single output; with several -o let the extensions tell\n");
		return -1;
	}
	for (size_t i = 0; i < c->noutputs; i++) {
		bool raw = false;
		enum profile_format f = profile_format_of_name(c->outputs[i], &raw);
		if (c->to) {
			f = c->to;
			raw = false;
		} else if (strcmp(c->outputs[i], "-") == 0) {
			fprintf(stderr, "jflame: -o - (standard output) needs -t FORMAT: folded, pprof, speedscope or svg\n");
			return -1;
		}
		if (f == PFMT_TEXT)
			f = PFMT_FOLDED;
		if (f == PFMT_STACKS) {
			fprintf(stderr, "jflame: convert does not write .stacks ('%s'): only jflame record has each sample's "
				"addresses and times; record with -o run.stacks\n", c->outputs[i]);
			return -1;
		}
		if (f == PFMT_UNKNOWN) {
			fprintf(stderr, "jflame: cannot tell the format of '%s'; name it .folded, .pb.gz, .json or .svg, or "
				"give -t FORMAT\n", c->outputs[i]);
			return -1;
		}
		c->formats[i] = f;
		c->raw[i] = raw;
	}
	return 0;
}

/* ---- reading ---------------------------------------------------------------------- */

static int table_from_folded(struct stack_table *t, struct folded *f, const char *name, char *err, size_t errlen)
{
	if (f->differential) {
		snprintf(err, errlen, "jflame: %s has two counts a line (a differential profile); convert takes one "
			 "(cut one column: awk '{print $1, $NF}')", name);
		return -1;
	}
	if (f->n == 0) {
		char why[200];
		cli_folded_none(f, why, sizeof(why));
		snprintf(err, errlen, "jflame: no stacks in %s%s%s%s; give folded stacks ('frame;frame;... count' lines)",
			 name, why[0] ? " (" : "", why, why[0] ? ")" : "");
		return -1;
	}
	cli_folded_warn(f, NULL);
	for (size_t i = 0; i < f->n; i++) {
		if (stack_table_add(t, f->stacks[i].frames, strlen(f->stacks[i].frames), f->stacks[i].count, 0) < 0) {
			snprintf(err, errlen, "jflame: out of memory reading %s", name);
			return -1;
		}
	}
	return 0;
}

/* perf script samples, folded by collapse.c one at a time. */
struct stacks_reader {
	struct stack_table *t;
	struct collapse c;
	char thread[512];
	double first, last;
	bool have_time, any_period, oom;
	uint64_t period;
};

static int on_sample(void *ctx, const struct ps_sample *s)
{
	struct stacks_reader *x = ctx;
	char *text;
	size_t len;
	int r = collapse_fold(&x->c, s, &text, &len);
	if (r <= 0) { /* out of memory, another event, or out of range */
		x->oom = r < 0;
		return r < 0 ? 1 : 0;
	}
	x->c.kept++;
	uint64_t w = s->has_period && s->period > 0 ? s->period : 1;
	long id = stack_table_add(x->t, text, len, 1, w);
	/* named as speedscope's perf import names its profiles */
	int cn = (int)(s->comm.n < 256 ? s->comm.n : 256), tn;
	if (s->pid >= 0)
		tn = snprintf(x->thread, sizeof(x->thread), "%.*s pid: %ld tid: %ld", cn, s->comm.p, s->pid, s->tid);
	else
		tn = snprintf(x->thread, sizeof(x->thread), "%.*s tid: %ld", cn, s->comm.p, s->tid);
	if (id < 0 || stack_table_add_timed(x->t, (uint32_t)id, x->thread, (size_t)tn, s->has_time ? s->time : 0, w) != 0) {
		x->oom = true;
		return 1;
	}
	if (s->has_period && s->period > 0) {
		if (!x->any_period)
			x->period = s->period;
		x->any_period = true;
	}
	if (s->has_time) {
		if (!x->have_time || s->time < x->first)
			x->first = s->time;
		if (!x->have_time || s->time > x->last)
			x->last = s->time;
		x->have_time = true;
	}
	return 0;
}

/* Reads perf script text from path, or from buf when buf is not NULL. */
static int table_from_stacks(struct stack_table *t, const char *path, const char *buf, size_t len, const char *name,
			     char *err, size_t errlen)
{
	struct stacks_reader x = { .t = t };
	struct collapse_opts o = { .kernel = true, .jit = true };
	struct ps_stats st;
	int rc = -1;

	collapse_init(&x.c, &o, NULL); /* collapse_fold only: no recording */
	if (buf)
		perf_script_parse_buffer(buf, len, on_sample, &x, &st);
	else if (perf_script_parse_file(path, on_sample, &x, &st, err, errlen) != 0)
		goto out;
	if (x.oom) {
		snprintf(err, errlen, "jflame: out of memory reading %s", name);
		goto out;
	}
	if (st.real == 0) {
		snprintf(err, errlen, "jflame: no samples in %s%s; give perf script output (perf record -g, then perf "
			 "script) or jflame record's .stacks", name, st.bad_lines ? " (it does not look like perf script text)" : "");
		goto out;
	}
	if (st.bad_lines || st.long_lines)
		fprintf(stderr, "jflame: warning: skipped %" PRIu64 " unrecognized and %" PRIu64 " overlong lines "
			"(first: '%s')\n", st.bad_lines, st.long_lines, st.first_bad);
	if (x.c.other_event)
		fprintf(stderr, "jflame: kept only '%s' events; %" PRIu64 " samples of other events skipped\n", x.c.event,
			x.c.other_event);
	struct stack_meta *m = &t->meta;
	snprintf(m->event, sizeof(m->event), "%s", x.c.event);
	if (x.any_period) {
		bool clock = strncmp(x.c.event, "cpu-clock", 9) == 0 || strncmp(x.c.event, "task-clock", 10) == 0;
		m->has_weight = true;
		m->period = x.period;
		if (clock) {
			snprintf(m->weight_type, sizeof(m->weight_type), "cpu");
			snprintf(m->weight_unit, sizeof(m->weight_unit), "nanoseconds");
		} else {
			size_t en = strcspn(x.c.event, ":");
			snprintf(m->weight_type, sizeof(m->weight_type), "%.*s", (int)(en < 31 ? en : 31),
				 x.c.event[0] ? x.c.event : "events");
			snprintf(m->weight_unit, sizeof(m->weight_unit), "count");
		}
	}
	if (x.have_time)
		m->duration_ns = (int64_t)((x.last - x.first) * 1e9);
	rc = 0;
out:
	collapse_free(&x.c);
	return rc;
}

static int read_input(struct stack_table *t, const struct convert_cmd *cmd, char *err, size_t errlen)
{
	const char *name = cli_input_name(cmd->input);
	bool raw;
	enum profile_format f = cmd->from ? cmd->from : profile_format_of_name(cmd->input, &raw);
	struct folded fo = { 0 };
	char *buf = NULL;
	size_t len = 0;
	int rc = -1;

	if (f == PFMT_SVG) {
		snprintf(err, errlen, "jflame: %s is an SVG; convert reads folded stacks, perf script text, pprof or "
			 "speedscope JSON (the folded stacks behind an SVG are not in it)", name);
		return -1;
	}
	/* folded and perf script files stream from their readers */
	if (f == PFMT_FOLDED) {
		if (folded_read(&fo, cmd->input, 0, err, errlen) != 0)
			goto out;
		rc = table_from_folded(t, &fo, name, err, errlen);
		goto out;
	}
	if (f == PFMT_STACKS) {
		rc = table_from_stacks(t, cmd->input, NULL, 0, name, err, errlen);
		goto out;
	}
	if (input_file_read(cmd->input, 0, &buf, &len, err, errlen) != 0)
		goto out;
	enum profile_format seen = profile_format_sniff(buf, len);
	if (f == PFMT_TEXT)
		f = seen == PFMT_STACKS ? PFMT_STACKS : PFMT_FOLDED;
	if (f == PFMT_UNKNOWN)
		f = seen;
	switch (f) {
	case PFMT_FOLDED: {
		char *text = buf;
		buf = NULL; /* fo owns it, also when parsing fails */
		if (folded_parse(&fo, text, len, name, err, errlen) != 0)
			goto out;
		rc = table_from_folded(t, &fo, name, err, errlen);
		break;
	}
	case PFMT_STACKS:
		rc = table_from_stacks(t, NULL, buf, len, name, err, errlen);
		break;
	case PFMT_PPROF: {
		struct pprof_stats st;
		rc = pprof_read(t, buf, len, name, cmd->sample_index, &st, err, errlen);
		uint64_t skipped = st.bad_refs + st.no_frames + st.negative + st.too_long;
		if (rc == 0 && skipped) {
			char why[512];
			snprintf(why, sizeof(why), "skipped %" PRIu64 " of %" PRIu64 " samples in %s (%" PRIu64 " refer to "
				 "a location, function or string that does not exist, %" PRIu64 " have no frames, %" PRIu64
				 " a negative value, %" PRIu64 " are longer than %u MiB)", skipped, st.samples, name,
				 st.bad_refs, st.no_frames, st.negative, st.too_long, FOLDED_MAX_LINE >> 20);
			if (t->stacks.n == 0) {
				snprintf(err, errlen, "jflame: no stacks left: %s", why);
				rc = -1;
			} else {
				fprintf(stderr, "jflame: warning: %s\n", why);
			}
		}
		break;
	}
	case PFMT_SPEEDSCOPE: {
		struct speedscope_stats st;
		rc = speedscope_read(t, buf, len, name, &st, err, errlen);
		if (rc == 0 && st.too_long && t->stacks.n)
			fprintf(stderr, "jflame: warning: skipped %" PRIu64 " samples in %s longer than %u MiB\n", st.too_long,
				name, FOLDED_MAX_LINE >> 20);
		break;
	}
	default:
		snprintf(err, errlen, "jflame: cannot tell the format of %s (%s); give -f folded, stacks, pprof or "
			 "speedscope", name, len == 0 ? "it is empty" : "not folded stacks, perf script text, pprof or JSON");
		break;
	}
out:
	if (rc == 0 && cmd->sample_index && f != PFMT_PPROF) {
		snprintf(err, errlen, "jflame: --sample-index is for pprof input; %s is %s", name, profile_format_label(f));
		rc = -1;
	}
	if (rc == 0 && t->stacks.n == 0) {
		snprintf(err, errlen, "jflame: no stacks in %s; nothing to convert", name);
		rc = -1;
	}
	folded_free(&fo);
	free(buf);
	return rc;
}

/* ---- writing ---------------------------------------------------------------------- */

static int write_folded(FILE *out, const struct stack_table *t, char *err, size_t errlen)
{
	uint32_t *order = stack_table_sorted(t);
	if (!order) {
		snprintf(err, errlen, "jflame: out of memory");
		return -1;
	}
	for (size_t i = 0; i < t->stacks.n; i++)
		fprintf(out, "%s %" PRIu64 "\n", t->stacks.strs[order[i]], t->counts[order[i]]);
	free(order);
	return 0;
}

static int write_svg(FILE *out, const struct stack_table *t, const char *title, char *err, size_t errlen)
{
	uint32_t *order = stack_table_sorted(t);
	struct fg_stack *st = malloc((t->stacks.n ? t->stacks.n : 1) * sizeof(*st));
	int rc = -1;
	if (!order || !st) {
		snprintf(err, errlen, "jflame: out of memory");
		goto out;
	}
	for (size_t i = 0; i < t->stacks.n; i++)
		st[i] = (struct fg_stack){ t->stacks.strs[order[i]], t->counts[order[i]], 0 };
	const struct stack_meta *m = &t->meta;
	struct fg_options o = {
		.title = title ? title : m->name[0] ? m->name : NULL,
		.countname = strcmp(m->count_unit, "count") == 0 ? m->count_type : m->count_unit,
		.colors = "java",
		.legend = true,
		.hash = true,
	};
	rc = flamegraph_write(out, st, t->stacks.n, &o, err, errlen);
out:
	free(order);
	free(st);
	return rc;
}

/* One output of the table in one format. */
struct table_out {
	const struct stack_table *t;
	enum profile_format format;
	bool raw;
	const char *title;
};

static int write_table(FILE *out, void *ctx, char *err, size_t errlen)
{
	const struct table_out *w = ctx;
	switch (w->format) {
	case PFMT_FOLDED:
		return write_folded(out, w->t, err, errlen);
	case PFMT_PPROF:
		return pprof_write(out, w->t, w->raw, err, errlen);
	case PFMT_SPEEDSCOPE:
		return speedscope_write(out, w->t, err, errlen);
	case PFMT_SVG:
		return write_svg(out, w->t, w->title, err, errlen);
	default:
		snprintf(err, errlen, "jflame: cannot write %s", profile_format_label(w->format));
		return -1;
	}
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
	if (read_input(&t, &cmd, err, sizeof(err)) != 0)
		goto out;
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
			snprintf(err, sizeof(err), "jflame: -F %ld: %" PRIu64 " samples of %" PRIu64 " ns each make 2^63 ns or "
				 "more; are the counts samples?", cmd.rate, t.total_count, period);
			goto out;
		}
		for (size_t i = 0; i < t.stacks.n; i++)
			t.weights[i] = t.counts[i] * period;
		t.total_weight = t.total_count * period;
		t.meta.has_weight = true;
		t.meta.period = period;
		snprintf(t.meta.weight_type, sizeof(t.meta.weight_type), "cpu");
		snprintf(t.meta.weight_unit, sizeof(t.meta.weight_unit), "nanoseconds");
		for (size_t i = 0; i < t.ntimeline; i++)
			t.timeline[i].weight = period;
	}
	for (size_t i = 0; i < cmd.noutputs; i++) {
		struct table_out w = { &t, cmd.formats[i], cmd.raw[i], cmd.title };
		if (cli_output_write(cli_output_path(cmd.outputs[i]), write_table, &w, err, sizeof(err)) != 0)
			goto out;
	}
	rc = 0;
out:
	if (rc != 0 && err[0])
		fprintf(stderr, "%s\n", err);
	stack_table_free(&t);
	return rc;
}
