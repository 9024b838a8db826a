/* test_recording.c - unit tests for recording: identical stacks aggregated, totals,
 * recording_sorted in strcmp order, growth to many stacks, stacks that prefix others. */
#include "check.h"
#include "recording.h"

#include <stdlib.h>
#include <string.h>

static int add(struct recording *r, const char *stack, uint64_t count)
{
	return recording_add(r, stack, strlen(stack), count);
}

/* The count of stack in r's sorted list, or -1 when absent. */
static long long count_of(const struct recording *r, const char *stack)
{
	size_t n = 0;
	struct stack_count *s = recording_sorted(r, &n);
	long long found = -1;
	for (size_t i = 0; s && i < n; i++)
		if (strcmp(s[i].stack, stack) == 0)
			found = (long long)s[i].count;
	free(s);
	return found;
}

static void check_sorted_list(const struct recording *r, const char *what)
{
	size_t n = 12345;
	struct stack_count *s = recording_sorted(r, &n);
	uint64_t sum = 0;

	CHECK_MSG(s != NULL, "%s: recording_sorted failed", what);
	if (!s)
		return;
	CHECK_MSG(n == r->nstacks, "%s: %zu sorted, %zu stacks", what, n, r->nstacks);
	for (size_t i = 0; i < n; i++) {
		sum += s[i].count;
		if (i)
			CHECK_MSG(strcmp(s[i - 1].stack, s[i].stack) < 0, "%s: \"%s\" before \"%s\"", what,
				  s[i - 1].stack, s[i].stack);
	}
	CHECK_MSG(sum == r->total, "%s: counts sum to %" PRIu64 ", total %" PRIu64, what, sum, r->total);
	free(s);
}

static void test_basic(void)
{
	struct recording r;

	CHECK_EQ_INT(recording_init(&r), 0);
	CHECK_EQ_INT(r.nstacks, 0);
	CHECK_EQ_U64(r.total, 0);
	size_t n = 99;
	struct stack_count *s = recording_sorted(&r, &n);
	CHECK(s != NULL);
	CHECK_EQ_INT(n, 0);
	free(s);

	CHECK_EQ_INT(add(&r, "java;main;a", 1), 0);
	CHECK_EQ_INT(add(&r, "java;main;b", 2), 0);
	CHECK_EQ_INT(add(&r, "java;main;a", 3), 0);
	CHECK_EQ_INT(add(&r, "java;main;a", 1), 0);
	CHECK_EQ_INT(r.nstacks, 2);
	CHECK_EQ_U64(r.total, 7);
	CHECK_EQ_INT(count_of(&r, "java;main;a"), 5);
	CHECK_EQ_INT(count_of(&r, "java;main;b"), 2);
	CHECK_EQ_INT(count_of(&r, "java;main"), -1);

	/* embedded prefixes are different stacks */
	CHECK_EQ_INT(add(&r, "a;b", 1), 0);
	CHECK_EQ_INT(add(&r, "a;b;c", 10), 0);
	CHECK_EQ_INT(add(&r, "a", 100), 0);
	CHECK_EQ_INT(add(&r, "a;bc", 1000), 0);
	CHECK_EQ_INT(add(&r, "a;b", 1), 0);
	CHECK_EQ_INT(count_of(&r, "a;b"), 2);
	CHECK_EQ_INT(count_of(&r, "a;b;c"), 10);
	CHECK_EQ_INT(count_of(&r, "a"), 100);
	CHECK_EQ_INT(count_of(&r, "a;bc"), 1000);
	CHECK_EQ_INT(r.nstacks, 6);
	CHECK_EQ_U64(r.total, 7 + 1112);

	/* the length, not a NUL, ends the stack: a prefix of a longer text */
	static const char text[] = "x;y;z 42\n";
	CHECK_EQ_INT(recording_add(&r, text, 3, 4), 0);	   /* "x;y" */
	CHECK_EQ_INT(recording_add(&r, text, 5, 5), 0);	   /* "x;y;z" */
	CHECK_EQ_INT(recording_add(&r, "x;y;q", 3, 6), 0); /* "x;y" again */
	CHECK_EQ_INT(count_of(&r, "x;y"), 10);
	CHECK_EQ_INT(count_of(&r, "x;y;z"), 5);
	CHECK_EQ_INT(count_of(&r, "x;y;z 42\n"), -1);

	/* the stack is copied */
	char mutable[] = "m;n";
	CHECK_EQ_INT(add(&r, mutable, 1), 0);
	mutable[0] = 'M';
	CHECK_EQ_INT(count_of(&r, "m;n"), 1);
	CHECK_EQ_INT(count_of(&r, "M;n"), -1);

	/* an empty stack and a zero count are kept as given */
	CHECK_EQ_INT(add(&r, "", 2), 0);
	CHECK_EQ_INT(add(&r, "zero", 0), 0);
	CHECK_EQ_INT(count_of(&r, ""), 2);
	CHECK_EQ_INT(count_of(&r, "zero"), 0);

	/* big counts */
	CHECK_EQ_INT(add(&r, "big", UINT64_C(1) << 40), 0);
	CHECK_EQ_INT(add(&r, "big", UINT64_C(1) << 40), 0);
	CHECK_EQ_INT(count_of(&r, "big"), (long long)(UINT64_C(1) << 41));

	check_sorted_list(&r, "basic");
	recording_free(&r);
	CHECK(r.stacks.stacks.strs == NULL && r.nstacks == 0 && r.total == 0);
	recording_free(&r); /* twice is harmless */
}

