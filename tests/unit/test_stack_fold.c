/* test_stack_fold.c - unit tests for stack_fold: the golden frame table in
 * tests/data/stack_fold/frames.txt, fold_java_name edge cases and buffer sizes, long names. */
#include "check.h"
#include "stack_fold.h"

#include <stdlib.h>
#include <string.h>

static const char *data_path(const char *name)
{
	static char path[4096 + 256];
	const char *dir = getenv("JFLAME_TEST_DATA");

	snprintf(path, sizeof(path), "%s/stack_fold/%s", dir ? dir : "tests/data", name);
	return path;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' :
	       c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 :
				      -1;
}

/* Decodes \\, \n, \r, \xHH of the table in place. */
static void decode(char *s)
{
	char *w = s;
	while (*s) {
		if (s[0] == '\\' && s[1] == '\\')
			*w++ = '\\', s += 2;
		else if (s[0] == '\\' && s[1] == 'n')
			*w++ = '\n', s += 2;
		else if (s[0] == '\\' && s[1] == 'r')
			*w++ = '\r', s += 2;
		else if (s[0] == '\\' && s[1] == 'x' && hexval(s[2]) >= 0 && hexval(s[3]) >= 0)
			*w++ = (char)(hexval(s[2]) * 16 + hexval(s[3])), s += 4;
		else
			*w++ = *s++;
	}
	*w = '\0';
}

/* JAVA_NOINLINE: a JAVA frame folded with fold_buf.no_inline set. */
static int kind_of(const char *s, enum frame_kind *k, bool *no_inline)
{
	static const struct {
		const char *name;
		enum frame_kind kind;
		bool no_inline;
	} kinds[] = { { "JAVA", FRAME_JAVA, false },	    { "KERNEL", FRAME_KERNEL, false },
		      { "NATIVE", FRAME_NATIVE, false },    { "VMCODE", FRAME_VMCODE, false },
		      { "UNKNOWN", FRAME_UNKNOWN, false },  { "INTERP", FRAME_JAVA_INTERP, false },
		      { "JAVA_NOINLINE", FRAME_JAVA, true } };
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(s, kinds[i].name) == 0) {
			*k = kinds[i].kind;
			*no_inline = kinds[i].no_inline;
			return 0;
		}
	return -1;
}

/* No frame may carry a line break; a buffer's text is as long as its len. */
static void check_buf(const struct fold_buf *b, const char *what)
{
	CHECK_MSG(!b->oom, "%s: oom", what);
	CHECK_MSG(b->p && strlen(b->p) == b->len, "%s: len %zu but text of %zu", what, b->len, b->p ? strlen(b->p) : 0);
	CHECK_MSG(b->p && !strchr(b->p, '\n') && !strchr(b->p, '\r'), "%s: a line break in the folded text", what);
}

static void test_golden(void)
{
	FILE *f = fopen(data_path("frames.txt"), "r");
	char line[8192];
	int lineno = 0, rows = 0;
	struct fold_buf b = { 0 }, root = { 0 };

	CHECK_MSG(f != NULL, "cannot open %s", data_path("frames.txt"));
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *nl = strchr(line, '\n'), *bar, *arrow;
		enum frame_kind kind;

		lineno++;
		if (nl)
			*nl = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		bar = strchr(line, '|');
		arrow = bar ? strstr(bar, " -> ") : NULL;
		if (!bar || !arrow) {
			CHECK_MSG(0, "frames.txt:%d: bad line", lineno);
			continue;
		}
		*bar = '\0';
		*arrow = '\0';
		char *raw = bar + 1, *want = arrow + 4;
		bool no_inline;
		if (kind_of(line, &kind, &no_inline) != 0) {
			CHECK_MSG(0, "frames.txt:%d: unknown kind %s", lineno, line);
			continue;
		}
		decode(raw);
		decode(want);
		struct frame fr = { .addr = 0x1234, .name = raw, .dso = "[test]", .kind = kind };

		fold_reset(&b);
		b.no_inline = root.no_inline = no_inline;
		fold_add_frame(&b, &fr);
		check_buf(&b, "golden");
		CHECK_MSG(b.p && strcmp(b.p, want) == 0, "frames.txt:%d: %s|%s folds to\n\t\t\"%s\", want\n\t\t\"%s\"",
			  lineno, line, raw, b.p ? b.p : "(null)", want);

		/* after other frames: one ';' before it, the rest unchanged */
		fold_reset(&root);
		fold_add(&root, "[4242] java");
		fold_add(&root, "main");
		fold_add_frame(&root, &fr);
		check_buf(&root, "golden after roots");
		CHECK_MSG(root.p && strncmp(root.p, "[4242] java;main;", 17) == 0 && strcmp(root.p + 17, want) == 0,
			  "frames.txt:%d: after roots \"%s\"", lineno, root.p ? root.p : "(null)");
		rows++;
	}
	fclose(f);
	CHECK_MSG(rows >= 50, "only %d rows in frames.txt", rows);
	fold_free(&b);
	fold_free(&root);
	CHECK(b.p == NULL && b.len == 0 && b.cap == 0);
}

