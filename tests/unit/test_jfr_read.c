/* test_jfr_read.c - unit tests for the JFR reader on recordings built here byte by byte
 * (compressed and fixed-width integers, every string encoding, pools, marks, roots, the
 * event kinds, two chunks) and on a small JDK 17 recording; truncated and corrupt files.
 * With JFLAME_JFR_SEED_DIR set it also writes the built files there (the fuzz seeds). */
#include "check.h"
#include "input_file.h"
#include "jfr_read.h"
#include "stack_table.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a tiny JFR writer ------------------------------------------------------------- */

struct jb {
	uint8_t *p;
	size_t n, cap;
	bool fixed; /* integers fixed-width big-endian (the header's compressed flag clear) */
};

static void put(struct jb *b, const void *s, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 256;
		b->p = realloc(b->p, b->cap);
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
}

static void u8(struct jb *b, uint8_t v)
{
	put(b, &v, 1);
}

static void be_put(struct jb *b, uint64_t v, unsigned n)
{
	for (unsigned i = n; i > 0; i--)
		u8(b, (uint8_t)(v >> (8 * (i - 1))));
}

static void var(struct jb *b, uint64_t v)
{
	for (int i = 0; i < 8 && v >= 0x80; i++, v >>= 7)
		u8(b, (uint8_t)(v | 0x80));
	u8(b, (uint8_t)v);
}

static void I(struct jb *b, uint64_t v)
{
	if (b->fixed)
		be_put(b, v, 4);
	else
		var(b, v);
}

static void L(struct jb *b, uint64_t v)
{
	if (b->fixed)
		be_put(b, v, 8);
	else
		var(b, v);
}

static void utf8(struct jb *b, const char *s)
{
	u8(b, 3);
	I(b, strlen(s));
	put(b, s, strlen(s));
}

/* metadata strings: an index per distinct string */
static const char *mstr[128];
static size_t nmstr;

static uint64_t S(const char *s)
{
	for (size_t i = 0; i < nmstr; i++)
		if (strcmp(mstr[i], s) == 0)
			return i;
	mstr[nmstr] = s;
	return nmstr++;
}

/* An element: name, attributes (key, value pairs), then the count of children written after it. */
static void elem(struct jb *b, const char *name, int nattr, const char *const *attrs, int nchildren)
{
	I(b, S(name));
	I(b, (uint64_t)nattr);
	for (int i = 0; i < nattr; i++) {
		I(b, S(attrs[2 * i]));
		I(b, S(attrs[2 * i + 1]));
	}
	I(b, (uint64_t)nchildren);
}

struct fdesc {
	const char *name, *type;
	bool cpool, array;
};

static void class_elem(struct jb *b, const char *name, const char *id, const struct fdesc *f, int nf)
{
	const char *a[] = { "name", name, "id", id };
	elem(b, "class", 2, a, nf);
	for (int i = 0; i < nf; i++) {
		const char *fa[8] = { "name", f[i].name, "class", f[i].type };
		int n = 2;
		if (f[i].cpool)
			fa[2 * n] = "constantPool", fa[2 * n + 1] = "true", n++;
		if (f[i].array)
			fa[2 * n] = "dimension", fa[2 * n + 1] = "1", n++;
		elem(b, "field", n, fa, 0);
	}
}

/* An event: its size first (5 bytes padded as async-profiler writes it, or 4 fixed). */
static size_t ev_begin(struct jb *b, uint64_t type)
{
	size_t at = b->n;
	if (b->fixed)
		be_put(b, 0, 4);
	else
		put(b, "\x80\x80\x80\x80\x00", 5);
	L(b, type);
	return at;
}

static void ev_end(struct jb *b, size_t at)
{
	uint64_t size = b->n - at;
	for (int i = 0; i < (b->fixed ? 4 : 5); i++)
		b->p[at + i] = b->fixed ? (uint8_t)(size >> (8 * (3 - i))) :
					  (uint8_t)(((size >> (7 * i)) & 0x7f) | (i < 4 ? 0x80 : 0));
}

static void sym(struct jb *b, uint64_t key, const char *s)
{
	L(b, key);
	utf8(b, s);
}

