/* test_agent_options.c - golden tests for the agent option parser: input ->
 * canonical form or error substring, formatting, truncation and the help text. */
#include "agent_options.h"
#include "check.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct parse_case {
	const char *in;
	const char *canon; /* expected agent_options_format() output; NULL = error */
	const char *err;   /* expected error substring when canon is NULL */
};

static const struct parse_case cases[] = {
	{ NULL, "", NULL },
	{ "", "", NULL },
	{ "unfold", "", NULL }, /* the default */
	{ "nounfold", "nounfold", NULL },
	{ "msig,nounfold", "nounfold,msig", NULL },
	{ "unfold,nounfold", NULL, "options 'unfold' and 'nounfold' contradict" },
	{ "nounfold=1", NULL, "option 'nounfold' takes no value" },
	{ "msig", "msig", NULL },
	{ "dottedclass", "dottedclass", NULL },
	{ "sourcepos", "sourcepos", NULL },
	{ "quiet", "quiet", NULL },
	{ "help", "help", NULL },
	{ "msig,unfold", "msig", NULL },
	{ "sourcepos,dottedclass", "dottedclass,sourcepos", NULL },
	{ "unfold,unfold", "", NULL },
	{ "help,quiet,sourcepos,dottedclass,msig,unfold", "msig,dottedclass,sourcepos,quiet,help", NULL },
	{ "quiet,help", "quiet,help", NULL },
	/* unknown options are named */
	{ "bogus", NULL, "unknown option 'bogus'" },
	{ "unfold,bogus", NULL, "unknown option 'bogus'" },
	{ "bogus=1", NULL, "unknown option 'bogus'" },
	{ "Unfold", NULL, "unknown option 'Unfold'" },
	{ "unfol", NULL, "unknown option 'unfol'" },
	{ "unfoldx", NULL, "unknown option 'unfoldx'" },
	{ " unfold", NULL, "unknown option ' unfold'" },
	{ "unfold ", NULL, "unknown option 'unfold '" },
	{ "unfold;msig", NULL, "unknown option 'unfold;msig'" },
	{ "=", NULL, "unknown option ''" },
	{ "=unfold", NULL, "unknown option ''" },
	/* every option is a flag */
	{ "unfold=1", NULL, "option 'unfold' takes no value" },
	{ "unfold=", NULL, "option 'unfold' takes no value" },
	{ "msig=true", NULL, "option 'msig' takes no value" },
	{ "quiet,help=yes", NULL, "option 'help' takes no value" },
	{ "sourcepos==", NULL, "option 'sourcepos' takes no value" },
	/* empty options */
	{ ",", NULL, "empty option" },
	{ ",unfold", NULL, "empty option" },
	{ "unfold,,msig", NULL, "empty option" },
	{ "unfold,", NULL, "trailing comma" },
	{ "unfold,msig,", NULL, "trailing comma" },
	{ ",,", NULL, "empty option" },
};

static void test_parse_table(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct parse_case *c = &cases[i];
		struct agent_options o;
		char err[256] = "", canon[256];
		int rc = agent_options_parse(c->in, &o, err, sizeof(err));
		const char *in = c->in ? c->in : "(NULL)";

		if (c->canon) {
			CHECK_MSG(rc == 0, "input '%s': rc %d, err '%s'", in, rc, err);
			if (rc != 0)
				continue;
			agent_options_format(&o, canon, sizeof(canon));
			CHECK_MSG(strcmp(canon, c->canon) == 0, "input '%s': canonical '%s', want '%s'", in, canon,
				  c->canon);
		} else {
			CHECK_MSG(rc == -1, "input '%s': rc %d, want -1", in, rc);
			CHECK_MSG(strstr(err, c->err) != NULL, "input '%s': err '%s' lacks '%s'", in, err, c->err);
			CHECK_MSG(strchr(err, '\n') == NULL, "input '%s': err '%s' is not one line", in, err);
		}
	}
}

static void test_defaults(void)
{
	struct agent_options o;
	char err[64] = "";

	/* inline chains are unfolded by default; every other flag is off */
	memset(&o, 0xff, sizeof(o));
	CHECK_EQ_INT(agent_options_parse(NULL, &o, err, sizeof(err)), 0);
	CHECK(o.unfold && !o.nounfold && !o.msig && !o.dottedclass && !o.sourcepos && !o.quiet && !o.help);
	memset(&o, 0xff, sizeof(o));
	CHECK_EQ_INT(agent_options_parse("", &o, err, sizeof(err)), 0);
	CHECK(o.unfold && !o.nounfold && !o.msig && !o.dottedclass && !o.sourcepos && !o.quiet && !o.help);
	/* a parse starts from the defaults, not from what the struct held */
	CHECK_EQ_INT(agent_options_parse("msig", &o, err, sizeof(err)), 0);
	CHECK(o.unfold && o.msig && !o.dottedclass && !o.sourcepos && !o.quiet && !o.help);
}

static void test_fields(void)
{
	struct agent_options o;
	char err[64] = "";

	CHECK_EQ_INT(agent_options_parse("help", &o, err, sizeof(err)), 0);
	CHECK(o.help && o.unfold && !o.quiet);
	CHECK_EQ_INT(agent_options_parse("unfold,dottedclass", &o, err, sizeof(err)), 0);
	CHECK(o.unfold && o.dottedclass && !o.msig && !o.sourcepos);
	CHECK_EQ_INT(agent_options_parse("sourcepos,quiet,nounfold", &o, err, sizeof(err)), 0);
	CHECK(o.sourcepos && o.quiet && !o.unfold && o.nounfold && !o.help);
}

