/* test_cli_opts.c - unit tests for cli_opts, the front ends' option engine: each
 * kind of row, its bounds and bad values, getopt's complaints, --help and the short options. */
#include <stdarg.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "cli_opts.h"

/* What the rows set. */
struct target {
	bool flag, unset, flag_given;
	const char *str, *nonempty;
	int i, dur_ms, sec_ms;
	long l;
	size_t count;
	uint64_t size, nanos, dur_ns;
	double dur, sec;
	int calls;
	const char *called_with;
};

static int on_call(void *to, char *arg)
{
	struct target *t = to;
	t->calls++;
	t->called_with = arg;
	return arg && strcmp(arg, "no") == 0 ? -1 : 0;
}

static const struct cli_cmd test_cmd = { "t", "usage: jflame t [options] FILE\n\n", NULL, "\nExamples:\n  x\n", 24, 0 };

#define NROWS 19
static void rows_for(struct target *t, struct cli_opt rows[NROWS])
{
	const struct cli_opt r[NROWS] = {
		ROW_NUM("flag", 'f', OPT_FLAG, &t->flag, &t->flag_given, 0, 0, NULL, NULL, "a flag"),
		ROW("unset", 0, OPT_UNSET, &t->unset, NULL, "clears"),
		ROW("str", 's', OPT_STRING, &t->str, "TEXT", "any text"),
		ROW_NUM("nonempty", 0, OPT_NONEMPTY, &t->nonempty, NULL, 0, 0, "--nonempty needs a name", "NAME",
			"a name"),
		ROW_NUM("int", 'i', OPT_INT, &t->i, NULL, 1, 10, "-i takes 1 to 10, not '%s'", "N", "an int"),
		ROW_NUM("long", 0, OPT_LONG, &t->l, NULL, 0, 1000000000L, "--long %s: give a number", "N", "a long"),
		ROW_NUM("count", 0, OPT_COUNT, &t->count, NULL, 1, 1000000000000L, "--count takes 1 to 10^12, not '%s'",
			"N", "a count"),
		ROW_NUM("size", 0, OPT_SIZE, &t->size, NULL, 1024, 1 << 30, "--size takes 1k to 1g, not '%s'", "SIZE",
			"a size"),
		ROW_NUM("nanos", 0, OPT_NANOS, &t->nanos, NULL, 0, 1e9, "--nanos takes up to 1s, not '%s'", "D",
			"nanoseconds"),
		ROW_NUM("dur", 'd', OPT_DURATION, &t->dur, NULL, 0.001, 1e7, "-d takes a duration, not '%s'", "SECONDS",
			"a duration"),
		ROW_NUM("dur-ns", 0, OPT_DURATION_NS, &t->dur_ns, NULL, 1, 86400,
			"--dur-ns takes 1 s to 24 h, not '%s'", "D", "a duration in ns"),
		ROW_NUM("dur-ms", 0, OPT_DURATION_MS, &t->dur_ms, NULL, 0.1, 600,
			"--dur-ms takes 0.1 s to 10 m, not '%s'", "D", "a duration in ms"),
		ROW_NUM("sec", 0, OPT_SECONDS, &t->sec, NULL, 1e-12, 0.5, "--sec %s: give 0 to 0.5", "A", "seconds"),
		ROW_NUM("sec-ms", 0, OPT_SECONDS_MS, &t->sec_ms, NULL, 0.1, 3600,
			"--sec-ms takes 0.1 to 3600, not '%s'", "S", "seconds in ms"),
		ROW_CALL("call", 'c', OPT_CALL, on_call, t, "X", "calls"),
		ROW_CALL("call-flag", 0, OPT_CALL_FLAG, on_call, t, NULL, "calls without a value"),
		ROW_CALL("call-opt", 0, OPT_CALL_OPTIONAL, on_call, t, "[=X]", "calls with or without one"),
		ROW_TEXT("-- COMMAND", "not an option"),
		ROW_HELP("help", 'h', "this text"),
	};
	memcpy(rows, r, sizeof(r));
}