/* The metadata event: the types the reader needs, and the events. */
static void metadata(struct jb *b)
{
	static const struct fdesc thread[] = { { "osName", "23", 0, 0 }, { "javaName", "23", 0, 0 } };
	static const struct fdesc trace[] = { { "truncated", "22", 0, 0 }, { "frames", "32", 0, 1 } };
	static const struct fdesc frame[] = { { "method", "33", 1, 0 },
					      { "lineNumber", "21", 0, 0 },
					      { "type", "36", 1, 0 } };
	static const struct fdesc method[] = { { "type", "34", 1, 0 }, { "name", "35", 1, 0 } };
	static const struct fdesc klass[] = { { "name", "35", 1, 0 }, { "modifiers", "21", 0, 0 } };
	static const struct fdesc symbol[] = { { "string", "23", 0, 0 } };
	static const struct fdesc ftype[] = { { "description", "23", 0, 0 } };
	static const struct fdesc exec[] = { { "startTime", "20", 0, 0 },
					     { "sampledThread", "30", 1, 0 },
					     { "stackTrace", "31", 1, 0 },
					     { "weights", "37", 0, 1 } };
	static const struct fdesc jvm[] = { { "startTime", "20", 0, 0 },
					    { "jvmName", "23", 0, 0 },
					    { "pid", "20", 0, 0 } };
	static const struct fdesc alloc[] = { { "startTime", "20", 0, 0 },
					      { "eventThread", "30", 1, 0 },
					      { "stackTrace", "31", 1, 0 },
					      { "objectClass", "34", 1, 0 },
					      { "weight", "20", 0, 0 } };
	static const struct fdesc lock[] = { { "startTime", "20", 0, 0 },    { "duration", "20", 0, 0 },
					     { "eventThread", "30", 1, 0 },  { "stackTrace", "31", 1, 0 },
					     { "monitorClass", "34", 1, 0 }, { "ratio", "38", 0, 0 } };
	static const struct fdesc pair[] = { { "a", "21", 0, 0 }, { "b", "23", 0, 0 } };
	struct jb body = { .fixed = b->fixed };
	nmstr = 0;
	elem(&body, "root", 0, NULL, 1);
	elem(&body, "metadata", 0, NULL, 19);
	class_elem(&body, "long", "20", NULL, 0);
	class_elem(&body, "int", "21", NULL, 0);
	class_elem(&body, "boolean", "22", NULL, 0);
	class_elem(&body, "java.lang.String", "23", NULL, 0);
	class_elem(&body, "java.lang.Thread", "30", thread, 2);
	class_elem(&body, "jdk.types.StackTrace", "31", trace, 2);
	class_elem(&body, "jdk.types.StackFrame", "32", frame, 3);
	class_elem(&body, "jdk.types.Method", "33", method, 2);
	class_elem(&body, "java.lang.Class", "34", klass, 2);
	class_elem(&body, "jdk.types.Symbol", "35", symbol, 1);
	class_elem(&body, "jdk.types.FrameType", "36", ftype, 1);
	class_elem(&body, "test.Pair", "37", pair, 2); /* an inline struct array in an event */
	class_elem(&body, "double", "38", NULL, 0);
	class_elem(&body, "jdk.ExecutionSample", "100", exec, 4);
	class_elem(&body, "jdk.JVMInformation", "101", jvm, 3);
	class_elem(&body, "jdk.ObjectAllocationSample", "102", alloc, 5);
	class_elem(&body, "jdk.JavaMonitorEnter", "103", lock, 6);
	class_elem(&body, "jdk.NativeMethodSample", "104", exec, 3);
	class_elem(&body, "profiler.WallClockSample", "105",
		   (const struct fdesc[]){ { "startTime", "20", 0, 0 },
					   { "sampledThread", "30", 1, 0 },
					   { "stackTrace", "31", 1, 0 },
					   { "samples", "21", 0, 0 } },
		   4);

	size_t at = ev_begin(b, 0);
	L(b, 0); /* start, duration, metadata id */
	L(b, 0);
	L(b, 1);
	I(b, nmstr);
	for (size_t i = 0; i < nmstr; i++)
		utf8(b, mstr[i]);
	put(b, body.p, body.n);
	ev_end(b, at);
	free(body.p);
}

