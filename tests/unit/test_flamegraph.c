/* test_flamegraph.c - golden tests of the SVG flame graph writer: folded files from
 * tests/data/flamegraph drawn and checked frame by frame, java hues, diffs, options. */
#include "flamegraph.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "check.h"
#include "folded.h"
#include "frame_tree.h"
#include "palette.h"

static const char *svg_dir; /* --svg-dir: every drawn SVG is also written there */

/* ---- folded files ---------------------------------------------------------- */

/* Reads tests/data/flamegraph/<name> with the folded reader jflame uses:
 * "frames count" lines, or "frames before after" for a differential graph
 * (diff: the file must be one); '#' lines are comments (skipped as bad lines). */
static int folded_load(const char *name, bool diff, struct stack_table *t)
{
	const char *dir = getenv("JFLAME_TEST_DATA");
	char path[4096], err[512];
	struct folded f;

	stack_table_init(t);
	snprintf(path, sizeof(path), "%s/flamegraph/%s", dir ? dir : "tests/data", name);
	if (folded_read(&f, t, path, 0, FOLDED_KEEP_ORDER, err, sizeof(err)) != 0 || f.differential != diff) {
		fprintf(stderr, "cannot read %s as %s folded stacks (set JFLAME_TEST_DATA): %s\n", path,
			diff ? "differential" : "plain", err);
		check_failed++;
		return -1;
	}
	return 0;
}

/* ---- drawing into memory ----------------------------------------------------- */

struct svg {
	char *p;
	size_t len;
	int ret;
	char err[256];
};

/* The stacks as a stack table: each once with its counts summed, and each
 * line in order as its steps (what a flame chart draws). NULL frames are "". */
static void table_of(struct stack_table *t, const struct fg_stack *st, size_t n)
{
	bool diff = false;
	stack_table_init(t);
	for (size_t i = 0; i < n; i++)
		diff |= st[i].count_before != 0;
	for (size_t i = 0; i < n; i++) {
		const char *fr = st[i].frames ? st[i].frames : "";
		long id = diff ? stack_table_add_diff(t, fr, strlen(fr), st[i].count_before, st[i].count) :
				 stack_table_add(t, fr, strlen(fr), st[i].count, 0);
		CHECK(id >= 0 && stack_table_add_step(t, (uint32_t)id, st[i].count, st[i].count_before) == 0);
	}
}

static void svg_draw_table(struct svg *s, const char *label, const struct stack_table *t, const struct fg_options *o);

static void svg_draw(struct svg *s, const char *label, const struct fg_stack *st, size_t n, const struct fg_options *o)
{
	struct stack_table t;
	table_of(&t, st, n);
	svg_draw_table(s, label, &t, o);
	stack_table_free(&t);
}

static void svg_draw_table(struct svg *s, const char *label, const struct stack_table *t, const struct fg_options *o)
{
	FILE *f = open_memstream(&s->p, &s->len);
	s->err[0] = '\0';
	s->ret = flamegraph_write(f, t, o, s->err, sizeof(s->err));
	fclose(f);
	if (svg_dir && label && s->ret == 0) {
		char path[4096];
		FILE *out;
		snprintf(path, sizeof(path), "%s/%s.svg", svg_dir, label);
		out = fopen(path, "w");
		if (out) {
			fwrite(s->p, 1, s->len, out);
			fclose(out);
		} else {
			fprintf(stderr, "cannot write %s\n", path);
			check_failed++;
		}
	}
}

static void svg_free(struct svg *s)
{
	free(s->p);
	s->p = NULL;
}

/* ---- reading the frames back --------------------------------------------------- */

struct frame {
	char name[1024]; /* the title's name, unescaped */
	uint64_t count;
	char pct[32];	/* "12.34" */
	char delta[32]; /* differential: "+1.23", "-4.56" */
	double x, y, w, h;
	int rgb[3];
	char text[256]; /* the label, unescaped */
};

static void unescape(const char *s, size_t n, char *out, size_t outlen)
{
	static const struct {
		const char *ent;
		char c;
	} ents[] = { { "&lt;", '<' }, { "&gt;", '>' }, { "&amp;", '&' }, { "&quot;", '"' }, { "&apos;", '\'' } };
	size_t o = 0;
	for (size_t i = 0; i < n && o + 1 < outlen;) {
		size_t k;
		for (k = 0; k < sizeof(ents) / sizeof(ents[0]); k++) {
			size_t el = strlen(ents[k].ent);
			if (i + el <= n && memcmp(s + i, ents[k].ent, el) == 0) {
				out[o++] = ents[k].c;
				i += el;
				break;
			}
		}
		if (k == sizeof(ents) / sizeof(ents[0]))
			out[o++] = s[i++];
	}
	out[o] = '\0';
}

/* strstr for walking through an SVG: AddressSanitizer's strstr measures the
 * whole rest of the string on every call, which makes a walk quadratic. */
static const char *find(const char *p, const char *needle)
{
	for (; p && *p; p++) {
		size_t i = 0;
		while (needle[i] && p[i] == needle[i])
			i++;
		if (!needle[i])
			return p;
	}
	return NULL;
}

/* The number at p; *end after it. Copies it out first: strtod on the whole SVG
 * would make AddressSanitizer measure all of it on every call. */
static double num_at(const char *p, const char **end)
{
	char buf[48];
	size_t n = 0;
	while (n + 1 < sizeof(buf) && p[n] && strchr("0123456789.+-eE", p[n]))
		buf[n] = p[n], n++;
	buf[n] = '\0';
	if (end)
		*end = p + n;
	return n ? strtod(buf, NULL) : -1;
}

static double attr_num(const char *tag, const char *attr)
{
	char key[32];
	const char *p;
	snprintf(key, sizeof(key), " %s=\"", attr);
	p = find(tag, key);
	return p ? num_at(p + strlen(key), NULL) : -1;
}

/* The frames of an SVG in document order; returns how many. */
static size_t frames_parse(const char *svg, struct frame **out)
{
	const char *p = find(svg, "<g id=\"frames\"");
	size_t n = 0, cap = 0;
	struct frame *v = NULL;

	*out = NULL;
	if (!p)
		return 0;
	while ((p = find(p, "<g>\n<title>"))) {
		const char *t = p + strlen("<g>\n<title>"), *te = find(t, "</title>");
		const char *rect = find(t, "<rect"), *tx, *txe, *fill;
		char title[1024], *q;
		struct frame f = { 0 };
		if (!te || !rect)
			break;
		unescape(t, (size_t)(te - t), title, sizeof(title));
		/* NAME (COUNT countname, PCT%[; DELTA%]) */
		q = strrchr(title, '(');
		while (q && !(q > title && q[-1] == ' ' && q[1] >= '0' && q[1] <= '9'))
			q = q > title ? memrchr(title, '(', (size_t)(q - title)) : NULL;
		if (q) {
			char *c = q + 1, *pe;
			q[-1] = '\0';
			for (; (*c >= '0' && *c <= '9') || *c == ','; c++)
				if (*c != ',')
					f.count = f.count * 10 + (uint64_t)(*c - '0');
			c = strstr(c, ", "); /* in the small title copy */
			if (c && (pe = strchr(c, '%'))) {
				snprintf(f.pct, sizeof(f.pct), "%.*s", (int)(pe - c - 2), c + 2);
				if (pe[1] == ';' && (c = strchr(pe + 1, '%')))
					snprintf(f.delta, sizeof(f.delta), "%.*s", (int)(c - pe - 3), pe + 3);
			}
		}
		snprintf(f.name, sizeof(f.name), "%s", title);
		f.x = attr_num(rect, "x"), f.y = attr_num(rect, "y");
		f.w = attr_num(rect, "width"), f.h = attr_num(rect, "height");
		fill = find(rect, "fill=\"rgb(");
		if (fill) {
			/* not sscanf: glibc's measures the whole SVG every call */
			const char *e = fill + strlen("fill=\"rgb(");
			for (int c = 0; c < 3; c++)
				f.rgb[c] = (int)num_at(e, &e), e++;
		}
		tx = find(rect, "<text");
		tx = tx ? strchr(tx, '>') : NULL;
		txe = tx ? find(tx, "</text>") : NULL;
		if (txe)
			unescape(tx + 1, (size_t)(txe - tx - 1), f.text, sizeof(f.text));
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			v = realloc(v, cap * sizeof(*v));
		}
		v[n++] = f;
		p = te;
	}
	*out = v;
	return n;
}

