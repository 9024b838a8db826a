/* test_cli_num.c - unit tests for cli_num: cli_parse_nanos (--min-block) units,
 * bare numbers as microseconds, range checks, and what it refuses. */
#include "check.h"
#include "cli_num.h"

static void ok(const char *s, uint64_t want)
{
	uint64_t v = 12345;
	CHECK_MSG(cli_parse_nanos(s, 0, 3600000000000ULL, &v) == 0, "'%s' refused", s);
	CHECK_MSG(v == want, "'%s': %" PRIu64 " ns, want %" PRIu64, s, v, want);
}

static void bad(const char *s, uint64_t lo, uint64_t hi)
{
	uint64_t v = 12345;
	CHECK_MSG(cli_parse_nanos(s, lo, hi, &v) != 0, "'%s' taken", s);
	CHECK_MSG(v == 12345, "'%s': output changed on failure", s);
}

int main(void)
{
	ok("0", 0);
	ok("1", 1000);
	ok("250", 250000);
	ok("500ns", 500);
	ok("1us", 1000);
	ok("1.5us", 1500);
	ok("1ms", 1000000);
	ok("0.5ms", 500000);
	ok("2s", 2000000000ULL);
	ok("3600s", 3600000000000ULL);
	bad("", 0, 100);
	bad("x", 0, 1000000);
	bad("1x", 0, 1000000);
	bad("1 ms", 0, 1000000);
	bad("ms", 0, 1000000);
	bad("-1ms", 0, 1000000000);
	bad("+1ms", 0, 1000000000);
	bad("nan", 0, 1000000000);
	bad("inf", 0, UINT64_MAX);
	bad("1e30s", 0, UINT64_MAX);
	bad("2h", 0, UINT64_MAX);
	bad("3601s", 0, 3600000000000ULL);
	bad("1us", 2000, 1000000);

	long l;
	CHECK_EQ_INT(cli_parse_long("42", 1, 100, &l), 0);
	CHECK_EQ_INT(l, 42);
	CHECK(cli_parse_long("42x", 1, 100, &l) != 0);
	return check_report("test_cli_num");
}