static void test_order(void)
{
	static const char *const stacks[] = {
		"b",
		"a;b",
		"A;b",
		"a;b;c",
		"a",
		"a b",
		"a;a",
		"_[j]",
		"[4242] java;main;x_[j]",
		"[4242] java;main",
		"[4243] java",
		"z",
		"\x7f",
		"\xc3\xa9",
		"a;b_[i]",
		"a;b_[j]",
		"0",
		"~",
	};
	size_t k = sizeof(stacks) / sizeof(stacks[0]);
	struct recording r;

	CHECK_EQ_INT(recording_init(&r), 0);
	for (size_t round = 0; round < 3; round++)
		for (size_t i = 0; i < k; i++)
			CHECK_EQ_INT(add(&r, stacks[(i * 7 + round) % k], i + 1), 0);
	CHECK_EQ_INT(r.nstacks, k);
	check_sorted_list(&r, "order");

	size_t n = 0;
	struct stack_count *s = recording_sorted(&r, &n);
	const char *sorted[sizeof(stacks) / sizeof(stacks[0])];
	memcpy(sorted, stacks, sizeof(stacks));
	/* insertion sort by strcmp: the reference order */
	for (size_t i = 1; i < k; i++)
		for (size_t j = i; j > 0 && strcmp(sorted[j - 1], sorted[j]) > 0; j--) {
			const char *t = sorted[j];
			sorted[j] = sorted[j - 1];
			sorted[j - 1] = t;
		}
	for (size_t i = 0; s && i < n && i < k; i++)
		CHECK_MSG(strcmp(s[i].stack, sorted[i]) == 0, "sorted[%zu] is \"%s\", want \"%s\"", i, s[i].stack,
			  sorted[i]);
	/* the sorted array is a copy: freeing it leaves the recording whole */
	free(s);
	check_sorted_list(&r, "order again");
	recording_free(&r);
}

/* Far more stacks than the first table holds: growth keeps every count. */
static void test_growth(void)
{
	enum { N = 50000 };
	struct recording r;
	char stack[128];

	CHECK_EQ_INT(recording_init(&r), 0);
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < N; i++) {
			int len = snprintf(stack, sizeof(stack), "[1] java;main;p/C%d.m_[j];leaf%d", i % 977, i);
			CHECK_MSG(recording_add(&r, stack, (size_t)len, (uint64_t)(i % 5 + 1)) == 0, "add %d", i);
		}
	CHECK_EQ_INT(r.nstacks, N);
	uint64_t want_total = 0;
	for (int i = 0; i < N; i++)
		want_total += 2 * (uint64_t)(i % 5 + 1);
	CHECK_EQ_U64(r.total, want_total);
	CHECK(r.stacks.stacks.nslots >= 2 * (size_t)N); /* the store's hash table, at most half full */
	CHECK((r.stacks.stacks.nslots & (r.stacks.stacks.nslots - 1)) == 0);

	size_t n = 0;
	struct stack_count *s = recording_sorted(&r, &n);
	CHECK(s != NULL);
	CHECK_EQ_INT(n, N);
	int bad = 0;
	for (size_t i = 0; s && i < n && bad < 5; i++) {
		int a, b;
		if (sscanf(s[i].stack, "[1] java;main;p/C%d.m_[j];leaf%d", &a, &b) != 2 || a != b % 977 ||
		    s[i].count != 2 * (uint64_t)(b % 5 + 1) || (i && strcmp(s[i - 1].stack, s[i].stack) >= 0)) {
			CHECK_MSG(0, "sorted[%zu] = \"%s\" %" PRIu64, i, s[i].stack, s[i].count);
			bad++;
		}
	}
	free(s);
	recording_free(&r);
}

/* Off-CPU and wall recordings: a weight (ns) per stack beside the count. */
static void test_weights(void)
{
	struct recording r;
	size_t n = 0;

	CHECK_EQ_INT(recording_init(&r), 0);
	CHECK(!recording_weighted(&r));
	CHECK(strcmp(r.ev->title, "CPU") == 0);
	r.ev = event_kind_named("offcpu");
	CHECK(recording_weighted(&r));
	CHECK(strcmp(r.ev->title, "Off-CPU") == 0);
	CHECK_EQ_INT(recording_add_weighted(&r, "a;sleep", 7, 1, 9000000), 0);
	CHECK_EQ_INT(recording_add_weighted(&r, "a;sleep", 7, 1, 9100000), 0);
	CHECK_EQ_INT(recording_add_weighted(&r, "a;spin", 6, 1, 1000000), 0);
	CHECK_EQ_INT(recording_add(&r, "a;spin", 6, 2), 0); /* no weight */
	CHECK_EQ_INT(recording_add_weighted(&r, "b", 1, 1, UINT64_MAX), 0);
	CHECK_EQ_INT(recording_add_weighted(&r, "b", 1, 1, 5), 0); /* saturates */
	CHECK_EQ_U64(r.total, 7);
	CHECK_EQ_U64(r.total_weight, UINT64_MAX);
	struct stack_count *s = recording_sorted(&r, &n);
	CHECK(s != NULL);
	CHECK_EQ_INT(n, 3);
	if (s && n == 3) {
		CHECK(strcmp(s[0].stack, "a;sleep") == 0);
		CHECK_EQ_U64(s[0].count, 2);
		CHECK_EQ_U64(s[0].weight, 18100000);
		CHECK_EQ_U64(s[1].count, 3);
		CHECK_EQ_U64(s[1].weight, 1000000);
		CHECK_EQ_U64(s[2].weight, UINT64_MAX);
	}
	free(s);
	r.ev = event_kind_named("wall");
	CHECK(strcmp(r.ev->title, "Wall") == 0);
	recording_free(&r);
}

int main(void)
{
	test_weights();
	test_basic();
	test_order();
	test_growth();
	return check_report("test_recording");
}
