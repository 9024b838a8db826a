/* test_out_name.c - unit tests for out_name: templates expanded (golden table),
 * bad fields refused, names matched back, and rotation in a temporary directory. */
#include "check.h"
#include "out_name.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void test_expand(void)
{
	/* 2026-11-25 01:58:23.5 UTC */
	struct out_name_vars v = { .time_ns = 1795571903500000000LL, .pid = 4242, .host = "web/1", .seq = 7 };
	static const struct {
		const char *tmpl, *want;
	} cases[] = {
		{ "/out/cpu-%t.pb.gz", "/out/cpu-20261125T015823Z.pb.gz" },
		{ "cpu-%p-%n.svg", "cpu-4242-7.svg" },
		{ "%h/%t.folded", "web_1/20261125T015823Z.folded" },
		{ "100%%.svg", "100%.svg" },
		{ "plain.svg", "plain.svg" },
		{ "%%t.svg", "%t.svg" },
	};
	char out[256];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_MSG(out_name_expand(cases[i].tmpl, &v, out, sizeof(out)) == 0, "%s", cases[i].tmpl);
		CHECK_EQ_STR(out, cases[i].want);
	}
	/* too long for the buffer: refused, not cut */
	CHECK(out_name_expand("cpu-%t.pb.gz", &v, out, 10) == -1);
	CHECK_EQ_STR(out, "");
	v.host = NULL;
	CHECK(out_name_expand("%h.svg", &v, out, sizeof(out)) == 0);
	CHECK_EQ_STR(out, "localhost.svg");
}

static void test_check(void)
{
	char err[512];
	CHECK(out_name_check("/out/cpu-%t-%p-%h-%n-%%.pb.gz", err, sizeof(err)) == 0);
	CHECK(out_name_check("cpu-%d.svg", err, sizeof(err)) == -1);
	CHECK_HAS_STR(err, "'%d'");
	CHECK_HAS_STR(err, "%t (window start, UTC)");
	CHECK(out_name_check("cpu%", err, sizeof(err)) == -1);
	CHECK_HAS_STR(err, "lone '%'");
	CHECK(out_name_varies("a-%t.svg") && out_name_varies("a-%n.svg"));
	CHECK(!out_name_varies("a-%p-%h-%%t.svg"));
	CHECK(out_name_fixed_dir("/out/a-%t.svg") && out_name_fixed_dir("a-%t.svg") &&
	      out_name_fixed_dir("/o%%/a.svg"));
	CHECK(!out_name_fixed_dir("/out/%h/a-%t.svg"));
}

static void test_matches(void)
{
	CHECK(out_name_matches("cpu-%t.pb.gz", "cpu-20261125T015823Z.pb.gz"));
	CHECK(!out_name_matches("cpu-%t.pb.gz", "cpu-20261125T015823Z.pb.gz.Ab12Cd")); /* out_file's temporary */
	CHECK(!out_name_matches("cpu-%t.pb.gz", "cpu-2026112xT015823Z.pb.gz"));
	CHECK(!out_name_matches("cpu-%t.pb.gz", "cpu-other.pb.gz"));
	CHECK(out_name_matches("cpu-%p-%n.svg", "cpu-12-3.svg"));
	CHECK(!out_name_matches("cpu-%p-%n.svg", "cpu-12-.svg"));
	CHECK(!out_name_matches("cpu-%p.svg", "cpu-x.svg"));
	CHECK(out_name_matches("%h-%h-%t.svg", "a-b-c-20261125T015823Z.svg"));
	CHECK(out_name_matches("100%%-%n", "100%-1"));
	CHECK(!out_name_matches("100%%-%n", "100x-1"));
	/* a pathological template ends, whatever it is given */
	CHECK(!out_name_matches("%h%h%h%h%h%h%h%h%h%h%h%h%h%hx", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaay"));
}

static void touch(const char *dir, const char *name, size_t bytes, time_t mtime)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	CHECK_MSG(f != NULL, "cannot create %s", path);
	if (!f)
		return;
	for (size_t i = 0; i < bytes; i++)
		fputc('x', f);
	fclose(f);
	struct timespec ts[2] = { { mtime, 0 }, { mtime, 0 } };
	CHECK(utimensat(AT_FDCWD, path, ts, 0) == 0);
}

static bool exists(const char *dir, const char *name)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return access(path, F_OK) == 0;
}

