/* test_heatmap.c - the heat map's model (native/heatmap.c, call_tree.c,
 * json_out.c): binning on boundaries, idle filtering, the page's JSON per range. */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "call_tree.h"
#include "check.h"
#include "collapse.h"
#include "heatmap.h"
#include "html_heatmap.h"
#include "json_out.h"
#include "palette.h"
#include "perf_script.h"

/* ---- a little reading of the JSON the page gets ------------------------- */

static char *json_of(const struct heatmap *h, int rows, uint64_t idle)
{
	char *buf = NULL, err[256] = "";
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct heatmap_options o = { NULL, NULL, rows, idle };
	if (!f)
		exit(2);
	int rc = heatmap_write_json(f, h, &o, err, sizeof(err));
	fclose(f);
	CHECK_MSG(rc == 0, "heatmap_write_json: %s", err);
	return buf;
}

static long long json_int(const char *json, const char *key)
{
	char k[64];
	snprintf(k, sizeof(k), "\"%s\":", key);
	const char *p = strstr(json, k);
	return p ? strtoll(p + strlen(k), NULL, 10) : -1;
}

/* The "samples" triples decoded: per bin (col * rows + row) the count. */
struct cells {
	long long rows, cols;
	uint64_t *count;
	size_t triples;
	long long last_bin;
	int bad;
};

static void cells_read(struct cells *c, const char *json)
{
	memset(c, 0, sizeof(*c));
	c->rows = json_int(json, "rows");
	c->cols = json_int(json, "cols");
	if (c->rows <= 0 || c->cols <= 0) {
		c->bad = 1;
		return;
	}
	c->count = calloc((size_t)(c->rows * c->cols), sizeof(*c->count));
	const char *p = strstr(json, "\"samples\":[");
	if (!p || !c->count) {
		c->bad = 1;
		return;
	}
	p += strlen("\"samples\":[");
	long long bin = 0;
	c->last_bin = -1;
	while (*p && *p != ']') {
		char *e;
		long long d = strtoll(p, &e, 10);
		long long node = strtoll(e + 1, &e, 10);
		long long n = strtoll(e + 1, &e, 10);
		bin += d;
		if (d < 0 || node < 0 || n <= 0 || bin >= c->rows * c->cols) {
			c->bad = 1;
			return;
		}
		c->count[bin] += (uint64_t)n;
		c->last_bin = bin;
		c->triples++;
		while (*e == ',' || *e == '\n')
			e++;
		p = e;
	}
}

static uint64_t cells_range(const struct cells *c, long long from, long long to)
{
	uint64_t n = 0;
	for (long long b = from; b <= to && b < c->rows * c->cols; b++)
		n += c->count[b];
	return n;
}

static uint64_t cell(const struct cells *c, long long col, long long row)
{
	return c->count[col * c->rows + row];
}

/* ---- binning --------------------------------------------------------------- */

static void test_cell_of(void)
{
	const int64_t T = HEATMAP_TICKS_PER_SEC;
	struct heatmap_cell c;
	c = heatmap_cell_of(100 * T, 99, 50);
	CHECK_EQ_INT(c.col, 1);
	CHECK_EQ_INT(c.row, 0);
	c = heatmap_cell_of(100 * T + T / 50 - 1, 99, 50); /* the last tick of row 0 */
	CHECK_EQ_INT(c.row, 0);
	c = heatmap_cell_of(100 * T + T / 50, 99, 50); /* exactly on row 1's start */
	CHECK_EQ_INT(c.row, 1);
	c = heatmap_cell_of(101 * T - 1, 99, 50);
	CHECK_EQ_INT(c.col, 1);
	CHECK_EQ_INT(c.row, 49);
	c = heatmap_cell_of(101 * T, 99, 50);
	CHECK_EQ_INT(c.col, 2);
	CHECK_EQ_INT(c.row, 0);
	/* one row a second: the row is always 0 */
	for (int64_t t = 99 * T; t < 102 * T; t += T / 7) {
		c = heatmap_cell_of(t, 99, 1);
		CHECK_EQ_INT(c.row, 0);
		CHECK_EQ_INT(c.col, t / T - 99);
	}
	/* 1000 rows: 1 ms each */
	c = heatmap_cell_of(100 * T + T / 1000 - 1, 99, 1000);
	CHECK_EQ_INT(c.row, 0);
	c = heatmap_cell_of(100 * T + T / 1000, 99, 1000);
	CHECK_EQ_INT(c.row, 1);
	c = heatmap_cell_of(101 * T - 1, 99, 1000);
	CHECK_EQ_INT(c.row, 999);
	/* rows that do not divide a second: row r holds [r/7, (r+1)/7) s */
	for (int r = 0; r < 7; r++) {
		int64_t start = (int64_t)ceil((double)r * T / 7);
		c = heatmap_cell_of(5 * T + start, 5, 7);
		CHECK_EQ_INT(c.row, r);
		if (start > 0) {
			c = heatmap_cell_of(5 * T + start - 1, 5, 7);
			CHECK_EQ_INT(c.row, r - 1);
		}
	}
}

