/* test_elf_syms.c - unit tests for elf_syms: fixture binaries (symbols, build-id
 * and debuglink debug files, stripped), the cache, and real libjvm.so and libc. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "check.h"
#include "elf_syms.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef JFLAME_ELF_FIXTURES
#error "JFLAME_ELF_FIXTURES (the directory tests/unit/CMakeLists.txt builds the fixtures in) is not defined"
#endif

#define LIBJVM "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"

static char tmp[256]; /* a private directory for roots and copies */

static int must_not_skip(void)
{
	const char *ci = getenv("CI");
	return ci && strcmp(ci, "true") == 0;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A path in a small ring of static buffers. */
static const char *pathf(const char *fmt, const char *a, const char *b)
{
	static char bufs[16][1024];
	static int next;
	char tmpbuf[1024], *p = bufs[next++ % 16];
	snprintf(tmpbuf, sizeof(tmpbuf), fmt, a, b ? b : "");
	memcpy(p, tmpbuf, sizeof(tmpbuf));
	return p;
}

static const char *fixture(const char *name)
{
	return pathf("%s/%s", JFLAME_ELF_FIXTURES, name);
}

static const char *in_tmp(const char *rel)
{
	return pathf("%s/%s", tmp, rel);
}

/* mkdir -p of the directory part of path. */
static void mkdirs_for(const char *path)
{
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST) {
			perror(buf);
			exit(2);
		}
		*p = '/';
	}
}

static void copy_file(const char *from, const char *to)
{
	char buf[65536];
	ssize_t n;
	int in = open(from, O_RDONLY), out;

	mkdirs_for(to);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (in < 0 || out < 0) {
		fprintf(stderr, "copy %s to %s: %s\n", from, to, strerror(errno));
		exit(2);
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n) {
			perror(to);
			exit(2);
		}
	close(in);
	close(out);
}

static void spit(const char *path, const char *s)
{
	FILE *f;
	mkdirs_for(path);
	f = fopen(path, "w");
	if (!f || fputs(s, f) < 0 || fclose(f) != 0) {
		perror(path);
		exit(2);
	}
}

/* Expected values, read from nm and readelf output. */
struct seg {
	uint64_t off, vaddr, filesz;
};

struct expect {
	struct seg segs[16];
	int nsegs;
	char build_id[130];
	struct {
		uint64_t addr;
		char name[128];
	} syms[256];
	int nsyms;
};

static void read_phdrs(FILE *f, struct expect *e)
{
	char line[512], kind[32];
	unsigned long long off, vaddr, paddr, filesz;

	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " %31s %llx %llx %llx %llx", kind, &off, &vaddr, &paddr, &filesz) == 5 &&
		    strcmp(kind, "LOAD") == 0 && e->nsegs < 16)
			e->segs[e->nsegs++] = (struct seg){ off, vaddr, filesz };
}

static void read_nm(FILE *f, struct expect *e, const char *only)
{
	char line[4096], type, name[4000];
	unsigned long long addr;

	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %3999s", &addr, &type, name) == 3 && strchr("TtWwi", type) &&
		    (!only || strcmp(name, only) == 0) && e->nsyms < 256 && strlen(name) < 128) {
			e->syms[e->nsyms].addr = addr;
			strcpy(e->syms[e->nsyms++].name, name);
		}
}

static void read_notes(FILE *f, struct expect *e)
{
	char line[512], *p;

	while (fgets(line, sizeof(line), f))
		if ((p = strstr(line, "Build ID: ")))
			sscanf(p + 10, "%129s", e->build_id);
}

static int load_expect(const char *fx, struct expect *e)
{
	static const char *const ext[] = { "nm", "phdrs", "notes" };

	memset(e, 0, sizeof(*e));
	for (int i = 0; i < 3; i++) {
		FILE *f = fopen(pathf("%s.%s", fixture(fx), ext[i]), "r");
		if (!f) {
			CHECK_MSG(0, "no %s.%s: the elf_fixtures target did not run", fx, ext[i]);
			return -1;
		}
		if (i == 0)
			read_nm(f, e, NULL);
		else if (i == 1)
			read_phdrs(f, e);
		else
			read_notes(f, e);
		fclose(f);
	}
	return 0;
}