/* the nth frame (from 0) called name, or NULL */
static const struct frame *frame_find(const struct frame *v, size_t n, const char *name, int nth)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0 && nth-- == 0)
			return &v[i];
	return NULL;
}

static int frame_count(const struct frame *v, size_t n, const char *name)
{
	int c = 0;
	for (size_t i = 0; i < n; i++)
		c += strcmp(v[i].name, name) == 0;
	return c;
}

static bool near(double a, double b, double eps)
{
	return a > b - eps && a < b + eps;
}

/* the frame's colour is one the hue gives */
static bool in_hue(const struct frame *f, enum fg_hue hue)
{
	uint8_t lo[3], hi[3];
	palette_hue_color(hue, 0, lo);
	palette_hue_color(hue, 0.999999, hi);
	for (int i = 0; i < 3; i++)
		if (f->rgb[i] < lo[i] || f->rgb[i] > hi[i])
			return false;
	return true;
}

/* the first frame called name; a failed check and an empty frame if none */
static const struct frame *frame_get(const struct frame *v, size_t n, const char *name, int line)
{
	static const struct frame none;
	const struct frame *f = frame_find(v, n, name, 0);
	check_count++;
	if (f)
		return f;
	check_failed++;
	fprintf(stderr, "%s:%d: FAILED: no frame %s\n", __FILE__, line, name);
	return &none;
}

#define FRAME(v, n, name) frame_get(v, n, name, __LINE__)

/* ---- tests ------------------------------------------------------------------------ */

static void test_basic(void)
{
	struct stack_table f;
	struct svg s = { 0 }, u = { 0 };
	struct frame *v;
	size_t n;
	const double px = 1180.0 / 100; /* (1200 - 2 * 10) pixels for 100 samples */
	static const struct {
		const char *name;
		uint64_t count;
		const char *pct;
		double x;
		int depth;
	} want[] = {
		{ "all", 100, "100", 10, 0 },
		{ "main", 100, "100.00", 10, 1 },
		{ "a", 90, "90.00", 10, 2 },
		{ "b", 60, "60.00", 10, 3 },
		{ "c", 30, "30.00", 10 + 60 * 1180.0 / 100, 3 },
		{ "d", 9, "9.00", 10 + 90 * 1180.0 / 100, 2 },
		{ "tiny", 1, "1.00", 10 + 99 * 1180.0 / 100, 2 },
	};

	if (folded_load("basic.folded", false, &f))
		return;
	svg_draw_table(&s, "basic", &f, NULL);
	CHECK_EQ_INT(s.ret, 0);
	n = frames_parse(s.p, &v);
	CHECK_EQ_INT(n, 7);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]) && i < n; i++) {
		const struct frame *fr = &v[i];
		/* drawn parents first, children in name order */
		CHECK_EQ_STR(fr->name, want[i].name);
		CHECK_EQ_U64(fr->count, want[i].count);
		CHECK_EQ_STR(fr->pct, want[i].pct);
		CHECK_MSG(near(fr->x, want[i].x, 0.011), "%s x %f want %f", fr->name, fr->x, want[i].x);
		CHECK_MSG(near(fr->w, (double)want[i].count * px, 0.011), "%s width %f", fr->name, fr->w);
		CHECK_MSG(near(fr->y, v[0].y - 16 * want[i].depth, 0.001), "%s y %f", fr->name, fr->y);
		CHECK(near(fr->h, 15, 0.001));
	}
	/* labels fit: "tiny" is 11.8 px, under three characters: no label */
	CHECK_EQ_STR(FRAME(v, n, "b")->text, "b");
	CHECK_EQ_STR(FRAME(v, n, "tiny")->text, "");
	CHECK_EQ_STR(FRAME(v, n, "all")->text, "all");
	/* the page around the frames */
	CHECK_HAS_STR(s.p, "<svg version=\"1.1\" width=\"1200\"");
	CHECK_HAS_STR(s.p, ">Flame Graph</text>");
	CHECK_HAS_STR(s.p, "id=\"details\"");
	CHECK_HAS_STR(s.p, ">Reset Zoom</text>");
	CHECK_HAS_STR(s.p, ">Search</text>");
	CHECK_HAS_STR(s.p, ">ic</text>");
	CHECK_HAS_STR(s.p, "id=\"matched\"");
	CHECK_HAS_STR(s.p, "function search(term)");
	CHECK_HAS_STR(s.p, "data-nametype=\"Function:\"");
	CHECK(strstr(s.p, "id=\"legend\"") == NULL);
	CHECK(strstr(s.p, "id=\"subtitle\"") == NULL);
	CHECK(strstr(s.p, "<!DOCTYPE") == NULL); /* nothing to fetch */
	CHECK(s.len > 0 && s.p[s.len - 1] == '\n');
	free(v);
	stack_table_free(&f);

	/* order and duplicates don't matter: the same bytes, colours included */
	if (folded_load("unsorted.folded", false, &f) == 0) {
		svg_draw_table(&u, "unsorted", &f, NULL);
		CHECK_EQ_INT(u.ret, 0);
		CHECK(u.len == s.len && memcmp(u.p, s.p, s.len) == 0);
		stack_table_free(&f);
	}
	svg_free(&s);
	svg_free(&u);
}

static void test_minwidth(void)
{
	struct stack_table f;
	struct svg s = { 0 };
	struct fg_options o = { 0 };
	struct frame *v;
	size_t n;

	if (folded_load("minwidth.folded", false, &f))
		return;
	svg_draw_table(&s, "minwidth", &f, NULL);
	n = frames_parse(s.p, &v);
	/* 1 of 100000 samples is 0.0118 px: left out, with its callee, but counted */
	CHECK_EQ_INT(n, 3);
	CHECK_EQ_INT(frame_count(v, n, "tiny"), 0);
	CHECK_EQ_INT(frame_count(v, n, "deeper"), 0);
	CHECK_EQ_U64(FRAME(v, n, "main")->count, 100000);
	CHECK_HAS_STR(s.p, "<title>main (100,000 samples, 100.00%)</title>");
	CHECK_HAS_STR(s.p, "<title>big (99,999 samples, 100.00%)</title>");
	free(v);
	svg_free(&s);

	o.minwidth = 0.01;
	svg_draw_table(&s, "minwidth_px", &f, &o);
	n = frames_parse(s.p, &v);
	CHECK_EQ_INT(n, 5);
	CHECK_EQ_STR(FRAME(v, n, "tiny")->pct, "0.00");
	free(v);
	svg_free(&s);

	o.minwidth = 0.002, o.minwidth_percent = true; /* 1 sample is 0.001% */
	svg_draw_table(&s, NULL, &f, &o);
	n = frames_parse(s.p, &v);
	CHECK_EQ_INT(n, 3);
	free(v);
	svg_free(&s);
	o.minwidth = 0.0005;
	svg_draw_table(&s, NULL, &f, &o);
	n = frames_parse(s.p, &v);
	CHECK_EQ_INT(n, 5);
	free(v);
	svg_free(&s);
	stack_table_free(&f);
}