/* times from doubles: decimal times that binary floating point can't hold
 * exactly (100.34 is 100.3399999...) still land in their row */
static void test_add_times(void)
{
	struct heatmap h;
	CHECK(heatmap_init(&h) == 0);
	static const double times[] = { 100.34, 100.02, 7.0, 12345678.98, 0.999999 };
	static const int rows50[] = { 17, 1, 0, 49, 49 };
	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
		CHECK(heatmap_add(&h, times[i], "a;b", 3, 1) == 0);
		struct heatmap_cell c = heatmap_cell_of(h.samples[h.n - 1].tick, 0, 50);
		CHECK_MSG(c.row == rows50[i], "time %.6f: row %d, want %d", times[i], c.row, rows50[i]);
		CHECK_EQ_INT(c.col, (int64_t)floor(times[i]));
	}
	/* impossible times are counted and left out; weight 0 adds nothing */
	uint64_t n = h.n;
	CHECK(heatmap_add(&h, NAN, "a", 1, 1) == 0);
	CHECK(heatmap_add(&h, -1.0, "a", 1, 1) == 0);
	CHECK(heatmap_add(&h, INFINITY, "a", 1, 1) == 0);
	CHECK(heatmap_add(&h, 1e12, "a", 1, 1) == 0);
	CHECK(heatmap_add(&h, 5.0, "a", 1, 0) == 0);
	CHECK_EQ_U64(h.bad_time, 4);
	CHECK_EQ_U64(h.n, n);
	/* a weight beyond 32 bits is kept whole (split in the table) */
	CHECK(heatmap_add(&h, 5.5, "big", 3, (1ull << 33) + 5) == 0);
	CHECK_EQ_U64(h.total, 5 + (1ull << 33) + 5);
	heatmap_free(&h);
}

/* samples in any order: t0 is the earliest sample's second, so no sample
 * falls before it; the span covers the latest */
static void test_order(void)
{
	struct heatmap h;
	CHECK(heatmap_init(&h) == 0);
	static const double t[] = { 50.5, 48.25, 52.999, 48.0001, 51.0 };
	for (size_t i = 0; i < 5; i++)
		CHECK(heatmap_add(&h, t[i], "x;y", 3, 1) == 0);
	CHECK_EQ_INT(heatmap_t0(&h), 48);
	CHECK_EQ_INT(heatmap_columns(&h), 5);
	for (size_t i = 0; i < h.n; i++) {
		struct heatmap_cell c = heatmap_cell_of(h.samples[i].tick, heatmap_t0(&h), 50);
		CHECK(c.col >= 0 && c.col < 5);
	}
	char *json = json_of(&h, 50, 0);
	struct cells c;
	cells_read(&c, json);
	CHECK(!c.bad);
	CHECK_EQ_U64(cells_range(&c, 0, 5 * 50 - 1), 5);
	CHECK_EQ_U64(cell(&c, 0, 0), 1);  /* 48.0001 */
	CHECK_EQ_U64(cell(&c, 0, 12), 1); /* 48.25 */
	CHECK_EQ_U64(cell(&c, 2, 25), 1); /* 50.5 */
	CHECK_EQ_U64(cell(&c, 3, 0), 1);  /* 51.0 */
	CHECK_EQ_U64(cell(&c, 4, 49), 1); /* 52.999 */
	free(c.count);
	free(json);
	heatmap_free(&h);
}

