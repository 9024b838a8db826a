/* test_folded.c - folded_read's limits: gzip input unpacked into memory at most
 * max bytes (the cap input_file_read gives convert), plain files mapped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "folded.h"

static char dir[] = "/tmp/jflame-test-folded-XXXXXX";

/* 2 MiB of "a;b 1" lines, gzip'd into path (a few KiB: a small bomb). */
static int write_bomb(const char *path, bool gzip)
{
	static const char line[] = "a;b 1\n";
	char *buf = malloc(2u << 20);
	int rc = -1;
	if (!buf)
		return -1;
	for (size_t i = 0; i + sizeof(line) - 1 <= (2u << 20); i += sizeof(line) - 1)
		memcpy(buf + i, line, sizeof(line) - 1);
	size_t n = (2u << 20) / (sizeof(line) - 1) * (sizeof(line) - 1);
	if (gzip) {
		gzFile g = gzopen(path, "wb9");
		if (g && gzwrite(g, buf, (unsigned)n) == (int)n && gzclose(g) == Z_OK)
			rc = 0;
	} else {
		FILE *f = fopen(path, "wb");
		if (f && fwrite(buf, 1, n, f) == n && fclose(f) == 0)
			rc = 0;
	}
	free(buf);
	return rc;
}

static void test_gzip_is_capped(void)
{
	char gz[128], plain[128], err[512] = "";
	struct folded f;
	struct stack_table t;
	stack_table_init(&t);
	snprintf(gz, sizeof(gz), "%s/bomb.folded.gz", dir);
	snprintf(plain, sizeof(plain), "%s/big.folded", dir);
	CHECK(write_bomb(gz, true) == 0 && write_bomb(plain, false) == 0);
	/* more than the cap once unpacked: refused, in one line naming file and limit */
	CHECK_EQ_INT(folded_read(&f, &t, gz, 1u << 20, 0, err, sizeof(err)), -1);
	CHECK_HAS_STR(err, gz);
	CHECK_HAS_STR(err, "unpacks to more than 1 MiB, the limit for gzip input");
	CHECK(strchr(err, '\n') == NULL);
	stack_table_free(&t);
	stack_table_init(&t);
	/* within the cap (0: INPUT_MAX_BYTES) it reads */
	CHECK_EQ_INT(folded_read(&f, &t, gz, 0, 0, err, sizeof(err)), 0);
	CHECK_EQ_U64(f.total, (2u << 20) / 6);
	stack_table_free(&t);
	stack_table_init(&t);
	/* a plain file is mapped: its size is real, not capped */
	CHECK_EQ_INT(folded_read(&f, &t, plain, 1u << 20, 0, err, sizeof(err)), 0);
	CHECK_EQ_U64(f.total, (2u << 20) / 6);
	stack_table_free(&t);
	unlink(gz);
	unlink(plain);
}

int main(void)
{
	CHECK(mkdtemp(dir) != NULL);
	test_gzip_is_capped();
	rmdir(dir);
	return check_report("folded");
}
