/* test_cli_num.c - the options' numbers: sizes with their units in either case
 * (what --help suggests: 64k, 2m, 500M, 2G), refused units and bounds. */
#include "check.h"
#include "cli_num.h"

#include <stdint.h>

static uint64_t size_of(const char *s, int *rc)
{
	uint64_t v = 0;
	*rc = cli_parse_size(s, 1, (uint64_t)1 << 50, &v);
	return v;
}

int main(void)
{
	static const struct {
		const char *text;
		uint64_t bytes;
	} good[] = { { "512", 512 },	   { "64k", 64 << 10 },	     { "64K", 64 << 10 },  { "2m", 2 << 20 },
		     { "2M", 2 << 20 },	   { "500M", 500ull << 20 }, { "2g", 2ull << 30 }, { "2G", 2ull << 30 },
		     { "1t", 1ull << 40 }, { "1.5MiB", 3ull << 19 }, { "4KB", 4 << 10 },   { "10B", 10 } };
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		int rc;
		uint64_t v = size_of(good[i].text, &rc);
		CHECK_MSG(rc == 0 && v == good[i].bytes, "'%s': rc %d, %llu bytes", good[i].text, rc,
			  (unsigned long long)v);
	}
	static const char *const bad[] = { "", "x", "2q", "2mm", "-1k", "2 m", "0", "2P", "nan", "1e30" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc;
		size_of(bad[i], &rc);
		CHECK_MSG(rc != 0, "'%s' taken", bad[i]);
	}
	return check_report("test_cli_num");
}