static void test_escape(void)
{
	struct stack_table f;
	struct svg s = { 0 };
	struct frame *v;
	size_t n;
	const char *p;
	struct fg_options o = {
		.title = "a < b & \"c\"", .subtitle = "it's <here>", .notes = "x --> y & z", .countname = "<events>"
	};

	if (folded_load("escape.folded", false, &f))
		return;
	svg_draw_table(&s, "escape", &f, &o);
	CHECK_EQ_INT(s.ret, 0);
	n = frames_parse(s.p, &v);
	CHECK_EQ_INT(n, 7);
	CHECK_HAS_STR(s.p, "<title>x&lt;y&gt;&amp;&quot;z&apos;w (3 &lt;events&gt;, 50.00%)</title>");
	CHECK_HAS_STR(s.p, "<title>&lt;init&gt; (2 &lt;events&gt;, 33.33%)</title>");
	CHECK_HAS_STR(s.p, ">a &lt; b &amp; &quot;c&quot;</text>");
	CHECK_HAS_STR(s.p, ">it&apos;s &lt;here&gt;</text>");
	CHECK_HAS_STR(s.p, "<desc id=\"notes\">x --&gt; y &amp; z</desc>");
	CHECK_EQ_STR(FRAME(v, n, "x<y>&\"z'w")->text, "x<y>&\"z'w");
	CHECK_EQ_U64(FRAME(v, n, "a&&b")->count, 2);
	/* no raw markup inside any title or label */
	for (p = find(s.p, "<g id=\"frames\""); p && (p = find(p, "<title>")); p++) {
		const char *e = find(p, "</title>");
		CHECK(e && !memchr(p + 7, '<', (size_t)(e - p - 7)) && !memchr(p + 7, '>', (size_t)(e - p - 7)));
	}
	free(v);
	svg_free(&s);
	stack_table_free(&f);
}

/* invalid UTF-8 and control characters must not make the XML ill-formed */
static void test_bad_bytes(void)
{
	struct fg_stack st[] = {
		{ "main;bad\xff\xfename;ctl\x01x;caf\xc3\xa9;half\xe2\x82", 5, 0 },
		{ "main;surrogate\xed\xa0\x80;overlong\xc0\xaf", 5, 0 },
	};
	struct svg s = { 0 };

	svg_draw(&s, "bad_bytes", st, 2, NULL);
	CHECK_EQ_INT(s.ret, 0);
	CHECK_HAS_STR(s.p, "<title>bad\xef\xbf\xbd\xef\xbf\xbdname (5 samples, 50.00%)</title>");
	CHECK_HAS_STR(s.p, "<title>ctl\xef\xbf\xbdx (5 samples, 50.00%)</title>");
	CHECK_HAS_STR(s.p, "<title>caf\xc3\xa9 (5 samples, 50.00%)</title>");
	CHECK_HAS_STR(s.p, "<title>half\xef\xbf\xbd\xef\xbf\xbd (5 samples");
	CHECK_HAS_STR(s.p, "<title>surrogate\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd (5 samples");
	for (size_t i = 0; i < s.len; i++) {
		unsigned char c = (unsigned char)s.p[i];
		if (c < 0x20 && c != '\n' && c != '\t') {
			CHECK_MSG(0, "control byte %#x at %zu", c, i);
			break;
		}
	}
	svg_free(&s);
}

/* splits "a;b;c" and asks the hue of its last frame */
static enum fg_hue hue_of(const char *stack)
{
	char buf[1024], *save = NULL;
	const char *frames[64];
	size_t n = 0;
	snprintf(buf, sizeof(buf), "%s", stack);
	for (char *tok = strtok_r(buf, ";", &save); tok && n < 64; tok = strtok_r(NULL, ";", &save))
		frames[n++] = tok;
	return palette_java_hue(frames, n);
}

