/* test_kallsyms.c - unit tests for kallsyms: golden samples in tests/data/kallsyms
 * (lookups, errors), then the real /proc/kallsyms (vfs_read, load time). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "check.h"
#include "kallsyms.h"

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *data_path(const char *name)
{
	static char path[4096];
	const char *dir = getenv("JFLAME_TEST_DATA");

	snprintf(path, sizeof(path), "%s/kallsyms/%s", dir ? dir : "tests/data", name);
	return path;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static const struct {
	uint64_t addr;
	const char *name; /* NULL: no symbol */
	uint64_t off;
	const char *module;
} golden[] = {
	{ 0xffffffff80ffffffULL, NULL, 0, NULL },	  /* below the first symbol */
	{ 0, NULL, 0, NULL },				  /* zero-address symbols are dropped */
	{ 0xffffffff81000000ULL, "startup_64", 0, NULL }, /* of _stext, _text: no underscore */
	{ 0xffffffff810000ffULL, "startup_64", 0xff, NULL },
	{ 0xffffffff81000100ULL, "secondary_startup_64", 0, NULL },
	{ 0xffffffff81000201ULL, "vfs_read", 1, NULL },	       /* T wins over W */
	{ 0xffffffff81000300ULL, "__global_fn", 0, NULL },     /* T wins over t, underscores or not */
	{ 0xffffffff81000450ULL, "__global_fn", 0x150, NULL }, /* D and A symbols do not shadow it */
	{ 0xffffffff81000480ULL, "__global_fn", 0x180, NULL },
	{ 0xffffffff81000540ULL, "weak_only", 0, NULL }, /* w is text */
	{ 0xffffffff81000600ULL, "_etext", 0, NULL },
	{ 0xffffffff810015ffULL, "_etext", 0xfff, NULL }, /* the core's last: a page at most */
	{ 0xffffffff81001600ULL, NULL, 0, NULL },
	{ 0xffffffffc0000fffULL, NULL, 0, NULL },
	{ 0xffffffffc0001000ULL, "ext4_read", 0, "ext4" }, /* module lines out of order */
	{ 0xffffffffc0001fffULL, "ext4_read", 0xfff, "ext4" },
	{ 0xffffffffc0002800ULL, "ext4_other", 0x800, "ext4" },
	{ 0xffffffffc0002fffULL, "ext4_other", 0xfff, "ext4" },
	{ 0xffffffffc0003000ULL, "xfs_thing", 0, "xfs" },
	{ 0xffffffffc00030ffULL, "xfs_thing", 0xff, "xfs" },
	{ 0xffffffffc0003100ULL, "bpf_prog_6deef7357e7b4530_sd_fw_ingress", 0, "bpf" },
	{ 0xffffffffc0004000ULL, "bpf_prog_6deef7357e7b4530_sd_fw_ingress", 0xf00, "bpf" },
	{ 0xffffffffc0004100ULL, NULL, 0, NULL }, /* past the last one by a page */
	{ UINT64_MAX, NULL, 0, NULL },
};

static void test_golden(void)
{
	char err[256] = "";
	struct kallsyms *ks = kallsyms_load(data_path("sample"), err, sizeof(err));

	CHECK_MSG(ks != NULL, "%s", err);
	if (!ks)
		return;
	CHECK_EQ_INT(kallsyms_count(ks), 10);
	CHECK_EQ_INT(kallsyms_malformed(ks), 8);
	for (size_t i = 0; i < sizeof(golden) / sizeof(golden[0]); i++) {
		uint64_t off = 12345;
		const char *mod = "unset";
		const char *name = kallsyms_lookup(ks, golden[i].addr, &off, &mod);
		CHECK_MSG(golden[i].name ? name && strcmp(name, golden[i].name) == 0 : !name,
			  "row %zu: %#" PRIx64 " gave %s, want %s", i, golden[i].addr, name ? name : "(null)",
			  golden[i].name ? golden[i].name : "(null)");
		if (!name || !golden[i].name)
			continue;
		CHECK_MSG(off == golden[i].off, "row %zu: offset %#" PRIx64 ", want %#" PRIx64, i, off, golden[i].off);
		CHECK_MSG(golden[i].module ? mod && strcmp(mod, golden[i].module) == 0 : !mod,
			  "row %zu: module %s, want %s", i, mod ? mod : "(null)",
			  golden[i].module ? golden[i].module : "(null)");
	}
	/* offset and module are optional */
	CHECK_EQ_STR(kallsyms_lookup(ks, 0xffffffff81000205ULL, NULL, NULL), "vfs_read");
	kallsyms_free(ks);
}

