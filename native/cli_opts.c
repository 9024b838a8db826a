/* cli_opts.c - the front ends' option engine (see cli_opts.h): rows to getopt_long's
 * tables, each value taken by its row's kind, and --help's list printed from the rows. */
#include "cli_opts.h"

#include <getopt.h>
#include <stdint.h>
#include <string.h>

#include "cli_num.h"
#include "msg.h"

static int row_has_arg(const struct cli_opt *r)
{
	switch (r->kind) {
	case OPT_FLAG:
	case OPT_UNSET:
	case OPT_CALL_FLAG:
	case OPT_HELP:
	case OPT_TEXT:
		return no_argument;
	case OPT_CALL_OPTIONAL:
		return optional_argument;
	default:
		return required_argument;
	}
}

/* getopt_long's value for row i: its letter, else a number past every letter */
static int row_val(const struct cli_opt *rows, size_t i)
{
	return rows[i].letter ? rows[i].letter : 256 + (int)i;
}

static const struct cli_opt *row_of(const struct cli_opt *rows, size_t n, int val)
{
	for (size_t i = 0; i < n; i++)
		if (rows[i].kind != OPT_TEXT && row_val(rows, i) == val)
			return &rows[i];
	return NULL;
}

int cli_opts_letters(const struct cli_cmd *cmd, const struct cli_opt *rows, size_t n, char *buf, size_t len)
{
	size_t at = 0;
	int rc = 0;
	if (len < 2) {
		if (len)
			buf[0] = '\0';
		return -1;
	}
	if (cmd->flags & CLI_IN_ORDER)
		buf[at++] = '+';
	for (size_t i = 0; i < n; i++) {
		int has = row_has_arg(&rows[i]); /* as many colons as getopt wants */
		if (!rows[i].letter || rows[i].kind == OPT_TEXT)
			continue;
		if (at + 2 + (size_t)has > len) { /* the letter, its colons and the NUL */
			rc = -1;
			break;
		}
		buf[at++] = rows[i].letter;
		for (int k = 0; k < has; k++)
			buf[at++] = ':';
	}
	buf[rc == 0 ? at : 0] = '\0';
	return rc;
}

/* Takes option op's value arg into its target: 0, 1 after --help, or -1 said. */
static int option_take(const struct cli_cmd *cmd, const struct cli_opt *rows, size_t n, const struct cli_opt *op,
		       char *arg)
{
	long v = 0;
	double d = 0;
	bool ok = true;
	switch (op->kind) {
	case OPT_FLAG:
	case OPT_UNSET:
		*(bool *)op->to = op->kind == OPT_FLAG;
		break;
	case OPT_NONEMPTY:
	case OPT_STRING:
		ok = op->kind == OPT_STRING || *arg != '\0';
		if (ok)
			*(const char **)op->to = arg;
		break;
	case OPT_INT:
	case OPT_LONG:
	case OPT_COUNT:
		ok = cli_parse_long(arg, (long)op->min, (long)op->max, &v) == 0;
		if (ok && op->kind == OPT_INT)
			*(int *)op->to = (int)v;
		else if (ok && op->kind == OPT_LONG)
			*(long *)op->to = v;
		else if (ok)
			*(size_t *)op->to = (size_t)v;
		break;
	case OPT_SIZE:
		ok = cli_parse_size(arg, (uint64_t)op->min, (uint64_t)op->max, op->to) == 0;
		break;
	case OPT_NANOS:
		ok = cli_parse_nanos(arg, (uint64_t)op->min, (uint64_t)op->max, op->to) == 0;
		break;
	case OPT_DURATION:
	case OPT_DURATION_NS:
	case OPT_DURATION_MS:
		ok = cli_parse_duration(arg, op->min, op->max, &d) == 0;
		if (ok && op->kind == OPT_DURATION)
			*(double *)op->to = d;
		else if (ok && op->kind == OPT_DURATION_NS)
			*(uint64_t *)op->to = (uint64_t)(d * 1e9);
		else if (ok)
			*(int *)op->to = (int)(d * 1000);
		break;
	case OPT_SECONDS:
	case OPT_SECONDS_MS:
		ok = cli_parse_seconds(arg, op->min, op->max, &d) == 0;
		if (ok && op->kind == OPT_SECONDS)
			*(double *)op->to = d;
		else if (ok)
			*(int *)op->to = (int)(d * 1000);
		break;
	case OPT_CALL:
	case OPT_CALL_FLAG:
	case OPT_CALL_OPTIONAL:
		if (op->call(op->to, arg) != 0)
			return -1;
		break;
	case OPT_HELP:
		cli_opts_help(stdout, cmd, rows, n);
		return 1;
	case OPT_TEXT:
		break;
	}
	if (!ok) {
		char line[512];
		snprintf(line, sizeof(line), op->bad, arg);
		msg_say("%s\n", line); /* one line, one write */
		return -1;
	}
	if (op->given)
		*op->given = true;
	return 0;
}

/* getopt's complaint about arg (argv[optind - 1]): the option is known and
 * its value is missing, or it is unknown (or given a value it does not take). -1. */