static void test_java_hues(void)
{
	static const struct {
		const char *stack;
		enum fg_hue hue;
	} table[] = {
		{ "[1234] java;main;java/lang/Thread.run_[j]", FG_HUE_JIT },
		{ "[1234] java;main;java/lang/Thread.run_[j];com/acme/Json.parse_[i]", FG_HUE_INLINED },
		{ "[1234] java;main;java/lang/Thread.run_[j];com/acme/Cold.path_[0]", FG_HUE_INTERP },
		{ "[1234] java;main;java/lang/Thread.run_[j];write;__x64_sys_write_[k]", FG_HUE_KERNEL },
		{ "[1234] java;main;java/lang/Thread.run_[j];write", FG_HUE_NATIVE },
		{ "[1234] java;main;java/lang/Thread.run_[j];[unknown]", FG_HUE_NATIVE },
		{ "[1234] java;main;java/lang/Thread.run_[j];[libzip.so]", FG_HUE_NATIVE },
		{ "[1234] java;main;java/lang/Thread.run_[j];[unknown]_[k]", FG_HUE_KERNEL },
		{ "[1234] java;main;[truncated]", FG_HUE_META },
		{ "[1234] java;main;[lost]", FG_HUE_META },
		{ "[1234] java;main;[missing frames: no frame pointers]", FG_HUE_META },
		{ "[1234] java;main;[failed to read user stack]", FG_HUE_META },
		{ "[1234] java", FG_HUE_META },
		{ "[1234] java;main", FG_HUE_META },
		{ "[1234] java;http-nio-8080-exec-1", FG_HUE_META },
		{ "[1234] java;pkg/Weird.thread", FG_HUE_META },	/* position wins over the look */
		{ "[1234] java;java/lang/Thread.run_[j]", FG_HUE_JIT }, /* an annotation wins over position */
		{ "[Pod]web-1", FG_HUE_META },
		{ "[Pod]web-1;[Con]app", FG_HUE_META },
		{ "[Pod]web-1;[Con]app;[42] java", FG_HUE_META },
		{ "[Pod]web-1;[Con]app;[42] java;main", FG_HUE_META },
		{ "[Pod]web-1;[Con]app;[42] java;GC Thread#0", FG_HUE_GC },
		{ "[Pod]web-1;[Con]app;[42] java;G1 Conc#0", FG_HUE_GC },
		{ "[Pod]web-1;[Con]app;[42] java;C2 CompilerThre", FG_HUE_COMPILER },
		{ "[Pod]web-1;[Con]app;[42] java;C1 CompilerThread0", FG_HUE_COMPILER },
		{ "[Pod]web-1;[Con]app;[42] java;VM Thread", FG_HUE_META },
		{ "[Pod]web-1;[Con]app;[42] java;GC Thread#0;start_thread", FG_HUE_NATIVE },
		{ "[Pod]web-1;[Con]app;[42] java;GC Thread#0;start_thread;thread_native_entry", FG_HUE_JVM },
		{ "[Pod]web-1;[Con]app;[42] java;GC Thread#0;start_thread;Thread::call_run", FG_HUE_JVM },
		{ "[1234] java;GC Thread#0;x;G1ParScanThreadState::trim_queue_partially", FG_HUE_GC },
		{ "x;WorkerThread::run", FG_HUE_GC },
		{ "x;PSPromotionManager::drain_stacks_depth", FG_HUE_GC },
		{ "x;PSScavenge::invoke", FG_HUE_GC },
		{ "x;ParallelScavengeHeap::failed_mem_allocate", FG_HUE_GC },
		{ "x;ShenandoahHeap::evacuate_object", FG_HUE_GC },
		{ "x;ZMark::work", FG_HUE_GC },
		{ "x;ZHeap::relocate_object", FG_HUE_GC },
		{ "x;GenMarkSweep::invoke_at_safepoint", FG_HUE_GC },
		{ "x;CardTableBarrierSet::on_slowpath_allocation_exit", FG_HUE_GC },
		{ "x;VM_GC_Operation::doit", FG_HUE_GC },
		{ "x;OopOopIterateDispatch<G1CMOopClosure>::Table::oop_oop_iterate<InstanceKlass, narrowOop>",
		  FG_HUE_GC },
		{ "x;MemAllocator::allocate", FG_HUE_JVM },
		{ "x;CollectedHeap::fill_with_object", FG_HUE_GC },
		{ "x;Compile::Optimize", FG_HUE_COMPILER },
		{ "x;C2Compiler::compile_method", FG_HUE_COMPILER },
		{ "x;PhaseIdealLoop::build_and_optimize", FG_HUE_COMPILER },
		{ "x;PhaseChaitin::Register_Allocate", FG_HUE_COMPILER },
		{ "x;PhaseIterGVN::optimize", FG_HUE_COMPILER },
		{ "x;Matcher::match", FG_HUE_COMPILER },
		{ "x;Parse::do_one_bytecode", FG_HUE_COMPILER },
		{ "x;PhiNode::Ideal", FG_HUE_COMPILER },
		{ "x;LinearScan::do_linear_scan", FG_HUE_COMPILER },
		{ "x;GraphBuilder::iterate_bytecodes_for_block", FG_HUE_COMPILER },
		{ "x;Compilation::compile_method", FG_HUE_COMPILER },
		{ "x;CompileBroker::compiler_thread_loop", FG_HUE_COMPILER },
		{ "x;ciEnv::register_method", FG_HUE_COMPILER },
		{ "x;G1BarrierSetC2::load_at_resolved", FG_HUE_COMPILER },
		{ "x;Runtime1::new_instance", FG_HUE_JVM },
		{ "x;OptoRuntime::new_array_C", FG_HUE_JVM },
		{ "x;SafepointSynchronize::begin", FG_HUE_JVM },
		{ "x;ResourceMark::~ResourceMark", FG_HUE_JVM },
		{ "x;HandleMark::pop_and_restore", FG_HUE_JVM },
		{ "x;TypeArrayKlass::allocate_common", FG_HUE_JVM },
		{ "x;ObjectSynchronizer::FastHashCode", FG_HUE_JVM },
		{ "x;JVM_IHashCode", FG_HUE_JVM },
		{ "x;jni_CallStaticVoidMethod", FG_HUE_JVM },
		{ "x;Interpreter", FG_HUE_INTERP },
		/* the JVM's generated stubs: its code, in its hue */
		{ "x;JavaCalls::call_helper;call_stub", FG_HUE_JVM },
		{ "x;call_stub;java/lang/Thread.run_[0]", FG_HUE_INTERP },
		{ "x;vtable stub", FG_HUE_JVM },
		{ "x;I2C/C2I adapters", FG_HUE_JVM },
		{ "x;jint_disjoint_arraycopy_avx3", FG_HUE_JVM },
		{ "x;arrayof_jlong_conjoint_arraycopy", FG_HUE_JVM },
		{ "x;checkcast_arraycopy", FG_HUE_JVM },
		{ "x;new_instance Runtime1 stub", FG_HUE_JVM },
		{ "x;_new_array_Java", FG_HUE_JVM },
		{ "x;sha256_implCompressMB", FG_HUE_JVM },
		{ "x;StubRoutines (1)", FG_HUE_JVM },
		{ "[42] java;call_stub", FG_HUE_META }, /* a thread so named */
		{ "x;call_stubs", FG_HUE_NATIVE },
		{ "x;my_arraycopy", FG_HUE_NATIVE },
		{ "x;_Java", FG_HUE_NATIVE },
		{ "x;clock_gettime;__vdso_clock_gettime", FG_HUE_NATIVE },
		{ "x;java/lang/String.hashCode", FG_HUE_JIT },
		{ "x;java.lang.String::hashCode", FG_HUE_JIT },
		{ "x;/usr/lib/libc.so.6", FG_HUE_NATIVE },
		{ "x;[kernel.kallsyms]", FG_HUE_KERNEL },
		{ "x;[vdso]", FG_HUE_NATIVE },
		{ "x;memcpy", FG_HUE_NATIVE },
		{ "x;ZSTD_decompress", FG_HUE_NATIVE },
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		enum fg_hue h = hue_of(table[i].stack);
		CHECK_MSG(h == table[i].hue, "%s: hue %d, want %d", table[i].stack, h, table[i].hue);
	}
	{
		/* perf-map-agent's names hold a ';': never in a folded stack, but other writers */
		const char *frames[] = { "x", "Ljava/lang/String;::hashCode" };
		CHECK_EQ_INT(palette_java_hue(frames, 2), FG_HUE_JIT);
		CHECK_EQ_INT(palette_java_hue(frames, 0), FG_HUE_NATIVE);
	}
	CHECK_EQ_STR(palette_hue_label(FG_HUE_JIT), "JIT-compiled Java");
	CHECK_EQ_STR(palette_hue_label(FG_HUE_META), "metadata (pod, container, process, thread)");
	/* the hues can be told apart: no two middle colours closer than 40 */
	for (int a = 0; a < FG_HUE_COUNT; a++) {
		for (int b = a + 1; b < FG_HUE_COUNT; b++) {
			uint8_t x[3], y[3];
			int dist = 0;
			palette_hue_color((enum fg_hue)a, 0.5, x);
			palette_hue_color((enum fg_hue)b, 0.5, y);
			for (int k = 0; k < 3; k++)
				dist += abs(x[k] - y[k]);
			CHECK_MSG(dist >= 40, "hues %d and %d too alike (%d)", a, b, dist);
		}
	}
}

/* -e alloc and -e lock graphs: the class leaf in its own hue, a legend entry
 * only when drawn, titles in bytes */
static void test_alloc_lock_graph(void)
{
	struct fg_stack st[] = {
		{ "[7] java;main;app/A.makeBytes;byte[]_[a]", 3 << 20, 0 },
		{ "[7] java;main;app/A.makeStrings;java/lang/String_[a]", 1000, 0 },
		{ "[7] java;ledger-waiter;app/Ledger.post;app/Ledger_[l]", 512, 0 },
	};
	struct svg s = { 0 };
	struct fg_options o = { .colors = "java", .legend = true, .bytes = true };
	const char *f1[] = { "[7] java", "main", "app/A.makeBytes", "byte[]_[a]" };
	const char *f2[] = { "[7] java", "ledger-waiter", "app/Ledger.post", "app/Ledger_[l]" };
	CHECK_EQ_INT(palette_java_hue(f1, 4), FG_HUE_ALLOC);
	CHECK_EQ_INT(palette_java_hue(f2, 4), FG_HUE_LOCK);
	CHECK_EQ_INT(palette_java_hue(f1, 3), FG_HUE_JIT);
	CHECK_EQ_STR(palette_hue_label(FG_HUE_ALLOC), "allocated class");
	svg_draw(&s, "alloc_lock", st, 3, &o);
	CHECK_EQ_INT(s.ret, 0);
	CHECK_HAS_STR(s.p, ">allocated class</text>");
	CHECK_HAS_STR(s.p, ">lock (monitor class)</text>");
	CHECK_HAS_STR(s.p, "<title>byte[] (3,145,728 bytes = 3.0 MiB, ");
	CHECK_HAS_STR(s.p, "<title>java/lang/String (1,000 bytes, ");
	CHECK_HAS_STR(s.p, "<title>app/Ledger (512 bytes, ");
	CHECK(strstr(s.p, "_[a]") == NULL);
	svg_free(&s);
}