/* ---- the golden .stacks file ----------------------------------------------- */

static void read_file(const char *name, struct heatmap *h, struct heatmap_reader *r, bool keep_idle,
		      struct ps_stats *st)
{
	char path[4096], err[256] = "";
	const char *dir = getenv("JFLAME_TEST_DATA");
	struct collapse_opts co = { 0 };
	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "tests/data", name);
	CHECK(heatmap_init(h) == 0);
	CHECK(heatmap_reader_init(r, h, &co, keep_idle) == 0);
	int rc = perf_script_parse_file(path, heatmap_reader_sample, r, st, err, sizeof(err));
	CHECK_MSG(rc == 0, "%s: %s", path, err);
}

static const char *leaf_of(const struct heatmap *h, size_t i)
{
	return call_tree_name(h->tree, h->samples[i].node);
}

static void test_boundaries_file(void)
{
	struct heatmap h;
	struct heatmap_reader r;
	struct ps_stats st;
	read_file("heatmap/boundaries.stacks", &h, &r, false, &st);
	CHECK_EQ_U64(st.samples, 10);
	CHECK_EQ_U64(st.bad_lines, 0);
	CHECK_EQ_U64(r.idle, 2);
	CHECK_EQ_U64(r.untimed, 1);
	CHECK_EQ_U64(h.n, 7);
	CHECK_EQ_U64(h.total, 7); /* one per sample: the period does not weigh */
	CHECK_EQ_INT(heatmap_t0(&h), 99);
	CHECK_EQ_INT(heatmap_columns(&h), 3);
	/* the stacks: comm root, then the frames root first */
	size_t mains = 0;
	for (size_t i = 0; i < h.n; i++) {
		const char *leaf = leaf_of(&h, i);
		long parent = call_tree_parent(h.tree, h.samples[i].node);
		if (strcmp(leaf, "app/Main.work") == 0 || strcmp(leaf, "app/Main.other") == 0) {
			mains++;
			CHECK_EQ_STR(call_tree_name(h.tree, (size_t)parent), "app/Main.main");
			CHECK_EQ_STR(call_tree_name(h.tree, (size_t)call_tree_parent(h.tree, (size_t)parent)), "main");
			CHECK_EQ_INT(call_tree_hue(h.tree, h.samples[i].node), FG_HUE_JIT);
		} else {
			CHECK_EQ_STR(leaf, "app/Worker.run");
			CHECK_EQ_STR(call_tree_name(h.tree, (size_t)parent), "worker");
		}
	}
	CHECK_EQ_U64(mains, 6);

	/* 50 rows: 20 ms each */
	char *json = json_of(&h, 50, r.idle);
	struct cells c;
	cells_read(&c, json);
	CHECK(!c.bad);
	CHECK_EQ_INT(c.rows, 50);
	CHECK_EQ_INT(c.cols, 3);
	CHECK_EQ_INT(json_int(json, "t0"), 99);
	CHECK_EQ_INT(json_int(json, "total"), 7);
	CHECK_EQ_INT(json_int(json, "idle"), 2);
	CHECK_EQ_U64(cell(&c, 0, 25), 1); /* 99.5 */
	CHECK_EQ_U64(cell(&c, 1, 0), 2);  /* 100.000000 and 100.019999 */
	CHECK_EQ_U64(cell(&c, 1, 1), 1);  /* 100.020000, on the boundary */
	CHECK_EQ_U64(cell(&c, 1, 17), 1); /* 100.34 */
	CHECK_EQ_U64(cell(&c, 1, 49), 1); /* 100.999999 */
	CHECK_EQ_U64(cell(&c, 2, 0), 1);  /* 101.000000 */
	/* what a selection adds up to: bins start..end inclusive, column-major */
	CHECK_EQ_U64(cells_range(&c, 0, 3 * 50 - 1), 7);
	CHECK_EQ_U64(cells_range(&c, 1 * 50 + 0, 1 * 50 + 17), 4);
	CHECK_EQ_U64(cells_range(&c, 1 * 50 + 1, 1 * 50 + 16), 1);
	CHECK_EQ_U64(cells_range(&c, 0 * 50 + 25, 1 * 50 + 0), 3);
	CHECK_EQ_U64(cells_range(&c, 1 * 50 + 18, 2 * 50 + 0), 2);
	CHECK_EQ_U64(cells_range(&c, 2 * 50 + 1, 2 * 50 + 49), 0);
	/* one triple per (cell, stack) and cells in order */
	CHECK_EQ_U64(c.triples, 6);
	free(c.count);
	free(json);

	/* 1000 rows: 1 ms each */
	json = json_of(&h, 1000, r.idle);
	cells_read(&c, json);
	CHECK(!c.bad);
	CHECK_EQ_U64(cell(&c, 1, 0), 1);
	CHECK_EQ_U64(cell(&c, 1, 19), 1);
	CHECK_EQ_U64(cell(&c, 1, 20), 1);
	CHECK_EQ_U64(cell(&c, 1, 340), 1);
	CHECK_EQ_U64(cell(&c, 1, 999), 1);
	CHECK_EQ_U64(cell(&c, 0, 500), 1);
	CHECK_EQ_U64(cell(&c, 2, 0), 1);
	free(c.count);
	free(json);

	/* 1 row: one cell a second */
	json = json_of(&h, 1, r.idle);
	cells_read(&c, json);
	CHECK(!c.bad);
	CHECK_EQ_U64(cell(&c, 0, 0), 1);
	CHECK_EQ_U64(cell(&c, 1, 0), 5);
	CHECK_EQ_U64(cell(&c, 2, 0), 1);
	free(c.count);
	free(json);

	/* rows out of range are refused before anything is written */
	char err[256] = "";
	struct heatmap_options bad = { NULL, NULL, 1001, 0 };
	CHECK(heatmap_check(&h, &bad, err, sizeof(err)) != 0);
	CHECK_HAS_STR(err, "rows");
	heatmap_reader_free(&r);
	heatmap_free(&h);

	/* --include-idle keeps them */
	read_file("heatmap/boundaries.stacks", &h, &r, true, &st);
	CHECK_EQ_U64(r.idle, 0);
	CHECK_EQ_U64(h.n, 9);
	heatmap_reader_free(&r);
	heatmap_free(&h);
}