static const struct {
	const char *raw, *want;
} java_names[] = {
	{ "", "" },
	{ "L", "L" },
	{ "L;::", "." },
	{ "L;", "L:" },
	{ "L::m", "L::m" },
	{ "Lpkg/Class;::method", "pkg/Class.method" },
	{ "Lpkg/Class;::method(I)V", "pkg/Class.method(I)V" },
	{ "Lpkg/Class;::m(Ljava/lang/String;)V", "pkg/Class.m(Ljava/lang/String:)V" },
	{ "Lpkg/Class;::m(C.java:1)", "pkg/Class.m(C.java:1)" },
	{ "pkg.Class::method", "pkg.Class::method" },
	{ "Interpreter", "Interpreter" },
	{ "no separator at all", "no separator at all" },
	{ "a;b\nc\rd", "a:b c d" },
	{ ";", ":" },
	{ "Lx;::a->Ly;::b", "x.a->Ly:::b" }, /* chains are split by fold_add_frame, not here */
};

static void test_fold_java_name(void)
{
	for (size_t i = 0; i < sizeof(java_names) / sizeof(java_names[0]); i++) {
		char out[256];
		size_t n = fold_java_name(java_names[i].raw, out, sizeof(out));
		CHECK_MSG(strcmp(out, java_names[i].want) == 0, "fold_java_name(\"%s\") = \"%s\", want \"%s\"",
			  java_names[i].raw, out, java_names[i].want);
		CHECK_MSG(n == strlen(out), "fold_java_name(\"%s\") returned %zu for \"%s\"", java_names[i].raw, n,
			  out);
	}
}

/* Every buffer size from 0 up: never a byte past len, always NUL-terminated,
 * a prefix of the whole result, and the length of what was written. */
static void test_sizes(void)
{
	static const char *const raws[] = {
		"", "L;::", "Lpkg/Class;::method", "Ljflame/examples/Workload;::spin(I)V", "plain", "a;b\nc", "Lp;::q;r"
	};
	for (size_t r = 0; r < sizeof(raws) / sizeof(raws[0]); r++) {
		char full[256];
		size_t flen = fold_java_name(raws[r], full, sizeof(full));
		for (size_t len = 0; len <= flen + 3; len++) {
			enum { GUARD = 16 };
			char *buf = malloc(len + GUARD);
			memset(buf, 'G', len + GUARD);
			size_t n = fold_java_name(raws[r], buf, len);
			CHECK_MSG(check_filled(buf + len, GUARD, 'G'), "\"%s\" into %zu bytes: wrote past the end",
				  raws[r], len);
			if (len == 0) {
				(void)n; /* checked once below */
				free(buf);
				continue;
			}
			size_t want = flen < len - 1 ? flen : len - 1;
			CHECK_MSG(memchr(buf, '\0', len) != NULL, "\"%s\" into %zu bytes: not NUL-terminated", raws[r],
				  len);
			CHECK_MSG(strlen(buf) == want && strncmp(buf, full, want) == 0,
				  "\"%s\" into %zu bytes: \"%s\" is not the %zu-byte prefix of \"%s\"", raws[r], len,
				  buf, want, full);
			CHECK_MSG(n == want, "\"%s\" into %zu bytes: returned %zu, wrote %zu", raws[r], len, n, want);
			free(buf);
		}
	}
}

/* Nothing fits in 0 bytes: nothing written, and the length written is 0 (not
 * (size_t)-1, which a caller adding it to a position would wrap around with). */
static void test_size_zero(void)
{
	char buf[4] = { 'G', 'G', 'G', 'G' };
	size_t n = fold_java_name("Lpkg/Class;::method", buf, 0);

	CHECK(check_filled(buf, sizeof(buf), 'G'));
	CHECK_MSG(n == 0, "fold_java_name(\"Lpkg/Class;::method\", buf, 0) returned %zu, want 0", n);
}