static void test_rotate(void)
{
	char dir[] = "/tmp/jflame-out-name-XXXXXX", tmpl[256], err[512];
	CHECK(mkdtemp(dir) != NULL);
	snprintf(tmpl, sizeof(tmpl), "%s/cpu-%%t.folded", dir);
	touch(dir, "cpu-20261125T010000Z.folded", 100, 1000);
	touch(dir, "cpu-20261125T010030Z.folded", 100, 2000);
	touch(dir, "cpu-20261125T010100Z.folded", 100, 3000);
	touch(dir, "cpu-20261125T010130Z.folded", 100, 4000);
	touch(dir, "cpu-notatime.folded", 100, 1);		   /* not one of ours */
	touch(dir, "cpu-20261125T010000Z.folded.Ab12Cd", 100, 1);  /* a temporary */
	CHECK(out_name_rotate(tmpl, 0, 0, err, sizeof(err)) == 0); /* no limits: nothing removed */
	CHECK_EQ_INT((int)out_name_rotate(tmpl, 3, 0, err, sizeof(err)), 1);
	CHECK(!exists(dir, "cpu-20261125T010000Z.folded") && exists(dir, "cpu-20261125T010030Z.folded"));
	CHECK_EQ_INT((int)out_name_rotate(tmpl, 0, 250, err, sizeof(err)), 1); /* 300 bytes > 250 */
	CHECK(!exists(dir, "cpu-20261125T010030Z.folded") && exists(dir, "cpu-20261125T010100Z.folded"));
	CHECK_EQ_INT((int)out_name_rotate(tmpl, 0, 1, err, sizeof(err)), 1); /* the newest always stays */
	CHECK(exists(dir, "cpu-20261125T010130Z.folded") && !exists(dir, "cpu-20261125T010100Z.folded"));
	CHECK(exists(dir, "cpu-notatime.folded") && exists(dir, "cpu-20261125T010000Z.folded.Ab12Cd"));
	/* an unreadable directory: one line */
	CHECK(out_name_rotate("/nonexistent-jflame-dir/cpu-%t.folded", 1, 0, err, sizeof(err)) == -1);
	CHECK_HAS_STR(err, "/nonexistent-jflame-dir");
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

/* several events in one run: %e, the -<event> insertion and the word rule */
static void test_events(void)
{
	static const char *const words[] = { "cpu", "offcpu", "wall", "alloc", "lock" };
	struct out_name_vars v = { .time_ns = 1795571903500000000LL, .pid = 1, .host = "h", .seq = 1, .event = "alloc" };
	char out[256], err[512];
	CHECK(out_name_check("x/%e-%t.svg", err, sizeof(err)) == 0);
	CHECK(out_name_expand("x/%e-%n.svg", &v, out, sizeof(out)) == 0);
	CHECK_EQ_STR(out, "x/alloc-1.svg");
	v.event = NULL;
	CHECK(out_name_expand("%e.svg", &v, out, sizeof(out)) == 0);
	CHECK_EQ_STR(out, "cpu.svg");
	CHECK(out_name_matches("%e-%n.svg", "alloc-3.svg"));
	CHECK(!out_name_matches("%e-%n.svg", "-3.svg"));
	CHECK(!out_name_matches("%e.svg", "Al1.svg"));

	CHECK(out_name_has_event("a/%e.svg"));
	CHECK(!out_name_has_event("a/%%e.svg"));
	CHECK(!out_name_has_event("a/e.svg"));
	CHECK(out_name_for_event("/o/%e-%t-%%e.pb.gz", "lock", out, sizeof(out)) == 0);
	CHECK_EQ_STR(out, "/o/lock-%t-%%e.pb.gz");
	CHECK(out_name_for_event("%e%e", "wall", out, 8) == -1);

	static const struct {
		const char *tmpl, *want;
	} ins[] = {
		{ "out.svg", "out-alloc.svg" },	      { "/d.x/run-%t.pb.gz", "/d.x/run-%t-alloc.pb.gz" },
		{ "a.b.folded", "a.b-alloc.folded" }, { "dir/.svg", "dir/.svg-alloc" },
		{ "noext", "noext-alloc" },
	};
	for (size_t i = 0; i < sizeof(ins) / sizeof(ins[0]); i++) {
		CHECK_MSG(out_name_insert_event(ins[i].tmpl, "alloc", out, sizeof(out)) == 0, "%s", ins[i].tmpl);
		CHECK_EQ_STR(out, ins[i].want);
	}
	CHECK(out_name_insert_event("out.svg", "alloc", out, 8) == -1);

	static const struct {
		const char *tmpl;
		int want;
	} wd[] = {
		{ "cpu.svg", 0 },      { "x/alloc.svg", 3 }, { "run-lock-%t.folded", 4 }, { "OffCPU.svg", 1 },
		{ "offcpu.svg", 1 },   { "cpus.svg", -1 },   { "cpu/out.svg", -1 },	  { "cpu-alloc.svg", -2 },
		{ "cpu-cpu.json", 0 }, { "%wall.svg", -1 },  { "wall%t.svg", 2 },	  { "x.svg", -1 },
	};
	for (size_t i = 0; i < sizeof(wd) / sizeof(wd[0]); i++)
		CHECK_MSG(out_name_event_word(wd[i].tmpl, words, 5) == wd[i].want, "%s: %d", wd[i].tmpl,
			  out_name_event_word(wd[i].tmpl, words, 5));
}

int main(void)
{
	test_events();
	test_expand();
	test_check();
	test_matches();
	test_rotate();
	return check_report("test_out_name");
}