/* What fd (1 or 2) got while fn ran, in buf. */
static void capture(int fd, char *buf, size_t len, void (*fn)(void *), void *ctx)
{
	FILE *tmp = tmpfile();
	int saved = dup(fd);
	fflush(stdout);
	fflush(stderr);
	dup2(fileno(tmp), fd);
	fn(ctx);
	fflush(stdout);
	fflush(stderr);
	dup2(saved, fd);
	close(saved);
	rewind(tmp);
	size_t n = fread(buf, 1, len - 1, tmp);
	buf[n] = '\0';
	fclose(tmp);
}

struct parse_run {
	const struct cli_cmd *cmd;
	const struct cli_opt *rows;
	size_t n;
	char *argv[40];
	int argc, rc, next;
};

static void parse_fn(void *ctx)
{
	struct parse_run *p = ctx;
	p->rc = cli_opts_parse(p->cmd, p->rows, p->n, p->argc, p->argv, &p->next);
}

/* Parses args (NULL-terminated, after the command's name) with the test
 * rows into t: the result, what was said on stderr in err. */
static int parse(struct target *t, const struct cli_cmd *cmd, char *err, size_t errlen, ...)
{
	struct cli_opt rows[NROWS];
	struct parse_run p = { cmd, rows, NROWS, { "t" }, 1, 0, 0 };
	va_list ap;
	rows_for(t, rows);
	va_start(ap, errlen);
	for (char *a; (a = va_arg(ap, char *)) && p.argc < 39;)
		p.argv[p.argc++] = a;
	va_end(ap);
	p.argv[p.argc] = NULL;
	capture(2, err, errlen, parse_fn, &p);
	return p.rc == 0 ? p.next : -100 + p.rc; /* the first operand, or -101/-99 */
}

static void test_kinds(void)
{
	struct target t = { .unset = true };
	char err[512];
	int next = parse(&t, &test_cmd, err, sizeof(err), "-f", "--unset", "-s", "x y", "--nonempty", "n", "-i", "10",
			 "--long", "0", "--count", "1000000000000", "--size", "512k", "--nanos", "1ms", "-d", "1.5m",
			 "--dur-ns", "30s", "--dur-ms", "10s", "--sec", "0.5", "--sec-ms", "0.25", "-c", "v",
			 "--call-flag", "--call-opt=op", NULL);
	CHECK_EQ_INT(next, 31);
	CHECK_EQ_STR(err, "");
	CHECK(t.flag && t.flag_given && !t.unset);
	CHECK_EQ_STR(t.str, "x y");
	CHECK_EQ_STR(t.nonempty, "n");
	CHECK_EQ_INT(t.i, 10);
	CHECK_EQ_INT(t.l, 0);
	CHECK_EQ_U64(t.count, 1000000000000ULL);
	CHECK_EQ_U64(t.size, 512 * 1024);
	CHECK_EQ_U64(t.nanos, 1000000);
	CHECK(t.dur == 90);
	CHECK_EQ_U64(t.dur_ns, 30000000000ULL);
	CHECK_EQ_INT(t.dur_ms, 10000);
	CHECK(t.sec == 0.5);
	CHECK_EQ_INT(t.sec_ms, 250);
	CHECK_EQ_INT(t.calls, 3);
	CHECK_EQ_STR(t.called_with, "op");

	/* --call-opt without its value calls with NULL; --flag alone leaves the rest */
	memset(&t, 0, sizeof(t));
	CHECK_EQ_INT(parse(&t, &test_cmd, err, sizeof(err), "--call-opt", "--call-flag", "-i1", "--str=", NULL), 5);
	CHECK_EQ_INT(t.calls, 2);
	CHECK(t.called_with == NULL);
	CHECK_EQ_INT(t.i, 1);
	CHECK_EQ_STR(t.str, "");
	CHECK(!t.flag && !t.flag_given);
}

/* one bad value: -1, the row's message with the value, the target as it was */
static void bad(const char *opt, const char *value, const char *said)
{
	struct target t = { .i = 7,
			    .l = 7,
			    .count = 7,
			    .size = 7,
			    .nanos = 7,
			    .dur = 7,
			    .dur_ns = 7,
			    .dur_ms = 7,
			    .sec = 7,
			    .sec_ms = 7,
			    .nonempty = "kept" };
	struct target was = t;
	char err[512];
	CHECK_MSG(parse(&t, &test_cmd, err, sizeof(err), opt, value, NULL) == -101, "%s %s taken", opt, value);
	CHECK_MSG(strcmp(err, said) == 0, "%s %s: said '%s', want '%s'", opt, value, err, said);
	CHECK_MSG(memcmp(&t, &was, sizeof(t)) == 0 || t.calls, "%s %s: target changed", opt, value);
}