/* perf script recorded on a VM (tests/data/collapse/sys.perf): dd, a shell
 * loop and three samples of the idle task */
static void test_recorded_idle(void)
{
	struct heatmap h;
	struct heatmap_reader r;
	struct ps_stats st;
	read_file("collapse/sys.perf", &h, &r, false, &st);
	CHECK_EQ_U64(st.samples, 80);
	CHECK_EQ_U64(r.idle, 3);
	CHECK_EQ_U64(h.n, 77);
	for (size_t i = 0; i < h.n; i++) {
		size_t node = h.samples[i].node;
		while (call_tree_parent(h.tree, node) > 0)
			node = (size_t)call_tree_parent(h.tree, node);
		const char *root = call_tree_name(h.tree, node);
		CHECK_MSG(strcmp(root, "dd") == 0 || strcmp(root, "sh") == 0, "root %s", root);
	}
	heatmap_reader_free(&r);
	heatmap_free(&h);
}

/* the heat map folds each sample as jflame collapse folds them all: the same
 * stacks, the same number of samples each (collapse weighs by period, which
 * is the same for every sample of java.perf) */
static void path_of(const struct call_tree *t, size_t node, char *buf, size_t len)
{
	const char *names[512];
	size_t n = 0, k = 0;
	for (; node > 0 && n < 512; node = (size_t)call_tree_parent(t, node))
		names[n++] = call_tree_name(t, node);
	buf[0] = '\0';
	while (n > 0 && k < len)
		k += (size_t)snprintf(buf + k, len - k, "%s%s", k ? ";" : "", names[--n]);
}

