/* check.h - tiny assertion macros shared by the unit tests: a failed check
 * prints file:line and the values, and check_report() makes main return 1. */
#ifndef JFLAME_TEST_CHECK_H
#define JFLAME_TEST_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int check_count, check_failed;

#define CHECK_FAIL_(...)                                                \
	do {                                                            \
		check_failed++;                                         \
		fprintf(stderr, "%s:%d: FAILED: ", __FILE__, __LINE__); \
		fprintf(stderr, __VA_ARGS__);                           \
		fputc('\n', stderr);                                    \
	} while (0)

#define CHECK(cond)                                      \
	do {                                             \
		check_count++;                           \
		if (!(cond))                             \
			CHECK_FAIL_("CHECK(%s)", #cond); \
	} while (0)

/* Like CHECK, with a printf-style note (say, which table row). */
#define CHECK_MSG(cond, ...)                             \
	do {                                             \
		check_count++;                           \
		if (!(cond)) {                           \
			CHECK_FAIL_("CHECK(%s)", #cond); \
			fprintf(stderr, "\t");           \
			fprintf(stderr, __VA_ARGS__);    \
			fputc('\n', stderr);             \
		}                                        \
	} while (0)

#define CHECK_EQ_INT(a, b)                                                     \
	do {                                                                   \
		long long a_ = (long long)(a), b_ = (long long)(b);            \
		check_count++;                                                 \
		if (a_ != b_)                                                  \
			CHECK_FAIL_("%s == %s: %lld != %lld", #a, #b, a_, b_); \
	} while (0)

#define CHECK_EQ_U64(a, b)                                                                  \
	do {                                                                                \
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                            \
		check_count++;                                                              \
		if (a_ != b_)                                                               \
			CHECK_FAIL_("%s == %s: %#" PRIx64 " != %#" PRIx64, #a, #b, a_, b_); \
	} while (0)

#define CHECK_EQ_STR(a, b)                                                                                         \
	do {                                                                                                       \
		const char *a_ = (a), *b_ = (b);                                                                   \
		check_count++;                                                                                     \
		if (!a_ || !b_ ? a_ != b_ : strcmp(a_, b_) != 0)                                                   \
			CHECK_FAIL_("%s == %s: \"%s\" != \"%s\"", #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
	} while (0)

/* hay contains needle. */
#define CHECK_HAS_STR(hay, needle)                                                                                 \
	do {                                                                                                       \
		const char *h_ = (hay), *n_ = (needle);                                                            \
		check_count++;                                                                                     \
		if (!h_ || !strstr(h_, n_))                                                                        \
			CHECK_FAIL_("%s contains %s: \"%s\" lacks \"%s\"", #hay, #needle, h_ ? h_ : "(null)", n_); \
	} while (0)

/* 1 when all n bytes at p are c: guard bytes around a buffer left untouched. */
static inline int check_filled(const void *p, size_t n, int c)
{
	for (size_t i = 0; i < n; i++)
		if (((const unsigned char *)p)[i] != (unsigned char)c)
			return 0;
	return 1;
}

/* s with control characters, DEL and backslashes as \xHH, for messages; "NONE"
 * for NULL. Four buffers in turn: up to four in one message. */
static inline const char *check_show(const char *s)
{
	static char buf[4][512];
	static int k;
	char *b = buf[k++ & 3];
	size_t n = 0;

	if (!s)
		return "NONE";
	for (; *s && n + 5 < sizeof(buf[0]); s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == 0x7f || c == '\\')
			n += (size_t)snprintf(b + n, sizeof(buf[0]) - n, "\\x%02x", c);
		else
			b[n++] = (char)c;
	}
	b[n] = '\0';
	return b;
}

/* Prints one count line and gives main's exit status. */
static inline int check_report(const char *name)
{
	printf("%s: %d checks, %d failed\n", name, check_count, check_failed);
	return check_failed ? 1 : 0;
}

#endif