static void test_bounds(void)
{
	struct target t = { 0 };
	char err[512];
	CHECK_EQ_INT(parse(&t, &test_cmd, err, sizeof(err), "-i", "1", "--size", "1k", "--sec", "0.25", NULL), 7);
	CHECK_EQ_INT(t.i, 1);
	CHECK_EQ_U64(t.size, 1024);
	CHECK_EQ_INT(parse(&t, &test_cmd, err, sizeof(err), "--size", "1G", "--dur-ms", "10m", NULL), 5);
	CHECK_EQ_STR(err, "");
	CHECK_EQ_U64(t.size, 1 << 30);
	CHECK_EQ_INT(t.dur_ms, 600000);
	bad("-i", "0", "jflame: -i takes 1 to 10, not '0'\n");
	bad("-i", "11", "jflame: -i takes 1 to 10, not '11'\n");
	bad("--int", "x", "jflame: -i takes 1 to 10, not 'x'\n");
	bad("-i", "1.5", "jflame: -i takes 1 to 10, not '1.5'\n");
	bad("--long", "-1", "jflame: --long -1: give a number\n");
	bad("--count", "1000000000001", "jflame: --count takes 1 to 10^12, not '1000000000001'\n");
	bad("--size", "1023", "jflame: --size takes 1k to 1g, not '1023'\n");
	bad("--size", "2G", "jflame: --size takes 1k to 1g, not '2G'\n");
	bad("--nanos", "2s", "jflame: --nanos takes up to 1s, not '2s'\n");
	bad("-d", "0", "jflame: -d takes a duration, not '0'\n");
	bad("--dur-ns", "25h", "jflame: --dur-ns takes 1 s to 24 h, not '25h'\n");
	bad("--dur-ms", "0.05", "jflame: --dur-ms takes 0.1 s to 10 m, not '0.05'\n");
	bad("--sec", "0.6", "jflame: --sec 0.6: give 0 to 0.5\n");
	bad("--sec-ms", "3601", "jflame: --sec-ms takes 0.1 to 3600, not '3601'\n");
	bad("--nonempty", "", "jflame: --nonempty needs a name\n");
	/* a call says its own line; the engine adds none */
	bad("-c", "no", "");
	/* a value that is refused leaves given unset */
	memset(&t, 0, sizeof(t));
	CHECK_EQ_INT(parse(&t, &test_cmd, err, sizeof(err), "-c", "no", "-f", NULL), -101);
	CHECK(!t.flag_given);
}

static void test_getopt_errors(void)
{
	struct target t = { 0 };
	char err[512];
	CHECK_EQ_INT(parse(&t, &test_cmd, err, sizeof(err), "-i", NULL), -101);
	CHECK_EQ_STR(err, "jflame: option -i needs a value; see jflame t --help\n");
	CHECK_EQ_INT(parse(&t, &test_cmd, err, sizeof(err), "-fi", NULL), -101);
	CHECK_EQ_STR(err, "jflame: option -i needs a value; see jflame t --help\n");
	CHECK_EQ_INT(parse(&t, &test_cmd, err, sizeof(err), "--int", NULL), -101);
	CHECK_EQ_STR(err, "jflame: option --int needs a value; see jflame t --help\n");
	CHECK_EQ_INT(parse(&t, &test_cmd, err, sizeof(err), "--nano", NULL), -101); /* an abbreviation */
	CHECK_EQ_STR(err, "jflame: option --nano needs a value; see jflame t --help\n");
	CHECK_EQ_INT(parse(&t, &test_cmd, err, sizeof(err), "--bogus", NULL), -101);
	CHECK_EQ_STR(err, "jflame: unknown option '--bogus'; see jflame t --help\n");
	CHECK_EQ_INT(parse(&t, &test_cmd, err, sizeof(err), "-x", NULL), -101);
	CHECK_EQ_STR(err, "jflame: unknown option '-x'; see jflame t --help\n");
	CHECK_EQ_INT(parse(&t, &test_cmd, err, sizeof(err), "--flag=1", NULL), -101); /* takes no value */
	CHECK_EQ_STR(err, "jflame: unknown option '--flag=1'; see jflame t --help\n");
	CHECK_EQ_INT(parse(&t, &test_cmd, err, sizeof(err), "--d", NULL), -101); /* --dur, --dur-ns, --dur-ms */
	CHECK_EQ_STR(err, "jflame: unknown option '--d'; see jflame t --help\n");
	memset(&t, 0, sizeof(t));
	CHECK_EQ_INT(parse(&t, &test_cmd, err, sizeof(err), "--", "-f", NULL), 2); /* -- ends the options */
	CHECK(!t.flag);
}