static void want_of(const char *stack, char *want, size_t size)
{
	size_t w = 0;
	char *copy = strdup(stack), *save = NULL;
	for (char *f = strtok_r(copy, ";", &save); f; f = strtok_r(NULL, ";", &save)) {
		size_t n = strlen(f);
		bool jit = n > 4 && (strcmp(f + n - 4, "_[j]") == 0 || strcmp(f + n - 4, "_[i]") == 0);
		if (n > 4 && f[n - 4] == '_' && f[n - 3] == '[' && f[n - 1] == ']')
			f[n -= 4] = '\0';
		char *cut = strstr(f, ":::");
		if (jit && f[0] == 'L' && cut && memchr(f, '/', (size_t)(cut - f)))
			w += (size_t)snprintf(want + w, size - w, "%s%.*s.%s", w ? ";" : "", (int)(cut - f - 1), f + 1,
					      cut + 3);
		else
			w += (size_t)snprintf(want + w, size - w, "%s%s", w ? ";" : "", f);
		if (w >= size)
			w = size - 1;
	}
	free(copy);
}

static void test_same_as_collapse(void)
{
	static const char *const files[] = { "collapse/java.perf", "collapse/sys-pid.perf" };
	for (size_t f = 0; f < 2; f++) {
		struct heatmap h;
		struct heatmap_reader r;
		struct ps_stats st;
		struct recording rec;
		struct collapse c;
		struct collapse_opts co = { 0 };
		char path[4096], err[256];
		const char *dir = getenv("JFLAME_TEST_DATA");
		read_file(files[f], &h, &r, true, &st);
		snprintf(path, sizeof(path), "%s/%s", dir ? dir : "tests/data", files[f]);
		CHECK(recording_init(&rec) == 0);
		collapse_init(&c, &co, &rec);
		CHECK(perf_script_parse_file(path, collapse_sample, &c, &st, err, sizeof(err)) == 0);
		size_t n;
		struct stack_count *sc = recording_sorted(&rec, &n);
		uint64_t per = 0, seen = 0;
		for (size_t i = 0; i < h.n; i++)
			seen += h.samples[i].weight;
		CHECK_EQ_U64(seen, c.kept);
		for (size_t i = 0; i < n; i++) {
			uint64_t mine = 0;
			char text[8192], want[8192];
			/* the tree shows names without their kind annotations, and
			 * perf-map-agent's JIT and inlined names as Java names */
			want_of(sc[i].stack, want, sizeof(want));
			for (size_t j = 0; j < h.n; j++) {
				path_of(h.tree, h.samples[j].node, text, sizeof(text));
				if (strcmp(text, want) == 0)
					mine += h.samples[j].weight;
			}
			CHECK_MSG(mine > 0, "%s: %s not in the heat map", files[f], sc[i].stack);
			if (mine && !per)
				per = sc[i].count / mine;
			CHECK_MSG(mine * per == sc[i].count, "%s: %s: %llu samples, collapse %llu", files[f],
				  sc[i].stack, (unsigned long long)mine, (unsigned long long)sc[i].count);
		}
		free(sc);
		collapse_free(&c);
		recording_free(&rec);
		heatmap_reader_free(&r);
		heatmap_free(&h);
	}
}

/* with jflame heatmap's annotations: perf-map-agent's names read as Java
 * names, JIT green and kernel orange */