static int count_char(const char *s, char c)
{
	int n = 0;
	for (; *s; s++)
		n += *s == c;
	return n;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Names far longer than any buffer inside: cut, still annotated, no overflow. */
static void test_long_names(void)
{
	enum { LONG = 20000 };
	char *raw = malloc(3 * LONG + 64), *p;
	struct fold_buf b = { 0 };
	struct frame fr = { .addr = 1, .dso = "[test]" };

	/* one Java name: "L" + a long class + ";::" + a very long method and signature */
	p = raw;
	*p++ = 'L';
	for (int i = 0; i < 300; i++)
		*p++ = i % 10 == 9 ? '/' : 'c';
	memcpy(p, ";::", 3), p += 3;
	for (int i = 0; i < LONG; i++)
		*p++ = 'm';
	*p = '\0';
	fr.name = raw;
	fr.kind = FRAME_JAVA;
	fold_add_frame(&b, &fr);
	check_buf(&b, "long java");
	CHECK(b.p && ends_with(b.p, "_[j]") && count_char(b.p, ';') == 0);
	CHECK(b.p && b.len < 4200 && b.len > 1000);
	CHECK(b.p && strncmp(b.p, "cccc", 4) == 0 && strstr(b.p, "c/.mmmm"));

	/* a class name longer than any buffer inside: cut, whatever remains */
	p = raw;
	*p++ = 'L';
	for (int i = 0; i < LONG; i++)
		*p++ = i % 10 == 9 ? '/' : 'c';
	memcpy(p, ";::m", 5);
	fold_reset(&b);
	fold_add_frame(&b, &fr);
	check_buf(&b, "long class");
	CHECK(b.p && ends_with(b.p, "_[j]") && count_char(b.p, ';') == 0 && b.len < 4200);

	/* a chain of three long names: three frames, each cut and annotated */
	p = raw;
	for (int part = 0; part < 3; part++) {
		if (part)
			memcpy(p, "->", 2), p += 2;
		memcpy(p, "Lp/C;::", 7), p += 7;
		for (int i = 0; i < LONG / 2; i++)
			*p++ = (char)('a' + part);
	}
	*p = '\0';
	fold_reset(&b);
	fold_add_frame(&b, &fr);
	check_buf(&b, "long chain");
	CHECK_EQ_INT(b.p ? count_char(b.p, ';') : -1, 2);
	CHECK(b.p && ends_with(b.p, "_[i]") && strncmp(b.p, "p/C.aaaa", 8) == 0);
	CHECK(b.p && strstr(b.p, "aaaa_[j];p/C.bbbb") && strstr(b.p, "bbbb_[i];p/C.cccc"));

	/* kernel, native, VM names */
	memset(raw, 'k', 3 * LONG);
	raw[3 * LONG] = '\0';
	static const enum frame_kind kinds[] = { FRAME_KERNEL, FRAME_NATIVE, FRAME_VMCODE, FRAME_UNKNOWN };
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		fr.kind = kinds[k];
		fold_reset(&b);
		fold_add_frame(&b, &fr);
		check_buf(&b, "long other");
		CHECK(b.p && strncmp(b.p, "kkkk", 4) == 0);
		if (kinds[k] == FRAME_KERNEL)
			CHECK(b.p && ends_with(b.p, "kkk_[k]") && b.len < 4200);
		else
			CHECK(b.p && count_char(b.p, ';') == 0);
	}

	/* a long name with ';' and newlines everywhere */
	for (int i = 0; i < 3 * LONG; i++)
		raw[i] = i % 3 == 0 ? ';' : i % 3 == 1 ? '\n' : 'x';
	raw[0] = 'L';
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		fr.kind = kinds[k];
		fold_reset(&b);
		fold_add_frame(&b, &fr);
		check_buf(&b, "long separators");
		CHECK(b.p && count_char(b.p, ';') == 0);
	}
	fr.kind = FRAME_JAVA;
	fold_reset(&b);
	fold_add_frame(&b, &fr);
	check_buf(&b, "long java separators");
	CHECK(b.p && count_char(b.p, ';') == 0 && ends_with(b.p, "_[j]"));

	fold_free(&b);
	free(raw);
}

/* A deep stack: the buffer grows, frames joined by ';', reset keeps the memory. */
static void test_deep(void)
{
	struct fold_buf b = { 0 };
	char want_last[64];

	fold_reset(&b); /* on an empty buffer */
	CHECK_EQ_INT(b.len, 0);
	for (int i = 0; i < 5000; i++) {
		char name[64];
		snprintf(name, sizeof(name), "Lp/C%d;::m", i);
		struct frame fr = { .addr = (uint64_t)i, .name = name, .dso = "[test]", .kind = FRAME_JAVA };
		fold_add_frame(&b, &fr);
	}
	check_buf(&b, "deep");
	CHECK_EQ_INT(b.p ? count_char(b.p, ';') : -1, 4999);
	CHECK(b.p && strncmp(b.p, "p/C0.m_[j];p/C1.m_[j];", 22) == 0);
	snprintf(want_last, sizeof(want_last), ";p/C4999.m_[j]");
	CHECK(b.p && ends_with(b.p, want_last));
	size_t cap = b.cap;
	fold_reset(&b);
	CHECK(b.len == 0 && b.p && b.p[0] == '\0' && b.cap == cap);
	fold_add(&b, "x;y\nz");
	CHECK_EQ_STR(b.p, "x:y z");
	fold_add(&b, "w");
	CHECK_EQ_STR(b.p, "x:y z;w");
	CHECK_EQ_INT(b.len, 7);
	fold_free(&b);
	fold_free(&b); /* twice is harmless */
}