static int option_error(const struct cli_cmd *cmd, const struct cli_opt *rows, size_t n, const char *arg)
{
	const struct cli_opt *op = optopt ? row_of(rows, n, optopt) : NULL;
	bool named = strncmp(arg, "--", 2) == 0 || (cmd->flags & CLI_LONG_ONLY);
	if (op && row_has_arg(op) == required_argument && named)
		msg_say("option %s needs a value; see jflame %s --help\n", arg, cmd->name);
	else if (op && row_has_arg(op) == required_argument)
		msg_say("option -%c needs a value; see jflame %s --help\n", optopt, cmd->name);
	else
		msg_say("unknown option '%s'; see jflame %s --help\n", arg, cmd->name);
	return -1;
}

int cli_opts_parse(const struct cli_cmd *cmd, const struct cli_opt *rows, size_t n, int argc, char **argv, int *next)
{
	struct option longopts[CLI_OPTS_MAX + 1];
	char letters[2 * CLI_OPTS_MAX + 2];
	size_t nl = 0;
	int c, rc = 0;

	if (n > CLI_OPTS_MAX || cli_opts_letters(cmd, rows, n, letters, sizeof(letters)) != 0) {
		msg_say("jflame %s has more than %d options\n", cmd->name, CLI_OPTS_MAX);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (rows[i].kind != OPT_TEXT)
			longopts[nl++] = (struct option){ rows[i].name, row_has_arg(&rows[i]), NULL, row_val(rows, i) };
	longopts[nl] = (struct option){ 0 };
	optind = 0; /* getopt starts over: a command's argv, or another in the tests */
	opterr = 0;
	optopt = 0;
	while (rc == 0 && (c = (cmd->flags & CLI_LONG_ONLY) ? getopt_long_only(argc, argv, letters, longopts, NULL) :
							      getopt_long(argc, argv, letters, longopts, NULL)) != -1) {
		const struct cli_opt *op = row_of(rows, n, c);
		rc = op ? option_take(cmd, rows, n, op, optarg) : option_error(cmd, rows, n, argv[optind - 1]);
	}
	*next = optind;
	return rc;
}

/* ---- --help ---------------------------------------------------------------- */

/* Writes one line of a description, from column *at, its words wrapped at
 * CLI_HELP_WIDTH onto lines starting at column col (a line that fits is
 * written as it is). */
static void help_line(FILE *out, int *at, const char *text, size_t len, int col)
{
	if (*at + (int)len <= CLI_HELP_WIDTH) {
		*at += fprintf(out, "%.*s", (int)len, text);
		return;
	}
	int start = *at;
	for (size_t i = 0; i < len;) {
		size_t w = strcspn(text + i, " ");
		if (w > len - i)
			w = len - i;
		if (*at > start && *at + 1 + (int)w > CLI_HELP_WIDTH) {
			fprintf(out, "\n%*s", col, "");
			*at = start = col;
		}
		*at += fprintf(out, "%s%.*s", *at > start ? " " : "", (int)w, text + i);
		i += w;
		while (i < len && text[i] == ' ')
			i++;
	}
}

/* What stands in the option's place: "-p, --pid PID[,PID...]", indented. */
static int help_spec(FILE *out, const struct cli_cmd *cmd, const struct cli_opt *r)
{
	const char *a = r->arg ? r->arg : "";
	if (r->kind == OPT_TEXT)
		return fprintf(out, "  %s", r->name);
	if (r->letter)
		return fprintf(out, "  -%c, --%s%s%s", r->letter, r->name, *a && *a != '[' ? " " : "", a);
	return fprintf(out, "  %s--%s%s%s", cmd->flags & CLI_NO_LETTERS ? "" : "    ", r->name,
		       *a && *a != '[' ? " " : "", a);
}

/* Row *i's lines (and those of the rows sharing its line); *i is left on the last. */
static void help_row(FILE *out, const struct cli_cmd *cmd, const struct cli_opt *rows, size_t n, size_t *i)
{
	const struct cli_opt *r = &rows[*i];
	if (r->kind == OPT_TEXT && !r->name) {
		fprintf(out, "%s\n", r->help);
		return;
	}
	int at = help_spec(out, cmd, r);
	while (!*r->help && *i + 1 < n && rows[*i + 1].help) {
		r = &rows[++*i];
		at += fprintf(out, ", --%s%s%s", r->name, r->arg && *r->arg != '[' ? " " : "", r->arg ? r->arg : "");
	}
	const char *h = r->help;
	if (*h == '\n') {
		fputs("\n", out);
		at = 0;
		h++;
	}
	at += fprintf(out, "%*s", at + 2 <= cmd->col ? cmd->col - at : at ? 2 : cmd->col, "");
	for (;;) {
		size_t len = strcspn(h, "\n");
		help_line(out, &at, h, len, cmd->col);
		fputs("\n", out);
		if (!h[len])
			break;
		h += len + 1;
		at = fprintf(out, "%*s", cmd->col, "");
	}
}

void cli_opts_help(FILE *out, const struct cli_cmd *cmd, const struct cli_opt *rows, size_t n)
{
	fputs(cmd->usage, out);
	for (size_t i = 0; i < n; i++)
		if (rows[i].help)
			help_row(out, cmd, rows, n, &i);
	if (cmd->more)
		cmd->more(out);
	if (cmd->tail)
		fputs(cmd->tail, out);
}
