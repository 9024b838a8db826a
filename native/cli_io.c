/* cli_io.c - the front ends' shared input, warning and output steps (see cli_io.h). */
#include "cli_io.h"

#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

#include "out_file.h"
#include "msg.h"

const char *cli_input_name(const char *path)
{
	return strcmp(path, "-") ? path : "standard input";
}

const char *cli_output_path(const char *arg)
{
	return arg && strcmp(arg, "-") ? arg : NULL;
}

bool cli_same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	if (strcmp(a, b) == 0)
		return true;
	if (strcmp(a, "-") == 0 || strcmp(b, "-") == 0)
		return false;
	bool ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
	if (ea || eb)
		return ea && eb && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	const char *ba = strrchr(a, '/'), *bb = strrchr(b, '/');
	if (strcmp(ba ? ba + 1 : a, bb ? bb + 1 : b) != 0)
		return false;
	char da[4096], db[4096];
	snprintf(da, sizeof(da), "%.*s", ba ? (int)(ba - a) + 1 : 1, ba ? a : ".");
	snprintf(db, sizeof(db), "%.*s", bb ? (int)(bb - b) + 1 : 1, bb ? b : ".");
	return stat(da, &sa) == 0 && stat(db, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* How a file given twice is named: "x", "x (also as ./x)", or std for "-". */
static void twice_name(char *buf, size_t len, const char *first, const char *again, const char *std)
{
	if (strcmp(first, "-") == 0)
		snprintf(buf, len, "%s", std);
	else if (strcmp(first, again) == 0)
		snprintf(buf, len, "%s", first);
	else
		snprintf(buf, len, "%s (also as %s)", first, again);
}

int cli_output_add(const char *cmd, const char **outs, size_t *n, size_t max, const char *arg)
{
	char name[8300];
	for (size_t i = 0; i < *n; i++) {
		if (cli_same_file(outs[i], arg)) {
			twice_name(name, sizeof(name), outs[i], arg, "standard output");
			msg_say("output %s is named twice; give each output once\n", name);
			return -1;
		}
	}
	if (*n == max) {
		if (max == 1)
			msg_say("jflame %s writes one output; give -o once\n", cmd);
		else
			msg_say("at most %zu outputs\n", max);
		return -1;
	}
	outs[(*n)++] = arg;
	return 0;
}

int cli_inputs(const char **inputs, size_t *n, size_t max, int argc, char **argv, int first)
{
	char name[8300];
	for (int i = first; i < argc; i++) {
		if (*n == max) {
			msg_say("at most %zu input files\n", max);
			return -1;
		}
		for (size_t j = 0; j < *n; j++) {
			if (cli_same_file(inputs[j], argv[i])) {
				/* merged, the same samples would count twice */
				twice_name(name, sizeof(name), inputs[j], argv[i], "standard input");
				msg_say("input %s is given twice; its samples would count twice, give it once\n", name);
				return -1;
			}
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
			snprintf(t->first_bad, sizeof(t->first_bad), "%s: '%s'", cli_input_name(inputs[i]),
				 st.first_bad);
		t->bad += st.bad_lines;
		t->overlong += st.long_lines;
		t->samples += st.samples;
		t->real += st.real;
	}
	return 0;
}

void cli_scripts_warn(const struct cli_script_lines *t, int first_width, const struct collapse *c)
{
	if (t->bad || t->overlong)
		msg_warn("skipped %" PRIu64 " unrecognized and %" PRIu64 " overlong lines (first: %.*s)\n", t->bad,
			 t->overlong, first_width, t->first_bad[0] ? t->first_bad : "-");
	if (c->other_event)
		msg_say("kept only '%s' events; %" PRIu64 " samples of other events skipped (--event picks)\n",
			c->event, c->other_event);
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
	if (out_file_commit(&of, err, errlen) != 0)
		return -1;
	return 0;
}