static void checkpoint(struct jb *b)
{
	size_t at = ev_begin(b, 1);
	L(b, 0);
	L(b, 0);
	L(b, 0);
	u8(b, 0);
	I(b, 7); /* pools */
	/* strings: one the thread's name refers to */
	L(b, 23);
	I(b, 1);
	L(b, 1);
	utf8(b, "pooled");
	L(b, 35); /* symbols, in every encoding */
	I(b, 11);
	sym(b, 1, "pkg.Main");
	sym(b, 2, "main");
	sym(b, 3, "work");
	sym(b, 4, "");
	sym(b, 5, "do_syscall");
	L(b, 6); /* Latin-1 "Ünï" */
	u8(b, 5);
	I(b, 3);
	put(b, "\xdcn\xef", 3);
	L(b, 7); /* UTF-16: "A", U+1F600 as a surrogate pair, a lone low surrogate */
	u8(b, 4);
	I(b, 4);
	static const uint16_t units[] = { 'A', 0xd83d, 0xde00, 0xdc00 };
	for (int i = 0; i < 4; i++) {
		if (b->fixed)
			be_put(b, units[i], 2);
		else
			var(b, units[i]);
	}
	sym(b, 8, "bad\xff;x");
	sym(b, 9, "[B");
	sym(b, 10, "pkg.Main$$Lambda/0x0000000800c03000"); /* a hidden class */
	sym(b, 11, "run");
	L(b, 34); /* classes */
	I(b, 4);
	L(b, 1), L(b, 1), I(b, 1);
	L(b, 2), L(b, 4), I(b, 0);
	L(b, 3), L(b, 9), I(b, 0);
	L(b, 4), L(b, 10), I(b, 0);
	L(b, 33); /* methods */
	I(b, 7);
	L(b, 1), L(b, 1), L(b, 2);
	L(b, 2), L(b, 1), L(b, 3);
	L(b, 3), L(b, 2), L(b, 5);
	L(b, 4), L(b, 1), L(b, 6);
	L(b, 5), L(b, 1), L(b, 7);
	L(b, 6), L(b, 1), L(b, 8);
	L(b, 7), L(b, 4), L(b, 11);
	L(b, 36); /* frame types */
	I(b, 5);
	static const char *const ft[] = { "Interpreted", "JIT compiled", "Inlined", "Kernel", "Native" };
	for (int i = 0; i < 5; i++) {
		L(b, (uint64_t)i + 1);
		utf8(b, ft[i]);
	}
	L(b, 30); /* threads: a Java thread with a ';' in its name, and one with only an OS name from the pool */
	I(b, 2);
	L(b, 1), utf8(b, "os-1"), utf8(b, "worker;1");
	L(b, 2), u8(b, 2), L(b, 1), u8(b, 0);
	L(b, 31); /* stack traces, leaf first */
	I(b, 2);
	L(b, 1), u8(b, 0), I(b, 4);
	L(b, 3), I(b, 0), L(b, 4); /* do_syscall, kernel */
	L(b, 2), I(b, 7), L(b, 2); /* work, JIT */
	L(b, 7), I(b, 1), L(b, 1); /* the hidden class's run, interpreted */
	L(b, 1), I(b, 3), L(b, 1); /* main, interpreted */
	L(b, 2), u8(b, 1), I(b, 3);
	L(b, 4), I(b, 0), L(b, 3); /* Ünï, inlined */
	L(b, 5), I(b, 0), L(b, 5); /* UTF-16, native (C code: there is a Kernel type) */
	L(b, 6), I(b, 0), L(b, 2); /* bad bytes, JIT */
	ev_end(b, at);
}

static void exec_sample(struct jb *b, uint64_t type, uint64_t ticks, uint64_t thread, uint64_t trace)
{
	size_t at = ev_begin(b, type);
	L(b, ticks);
	L(b, thread);
	L(b, trace);
	if (type == 100) { /* two inline pairs */
		I(b, 2);
		I(b, 1), utf8(b, "x");
		I(b, 2), u8(b, 1);
	}
	if (type == 105)
		I(b, 3);
	ev_end(b, at);
}