static void test_errors(void)
{
	char err[256] = "";

	CHECK(kallsyms_load(data_path("zero"), err, sizeof(err)) == NULL);
	CHECK_HAS_STR(err, "shows no addresses: jflame needs CAP_SYSLOG to read them");
	CHECK_HAS_STR(err, "--cap-add=SYSLOG");
	CHECK_HAS_STR(err, "kernel.kptr_restrict=0");
	CHECK_HAS_STR(err, "kallsyms/zero");
	CHECK(strncmp(err, "jflame: ", 8) != 0); /* modules leave the prefix to the front end */

	err[0] = '\0';
	CHECK(kallsyms_load(data_path("garbage"), err, sizeof(err)) == NULL);
	CHECK_HAS_STR(err, "has no symbols");

	err[0] = '\0';
	CHECK(kallsyms_load(data_path("missing"), err, sizeof(err)) == NULL);
	CHECK_HAS_STR(err, "failed to open ");
	CHECK_HAS_STR(err, "kallsyms/missing: No such file or directory");
	CHECK(strchr(err, '\n') == NULL);

	kallsyms_free(NULL);
}

/* A 24 MB file of data symbols around a few text ones, one of them across the
 * first read's end and one with a name longer than a read: the text ones are
 * found, and loading it costs a few MB, not the file's size (the file is
 * parsed as it is read; only text symbols' names are kept). */
static void test_big(void)
{
	char path[] = "/tmp/jflame-kallsyms-XXXXXX", err[256] = "";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	size_t long_len = (3u << 20) / 2;
	char *long_name = malloc(long_len + 1);
	CHECK(f != NULL && long_name != NULL);
	if (!f || !long_name) {
		free(long_name);
		return;
	}
	memset(long_name, 'x', long_len);
	long_name[long_len] = '\0';
	long off = 0;
	for (unsigned i = 0; off < (24L << 20); i++) {
		if (off > (1L << 20) - 200 && off < (1L << 20) - 100) { /* then one across the first 1 MiB read */
			int pad = (int)((1L << 20) - 10 - off) - 24;
			off += fprintf(f, "ffffffffb0000000 D %.*s\n", pad, long_name);
			off += fprintf(f, "ffffffff81000000 T straddler\n");
		} else if (i == 100000)
			off += fprintf(f, "ffffffff82000000 t %s\n", long_name);
		else
			off += fprintf(f, "ffffffffa%07x D some_rather_long_data_symbol_name_%u\n", i, i);
	}
	fprintf(f, "ffffffff83000000 T last_one"); /* no newline at the end */
	CHECK(fclose(f) == 0);
	free(long_name);
	pid_t child = fork();
	if (child == 0) {
		struct rusage before, after;
		getrusage(RUSAGE_SELF, &before);
		struct kallsyms *ks = kallsyms_load(path, err, sizeof(err));
		size_t n = ks ? kallsyms_count(ks) : 0; /* read at the first use */
		getrusage(RUSAGE_SELF, &after);
		uint64_t off1 = 0;
		const char *m = NULL;
		int ok = ks && n == 3 && kallsyms_malformed(ks) == 0 &&
			 strcmp(kallsyms_lookup(ks, 0xffffffff81000010ULL, &off1, &m), "straddler") == 0 &&
			 off1 == 0x10 && !m &&
			 strlen(kallsyms_lookup(ks, 0xffffffff82000000ULL, NULL, NULL)) == long_len &&
			 strcmp(kallsyms_lookup(ks, 0xffffffff83000001ULL, NULL, NULL), "last_one") == 0;
		long grew_kb = after.ru_maxrss - before.ru_maxrss;
		if (!ok)
			fprintf(stderr, "test_big: wrong symbols (%s)\n", ks ? "loaded" : err);
		if (grew_kb > 8 * 1024)
			fprintf(stderr, "test_big: loading a 24 MB file took %ld KB\n", grew_kb);
		kallsyms_free(ks);
		_exit(ok && grew_kb <= 8 * 1024 ? 0 : 1);
	}
	int status = 0;
	CHECK(child > 0 && waitpid(child, &status, 0) == child);
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child said why on stderr");
	unlink(path);
}