static void test_order(void)
{
	struct target t = { 0 };
	char err[512];
	struct cli_cmd in_order = test_cmd, long_only = test_cmd;
	in_order.flags = CLI_IN_ORDER;
	long_only.flags = CLI_LONG_ONLY;
	/* operands and options mixed (getopt permutes them), or options first */
	CHECK_EQ_INT(parse(&t, &test_cmd, err, sizeof(err), "a", "-f", "b", NULL), 2);
	CHECK(t.flag);
	memset(&t, 0, sizeof(t));
	CHECK_EQ_INT(parse(&t, &in_order, err, sizeof(err), "-i", "2", "java", "-f", NULL), 3);
	CHECK(!t.flag);
	CHECK_EQ_INT(t.i, 2);
	/* one dash for long options too */
	CHECK_EQ_INT(parse(&t, &long_only, err, sizeof(err), "-str", "s", "-int", "3", "-f", NULL), 6);
	CHECK_EQ_STR(t.str, "s");
	CHECK_EQ_INT(t.i, 3);
	CHECK_EQ_INT(parse(&t, &long_only, err, sizeof(err), "-int", NULL), -101);
	CHECK_EQ_STR(err, "jflame: option -int needs a value; see jflame t --help\n");
}

static void help_fn(void *ctx)
{
	struct parse_run *p = ctx;
	p->rc = cli_opts_parse(p->cmd, p->rows, p->n, p->argc, p->argv, &p->next);
}

static void test_help_option(void)
{
	struct target t = { 0 };
	struct cli_opt rows[NROWS];
	struct parse_run p = { &test_cmd, rows, NROWS, { "t", "-f", "--help", "--bogus", NULL }, 4, 0, 0 };
	char out[8192];
	rows_for(&t, rows);
	capture(1, out, sizeof(out), help_fn, &p);
	CHECK_EQ_INT(p.rc, 1); /* printed: the command exits 0 */
	const char *head = "usage: jflame t [options] FILE\n\n  -f, --flag            a flag\n",
		   *tail = "\nExamples:\n  x\n";
	CHECK(strncmp(out, head, strlen(head)) == 0);
	CHECK(strstr(out, "\n  -- COMMAND            not an option\n"));
	CHECK(strstr(out, "\n      --call-opt[=X]    calls with or without one\n"));
	size_t n = strlen(out);
	CHECK(n > strlen(tail) && strcmp(out + n - strlen(tail), tail) == 0);
}

static void more_fn(FILE *out)
{
	fputs("\nMore:\n", out);
}