/* One chunk: header, metadata, pools, events. */
static void chunk(struct jb *b)
{
	size_t c0 = b->n;
	put(b, "FLR\0", 4);
	be_put(b, 2, 2);
	be_put(b, 1, 2);
	be_put(b, 0, 8); /* size, pools, metadata: patched */
	be_put(b, 0, 8);
	be_put(b, 0, 8);
	be_put(b, 1700000000000000000ULL, 8); /* start ns */
	be_put(b, 2000000000ULL, 8);	      /* duration ns */
	be_put(b, 1000, 8);		      /* start ticks */
	be_put(b, 1000000, 8);		      /* ticks a second */
	be_put(b, b->fixed ? 2 : 3, 4);	      /* final chunk, compressed integers */
	size_t meta = b->n - c0;
	metadata(b);
	size_t cp = b->n - c0;
	checkpoint(b);
	exec_sample(b, 100, 501000, 1, 1);
	exec_sample(b, 100, 1001000, 1, 1);
	exec_sample(b, 100, 1501000, 2, 2);
	exec_sample(b, 100, 1601000, 1, 99); /* a stack trace that is not in the pool */
	exec_sample(b, 100, 1701000, 1, 0);  /* none */
	exec_sample(b, 104, 1801000, 1, 1);
	exec_sample(b, 105, 1901000, 2, 1);
	size_t at = ev_begin(b, 101);
	L(b, 1000), utf8(b, "OpenJDK"), L(b, 4242);
	ev_end(b, at);
	at = ev_begin(b, 102);
	L(b, 1100), L(b, 1), L(b, 1), L(b, 3), L(b, 1000);
	ev_end(b, at);
	at = ev_begin(b, 103);
	L(b, 1200), L(b, 2000), L(b, 2), L(b, 1), L(b, 1);
	put(b, "\x3f\xf0\0\0\0\0\0\0", 8);
	ev_end(b, at);
	at = ev_begin(b, 77); /* a type no one reads, skipped by its size */
	put(b, "whatever", 8);
	ev_end(b, at);
	size_t size = b->n - c0;
	for (int i = 0; i < 8; i++) {
		b->p[c0 + 8 + i] = (uint8_t)(size >> (56 - 8 * i));
		b->p[c0 + 16 + i] = (uint8_t)(cp >> (56 - 8 * i));
		b->p[c0 + 24 + i] = (uint8_t)(meta >> (56 - 8 * i));
	}
}

/* ---- checks ------------------------------------------------------------------------ */

static char *folded_text(const struct stack_table *t, bool weights)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	uint32_t *order = stack_table_sorted(t);
	for (size_t i = 0; i < t->stacks.n; i++)
		fprintf(f, "%s %llu\n", t->stacks.strs[order[i]],
			(unsigned long long)(weights ? t->weights[order[i]] : t->counts[order[i]]));
	free(order);
	fclose(f);
	return out;
}

static int read_kind(struct stack_table *t, const struct jb *b, const char *kind, struct jfr_stats *st, char *err,
		     size_t errlen)
{
	stack_table_init(t);
	err[0] = '\0';
	return jfr_read(t, b->p, b->n, "t.jfr", kind, st, err, errlen);
}

static const char cpu_want[] =
	"[4242] java;pooled;[truncated];pkg/Main.bad\\xff:x_[j];A\xf0\x9f\x98\x80\xef\xbf\xbd;pkg/Main.\xc3\x9c"
	"n\xc3\xaf_[i] 1\n"
	"[4242] java;worker:1;pkg/Main.main_[0];pkg/Main$$Lambda.0x0000000800c03000.run_[0];pkg/Main.work_[j];do_syscall_[k] 2\n";