static void test_java_names(void)
{
	static const char text[] = "cache-refresh 7/9 [000] 5.5: 1 cpu-clock:\n"
				   "\tffffffff8101 clear_page_erms ([kernel.kallsyms])\n"
				   "\t7f01 Ljava/util/HashMap;::putVal (/tmp/perf-7.map)\n"
				   "\t7f02 Lapp/Cache;::rebuild->Lapp/Cache;::entry (/tmp/perf-7.map)\n"
				   "\t7f03 Interpreter (/tmp/perf-7.map)\n"
				   "\t7f04 LooksLike;::cpp (/usr/lib/libx.so)\n\n";
	struct heatmap h;
	struct heatmap_reader r;
	struct ps_stats st;
	struct collapse_opts co = { .kernel = true, .jit = true };
	CHECK(heatmap_init(&h) == 0);
	CHECK(heatmap_reader_init(&r, &h, &co, false) == 0);
	perf_script_parse_buffer(text, sizeof(text) - 1, heatmap_reader_sample, &r, &st);
	CHECK_EQ_U64(h.n, 1);
	char path[1024];
	path_of(h.tree, h.samples[0].node, path, sizeof(path));
	CHECK_EQ_STR(path, "cache-refresh;LooksLike:::cpp;Interpreter;app/Cache.rebuild;app/Cache.entry;"
			   "java/util/HashMap.putVal;clear_page_erms");
	size_t n = h.samples[0].node;
	CHECK_EQ_INT(call_tree_hue(h.tree, n), FG_HUE_KERNEL);
	n = (size_t)call_tree_parent(h.tree, n);
	CHECK_EQ_INT(call_tree_hue(h.tree, n), FG_HUE_JIT);
	n = (size_t)call_tree_parent(h.tree, n);
	CHECK_EQ_INT(call_tree_hue(h.tree, n), FG_HUE_INLINED);
	n = (size_t)call_tree_parent(h.tree, (size_t)call_tree_parent(h.tree, n));
	CHECK_EQ_STR(call_tree_name(h.tree, n), "Interpreter");
	CHECK_EQ_INT(call_tree_hue(h.tree, n), FG_HUE_INTERP);
	heatmap_reader_free(&r);
	heatmap_free(&h);
}

static void test_is_idle(void)
{
	struct ps_frame fr = { { "ffff", 4 }, { "intel_idle+0x20", 15 }, { "[kernel.kallsyms]", 17 } };
	struct ps_frame work = { { "ffff", 4 }, { "do_syscall_64", 13 }, { "[kernel.kallsyms]", 17 } };
	struct ps_sample s = { .comm = { "java", 4 }, .pid = 42, .tid = 43, .frames = &work, .nframes = 1 };
	CHECK(!heatmap_is_idle(&s));
	s.frames = &fr;
	CHECK(heatmap_is_idle(&s)); /* an idle-loop leaf */
	s.frames = &work;
	s.comm = (struct ps_str){ "swapper/3", 9 };
	CHECK(heatmap_is_idle(&s));
	s.comm = (struct ps_str){ "kworker/0:1", 11 };
	s.pid = 0;
	CHECK(heatmap_is_idle(&s));
	s.pid = -1; /* perf printed only the tid */
	s.tid = 0;
	CHECK(heatmap_is_idle(&s));
	s.tid = 17;
	CHECK(!heatmap_is_idle(&s));
	s.nframes = 0;
	CHECK(!heatmap_is_idle(&s));
}

/* ---- JSON strings inside the page ------------------------------------------ */

static void test_json_str(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	static const char s[] = "a\"b\\c</script><!--&\x01\t\n\xff\xc3\xa9\xe2\x80\xa8\xed\xa0\x80z";
	json_out_str(f, s, sizeof(s) - 1);
	fclose(f);
	CHECK_EQ_STR(buf, "\"a\\\"b\\\\c\\u003c/script\\u003e\\u003c!--\\u0026\\u0001\\t\\n\\ufffd\xc3\xa9\\u2028"
			  "\\ufffd\\ufffd\\ufffdz\"");
	free(buf);
}