static void test_help_layout(void)
{
	bool b;
	const char *s;
	const struct cli_opt rows[] = {
		ROW("pid", 'p', OPT_STRING, &s, "PID[,PID...]", "record these"),
		ROW("all", 'a', OPT_FLAG, &b, NULL, "all of them,\nwith a second line"),
		ROW("event", 'e', OPT_STRING, &s, "EVENT[,EVENT]", "a spec longer than the column"),
		ROW("own-line", 0, OPT_STRING, &s, "CMD", "\nunder its option"),
		ROW("hidden", 0, OPT_STRING, &s, "X", NULL),
		ROW("pid-root", 0, OPT_FLAG, &b, NULL, ""),
		ROW("tid-root", 0, OPT_FLAG, &b, NULL, "two options, one line"),
		ROW("report", 0, OPT_STRING, &s, "[=FMT]", "attached"),
		ROW_TEXT(NULL, "\nHeading:"),
		ROW_TEXT("OPERAND", "what stands after the options"),
		ROW("wrap", 0, OPT_FLAG, &b, NULL,
		    "a line too long for 79 columns is wrapped at a space, its words carried to the next line"),
		ROW_HELP("help", 'h', "this text"),
	};
	const char *want = "usage\n\n"
			   "  -p, --pid PID[,PID...]  record these\n"
			   "  -a, --all               all of them,\n"
			   "                          with a second line\n"
			   "  -e, --event EVENT[,EVENT]  a spec longer than the column\n"
			   "      --own-line CMD\n"
			   "                          under its option\n"
			   "      --pid-root, --tid-root  two options, one line\n"
			   "      --report[=FMT]      attached\n"
			   "\n"
			   "Heading:\n"
			   "  OPERAND                 what stands after the options\n"
			   "      --wrap              a line too long for 79 columns is wrapped at a space,\n"
			   "                          its words carried to the next line\n"
			   "  -h, --help              this text\n"
			   "\nMore:\n"
			   "tail\n";
	struct cli_cmd cmd = { "t", "usage\n\n", more_fn, "tail\n", 26, 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cli_opts_help(f, &cmd, rows, sizeof(rows) / sizeof(rows[0]));
	fclose(f);
	CHECK_EQ_STR(buf, want);
	for (char *line = buf, *end; line && *line; line = end ? end + 1 : NULL) {
		end = strchr(line, '\n');
		CHECK_MSG((end ? (size_t)(end - line) : strlen(line)) <= CLI_HELP_WIDTH, "too wide: %.100s", line);
	}
	free(buf);

	/* flamegraph.pl's layout: no column for the letters */
	const struct cli_opt fg[] = {
		ROW("title", 0, OPT_STRING, &s, "TEXT", "the title"),
		ROW("output", 'o', OPT_STRING, &s, "FILE", "write FILE"),
	};
	struct cli_cmd fg_cmd = { "svg", "", NULL, NULL, 22, CLI_NO_LETTERS | CLI_LONG_ONLY };
	buf = NULL;
	f = open_memstream(&buf, &len);
	cli_opts_help(f, &fg_cmd, fg, 2);
	fclose(f);
	CHECK_EQ_STR(buf, "  --title TEXT        the title\n"
			  "  -o, --output FILE   write FILE\n");
	free(buf);
}

static void test_letters(void)
{
	struct target t = { 0 };
	struct cli_opt rows[NROWS];
	char buf[64];
	struct cli_cmd in_order = test_cmd;
	in_order.flags = CLI_IN_ORDER;
	rows_for(&t, rows);
	CHECK_EQ_INT(cli_opts_letters(&test_cmd, rows, NROWS, buf, sizeof(buf)), 0);
	CHECK_EQ_STR(buf, "fs:i:d:c:h");
	CHECK_EQ_INT(cli_opts_letters(&in_order, rows, NROWS, buf, sizeof(buf)), 0);
	CHECK_EQ_STR(buf, "+fs:i:d:c:h");
	CHECK_EQ_INT(cli_opts_letters(&in_order, rows, NROWS, buf, 12), 0); /* just fits */
	CHECK_EQ_INT(cli_opts_letters(&in_order, rows, NROWS, buf, 11), -1);
	CHECK_EQ_STR(buf, "");
	const struct cli_opt opt[] = { ROW_CALL("report", 'r', OPT_CALL_OPTIONAL, on_call, &t, "[=FMT]", "r") };
	CHECK_EQ_INT(cli_opts_letters(&test_cmd, opt, 1, buf, sizeof(buf)), 0);
	CHECK_EQ_STR(buf, "r::");
	/* more rows than the engine takes: refused, said */
	struct cli_opt many[CLI_OPTS_MAX + 1];
	char err[512];
	struct parse_run p = { &test_cmd, many, CLI_OPTS_MAX + 1, { "t", NULL }, 1, 0, 0 };
	for (size_t i = 0; i < CLI_OPTS_MAX + 1; i++)
		many[i] = (struct cli_opt)ROW("x", 0, OPT_FLAG, &t.flag, NULL, NULL);
	capture(2, err, sizeof(err), parse_fn, &p);
	CHECK_EQ_INT(p.rc, -1);
	CHECK_EQ_STR(err, "jflame: jflame t has more than 64 options\n");
}

int main(void)
{
	test_kinds();
	test_bounds();
	test_getopt_errors();
	test_order();
	test_help_option();
	test_help_layout();
	test_letters();
	return check_report("test_cli_opts");
}