static void test_built(bool fixed)
{
	struct jb b = { .fixed = fixed };
	struct stack_table t;
	struct jfr_stats st;
	char err[512];
	chunk(&b);

	CHECK_EQ_INT(read_kind(&t, &b, NULL, &st, err, sizeof(err)), 0);
	char *text = folded_text(&t, false);
	CHECK_EQ_STR(text, cpu_want);
	free(text);
	CHECK_EQ_U64(st.chunks, 1);
	CHECK_EQ_U64(st.events, 5);
	CHECK_EQ_U64(st.bad_refs, 1);
	CHECK_EQ_U64(st.no_frames, 1);
	CHECK_EQ_U64(st.truncated, 1);
	CHECK_EQ_STR(t.meta.count_type, "samples");
	CHECK(!t.meta.has_weight);
	CHECK(t.meta.time_ns == 1700000000000000000LL);
	CHECK(t.meta.duration_ns == 2000000000LL);
	/* the timeline: seconds since the epoch, the thread's name */
	CHECK_EQ_U64(t.ntimeline, 3);
	if (t.ntimeline == 3) {
		CHECK(t.timeline[0].time > 1700000000.49 && t.timeline[0].time < 1700000000.51);
		CHECK_EQ_STR(t.threads.strs[t.timeline[0].thread], "worker;1");
		CHECK_EQ_STR(t.threads.strs[t.timeline[2].thread], "pooled");
	}
	stack_table_free(&t);

	CHECK_EQ_INT(read_kind(&t, &b, "native", &st, err, sizeof(err)), 0);
	text = folded_text(&t, false);
	CHECK_EQ_STR(
		text,
		"[4242] java;worker:1;pkg/Main.main_[0];pkg/Main$$Lambda.0x0000000800c03000.run_[0];pkg/Main.work_[j];do_syscall_[k] 1\n");
	free(text);
	stack_table_free(&t);

	CHECK_EQ_INT(read_kind(&t, &b, "wall", &st, err, sizeof(err)), 0);
	text = folded_text(&t, false);
	CHECK_EQ_STR(
		text,
		"[4242] java;pooled;pkg/Main.main_[0];pkg/Main$$Lambda.0x0000000800c03000.run_[0];pkg/Main.work_[j];do_syscall_[k] 3\n");
	free(text);
	stack_table_free(&t);

	CHECK_EQ_INT(read_kind(&t, &b, "alloc", &st, err, sizeof(err)), 0);
	text = folded_text(&t, true);
	CHECK_EQ_STR(
		text,
		"[4242] java;worker:1;pkg/Main.main_[0];pkg/Main$$Lambda.0x0000000800c03000.run_[0];pkg/Main.work_[j];do_syscall_[k];byte[]_[a] 1000\n");
	free(text);
	CHECK_EQ_STR(t.meta.count_type, "alloc_samples");
	CHECK_EQ_STR(t.meta.weight_type, "alloc_space");
	CHECK_EQ_STR(t.meta.weight_unit, "bytes");
	stack_table_free(&t);

	/* 2000 ticks at 1 MHz: 2 ms */
	CHECK_EQ_INT(read_kind(&t, &b, "lock", &st, err, sizeof(err)), 0);
	text = folded_text(&t, true);
	CHECK_EQ_STR(
		text,
		"[4242] java;pooled;pkg/Main.main_[0];pkg/Main$$Lambda.0x0000000800c03000.run_[0];pkg/Main.work_[j];do_syscall_[k];pkg/Main_[l] 2000000\n");
	free(text);
	CHECK_EQ_STR(t.meta.weight_type, "delay");
	stack_table_free(&t);

	CHECK_EQ_INT(read_kind(&t, &b, "cycles", &st, err, sizeof(err)), -1);
	CHECK(strstr(err, "t.jfr") && strstr(err, "cpu, wall, alloc, lock or native") && !strchr(err, '\n'));
	stack_table_free(&t);

	/* two chunks: twice the samples */
	size_t one = b.n;
	uint8_t *copy = malloc(one);
	memcpy(copy, b.p, one);
	put(&b, copy, one);
	free(copy);
	CHECK_EQ_INT(read_kind(&t, &b, NULL, &st, err, sizeof(err)), 0);
	CHECK_EQ_U64(st.chunks, 2);
	CHECK_EQ_U64(t.total_count, 6);
	stack_table_free(&t);
	b.n = one;

	const char *dir = getenv("JFLAME_JFR_SEED_DIR");
	if (dir) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/built_%s.jfr", dir, fixed ? "fixed" : "varint");
		FILE *f = fopen(path, "wb");
		if (f) {
			fwrite(b.p, 1, b.n, f);
			fclose(f);
		}
	}

	/* every shorter file is refused with one line; every byte changed is survived */
	for (size_t n = 0; n < b.n; n += (n < 80 ? 1 : 7)) {
		struct jb cut = b;
		cut.n = n;
		CHECK_MSG(read_kind(&t, &cut, NULL, &st, err, sizeof(err)) == -1, "%zu bytes read", n);
		CHECK_MSG(strstr(err, "t.jfr") && !strchr(err, '\n'), "%zu bytes: %s", n, err);
		stack_table_free(&t);
	}
	for (size_t i = 0; i < b.n; i++) {
		uint8_t was = b.p[i];
		for (int k = 0; k < 3; k++) {
			b.p[i] = k == 0 ? (uint8_t)~was : k == 1 ? 0x80 : 0x00;
			if (read_kind(&t, &b, i % 2 ? NULL : "lock", &st, err, sizeof(err)) != 0)
				CHECK_MSG(err[0] && !strchr(err, '\n'), "byte %zu: %s", i, err);
			stack_table_free(&t);
		}
		b.p[i] = was;
	}
	free(b.p);
}

