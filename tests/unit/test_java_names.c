/* test_java_names.c - golden tests for perf map method names: each method
 * description x option string -> expected name, sanitising and truncation. */
#include "check.h"
#include "java_names.h"

#include <stdlib.h>
#include <string.h>

struct name_case {
	struct java_method_desc m;
	const char *opts; /* agent option string */
	const char *want;
};

#define RUN                                                       \
	{                                                         \
		"Lpkg/Class;", "method", "(I)V", "Class.java", 42 \
	}

static const struct name_case cases[] = {
	{ RUN, "", "Lpkg/Class;::method" },
	{ RUN, "dottedclass", "pkg.Class::method" },
	{ RUN, "msig", "Lpkg/Class;::method(I)V" },
	{ RUN, "sourcepos", "Lpkg/Class;::method(Class.java:42)" },
	{ RUN, "dottedclass,msig", "pkg.Class::method(I)V" },
	{ RUN, "dottedclass,sourcepos", "pkg.Class::method(Class.java:42)" },
	{ RUN, "msig,sourcepos", "Lpkg/Class;::method(I)V(Class.java:42)" },
	{ RUN, "dottedclass,msig,sourcepos", "pkg.Class::method(I)V(Class.java:42)" },
	/* options that do not change names */
	{ RUN, "unfold,quiet", "Lpkg/Class;::method" },
	{ RUN, "unfold,quiet,help", "Lpkg/Class;::method" },
	/* deeper packages, nested classes, no package, constructors */
	{ { "Ljava/util/concurrent/ConcurrentHashMap;", "putVal",
	    "(Ljava/lang/Object;Ljava/lang/Object;Z)Ljava/lang/Object;", "ConcurrentHashMap.java", 1011 },
	  "",
	  "Ljava/util/concurrent/ConcurrentHashMap;::putVal" },
	{ { "Ljava/util/concurrent/ConcurrentHashMap;", "putVal",
	    "(Ljava/lang/Object;Ljava/lang/Object;Z)Ljava/lang/Object;", "ConcurrentHashMap.java", 1011 },
	  "dottedclass,msig",
	  "java.util.concurrent.ConcurrentHashMap::putVal(Ljava/lang/Object;Ljava/lang/Object;Z)Ljava/lang/Object;" },
	{ { "Lpkg/Outer$Inner;", "run", "()V", "Outer.java", 7 }, "dottedclass", "pkg.Outer$Inner::run" },
	{ { "LMain;", "main", "([Ljava/lang/String;)V", "Main.java", 3 }, "dottedclass", "Main::main" },
	{ { "LMain;", "main", "([Ljava/lang/String;)V", "Main.java", 3 }, "", "LMain;::main" },
	{ { "Lpkg/Class;", "<init>", "()V", "Class.java", 10 }, "msig", "Lpkg/Class;::<init>()V" },
	{ { "Lpkg/Class;", "lambda$run$0", "()V", NULL, 0 },
	  "dottedclass,msig,sourcepos",
	  "pkg.Class::lambda$run$0()V" },
	/* unknown line or file */
	{ { "Lpkg/Class;", "method", "(I)V", "Class.java", 0 }, "sourcepos", "Lpkg/Class;::method(Class.java)" },
	{ { "Lpkg/Class;", "method", "(I)V", "Class.java", -1 }, "sourcepos", "Lpkg/Class;::method(Class.java)" },
	{ { "Lpkg/Class;", "method", "(I)V", NULL, 42 }, "sourcepos", "Lpkg/Class;::method" },
	{ { "Lpkg/Class;", "method", NULL, "Class.java", 42 }, "msig", "Lpkg/Class;::method" },
	{ { "Lpkg/Class;", "method", NULL, "Class.java", 42 }, "msig,sourcepos", "Lpkg/Class;::method(Class.java:42)" },
	{ { "Lpkg/Class;", "m", "()V", "C.java", 2147483647 }, "sourcepos", "Lpkg/Class;::m(C.java:2147483647)" },
	/* NULL class or method name */
	{ { NULL, "method", "(I)V", "Class.java", 42 }, "", "L?;::method" },
	{ { NULL, "method", "(I)V", "Class.java", 42 }, "dottedclass", "?::method" },
	{ { "Lpkg/Class;", NULL, "(I)V", "Class.java", 42 }, "", "Lpkg/Class;::?" },
	{ { NULL, NULL, NULL, NULL, 0 }, "dottedclass,msig,sourcepos", "?::?" },
	/* characters that would break a map line become '?' */
	{ { "Lpkg/Cl\nass;", "method", "(I)V", "Class.java", 42 }, "", "Lpkg/Cl?ass;::method" },
	{ { "Lpkg/Cl\rass;", "method", "(I)V", "Class.java", 42 }, "dottedclass", "pkg.Cl?ass::method" },
	{ { "Lpkg/Class;", "me\nth\r\nod", "(I)V", "Class.java", 42 }, "", "Lpkg/Class;::me?th??od" },
	{ { "Lpkg/Class;", "method", "(\n)V", "Class.java", 42 }, "msig", "Lpkg/Class;::method(?)V" },
	{ { "Lpkg/Class;", "method", "(I)V", "Cl\nass.java", 42 }, "sourcepos", "Lpkg/Class;::method(Cl?ass.java:42)" },
	/* UTF-8 passes through; a space is kept (perf reads to the end of the line) */
	{ { "Lpkg/Caf\xc3\xa9;", "\xe4\xb8\xad", "()V", NULL, 0 }, "dottedclass", "pkg.Caf\xc3\xa9::\xe4\xb8\xad" },
	{ { "Lpkg/Class;", "a b", NULL, NULL, 0 }, "", "Lpkg/Class;::a b" },
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

static void options(const char *s, struct agent_options *o)
{
	char err[128];
	if (agent_options_parse(s, o, err, sizeof(err)) != 0) {
		fprintf(stderr, "bad test options '%s': %s\n", s, err);
		exit(2);
	}
}

static void test_table(void)
{
	for (size_t i = 0; i < NCASES; i++) {
		struct agent_options o;
		char buf[512];
		options(cases[i].opts, &o);
		size_t n = java_name_append(buf, sizeof(buf), 0, &cases[i].m, &o);
		CHECK_MSG(strcmp(buf, cases[i].want) == 0, "case %zu (%s): '%s', want '%s'", i, cases[i].opts, buf,
			  cases[i].want);
		CHECK_MSG(n == strlen(buf), "case %zu: returned %zu for '%s'", i, n, buf);
	}
}

/* Appends after what the caller already wrote (a map line's "START SIZE "). */
static void test_append_at_pos(void)
{
	struct agent_options o;
	char buf[64] = "7f001000 40 ";
	size_t pos = strlen(buf);

	options("", &o);
	pos = java_name_append(buf, sizeof(buf), pos, &cases[0].m, &o);
	CHECK_EQ_STR(buf, "7f001000 40 Lpkg/Class;::method");
	CHECK_EQ_INT(pos, strlen(buf));
	/* and again: names can be joined by the caller */
	buf[pos++] = '>';
	buf[pos] = '\0';
	options("dottedclass", &o);
	pos = java_name_append(buf, sizeof(buf), pos, &cases[0].m, &o);
	CHECK_EQ_STR(buf, "7f001000 40 Lpkg/Class;::method>pkg.Class::method");
	CHECK_EQ_INT(pos, strlen(buf));
}

/* Every case into every short buffer: a NUL-terminated prefix, nothing written
 * past len (guard bytes on both sides stay intact), the return is its length. */
static void test_truncation(void)
{
	for (size_t i = 0; i < NCASES; i++) {
		struct agent_options o;
		size_t full = strlen(cases[i].want);
		options(cases[i].opts, &o);
		for (size_t len = 1; len <= full + 2; len++) {
			char mem[600];
			char *buf = mem + 8;
			memset(mem, '#', sizeof(mem));
			size_t n = java_name_append(buf, len, 0, &cases[i].m, &o);
			size_t want = full < len - 1 ? full : len - 1;
			CHECK_MSG(memchr(buf, '\0', len) != NULL, "case %zu len %zu: not NUL-terminated", i, len);
			CHECK_MSG(strlen(buf) == want && strncmp(buf, cases[i].want, want) == 0,
				  "case %zu len %zu: '%s' is not the %zu-byte prefix of '%s'", i, len, buf, want,
				  cases[i].want);
			CHECK_MSG(n == want, "case %zu len %zu: returned %zu, want %zu", i, len, n, want);
			CHECK_MSG(check_filled(mem, 8, '#'), "case %zu len %zu: wrote before buf", i, len);
			CHECK_MSG(check_filled(buf + len, sizeof(mem) - 8 - len, '#'),
				  "case %zu len %zu: wrote past len", i, len);
		}
	}
}

/* A full buffer or a zero-length one is left alone, apart from keeping the NUL. */
static void test_full_buffer(void)
{
	struct agent_options o;
	char mem[32];
	size_t n;

	options("msig", &o);
	memset(mem, '#', sizeof(mem));
	n = java_name_append(mem, 0, 0, &cases[0].m, &o);
	CHECK_EQ_INT(n, 0);
	CHECK(mem[0] == '#');

	memset(mem, '#', sizeof(mem));
	memcpy(mem, "abcdefg", 8);
	n = java_name_append(mem, 8, 7, &cases[0].m, &o);
	CHECK_EQ_INT(n, 7);
	CHECK_EQ_STR(mem, "abcdefg");
	CHECK(mem[8] == '#');

	/* pos past the end is clamped, not written through */
	memset(mem, '#', sizeof(mem));
	n = java_name_append(mem, 8, 20, &cases[0].m, &o);
	CHECK(n < 8);
	CHECK(memchr(mem, '\0', 8) != NULL);
	CHECK(check_filled(mem + 8, sizeof(mem) - 8, '#'));
}

/* Class signatures and frames as jflame's folded stacks show them. */
struct class_case {
	const char *sig, *want;
};

static const struct class_case class_cases[] = {
	{ "Ljava/lang/String;", "java/lang/String" },
	{ "[B", "byte[]" },
	{ "[C", "char[]" },
	{ "[Z", "boolean[]" },
	{ "[J", "long[]" },
	{ "[Ljava/lang/Object;", "java/lang/Object[]" },
	{ "[[I", "int[][]" },
	{ "[[[Ljava/util/Map$Entry;", "java/util/Map$Entry[][][]" },
	{ "I", "int" },
	{ "V", "void" },
	{ "LMain;", "Main" },
	{ "Ljava/lang/invoke/LambdaForm$MH.0x0000000800c01000;", "java/lang/invoke/LambdaForm$MH.0x0000000800c01000" },
	/* other shapes: kept whole */
	{ "", "?" },
	{ NULL, "?" },
	{ "[", "[" },
	{ "L;", "L:" },
	{ "Lpkg/Class", "Lpkg/Class" },
	{ "[Q", "[Q" },
	{ "II", "II" },
	{ "java/lang/String", "java/lang/String" },
	/* characters that would break a folded line */
	{ "Lpkg/A;B;", "pkg/A:B" },
	{ "Lpkg/Cl\nass;", "pkg/Cl ass" },
	{ "Lpkg/Cl\rass;", "pkg/Cl ass" },
	{ "Lpkg/Cl\\nass;", "pkg/Cl\\nass" },
	{ "x;y", "x:y" },
};
#define NCLASS (sizeof(class_cases) / sizeof(class_cases[0]))

static void test_class_names(void)
{
	for (size_t i = 0; i < NCLASS; i++) {
		char buf[128];
		size_t n = java_class_name(buf, sizeof(buf), 0, class_cases[i].sig);
		CHECK_MSG(strcmp(buf, class_cases[i].want) == 0, "class case %zu: '%s', want '%s'", i, buf,
			  class_cases[i].want);
		CHECK_MSG(n == strlen(buf), "class case %zu: returned %zu", i, n);
		/* every shorter buffer: a NUL-terminated prefix, nothing past len */
		size_t full = strlen(class_cases[i].want);
		for (size_t len = 0; len <= full + 1; len++) {
			char mem[160];
			memset(mem, '#', sizeof(mem));
			n = java_class_name(len ? mem + 8 : NULL, len, 0, class_cases[i].sig);
			CHECK(check_filled(mem, 8, '#') && check_filled(mem + 8 + len, sizeof(mem) - 8 - len, '#'));
			if (len == 0) {
				CHECK_EQ_INT(n, 0);
				continue;
			}
			size_t want = full < len - 1 ? full : len - 1;
			CHECK_MSG(n == want && strlen(mem + 8) == want &&
					  strncmp(mem + 8, class_cases[i].want, want) == 0,
				  "class case %zu len %zu: '%s'", i, len, mem + 8);
		}
	}
}

static void test_frame_names(void)
{
	char buf[128];
	size_t n = java_frame_name(buf, sizeof(buf), 0, "Ljflame/examples/AllocMix;", "makeBytes");
	CHECK_EQ_STR(buf, "jflame/examples/AllocMix.makeBytes");
	CHECK_EQ_INT(n, strlen(buf));
	java_frame_name(buf, sizeof(buf), 0, "Ljava/lang/String;", "<init>");
	CHECK_EQ_STR(buf, "java/lang/String.<init>");
	java_frame_name(buf, sizeof(buf), 0, "Lpkg/Outer$Inner;", "lambda$run$0");
	CHECK_EQ_STR(buf, "pkg/Outer$Inner.lambda$run$0");
	java_frame_name(buf, sizeof(buf), 0, NULL, NULL);
	CHECK_EQ_STR(buf, "?.?");
	java_frame_name(buf, sizeof(buf), 0, "Lpkg/C;", "a;b\nc\rd");
	CHECK_EQ_STR(buf, "pkg/C.a:b c d"); /* folded_char.h's rule */
	/* appended after what is there; truncated safely */
	strcpy(buf, "x:");
	n = java_frame_name(buf, sizeof(buf), 2, "Lp/C;", "m");
	CHECK_EQ_STR(buf, "x:p/C.m");
	CHECK_EQ_INT(n, 7);
	char small[6];
	n = java_frame_name(small, sizeof(small), 0, "Lpkg/Class;", "method");
	CHECK_EQ_STR(small, "pkg/C");
	CHECK_EQ_INT(n, 5);
	CHECK_EQ_INT(java_frame_name(NULL, 0, 0, "Lp/C;", "m"), 0);
}

int main(void)
{
	test_class_names();
	test_frame_names();
	test_table();
	test_append_at_pos();
	test_truncation();
	test_full_buffer();
	return check_report("java_names");
}