/* The file offset of vaddr per the expected PT_LOADs; UINT64_MAX if none. */
static uint64_t off_of(const struct expect *e, uint64_t vaddr)
{
	for (int i = 0; i < e->nsegs; i++)
		if (vaddr >= e->segs[i].vaddr && vaddr - e->segs[i].vaddr < e->segs[i].filesz)
			return vaddr - e->segs[i].vaddr + e->segs[i].off;
	return UINT64_MAX;
}

static uint64_t addr_of(const struct expect *e, const char *name)
{
	for (int i = 0; i < e->nsyms; i++)
		if (strcmp(e->syms[i].name, name) == 0)
			return e->syms[i].addr;
	return 0;
}

/* fixture.c's functions: their symbol, the name a lookup gives, and whether
 * only a .symtab has them (static). */
static const struct {
	const char *sym, *want;
	int is_static;
} funcs[] = {
	{ "fixture_alpha", "fixture_alpha", 0 },
	{ "fixture_beta", "fixture_beta", 0 },
	{ "fixture_gamma", "fixture_gamma", 1 },
	{ "_ZN6jflame7Fixture5deltaEPKci", "jflame::Fixture::delta", 0 },
	{ "_ZN6jflame6HolderIiE3getEv", "jflame::Holder<int>::get", 0 },
	{ "_ZN6jflame7FunctorclEv", "jflame::Functor::operator()", 0 },
	{ "fixture_ifunc", "fixture_ifunc", 0 },   /* an IFUNC sharing its address with a local */
	{ "fixture_nosize", "fixture_nosize", 0 }, /* no .size: reaches to the next symbol */
	{ "main", "main", 0 },
};

/* Which of the fixture's functions a lookup must name: all (a .symtab), the
 * exported ones (a library's .dynsym), none (an executable's .dynsym). */
enum { ALL, EXPORTED, NONE };

/* Each function of the fixture is looked up by its file offset (and 5 bytes
 * in): those mode says are there are named right, the others not at all. */
static void check_funcs(const char *what, struct elf_syms *es, const struct expect *e, int mode)
{
	for (size_t i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
		uint64_t addr = addr_of(e, funcs[i].sym), off = off_of(e, addr);
		CHECK_MSG(addr && off != UINT64_MAX, "%s: %s not in nm's output or not in a PT_LOAD", what,
			  funcs[i].sym);
		if (!addr || off == UINT64_MAX)
			continue;
		for (uint64_t delta = 0; delta <= 5; delta += 5) {
			uint64_t sym_off = 999;
			const char *name = elf_syms_lookup(es, off + delta, &sym_off);
			if (mode == NONE || (mode == EXPORTED && funcs[i].is_static)) {
				CHECK_MSG(!name || strcmp(name, funcs[i].want) != 0,
					  "%s: %s found, but no symbol has it", what, funcs[i].want);
				continue;
			}
			CHECK_MSG(name && strcmp(name, funcs[i].want) == 0, "%s: offset %#" PRIx64 " gave %s, want %s",
				  what, off + delta, name ? name : "(null)", funcs[i].want);
			CHECK_MSG(sym_off == delta, "%s: %s + %" PRIu64 ", want + %" PRIu64, what, funcs[i].want,
				  sym_off, delta);
			CHECK_MSG(!name || !strchr(name, '(') || strstr(name, "operator()"),
				  "%s: %s has a parameter list", what, name);
		}
	}
}

static struct elf_syms *load_ok(const char *path, const char *root)
{
	char err[512] = "";
	struct elf_syms *es = elf_syms_load(path, root, err, sizeof(err));
	CHECK_MSG(es != NULL, "%s: %s", path, err);
	return es;
}

static void test_full(void)
{
	static struct expect e, enp;
	struct elf_syms *es;

	if (load_expect("fixture_full", &e) != 0 || load_expect("fixture_nopie", &enp) != 0)
		return;
	CHECK(strlen(e.build_id) == 40);

	if ((es = load_ok(fixture("fixture_full"), NULL))) {
		check_funcs("fixture_full", es, &e, ALL);
		CHECK_EQ_STR(elf_syms_build_id(es), e.build_id);
		CHECK(elf_syms_debug_file(es) == NULL);
		CHECK(elf_syms_count(es) >= 9);
		/* before the first segment's code, and far past every one */
		CHECK(elf_syms_lookup(es, 0, NULL) == NULL);
		CHECK(elf_syms_lookup(es, 1ULL << 40, NULL) == NULL);
		elf_syms_free(es);
	}
	/* not PIE: addresses are not file offsets */
	CHECK(enp.nsegs > 0 && enp.segs[0].vaddr != enp.segs[0].off);
	if ((es = load_ok(fixture("fixture_nopie"), ""))) {
		check_funcs("fixture_nopie", es, &enp, ALL);
		CHECK_EQ_STR(elf_syms_build_id(es), enp.build_id);
		elf_syms_free(es);
	}
}