static void test_refused(void)
{
	struct jb b = { 0 };
	struct stack_table t;
	struct jfr_stats st;
	char err[512];
	chunk(&b);

	memcpy(b.p, "PK\3\4", 4);
	CHECK_EQ_INT(read_kind(&t, &b, NULL, &st, err, sizeof(err)), -1);
	CHECK(strstr(err, "t.jfr is not a JFR recording") != NULL);
	stack_table_free(&t);
	memcpy(b.p, "FLR\0\0\1", 6);
	CHECK_EQ_INT(read_kind(&t, &b, NULL, &st, err, sizeof(err)), -1);
	CHECK(strstr(err, "JFR version 1.1") != NULL);
	stack_table_free(&t);
	b.p[5] = 2;
	b.p[67] = 3;
	memset(b.p + 56, 0, 8); /* no ticks a second */
	CHECK_EQ_INT(read_kind(&t, &b, NULL, &st, err, sizeof(err)), -1);
	CHECK(strstr(err, "clock rate") != NULL);
	stack_table_free(&t);
	free(b.p);
}

/* A recording the JDK 17 made (jdk.ExecutionSample and jdk.JVMInformation only; gzip). */
static void test_jdk17(void)
{
	const char *d = getenv("JFLAME_TEST_DATA");
	char path[4096], err[512], *buf = NULL;
	size_t len = 0;
	struct stack_table t;
	struct jfr_stats st;
	snprintf(path, sizeof(path), "%s/convert/jdk17_cpu.jfr.gz", d ? d : "tests/data");
	CHECK_MSG(input_file_read(path, 0, &buf, &len, err, sizeof(err)) == 0, "%s", err);
	if (!buf)
		return;
	stack_table_init(&t);
	CHECK_EQ_INT(jfr_read(&t, buf, len, "jdk17.jfr", NULL, &st, err, sizeof(err)), 0);
	/* jfr print --events jdk.ExecutionSample: 17 samples, all of the hot thread in Workload.spin */
	CHECK_EQ_U64(t.total_count, 17);
	CHECK_EQ_U64(st.bad_refs + st.bad_events + st.no_frames + st.too_long, 0);
	CHECK_EQ_U64(t.ntimeline, 17);
	bool spin = false;
	for (size_t i = 0; i < t.stacks.n; i++) {
		const char *s = t.stacks.strs[i];
		CHECK_MSG(strncmp(s, "[", 1) == 0 && strstr(s, "] java;"), "%s", s);
		if (strstr(s, ";jflame-hot-worker-thread-with-a-long-name;java/lang/Thread.run_[") &&
		    strstr(s, ";jflame/examples/Workload.spin_["))
			spin = true;
	}
	CHECK(spin);
	stack_table_free(&t);
	free(buf);
}

int main(void)
{
	test_built(false);
	test_built(true);
	test_refused();
	test_jdk17();
	return check_report("jfr_read");
}