/* With lines, an interpreted frame carries its source file and line after the
 * mark (line 0 when only the file is known); stripping gives the plain fold;
 * a mark inside a name never survives. */
static void test_lines(void)
{
	struct fold_buf b = { .lines = true }, plain = { 0 }, off = { 0 };
	struct frame run = { 0x10, "Ljava/lang/Thread;::run", "[interpreted]", FRAME_JAVA_INTERP, 840, "Thread.java",
			     NULL };
	struct frame spin = { 0x20, "Lp/W;::spin", "[interpreted]", FRAME_JAVA_INTERP, 0, "W.java", NULL };
	struct frame anon = { 0x28, "Lp/W;::anon", "[interpreted]", FRAME_JAVA_INTERP, 7, NULL, NULL };
	struct frame jit = { 0x30, "Lp/W;::a->Lp/W;::b", "/tmp/perf-1.map", FRAME_JAVA, 12, "W.java", NULL };
	struct frame odd = { 0x40, "we\x1fird;x", "libc.so.6", FRAME_NATIVE, 0, NULL, NULL };
	/* named from the JVM's debug info: a line per inline chain member */
	struct frame mem = { 0x50, "Lp/W;::a->Lp/X;::b->Lp/Y;::c", "[unknown]", FRAME_JAVA, 0,
			     NULL, "W.java:10\n:0\nY.java:7" };

	fold_add(&b, "[1] java");
	fold_add_frame(&b, &run);
	fold_add_frame(&b, &spin);
	fold_add_frame(&b, &anon);
	fold_add_frame(&b, &jit);
	fold_add_frame(&b, &odd);
	fold_add_frame(&b, &mem);
	check_buf(&b, "lines");
	CHECK_EQ_STR(b.p, "[1] java;java/lang/Thread.run_[0]\x1fThread.java:840;p/W.spin_[0]\x1fW.java:0;"
			  "p/W.anon_[0]\x1f?:7;p/W.a_[j];p/W.b_[i];we ird:x;p/W.a_[j]\x1fW.java:10;p/X.b_[i]\x1f?:0;"
			  "p/Y.c_[i]\x1fY.java:7");
	CHECK_EQ_U64(b.nlines, 6);
	fold_strip_lines(&plain, b.p, b.len);
	CHECK_EQ_STR(plain.p,
		     "[1] java;java/lang/Thread.run_[0];p/W.spin_[0];p/W.anon_[0];p/W.a_[j];p/W.b_[i];we ird:x;"
		     "p/W.a_[j];p/X.b_[i];p/Y.c_[i]");
	CHECK_EQ_U64(plain.len, strlen(plain.p));
	/* the plain fold is what a fold without lines gives */
	fold_add(&off, "[1] java");
	fold_add_frame(&off, &run);
	fold_add_frame(&off, &spin);
	fold_add_frame(&off, &anon);
	fold_add_frame(&off, &jit);
	fold_add_frame(&off, &odd);
	fold_add_frame(&off, &mem);
	CHECK_EQ_STR(off.p, plain.p);
	CHECK_EQ_U64(off.nlines, 0);
	fold_reset(&b);
	CHECK_EQ_U64(b.nlines, 0);
	/* --no-inline: the compiled method and its own line */
	b.no_inline = true;
	fold_add_frame(&b, &mem);
	CHECK_EQ_STR(b.p, "p/W.a_[j]\x1fW.java:10");
	fold_free(&b);
	fold_free(&plain);
	fold_free(&off);
}

/* A sample's own frames (the agents' rings): the target's text escaped, ';'
 * as in every frame, and plain names appended as fold_add does. */
static void test_add_text(void)
{
	struct fold_buf b = { 0 };
	fold_add_text(&b, "[1] java");
	fold_add_text(&b, "Worker\x1b[31m;x\n\a");
	fold_add_text(&b, "p/C.m;x");
	fold_add_text(&b, "caf\xc3\xa9\xff");
	check_buf(&b, "add_text");
	CHECK_EQ_STR(b.p, "[1] java;Worker\\x1b[31m:x\\x0a\\x07;p/C.m:x;caf\xc3\xa9\\xff");
	CHECK_EQ_U64(b.len, strlen(b.p));
	fold_reset(&b);
	fold_add_text(&b, "\x1b");
	CHECK_EQ_STR(b.p, "\\x1b");
	fold_free(&b);
}

int main(void)
{
	test_golden();
	test_lines();
	test_add_text();
	test_fold_java_name();
	test_sizes();
	test_size_zero();
	test_long_names();
	test_deep();
	return check_report("test_stack_fold");
}