/* kallsyms_load reads only the first lines; the rest is read at the first
 * lookup: a symbol written to the file in between is found. */
static void test_lazy(void)
{
	char path[] = "/tmp/jflame-kallsyms-XXXXXX", err[256] = "";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	CHECK(f != NULL);
	if (!f)
		return;
	fprintf(f, "ffffffff81000000 T first_fn\n");
	fflush(f);
	struct kallsyms *ks = kallsyms_load(path, err, sizeof(err));
	CHECK_MSG(ks != NULL, "%s", err);
	fprintf(f, "ffffffff81000100 T added_later\n");
	CHECK(fclose(f) == 0);
	if (ks) {
		CHECK_EQ_STR(kallsyms_lookup(ks, 0xffffffff81000101ULL, NULL, NULL), "added_later");
		CHECK_EQ_STR(kallsyms_lookup(ks, 0xffffffff81000001ULL, NULL, NULL), "first_fn");
		CHECK_EQ_INT(kallsyms_count(ks), 2);
	}
	kallsyms_free(ks);
	/* gone by the first lookup: no symbols (and a line on stderr), not a crash */
	FILE *g = fopen(path, "w");
	CHECK(g != NULL);
	if (g) {
		fprintf(g, "ffffffff81000000 T first_fn\n");
		fclose(g);
	}
	ks = kallsyms_load(path, err, sizeof(err));
	CHECK_MSG(ks != NULL, "%s", err);
	unlink(path);
	if (ks) {
		CHECK(kallsyms_lookup(ks, 0xffffffff81000001ULL, NULL, NULL) == NULL);
		CHECK_EQ_INT(kallsyms_count(ks), 0);
	}
	kallsyms_free(ks);
}

/* The address of a T symbol in path, 0 when absent. */
static uint64_t find_symbol(const char *path, const char *want)
{
	FILE *f = fopen(path, "r");
	char line[1024], name[512], type;
	unsigned long long addr;
	uint64_t found = 0;

	while (f && !found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %511s", &addr, &type, name) == 3 && type == 'T' && strcmp(name, want) == 0)
			found = addr;
	if (f)
		fclose(f);
	return found;
}

static void test_real(void)
{
	const char *ci = getenv("CI");
	int must = ci && strcmp(ci, "true") == 0;
	char err[256] = "";
	double best = 1e9;
	struct kallsyms *ks = NULL;

	for (int round = 0; round < 3; round++) {
		double t0 = now_ms();
		kallsyms_free(ks);
		ks = kallsyms_load("/proc/kallsyms", err, sizeof(err));
		if (!ks)
			break;
		kallsyms_count(ks); /* the symbols are read at the first use */
		double dt = now_ms() - t0;
		best = dt < best ? dt : best;
	}
	if (!ks) {
		if (must)
			CHECK_MSG(0, "CI=true and /proc/kallsyms does not load: %s", err);
		else
			printf("test_kallsyms: skipping /proc/kallsyms: %s\n", err);
		return;
	}
	printf("test_kallsyms: /proc/kallsyms: %zu text symbols, %zu malformed lines, loaded in %.1f ms\n",
	       kallsyms_count(ks), kallsyms_malformed(ks), best);
	CHECK(kallsyms_count(ks) > 1000);
	CHECK_EQ_INT(kallsyms_malformed(ks), 0);

	uint64_t addr = find_symbol("/proc/kallsyms", "vfs_read");
	CHECK(addr != 0);
	if (addr) {
		uint64_t off = 0;
		const char *mod = "unset";
		CHECK_EQ_STR(kallsyms_lookup(ks, addr + 1, &off, &mod), "vfs_read");
		CHECK_EQ_U64(off, 1);
		CHECK(mod == NULL);
	}
	kallsyms_free(ks);
}

int main(void)
{
	test_golden();
	test_errors();
	test_big();
	test_lazy();
	test_real();
	return check_report("test_kallsyms");
}