/* the whole page: no "</script" inside the data, the assets inlined */
static void test_page(void)
{
	struct heatmap h;
	char *buf = NULL, err[256] = "";
	size_t len = 0;
	CHECK(heatmap_init(&h) == 0);
	static const char evil[] = "java;</script><script>alert(1)</script>;x";
	CHECK(heatmap_add(&h, 10.0, evil, sizeof(evil) - 1, 3) == 0);
	FILE *f = open_memstream(&buf, &len);
	struct heatmap_options o = { "t<i>tle", NULL, 0, 0 };
	CHECK(heatmap_write_html(f, &h, &o, err, sizeof(err)) == 0);
	fclose(f);
	CHECK_HAS_STR(buf, "<title>t&lt;i&gt;tle</title>");
	CHECK(strstr(buf, "alert(1)") != NULL);
	CHECK(strstr(buf, "<script>alert") == NULL);
	/* three script elements: data, flame.js, heatmap.js */
	size_t opens = 0, closes = 0;
	for (const char *p = buf; (p = strstr(p, "<script")); p++)
		opens++;
	for (const char *p = buf; (p = strstr(p, "</script")); p++)
		closes++;
	CHECK_EQ_INT(opens, 3);
	CHECK_EQ_INT(closes, 3);
	CHECK_HAS_STR(buf, "var JFlame");
	CHECK(strstr(buf, "{{") == NULL);
	CHECK(strstr(buf, "http://") == NULL || strstr(buf, "http://www.w3.org/2000/svg") != NULL);
	CHECK(strstr(buf, "src=") == NULL);
	free(buf);
	heatmap_free(&h);

	/* nothing to draw: refused */
	CHECK(heatmap_init(&h) == 0);
	buf = NULL;
	f = open_memstream(&buf, &len);
	CHECK(heatmap_write_html(f, &h, &o, err, sizeof(err)) != 0);
	fclose(f);
	CHECK_HAS_STR(err, "no samples");
	CHECK_EQ_INT(len, 0);
	free(buf);
	/* a span too long for one column a second */
	CHECK(heatmap_add(&h, 10.0, "a", 1, 1) == 0);
	CHECK(heatmap_add(&h, 10.0 + HEATMAP_MAX_SECONDS, "a", 1, 1) == 0);
	CHECK(heatmap_check(&h, &o, err, sizeof(err)) != 0);
	CHECK_HAS_STR(err, "span");
	heatmap_free(&h);
}

/* the call tree: frames of one parent merged, annotations dropped from names,
 * empty frames skipped, hues by position */
static void test_call_tree(void)
{
	struct call_tree *t = call_tree_new();
	CHECK(t != NULL);
	long a = call_tree_node(t, "[42] java;main;app/A.run_[j];app/B.x_[i]", 40);
	long b = call_tree_node(t, "[42] java;main;app/A.run_[j];;app/C.y_[0]", 41);
	long c = call_tree_node(t, "[42] java;main;app/A.run_[j];app/B.x_[i]", 40);
	CHECK(a > 0 && b > 0);
	CHECK_EQ_INT(a, c);
	CHECK_EQ_INT(call_tree_node(t, "", 0), 0);
	CHECK_EQ_INT(call_tree_parent(t, (size_t)a), call_tree_parent(t, (size_t)b));
	CHECK_EQ_STR(call_tree_name(t, (size_t)a), "app/B.x");
	CHECK_EQ_STR(call_tree_name(t, (size_t)b), "app/C.y");
	CHECK_EQ_INT(call_tree_hue(t, (size_t)a), FG_HUE_INLINED);
	CHECK_EQ_INT(call_tree_hue(t, (size_t)b), FG_HUE_INTERP);
	long run = call_tree_parent(t, (size_t)a), thread = call_tree_parent(t, (size_t)run);
	long proc = call_tree_parent(t, (size_t)thread);
	CHECK_EQ_INT(call_tree_hue(t, (size_t)run), FG_HUE_JIT);
	CHECK_EQ_INT(call_tree_hue(t, (size_t)thread), FG_HUE_META); /* a thread after "[pid] name" */
	CHECK_EQ_INT(call_tree_hue(t, (size_t)proc), FG_HUE_META);
	CHECK_EQ_INT(call_tree_parent(t, (size_t)proc), 0);
	CHECK_EQ_INT(call_tree_size(t), 6);
	for (size_t i = 1; i < call_tree_size(t); i++)
		CHECK((size_t)call_tree_parent(t, i) < i);
	call_tree_free(t);
}

int main(void)
{
	test_cell_of();
	test_add_times();
	test_order();
	test_boundaries_file();
	test_recorded_idle();
	test_same_as_collapse();
	test_java_names();
	test_is_idle();
	test_json_str();
	test_page();
	test_call_tree();
	return check_report("heatmap");
}