static void test_java_graph(void)
{
	struct stack_table f;
	struct svg s = { 0 }, s2 = { 0 }, l = { 0 };
	struct fg_options o = { .colors = "java" };
	struct frame *v;
	size_t n;
	static const struct {
		const char *name;
		enum fg_hue hue;
	} want[] = {
		{ "[Pod]web-1", FG_HUE_META },
		{ "[Con]app", FG_HUE_META },
		{ "[42] java", FG_HUE_META },
		{ "main", FG_HUE_META },
		{ "VM Thread", FG_HUE_META },
		{ "java/lang/Thread.run", FG_HUE_JIT },
		{ "com/acme/Json.parse", FG_HUE_INLINED },
		{ "java/lang/String.format", FG_HUE_INTERP },
		{ "Interpreter", FG_HUE_INTERP },
		{ "vfs_write", FG_HUE_KERNEL },
		{ "write", FG_HUE_NATIVE },
		{ "ObjectSynchronizer::FastHashCode", FG_HUE_JVM },
		{ "GC Thread#0", FG_HUE_GC },
		{ "G1ParScanThreadState::trim_queue_partially", FG_HUE_GC },
		{ "C2 CompilerThre", FG_HUE_COMPILER },
		{ "PhaseIdealLoop::build_and_optimize", FG_HUE_COMPILER },
		{ "LinearScan::do_linear_scan", FG_HUE_COMPILER },
		{ "[truncated]", FG_HUE_META },
		{ "[unknown]", FG_HUE_NATIVE },
		{ "http-nio-8080-exec-1", FG_HUE_META },
		{ "epoll_wait", FG_HUE_KERNEL },
	};

	if (folded_load("java.folded", false, &f))
		return;
	svg_draw_table(&s, "java", &f, &o);
	CHECK_EQ_INT(s.ret, 0);
	n = frames_parse(s.p, &v);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct frame *fr = FRAME(v, n, want[i].name);
		CHECK_MSG(in_hue(fr, want[i].hue), "%s rgb(%d,%d,%d) not hue %d", want[i].name, fr->rgb[0], fr->rgb[1],
			  fr->rgb[2], want[i].hue);
	}
	/* annotations are not shown; frames merge by their full name */
	CHECK_EQ_INT(frame_count(v, n, "java/lang/Thread.run_[j]"), 0);
	CHECK_EQ_INT(frame_count(v, n, "java/lang/Thread.run"), 2);
	/* threads in name order: http-nio-8080-exec-1's before main's */
	CHECK_EQ_U64(FRAME(v, n, "com/acme/Handler.handle")->count, 7);
	CHECK(frame_find(v, n, "com/acme/Handler.handle", 1) &&
	      frame_find(v, n, "com/acme/Handler.handle", 1)->count == 109);
	CHECK_EQ_INT(frame_count(v, n, "thread_native_entry"), 5);
	CHECK_EQ_U64(FRAME(v, n, "thread_native_entry")->count, 6); /* C1 CompilerThre's */
	CHECK_EQ_U64(FRAME(v, n, "all")->count, 159);
	CHECK(strstr(s.p, "id=\"legend\"") == NULL);

	/* the same input draws the same bytes */
	svg_draw_table(&s2, NULL, &f, &o);
	CHECK(s2.len == s.len && memcmp(s2.p, s.p, s.len) == 0);

	/* the legend: every hue with its label, and the frames move down for it */
	o.legend = true;
	svg_draw_table(&l, "java_legend", &f, &o);
	CHECK_EQ_INT(l.ret, 0);
	CHECK_HAS_STR(l.p, "<g id=\"legend\">");
	for (int h = 0; h < FG_HUE_ALWAYS; h++) {
		char label[128];
		uint8_t rgb[3];
		char fill[64];
		snprintf(label, sizeof(label), ">%s</text>", palette_hue_label((enum fg_hue)h));
		CHECK_HAS_STR(l.p, label);
		palette_hue_color((enum fg_hue)h, 0.5, rgb);
		snprintf(fill, sizeof(fill), "fill=\"rgb(%d,%d,%d)\"", rgb[0], rgb[1], rgb[2]);
		CHECK_HAS_STR(strstr(l.p, "<g id=\"legend\">"), fill);
	}
	CHECK_HAS_STR(l.p, ">JVM (C++)</text>");
	CHECK_HAS_STR(l.p, ">JIT compiler</text>");
	CHECK(strstr(l.p, ">allocated class</text>") == NULL); /* only in graphs with such frames */
	CHECK(strstr(l.p, ">lock (monitor class)</text>") == NULL);
	CHECK(attr_num(strstr(l.p, "<svg"), "height") > attr_num(strstr(s.p, "<svg"), "height"));
	free(v);
	svg_free(&s);
	svg_free(&s2);
	svg_free(&l);

	/* other palettes have no legend */
	o.colors = "hot";
	svg_draw_table(&s, NULL, &f, &o);
	CHECK(strstr(s.p, "id=\"legend\"") == NULL);
	svg_free(&s);
	stack_table_free(&f);
}

static void test_hash_colors(void)
{
	struct fg_stack a[] = { { "main;foo;bar", 3, 0 }, { "main;baz;bar", 2, 0 } };
	struct fg_stack b[] = { { "other;x;y;bar", 7, 0 } };
	struct fg_options o = { .colors = "hot", .hash = true };
	struct svg s = { 0 }, t = { 0 };
	struct frame *v, *w;
	size_t n, m;

	svg_draw(&s, "hash", a, 2, &o);
	svg_draw(&t, NULL, b, 1, &o);
	n = frames_parse(s.p, &v);
	m = frames_parse(t.p, &w);
	/* same name, same colour: within a graph and across graphs */
	const struct frame *b1 = frame_find(v, n, "bar", 0), *b2 = frame_find(v, n, "bar", 1);
	const struct frame *b3 = frame_find(w, m, "bar", 0);
	CHECK(b1 && b2 && b3);
	if (b1 && b2 && b3) {
		CHECK(memcmp(b1->rgb, b2->rgb, sizeof(b1->rgb)) == 0);
		CHECK(memcmp(b1->rgb, b3->rgb, sizeof(b1->rgb)) == 0);
	}
	free(v);
	free(w);
	svg_free(&s);
	svg_free(&t);
}

static void test_palettes(void)
{
	struct fg_stack st[] = { { "main;a;b;-;c_[k]", 4, 0 }, { "main;x::y;j/s/x.js;z", 4, 0 }, { "main;--", 1, 0 } };
	static const struct {
		const char *name;
		int lo[3], hi[3];
	} pal[] = {
		{ "hot", { 205, 0, 0 }, { 255, 230, 55 } },	   { "mem", { 0, 190, 0 }, { 0, 240, 210 } },
		{ "io", { 80, 80, 190 }, { 140, 140, 245 } },	   { "red", { 200, 50, 50 }, { 255, 130, 130 } },
		{ "green", { 50, 200, 50 }, { 110, 255, 110 } },   { "blue", { 80, 80, 205 }, { 140, 140, 255 } },
		{ "aqua", { 50, 165, 165 }, { 110, 220, 220 } },   { "yellow", { 175, 175, 50 }, { 230, 230, 70 } },
		{ "purple", { 190, 80, 190 }, { 255, 140, 255 } }, { "orange", { 190, 90, 0 }, { 255, 155, 0 } },
		{ "nonsense", { 205, 0, 0 }, { 255, 230, 55 } },
	};
	for (size_t i = 0; i < sizeof(pal) / sizeof(pal[0]); i++) {
		struct fg_options o = { .colors = pal[i].name };
		struct svg s = { 0 };
		struct frame *v;
		size_t n;
		char label[64];
		snprintf(label, sizeof(label), "palette_%s", pal[i].name);
		svg_draw(&s, label, st, 3, &o);
		n = frames_parse(s.p, &v);
		CHECK_EQ_INT(n, 10);
		for (size_t k = 0; k < n; k++) {
			bool ok = true;
			if (strcmp(v[k].name, "-") == 0) {
				CHECK_MSG(v[k].rgb[0] == 200 && v[k].rgb[1] == 200 && v[k].rgb[2] == 200, "- is grey");
				continue;
			}
			if (strcmp(v[k].name, "--") == 0) {
				CHECK_MSG(v[k].rgb[0] == 160 && v[k].rgb[1] == 160 && v[k].rgb[2] == 160, "-- is grey");
				continue;
			}
			for (int c = 0; c < 3; c++)
				ok = ok && v[k].rgb[c] >= pal[i].lo[c] && v[k].rgb[c] <= pal[i].hi[c];
			CHECK_MSG(ok, "%s: %s rgb(%d,%d,%d)", pal[i].name, v[k].name, v[k].rgb[0], v[k].rgb[1],
				  v[k].rgb[2]);
		}
		free(v);
		svg_free(&s);
	}
	/* js: C++ yellow, a .js path green, kernel orange, the rest red */
	{
		struct fg_options o = { .colors = "js" };
		struct svg s = { 0 };
		struct frame *v;
		size_t n;
		svg_draw(&s, "palette_js", st, 3, &o);
		n = frames_parse(s.p, &v);
		CHECK(FRAME(v, n, "x::y")->rgb[2] <= 70);      /* yellow */
		CHECK(FRAME(v, n, "j/s/x.js")->rgb[1] >= 200); /* green */
		CHECK(FRAME(v, n, "c")->rgb[2] == 0);	       /* orange */
		CHECK(FRAME(v, n, "z")->rgb[0] >= 200);	       /* red */
		free(v);
		svg_free(&s);
	}
}