/* Stripped: symbols from a debug file named by build-id under a root. */
static void test_build_id(void)
{
	static struct expect e;
	struct elf_syms *es;
	const char *root = in_tmp("root-bid"), *link;

	if (load_expect("fixture_full", &e) != 0)
		return;
	link = pathf("%s/usr/lib/debug/.build-id/%.2s", root, e.build_id);
	link = pathf("%s/%s.debug", link, e.build_id + 2);
	mkdirs_for(link);
	CHECK(symlink(fixture("fixture_full.debug"), link) == 0);

	if ((es = load_ok(fixture("fixture_stripped"), root))) {
		check_funcs("build-id", es, &e, ALL);
		CHECK_EQ_STR(elf_syms_build_id(es), e.build_id);
		CHECK_EQ_STR(elf_syms_debug_file(es), link);
		elf_syms_free(es);
	}
	/* the same with the root given with a trailing slash */
	if ((es = load_ok(fixture("fixture_stripped"), pathf("%s/", root, NULL)))) {
		CHECK(elf_syms_debug_file(es) != NULL);
		elf_syms_free(es);
	}
	/* no debug file under this root: .dynsym, no static function */
	if ((es = load_ok(fixture("fixture_stripped"), in_tmp("empty-root")))) {
		check_funcs("stripped", es, &e, NONE);
		CHECK(elf_syms_debug_file(es) == NULL);
		CHECK_EQ_STR(elf_syms_build_id(es), e.build_id);
		elf_syms_free(es);
	}
	/* a file at the build-id path with another build-id is not taken */
	const char *wrong = in_tmp("root-wrong"), *wlink;
	wlink = pathf("%s/usr/lib/debug/.build-id/%.2s", wrong, e.build_id);
	wlink = pathf("%s/%s.debug", wlink, e.build_id + 2);
	copy_file(fixture("fixture_nopie"), wlink);
	if ((es = load_ok(fixture("fixture_stripped"), wrong))) {
		CHECK(elf_syms_debug_file(es) == NULL);
		elf_syms_free(es);
	}
}

/* Stripped with a .gnu_debuglink: next to the file, in .debug/, under root. */
static void test_debuglink(void)
{
	static struct expect e;
	struct elf_syms *es;
	const char *empty = in_tmp("empty-root");

	if (load_expect("fixture_full", &e) != 0)
		return;
	/* next to the file (the fixtures directory) */
	if ((es = load_ok(fixture("fixture_debuglink"), empty))) {
		check_funcs("debuglink", es, &e, ALL);
		CHECK_EQ_STR(elf_syms_debug_file(es), fixture("fixture_full.debug"));
		elf_syms_free(es);
	}
	/* in .debug/ beside it */
	copy_file(fixture("fixture_debuglink"), in_tmp("dot/bin/app"));
	copy_file(fixture("fixture_full.debug"), in_tmp("dot/bin/.debug/fixture_full.debug"));
	if ((es = load_ok(in_tmp("dot/bin/app"), empty))) {
		check_funcs("debuglink .debug/", es, &e, ALL);
		CHECK_EQ_STR(elf_syms_debug_file(es), in_tmp("dot/bin/.debug/fixture_full.debug"));
		elf_syms_free(es);
	}
	/* under ROOT/usr/lib/debug/ + the file's directory inside ROOT */
	const char *root = in_tmp("root-dl");
	copy_file(fixture("fixture_debuglink"), pathf("%s/opt/app/app", root, NULL));
	copy_file(fixture("fixture_full.debug"), pathf("%s/usr/lib/debug/opt/app/fixture_full.debug", root, NULL));
	if ((es = load_ok(pathf("%s/opt/app/app", root, NULL), root))) {
		check_funcs("debuglink root", es, &e, ALL);
		CHECK_EQ_STR(elf_syms_debug_file(es), pathf("%s/usr/lib/debug/opt/app/fixture_full.debug", root, NULL));
		elf_syms_free(es);
	}
	if ((es = load_ok(pathf("%s/opt/app/app", root, NULL), pathf("%s//", root, NULL)))) {
		CHECK_EQ_STR(elf_syms_debug_file(es), pathf("%s/usr/lib/debug/opt/app/fixture_full.debug", root, NULL));
		elf_syms_free(es);
	}
	/* a debug file whose CRC does not match is not taken */
	copy_file(fixture("fixture_debuglink"), in_tmp("crc/app"));
	copy_file(fixture("fixture_nopie"), in_tmp("crc/fixture_full.debug"));
	if ((es = load_ok(in_tmp("crc/app"), empty))) {
		CHECK(elf_syms_debug_file(es) == NULL);
		check_funcs("debuglink bad crc", es, &e, NONE);
		elf_syms_free(es);
	}
}

