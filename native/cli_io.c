/* cli_io.c - the front ends' shared input, warning and output steps (see cli_io.h). */
#include "cli_io.h"

#include <inttypes.h>
#include <string.h>

#include "out_file.h"

const char *cli_input_name(const char *path)
{
	return strcmp(path, "-") ? path : "standard input";
}

const char *cli_output_path(const char *arg)
{
	return arg && strcmp(arg, "-") ? arg : NULL;
}

int cli_option_error(const char *cmd, const char *arg, bool needs_value)
{
	if (needs_value)
		fprintf(stderr, "jflame: option %s needs a value; see jflame %s --help\n", arg, cmd);
	else
		fprintf(stderr, "jflame: unknown option '%s'; see jflame %s --help\n", arg, cmd);
	return -1;
}

int cli_option_other(const char *cmd, const char *usage, int ch, const char *arg, bool needs_value)
{
	if (ch == 'h') {
		fputs(usage, stdout);
		return 1;
	}
	return cli_option_error(cmd, arg, needs_value);
}

int cli_inputs(const char **inputs, size_t *n, size_t max, int argc, char **argv, int first)
{
	for (int i = first; i < argc; i++) {
		if (*n == max) {
			fprintf(stderr, "jflame: at most %zu input files\n", max);
			return -1;
		}
		inputs[(*n)++] = argv[i];
	}
	if (*n == 0)
		inputs[(*n)++] = "-";
	return 0;
}

int cli_scripts_read(const char *const *inputs, size_t n, ps_sample_fn fn, void *ctx, const bool *oom,
		     struct cli_script_lines *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	for (size_t i = 0; i < n; i++) {
		struct ps_stats st;
		if (perf_script_parse_file(inputs[i], fn, ctx, &st, err, errlen) != 0)
			return -1;
		if (*oom) {
			t->oom_input = inputs[i];
			return 1;
		}
		if (st.bad_lines && !t->first_bad[0])
			snprintf(t->first_bad, sizeof(t->first_bad), "%s: '%s'", cli_input_name(inputs[i]), st.first_bad);
		t->bad += st.bad_lines;
		t->overlong += st.long_lines;
		t->samples += st.samples;
	}
	return 0;
}

void cli_scripts_warn(const struct cli_script_lines *t, int first_width, const struct collapse *c)
{
	if (t->bad || t->overlong)
		fprintf(stderr, "jflame: warning: skipped %" PRIu64 " unrecognized and %" PRIu64 " overlong lines (first: %.*s)\n",
			t->bad, t->overlong, first_width, t->first_bad[0] ? t->first_bad : "-");
	if (c->other_event)
		fprintf(stderr, "jflame: kept only '%s' events; %" PRIu64 " samples of other events skipped (--event picks)\n",
			c->event, c->other_event);
}

void cli_folded_warn(const struct folded *f, const char *in_name)
{
	if (!f->bad_lines)
		return;
	if (in_name)
		fprintf(stderr, "jflame: warning: skipped %" PRIu64 " lines without a count in %s (first: '%s')\n",
			f->bad_lines, in_name, f->first_bad);
	else
		fprintf(stderr, "jflame: warning: skipped %" PRIu64 " lines without a count (first: '%s')\n", f->bad_lines,
			f->first_bad);
}

int cli_output_write(const char *path, cli_write_fn fn, void *ctx, char *err, size_t errlen)
{
	struct out_file of;
	if (out_file_open(&of, path, err, errlen) != 0)
		return -1;
	if (fn(of.f, ctx, err, errlen) != 0) {
		out_file_abort(&of);
		return -1;
	}
	return out_file_commit(&of, err, errlen);
}