static void test_long_unknown(void)
{
	char in[300], err[512] = "";
	struct agent_options o;

	memset(in, 'x', sizeof(in) - 1);
	in[sizeof(in) - 1] = '\0';
	CHECK_EQ_INT(agent_options_parse(in, &o, err, sizeof(err)), -1);
	CHECK_HAS_STR(err, "unknown option 'xxxxxxxx");
	CHECK(strlen(err) < sizeof(err) - 1);
}

/* Errors truncate into a short buffer, NUL-terminated, never past errlen. */
static void test_short_err(void)
{
	static const char *bad[] = { "bogus", "unfold=1", ",", "unfold," };
	struct agent_options o;

	for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
		for (size_t len = 1; len < 12; len++) {
			char err[32];
			memset(err, '#', sizeof(err));
			CHECK_EQ_INT(agent_options_parse(bad[b], &o, err, len), -1);
			CHECK_MSG(memchr(err, '\0', len) != NULL, "'%s' len %zu: not NUL-terminated", bad[b], len);
			CHECK_MSG(check_filled(err + len, sizeof(err) - len, '#'), "'%s' len %zu: wrote past errlen",
				  bad[b], len);
		}
	}
}

/* Every combination of flags formats to something that parses back to it. */
static void test_round_trip(void)
{
	for (unsigned bits = 0; bits < 64; bits++) {
		struct agent_options o = { 0 }, back;
		char buf[128], err[128] = "";

		o.unfold = bits & 1;
		o.msig = bits & 2;
		o.dottedclass = bits & 4;
		o.sourcepos = bits & 8;
		o.quiet = bits & 16;
		o.help = bits & 32;
		agent_options_format(&o, buf, sizeof(buf));
		CHECK_MSG(agent_options_parse(buf, &back, err, sizeof(err)) == 0, "bits %u: '%s': %s", bits, buf, err);
		CHECK_MSG(o.unfold == back.unfold && o.msig == back.msig && o.dottedclass == back.dottedclass &&
				  o.sourcepos == back.sourcepos && o.quiet == back.quiet && o.help == back.help,
			  "bits %u: '%s' parsed back differently", bits, buf);
	}
}

/* Formatting into a short buffer gives a NUL-terminated prefix, nothing past len. */
static void test_format_truncation(void)
{
	struct agent_options o = {
		.unfold = false, .msig = true, .dottedclass = true, .sourcepos = true, .quiet = true, .help = true
	};
	const char *full = "nounfold,msig,dottedclass,sourcepos,quiet,help";
	char buf[64];

	memset(buf, '#', sizeof(buf));
	agent_options_format(&o, buf, 0);
	CHECK(buf[0] == '#');
	for (size_t len = 1; len <= strlen(full) + 1; len++) {
		memset(buf, '#', sizeof(buf));
		agent_options_format(&o, buf, len);
		CHECK_MSG(memchr(buf, '\0', len) != NULL, "len %zu: not NUL-terminated", len);
		CHECK_MSG(strncmp(full, buf, strlen(buf)) == 0, "len %zu: '%s' is not a prefix", len, buf);
		CHECK_MSG(check_filled(buf + len, sizeof(buf) - len, '#'), "len %zu: wrote past len", len);
	}
	CHECK_EQ_STR(buf, full);
}

static void test_help(void)
{
	static const char *names[] = { "unfold", "nounfold", "msig", "dottedclass", "sourcepos", "quiet", "help" };
	const char *h = agent_options_help();
	char needle[32];
	int lines = 0;

	CHECK(h != NULL && h[0] != '\0');
	if (!h)
		return;
	for (const char *p = h; *p; p++)
		lines += *p == '\n';
	CHECK_EQ_INT(lines, 8); /* a header and one line per option */
	CHECK(h[strlen(h) - 1] == '\n');
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(needle, sizeof(needle), "\n  %s ", names[i]);
		CHECK_HAS_STR(h, needle);
	}
	CHECK(agent_options_help() == h || strcmp(agent_options_help(), h) == 0);
}

/*
 * Regression (fixed in jvmagent/agent_options.c, agent_options_parse()): the header
 * promises the error is "one line (no newline)", but the messages quote the
 * option text verbatim, so a newline or carriage return in the input ends up
 * in err: "bo\ngus" gives "unknown option 'bo<newline>gus'; ...". The agent
 * prints err as one line on the JVM's stderr.
 */
static void regression_error_is_one_line(void)
{
	static const char *bad[] = { "bo\ngus", "unfold,\nmsig", "\n", "unfold,\n,", "msig\n=1", "unfold,\rmsig" };
	struct agent_options o;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[256] = "";
		CHECK_EQ_INT(agent_options_parse(bad[i], &o, err, sizeof(err)), -1);
		size_t brk = strcspn(err, "\r\n");
		CHECK_MSG(err[brk] == '\0', "input %zu: line break at %zu in err: '%.*s'...", i, brk, (int)brk, err);
	}
}

int main(void)
{
	test_parse_table();
	test_defaults();
	test_fields();
	test_long_unknown();
	test_short_err();
	test_round_trip();
	test_format_truncation();
	test_help();
	regression_error_is_one_line();
	return check_report("agent_options");
}