static void test_shared(void)
{
	static struct expect e;
	struct elf_syms *es;

	if (load_expect("libfixture.so", &e) != 0)
		return;
	if ((es = load_ok(fixture("libfixture.so"), NULL))) {
		check_funcs("libfixture.so", es, &e, ALL);
		CHECK_EQ_STR(elf_syms_build_id(es), e.build_id);
		elf_syms_free(es);
	}
	/* exported functions from .dynsym, with their sizes */
	if ((es = load_ok(fixture("libfixture_stripped.so"), in_tmp("empty-root")))) {
		check_funcs("libfixture_stripped.so", es, &e, EXPORTED);
		elf_syms_free(es);
	}
}

static void test_errors(void)
{
	char err[512];

	err[0] = '\0';
	CHECK(elf_syms_load(in_tmp("missing"), NULL, err, sizeof(err)) == NULL);
	CHECK_HAS_STR(err, "failed to open ");
	CHECK_HAS_STR(err, "/missing: No such file or directory");

	spit(in_tmp("text"), "not an ELF file\n");
	err[0] = '\0';
	CHECK(elf_syms_load(in_tmp("text"), NULL, err, sizeof(err)) == NULL);
	CHECK_HAS_STR(err, "/text is not an ELF file");

	spit(in_tmp("empty"), "");
	err[0] = '\0';
	CHECK(elf_syms_load(in_tmp("empty"), NULL, err, sizeof(err)) == NULL);
	CHECK_HAS_STR(err, "is not an ELF file");

	err[0] = '\0';
	CHECK(elf_syms_load(tmp, NULL, err, sizeof(err)) == NULL);
	CHECK_HAS_STR(err, "is not a regular file");
	err[0] = '\0';
	CHECK(elf_syms_load("/dev/null", NULL, err, sizeof(err)) == NULL);
	CHECK_EQ_STR(err, "/dev/null is not a regular file");

	/* a truncated ELF file: loads or fails, never crashes */
	int in = open(fixture("fixture_full"), O_RDONLY), out = open(in_tmp("trunc"), O_WRONLY | O_CREAT, 0644);
	char buf[1000];
	CHECK(in >= 0 && out >= 0 && read(in, buf, sizeof(buf)) == (ssize_t)sizeof(buf) &&
	      write(out, buf, sizeof(buf)) == (ssize_t)sizeof(buf));
	close(in);
	close(out);
	struct elf_syms *es = elf_syms_load(in_tmp("trunc"), NULL, err, sizeof(err));
	if (es) {
		CHECK_EQ_INT(elf_syms_count(es), 0);
		CHECK(elf_syms_lookup(es, 0x1000, NULL) == NULL);
		elf_syms_free(es);
	}
	elf_syms_free(NULL);
}