static void test_differential(void)
{
	struct stack_table f;
	struct svg s = { 0 }, ng = { 0 };
	struct fg_options o = { .differential = true, .legend = true };
	struct frame *v;
	size_t n;
	const struct frame *fmt, *sb, *sock, *root;

	if (folded_load("diff.folded", true, &f))
		return;
	svg_draw_table(&s, "diff", &f, &o);
	CHECK_EQ_INT(s.ret, 0);
	n = frames_parse(s.p, &v);
	fmt = FRAME(v, n, "java/lang/String.format");
	sb = FRAME(v, n, "java/lang/StringBuilder.append");
	sock = FRAME(v, n, "sun/nio/ch/SocketChannelImpl.write");
	root = FRAME(v, n, "all");
	/* shape: the after counts (85 in all); the removed frame has no width */
	CHECK_EQ_U64(root->count, 85);
	CHECK_EQ_U64(fmt->count, 50);
	CHECK(near(fmt->w, 50 * 1180.0 / 85, 0.011));
	CHECK_EQ_INT(frame_count(v, n, "org/apache/kafka/Old.removed"), 0);
	/* grew red, shrank blue, intensity by the size of the change */
	CHECK(fmt->rgb[0] == 255 && fmt->rgb[1] == fmt->rgb[2] && fmt->rgb[1] < 40);
	CHECK(sb->rgb[2] == 255 && sb->rgb[0] == sb->rgb[1] && sb->rgb[0] < 40);
	CHECK(sock->rgb[0] == 255 && sock->rgb[1] > 150 && sock->rgb[1] < 255);
	CHECK(root->rgb[0] == 255 && root->rgb[1] == 255 && root->rgb[2] == 255);
	/* 50/85 after against 2/100 before: +56.82 points; 5/85 against 60/100: -54.12 */
	CHECK_EQ_STR(fmt->delta, "+56.82");
	CHECK_EQ_STR(sb->delta, "-54.12");
	CHECK_EQ_STR(root->delta, "");
	CHECK_HAS_STR(s.p, "<title>java/lang/String.format (50 samples, 58.82%; +56.82%)</title>");
	CHECK_HAS_STR(s.p, ">grew</text>");
	CHECK_HAS_STR(s.p, ">shrank</text>");
	free(v);

	o.negate = true;
	svg_draw_table(&ng, "diff_negate", &f, &o);
	n = frames_parse(ng.p, &v);
	fmt = FRAME(v, n, "java/lang/String.format");
	sb = FRAME(v, n, "java/lang/StringBuilder.append");
	CHECK(fmt->rgb[2] == 255 && fmt->rgb[0] < 40);
	CHECK(sb->rgb[0] == 255 && sb->rgb[1] < 40);
	CHECK_EQ_STR(fmt->delta, "-56.82");
	free(v);
	svg_free(&s);
	svg_free(&ng);
	stack_table_free(&f);
}

static void test_layouts(void)
{
	struct stack_table f;
	struct svg s = { 0 };
	struct fg_options o = { 0 };
	struct frame *v;
	size_t n;

	if (folded_load("basic.folded", false, &f))
		return;
	/* icicle: the root on top, callees below */
	o.inverted = true;
	svg_draw_table(&s, "inverted", &f, &o);
	n = frames_parse(s.p, &v);
	CHECK_HAS_STR(s.p, ">Icicle Graph</text>");
	CHECK_HAS_STR(s.p, "inverted: true");
	CHECK(near(FRAME(v, n, "main")->y, FRAME(v, n, "all")->y + 16, 0.001));
	CHECK(near(FRAME(v, n, "b")->y, FRAME(v, n, "all")->y + 48, 0.001));
	CHECK(near(FRAME(v, n, "all")->y, 36, 0.001)); /* right under the title */
	free(v);
	svg_free(&s);

	/* reverse: leaves become roots */
	o = (struct fg_options){ .reverse = true };
	svg_draw_table(&s, "reverse", &f, &o);
	n = frames_parse(s.p, &v);
	CHECK_EQ_INT(n, 11);
	CHECK_EQ_STR(v[1].name, "b");
	CHECK_EQ_U64(FRAME(v, n, "b")->count, 60);
	CHECK_EQ_INT(frame_count(v, n, "main"), 4);
	free(v);
	svg_free(&s);
	stack_table_free(&f);

	/* flame chart: input order, merged only with the stack just before */
	{
		struct fg_stack st[] = {
			{ "main;b;x", 1, 0 }, { "main;b;y", 1, 0 }, { "main;a", 2, 0 }, { "main;b", 1, 0 }
		};
		o = (struct fg_options){ .flamechart = true };
		svg_draw(&s, "flamechart", st, 4, &o);
		n = frames_parse(s.p, &v);
		CHECK_HAS_STR(s.p, ">Flame Chart</text>");
		CHECK_EQ_INT(n, 7);
		CHECK_EQ_INT(frame_count(v, n, "b"), 2);
		CHECK_EQ_U64(FRAME(v, n, "main")->count, 5);
		CHECK(FRAME(v, n, "b")->x < FRAME(v, n, "a")->x);
		CHECK(frame_find(v, n, "b", 1) && frame_find(v, n, "b", 1)->x > FRAME(v, n, "a")->x);
		CHECK(FRAME(v, n, "x")->x < FRAME(v, n, "y")->x);
		free(v);
		svg_free(&s);
	}
}