static void test_cache(void)
{
	struct elf_cache *c = elf_cache_new();
	struct elf_syms *a, *b, *s;

	CHECK(c != NULL);
	if (!c)
		return;
	a = elf_cache_get(c, fixture("fixture_full"), NULL, 0);
	CHECK(a != NULL);
	b = elf_cache_get(c, fixture("fixture_full.link"), NULL, 0); /* a hard link */
	CHECK(a == b);
	b = elf_cache_get(c, pathf("/proc/self/root%s", fixture("fixture_full"), NULL), "/", 0);
	CHECK(a == b);
	s = elf_cache_get(c, fixture("fixture_stripped"), "", 0);
	CHECK(s != NULL && s != a);
	CHECK(elf_cache_get(c, fixture("fixture_stripped"), "", 0) == s);
	/* the file that was mapped, by its inode: another file at the path is not used */
	struct stat fst;
	CHECK(stat(fixture("fixture_full"), &fst) == 0);
	CHECK(elf_cache_get(c, fixture("fixture_full"), NULL, (uint64_t)fst.st_ino) == a);
	CHECK(elf_cache_get(c, fixture("fixture_full"), NULL, (uint64_t)fst.st_ino + 1) == NULL);

	/* a failure is remembered: the same inode made an ELF file later stays failed */
	spit(in_tmp("late"), "not yet an ELF file\n");
	CHECK(elf_cache_get(c, in_tmp("late"), NULL, 0) == NULL);
	copy_file(fixture("fixture_full"), in_tmp("late"));
	CHECK(elf_cache_get(c, in_tmp("late"), NULL, 0) == NULL);
	/* and a path that cannot be opened, by its path */
	CHECK(elf_cache_get(c, in_tmp("later"), NULL, 0) == NULL);
	copy_file(fixture("fixture_full"), in_tmp("later"));
	CHECK(elf_cache_get(c, in_tmp("later"), NULL, 0) == NULL);

	/* many files: the buckets grow and every entry stays findable */
	for (int i = 0; i < 600; i++) {
		char name[64];
		snprintf(name, sizeof(name), "many/%d", i);
		spit(in_tmp(name), "x");
		CHECK(elf_cache_get(c, in_tmp(name), NULL, 0) == NULL);
	}
	CHECK(elf_cache_get(c, fixture("fixture_full"), NULL, 0) == a);
	uint64_t off = 0;
	CHECK(elf_syms_lookup(a, 0, &off) == NULL);
	elf_cache_free(c);
	elf_cache_free(NULL);
}

/* The file offset of a symbol in a real library, from nm and readelf. */
static uint64_t real_offset(const char *lib, const char *sym)
{
	static struct expect e;
	char cmd[1024];
	FILE *f;

	memset(&e, 0, sizeof(e));
	snprintf(cmd, sizeof(cmd), "nm --defined-only %s 2>/dev/null", lib);
	if ((f = popen(cmd, "r"))) {
		read_nm(f, &e, sym);
		pclose(f);
	}
	snprintf(cmd, sizeof(cmd), "readelf -lW %s 2>/dev/null", lib);
	if ((f = popen(cmd, "r"))) {
		read_phdrs(f, &e);
		pclose(f);
	}
	return e.nsyms ? off_of(&e, e.syms[0].addr) : UINT64_MAX;
}

static void test_libjvm(void)
{
	struct elf_syms *es = NULL;
	double best = 1e9;
	char err[512];

	if (access(LIBJVM, R_OK) != 0) {
		CHECK_MSG(!must_not_skip(), "CI=true and %s is missing", LIBJVM);
		printf("test_elf_syms: skipping %s: %s\n", LIBJVM, strerror(errno));
		return;
	}
	for (int round = 0; round < 3; round++) {
		double t0 = now_ms();
		elf_syms_free(es);
		es = elf_syms_load(LIBJVM, NULL, err, sizeof(err));
		double dt = now_ms() - t0;
		best = dt < best ? dt : best;
	}
	CHECK_MSG(es != NULL, "%s", err);
	if (!es)
		return;
	printf("test_elf_syms: libjvm.so: %zu function symbols%s%s, loaded in %.1f ms\n", elf_syms_count(es),
	       elf_syms_debug_file(es) ? " from " : "", elf_syms_debug_file(es) ? elf_syms_debug_file(es) : "", best);
	CHECK(elf_syms_count(es) > 10000);
	CHECK(strlen(elf_syms_build_id(es)) == 40);

	static const struct {
		const char *sym, *want;
	} real[] = {
		{ "_ZN9JavaCalls11call_helperEP9JavaValueRK12methodHandleP17JavaCallArgumentsP10JavaThread",
		  "JavaCalls::call_helper" },
		{ "_ZN20G1ParScanThreadState20trim_queue_partiallyEv", "G1ParScanThreadState::trim_queue_partially" },
	};
	for (size_t i = 0; i < sizeof(real) / sizeof(real[0]); i++) {
		uint64_t off = real_offset(LIBJVM, real[i].sym), sym_off = 0;
		CHECK_MSG(off != UINT64_MAX, "nm does not list %s in %s", real[i].sym, LIBJVM);
		if (off == UINT64_MAX)
			continue;
		CHECK_EQ_STR(elf_syms_lookup(es, off + 0x10, &sym_off), real[i].want);
		CHECK_EQ_U64(sym_off, 0x10);
		/* the second lookup comes from the cache: the same string */
		const char *first = elf_syms_lookup(es, off, NULL);
		CHECK(first == elf_syms_lookup(es, off + 1, NULL));
	}
	elf_syms_free(es);
}

/* libc's write(), found as a profiler would: an address in this process, its
 * mapping in /proc/self/maps, the file offset. */
static void test_libc_write(void)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	uint64_t addr = libc ? (uint64_t)(uintptr_t)dlsym(libc, "write") : 0;
	char line[1024], path[512] = "";
	unsigned long long start, end, offset;
	uint64_t off = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	CHECK(addr != 0 && f != NULL);
	while (f && addr && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %511s", &start, &end, &offset, path) == 4 &&
		    addr >= start && addr < end) {
			off = addr - start + offset;
			break;
		}
	if (f)
		fclose(f);
	if (libc)
		dlclose(libc);
	CHECK_MSG(off && path[0] == '/', "write at %#" PRIx64 " is in no file mapping", addr);
	if (!off || path[0] != '/')
		return;
	/* with libc6-dbg's debug file where installed, and from .dynsym alone */
	const char *roots[] = { NULL, in_tmp("empty-root") };
	for (int i = 0; i < 2; i++) {
		struct elf_syms *es = load_ok(path, roots[i]);
		uint64_t sym_off = 99;
		if (!es)
			continue;
		printf("test_elf_syms: %s: %zu function symbols from %s\n", path, elf_syms_count(es),
		       elf_syms_debug_file(es) ? elf_syms_debug_file(es) : "the file itself");
		/* not one of its aliases __write, __libc_write, __GI___libc_write */
		CHECK_EQ_STR(elf_syms_lookup(es, off, &sym_off), "write");
		CHECK_EQ_U64(sym_off, 0);
		CHECK_EQ_STR(elf_syms_lookup(es, off + 3, &sym_off), "write");
		CHECK_EQ_U64(sym_off, 3);
		elf_syms_free(es);
	}
}

/* The vDSO from memory: offsets into the image (as a [vdso] mapping gives
 * them) name the global __vdso_ symbols, as perf does, not their weak aliases
 * (clock_gettime); what is not ELF is refused. */
static void test_vdso(void)
{
	char err[256] = "", junk[64] = "not an ELF image";
	uint64_t base = getauxval(AT_SYSINFO_EHDR), end = 0, sym_off = 99;
	void *h = dlopen("linux-vdso.so.1", RTLD_NOW | RTLD_NOLOAD);
	uint64_t fn = h ? (uint64_t)(uintptr_t)dlsym(h, "__vdso_clock_gettime") : 0;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]")) {
			unsigned long long s, e;
			if (sscanf(line, "%llx-%llx", &s, &e) == 2 && s == base)
				end = e;
		}
	if (f)
		fclose(f);
	CHECK(elf_syms_load_vdso(junk, sizeof(junk), err, sizeof(err)) == NULL);
	CHECK_HAS_STR(err, "not an ELF image");
	if (!base || !end || !fn || fn < base || fn >= end) {
		printf("test_elf_syms: no vDSO with __vdso_clock_gettime here: skipped\n");
		if (h)
			dlclose(h);
		return;
	}
	struct elf_syms *es = elf_syms_load_vdso((const void *)(uintptr_t)base, end - base, err, sizeof(err));
	CHECK_MSG(es != NULL, "%s", err);
	if (es) {
		CHECK(elf_syms_count(es) >= 4);
		CHECK_EQ_STR(elf_syms_lookup(es, fn - base, &sym_off), "__vdso_clock_gettime");
		CHECK_EQ_U64(sym_off, 0);
		CHECK_EQ_STR(elf_syms_lookup(es, fn - base + 5, &sym_off), "__vdso_clock_gettime");
		CHECK_EQ_U64(sym_off, 5);
		elf_syms_free(es);
	}
	dlclose(h);
}

static void cleanup(void)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp);
	if (system(cmd) != 0)
		fprintf(stderr, "test_elf_syms: could not remove %s\n", tmp);
}

int main(void)
{
	const char *t = getenv("TMPDIR");

	snprintf(tmp, sizeof(tmp), "%s/test_elf_syms.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 2;
	}
	if (mkdir(in_tmp("empty-root"), 0755) != 0) {
		perror("mkdir");
		return 2;
	}
	test_full();
	test_build_id();
	test_debuglink();
	test_shared();
	test_errors();
	test_cache();
	test_libjvm();
	test_libc_write();
	test_vdso();
	cleanup();
	return check_report("test_elf_syms");
}