static void test_options(void)
{
	struct fg_stack st[] = { { "main;a_very_long_function_name_that_cannot_fit", 3, 0 }, { "main;other", 97, 0 } };
	struct fg_options o = { .title = "CPU",
				.countname = "bytes",
				.nametype = "Allocation:",
				.fonttype = "Courier",
				.fontsize = 10,
				.width = 600,
				.frameheight = 20,
				.subtitle = "target pid 42, 30 s at 99 Hz, 100 samples, frame pointers: on" };
	struct svg s = { 0 };
	struct frame *v;
	size_t n;
	const struct frame *lf;

	svg_draw(&s, "options", st, 2, &o);
	n = frames_parse(s.p, &v);
	CHECK_HAS_STR(s.p, "<svg version=\"1.1\" width=\"600\"");
	CHECK_HAS_STR(s.p, ">CPU</text>");
	CHECK_HAS_STR(s.p, "font-family:Courier; font-size:10px;");
	CHECK_HAS_STR(s.p, "data-nametype=\"Allocation:\"");
	CHECK_HAS_STR(s.p, "<title>other (97 bytes, 97.00%)</title>");
	CHECK_HAS_STR(s.p, "<text id=\"subtitle\" x=\"300\" y=\"40\">target pid 42");
	CHECK(near(FRAME(v, n, "main")->h, 19, 0.001));
	CHECK(near(FRAME(v, n, "main")->w, 580, 0.001));
	/* 3% of 580 px is 17.4 px, 2 characters of 5.9 px and "..": cut */
	lf = FRAME(v, n, "a_very_long_function_name_that_cannot_fit");
	CHECK_EQ_STR(lf->text, "");
	CHECK_EQ_STR(FRAME(v, n, "other")->text, "other");
	free(v);
	svg_free(&s);

	st[0].count = 30;
	/* the warning style is the caller's call, not the text's */
	o.subtitle = "pid 42: frame pointers: off (restart with -XX:+PreserveFramePointer)";
	svg_draw(&s, NULL, st, 2, &o);
	CHECK_HAS_STR(s.p, "<text id=\"subtitle\" x=\"300\" y=\"40\">pid 42: frame pointers: off");
	svg_free(&s);
	o.subtitle_warning = true;
	svg_draw(&s, "options_warning", st, 2, &o);
	n = frames_parse(s.p, &v);
	CHECK_HAS_STR(s.p, "<text id=\"subtitle\" x=\"300\" y=\"40\" class=\"warning\">pid 42: frame pointers: off");
	lf = FRAME(v, n, "a_very_long_function_name_that_cannot_fit");
	/* 30 of 127 samples in 580 px: 137 px, 23 characters of 5.9 px */
	CHECK_EQ_STR(lf->text, "a_very_long_function_..");
	free(v);
	svg_free(&s);
	o.subtitle = "WARNING: 12% of samples lost"; /* still o.subtitle_warning */
	svg_draw(&s, NULL, st, 2, &o);
	CHECK_HAS_STR(s.p, "class=\"warning\">WARNING: 12% of samples lost</text>");
	svg_free(&s);
}

/* The subtitle's lines: the text of each <tspan> of #subtitle, unescaped; how many. */
static size_t subtitle_parse(const char *svg, char lines[][512], size_t max, bool *warning)
{
	const char *p = find(svg, "<text id=\"subtitle\""), *end = p ? find(p, "</text>") : NULL;
	size_t n = 0;
	*warning = p && end && find(p, "class=\"warning\"") && find(p, "class=\"warning\"") < find(p, ">");
	while (p && end && n < max && (p = find(p, "<tspan")) && p < end) {
		const char *t = strchr(p, '>') + 1, *te = find(t, "</tspan>");
		unescape(t, (size_t)(te - t), lines[n++], 512);
		p = te;
	}
	return n;
}

/* UTF-8 characters in s */
static size_t chars_of(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* Appends sep and s to buf, cut at its size. */
static void join_line(char *buf, size_t size, const char *sep, const char *s)
{
	size_t at = strlen(buf);
	for (const char *p = sep; *p && at + 1 < size; p++)
		buf[at++] = *p;
	for (const char *p = s; *p && at + 1 < size; p++)
		buf[at++] = *p;
	buf[at] = '\0';
}

/* Time-weighted graphs (off-CPU, wall): counts in microseconds shown as ms. */
static void test_count_scale(void)
{
	struct fg_stack st[] = { { "t;sleep", 9012345, 0 }, { "t;spin", 1001, 0 } };
	struct fg_options o = { .countname = "ms", .count_scale = 1000 };
	struct svg s = { 0 };

	svg_draw(&s, "count_scale", st, 2, &o);
	CHECK_EQ_INT(s.ret, 0);
	CHECK_HAS_STR(s.p, "<title>sleep (9012.35 ms, 99.99%)</title>");
	CHECK_HAS_STR(s.p, "<title>spin (1.00 ms, 0.01%)</title>");
	CHECK_HAS_STR(s.p, "<title>all (9013.35 ms, 100%)</title>");
	/* the page's script reads the count back from such titles */
	CHECK_HAS_STR(s.p, "([0-9,.]+)");
	svg_free(&s);
}

static void test_subtitle_wraps(void)
{
	static const char *warn = "3.0 s at 99 Hz (cpu-clock): 12345 samples, 0 lost, 3 truncated, 1 unwind failed, "
				  "0 failed stack reads; WARNING frame pointers: off in pid 4242 and others: Java "
				  "frames below compiled code are lost; restart it with -XX:+PreserveFramePointer "
				  "<and & \"more\">";
	struct fg_stack st[] = { { "main;a", 3, 0 }, { "main;b", 7, 0 } };
	struct fg_options o = { .subtitle = "30 s at 99 Hz, 100 samples" };
	static char lines[64][512];
	char joined[4096], label[64];
	struct svg s = { 0 };
	struct frame *v;
	size_t n, k;
	bool warning;
	double root_y;

	/* fits: one line, no <tspan>, where it always was */
	svg_draw(&s, "subtitle_short", st, 2, &o);
	CHECK_HAS_STR(s.p, "<text id=\"subtitle\" x=\"600\" y=\"48\">30 s at 99 Hz, 100 samples</text>");
	CHECK(subtitle_parse(s.p, lines, 64, &warning) == 0);
	n = frames_parse(s.p, &v);
	root_y = FRAME(v, n, "all")->y;
	free(v);
	svg_free(&s);

	/* the recording's warning, too wide for one line at 1200 px, and
	 * narrower: every line fits the width at flamegraph.pl's estimate (0.59
	 * of the font size a character); nothing lost, still the warning's style,
	 * and the graph moved down by the extra lines */
	for (int width = 1200; width >= 300; width /= 2) {
		o.width = width;
		o.subtitle = warn;
		o.subtitle_warning = true;
		snprintf(label, sizeof(label), "subtitle_wraps_%d", width);
		svg_draw(&s, label, st, 2, &o);
		CHECK_EQ_INT(s.ret, 0);
		k = subtitle_parse(s.p, lines, 64, &warning);
		CHECK_MSG(k >= 2, "%d px: %zu lines", width, k);
		CHECK(warning);
		CHECK_HAS_STR(s.p, "<text id=\"subtitle\" x=\"");
		joined[0] = '\0';
		for (size_t i = 0; i < k; i++) {
			double w = (double)chars_of(lines[i]) * 12 * 0.59;
			CHECK_MSG(w <= width - 2 * 10.0, "%d px, line %zu is %.0f px: %s", width, i, w, lines[i]);
			CHECK_MSG(lines[i][0] != ' ' && lines[i][strlen(lines[i]) - 1] != ' ', "%s", lines[i]);
			join_line(joined, sizeof(joined), i ? " " : "", lines[i]);
		}
		CHECK_EQ_STR(joined, warn);
		if (width == 1200) /* whole "; " parts where they fit */
			CHECK_EQ_STR(lines[0],
				     "3.0 s at 99 Hz (cpu-clock): 12345 samples, 0 lost, 3 truncated, 1 unwind "
				     "failed, 0 failed stack reads;");
		n = frames_parse(s.p, &v);
		CHECK_MSG(near(FRAME(v, n, "all")->y, root_y + (double)(k - 1) * 12 * 1.25, 0.001),
			  "%d px: %g, %zu lines", width, FRAME(v, n, "all")->y, k);
		free(v);
		svg_free(&s);
	}

	/* a word longer than a line is cut between characters, never inside one;
	 * as many lines as it takes */
	{
		char word[2400];
		size_t len = 0;
		for (int i = 0; i < 1000; i++) {
			memcpy(word + len, i % 2 ? "\xc3\xa9" : "x", i % 2 ? 2 : 1);
			len += i % 2 ? 2 : 1;
		}
		word[len] = '\0';
		o.width = 300;
		o.subtitle = word;
		o.subtitle_warning = false;
		svg_draw(&s, "subtitle_long_word", st, 2, &o);
		k = subtitle_parse(s.p, lines, 64, &warning);
		CHECK_MSG(k > 8, "%zu lines", k);
		CHECK(!warning);
		joined[0] = '\0';
		for (size_t i = 0; i < k; i++) {
			CHECK_MSG(chars_of(lines[i]) * 12 * 0.59 <= 300 - 20, "%s", lines[i]);
			CHECK(((unsigned char)lines[i][0] & 0xc0) != 0x80);
			join_line(joined, sizeof(joined), "", lines[i]);
		}
		CHECK_EQ_STR(joined, word);
		svg_free(&s);
	}
}

static void test_errors(void)
{
	struct fg_stack zero[] = { { "main;a", 0, 0 }, { "main;b", 0, 7 } };
	struct fg_options diff = { .differential = true };
	struct svg s = { 0 };
	char err[64];

	svg_draw(&s, NULL, NULL, 0, NULL);
	CHECK_EQ_INT(s.ret, -1);
	CHECK_EQ_STR(s.err, "no samples");
	CHECK_EQ_INT(s.len, 0);
	svg_free(&s);
	svg_draw(&s, NULL, zero, 2, NULL);
	CHECK_EQ_INT(s.ret, -1);
	CHECK_EQ_STR(s.err, "no samples");
	CHECK_EQ_INT(s.len, 0);
	svg_free(&s);
	svg_draw(&s, NULL, zero, 2, &diff);
	CHECK_EQ_INT(s.ret, -1);
	CHECK_EQ_STR(s.err, "no samples");
	svg_free(&s);
	{
		struct stack_table zt;
		table_of(&zt, zero, 2);
		CHECK_EQ_INT(flamegraph_write(NULL, &zt, NULL, err, sizeof(err)), -1);
		stack_table_free(&zt);
	}
	{
		struct fg_stack big[] = { { "a", UINT64_MAX, 0 }, { "b", 2, 0 } };
		svg_draw(&s, NULL, big, 2, NULL);
		CHECK_EQ_INT(s.ret, -1);
		CHECK_HAS_STR(s.err, "overflow");
		CHECK_EQ_INT(s.len, 0);
		svg_free(&s);
	}
	/* empty frames and stacks: skipped, their samples on the root */
	{
		struct fg_stack odd[] = { { "a;;b;", 2, 0 }, { "", 1, 0 }, { NULL, 1, 0 }, { ";a;b", 1, 0 } };
		struct frame *v;
		size_t n;
		svg_draw(&s, "odd", odd, 4, NULL);
		CHECK_EQ_INT(s.ret, 0);
		n = frames_parse(s.p, &v);
		CHECK_EQ_INT(n, 3);
		CHECK_EQ_U64(FRAME(v, n, "all")->count, 5);
		CHECK_EQ_U64(FRAME(v, n, "b")->count, 3);
		free(v);
		svg_free(&s);
	}
}

/* ---- random stacks: properties, and a figure with --bench -------------------------- */

static uint64_t rnd_state = 42;

static uint64_t rnd(void)
{
	rnd_state = rnd_state * 6364136223846793005ull + 1442695040888963407ull;
	return rnd_state >> 33;
}

/* n distinct stacks of the given depth: shared roots, more variety near the leaves */
static struct fg_stack *random_stacks(size_t n, int depth)
{
	struct fg_stack *st = calloc(n, sizeof(*st));
	for (size_t i = 0; i < n; i++) {
		size_t cap = (size_t)depth * 64 + 32, len = 0;
		char *p = malloc(cap);
		for (int d = 0; d < depth; d++) {
			uint64_t k = d < depth / 5 ? 0 : rnd() % (d < depth / 2 ? 3 : 8);
			len += (size_t)snprintf(p + len, cap - len, "%scom/example/pkg%d/Class%d_%u.method%u_[j]",
						d ? ";" : "", d % 7, d, (unsigned)k, (unsigned)k);
		}
		/* the index keeps every stack distinct */
		snprintf(p + len, cap - len, ";leaf%zu", i);
		st[i] = (struct fg_stack){ p, 1 + rnd() % 100, 0 };
	}
	return st;
}

static void random_free(struct fg_stack *st, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free((char *)st[i].frames);
	free(st);
}

static void test_random(void)
{
	size_t n = 3000;
	struct fg_stack *st = random_stacks(n, 40);
	struct svg a = { 0 }, b = { 0 };
	struct frame *v;
	size_t nf;
	uint64_t total = 0;

	for (size_t i = 0; i < n; i++)
		total += st[i].count;
	svg_draw(&a, "random", st, n, NULL);
	CHECK_EQ_INT(a.ret, 0);
	/* shuffled input: the same graph */
	for (size_t i = n - 1; i > 0; i--) {
		size_t j = rnd() % (i + 1);
		struct fg_stack x = st[i];
		st[i] = st[j], st[j] = x;
	}
	svg_draw(&b, NULL, st, n, NULL);
	CHECK(a.len == b.len && memcmp(a.p, b.p, a.len) == 0);
	nf = frames_parse(a.p, &v);
	CHECK(nf > 100);
	CHECK_EQ_U64(v[0].count, total);
	/* a frame is never wider than the one below it, and lies inside it */
	for (size_t i = 1; i < nf; i++) {
		const struct frame *c = &v[i], *p = NULL;
		for (size_t k = i; k-- > 0;)
			if (near(v[k].y, c->y + 16, 0.001) && v[k].x <= c->x + 0.001 && c->x < v[k].x + v[k].w) {
				p = &v[k];
				break;
			}
		CHECK_MSG(p && c->x + c->w <= p->x + p->w + 0.001 && c->count <= p->count, "frame %zu outside parent",
			  i);
		if (!p)
			break;
	}
	free(v);
	svg_free(&a);
	svg_free(&b);
	random_free(st, n);
}

static double cpu_seconds(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

/* --bench N: N distinct stacks of depth 100, drawn to /dev/null, best of 5 */
static int bench(size_t n)
{
	struct fg_stack *st = random_stacks(n, 99);
	FILE *out = fopen("/dev/null", "w");
	double best_wall = 1e9, best_cpu = 1e9;
	size_t bytes = 0;
	char err[256];
	struct stack_table t;

	for (size_t i = 0; i < n; i++)
		bytes += strlen(st[i].frames);
	table_of(&t, st, n);
	for (int r = 0; r < 5; r++) {
		struct timespec a, b;
		double c0 = cpu_seconds(), wall;
		clock_gettime(CLOCK_MONOTONIC, &a);
		if (flamegraph_write(out, &t, NULL, err, sizeof(err))) {
			fprintf(stderr, "bench: %s\n", err);
			return 1;
		}
		clock_gettime(CLOCK_MONOTONIC, &b);
		wall = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
		if (wall < best_wall)
			best_wall = wall;
		if (cpu_seconds() - c0 < best_cpu)
			best_cpu = cpu_seconds() - c0;
	}
	printf("flamegraph bench: %zu stacks of depth 100 (%.0f MB of folded text): best of 5 %.3f s wall, %.3f s CPU\n",
	       n, (double)bytes / 1e6, best_wall, best_cpu);
	fclose(out);
	stack_table_free(&t);
	random_free(st, n);
	return 0;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--svg-dir") == 0 && i + 1 < argc)
			svg_dir = argv[++i];
		else if (strcmp(argv[i], "--bench") == 0 && i + 1 < argc)
			return bench(strtoul(argv[++i], NULL, 10));
	}
	test_basic();
	test_minwidth();
	test_escape();
	test_bad_bytes();
	test_java_hues();
	test_java_graph();
	test_alloc_lock_graph();
	test_hash_colors();
	test_palettes();
	test_differential();
	test_layouts();
	test_options();
	test_count_scale();
	test_subtitle_wraps();
	test_errors();
	test_random();
	return check_report("flamegraph");
}
