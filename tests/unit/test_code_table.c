/* test_code_table.c - unit tests for the start -> size hash of live compiled
 * code: put/take, replace, growth to 100k entries, tombstones, keys 0 and 1. */
#include "check.h"
#include "code_table.h"

#include <stdlib.h>

/* Deterministic code-cache-like addresses: aligned, clustered, distinct. */
static uint64_t addr(size_t i)
{
	return 0x7f3a40000000ULL + (uint64_t)i * 0x40 + ((uint64_t)(i % 7) << 32);
}

static void test_basic(void)
{
	struct code_table t;

	code_table_init(&t);
	CHECK_EQ_U64(code_table_take(&t, 0x1000), 0); /* empty, never allocated */
	CHECK_EQ_INT(code_table_put(&t, 0x1000, 64), 0);
	CHECK_EQ_INT(code_table_put(&t, 0x2000, 128), 0);
	CHECK_EQ_INT(t.live, 2);
	CHECK_EQ_U64(code_table_take(&t, 0x3000), 0); /* unknown */
	CHECK_EQ_U64(code_table_take(&t, 0x1001), 0);
	CHECK_EQ_U64(code_table_take(&t, 0x1000), 64);
	CHECK_EQ_U64(code_table_take(&t, 0x1000), 0); /* taken already */
	CHECK_EQ_INT(t.live, 1);
	CHECK_EQ_U64(code_table_take(&t, 0x2000), 128);
	CHECK_EQ_INT(t.live, 0);
	CHECK_EQ_U64(code_table_take(&t, 0x2000), 0);
	code_table_free(&t);
	CHECK(t.keys == NULL && t.sizes == NULL && t.cap == 0 && t.live == 0);
	/* usable again after free */
	CHECK_EQ_INT(code_table_put(&t, 0xffffffffffffffffULL, 1), 0);
	CHECK_EQ_U64(code_table_take(&t, 0xffffffffffffffffULL), 1);
	code_table_free(&t);
	code_table_free(&t); /* twice is harmless */
}

static void test_replace(void)
{
	struct code_table t;

	code_table_init(&t);
	CHECK_EQ_INT(code_table_put(&t, 0x4000, 10), 0);
	CHECK_EQ_INT(code_table_put(&t, 0x4000, 20), 0);
	CHECK_EQ_INT(t.live, 1);
	CHECK_EQ_U64(code_table_take(&t, 0x4000), 20);
	CHECK_EQ_U64(code_table_take(&t, 0x4000), 0);
	CHECK_EQ_INT(t.live, 0);
	code_table_free(&t);
}

static void test_reserved_keys(void)
{
	struct code_table t;

	code_table_init(&t);
	CHECK_EQ_INT(code_table_put(&t, 0, 99), 0);
	CHECK_EQ_INT(code_table_put(&t, 1, 99), 0);
	CHECK_EQ_INT(t.live, 0);
	CHECK_EQ_U64(code_table_take(&t, 0), 0);
	CHECK_EQ_U64(code_table_take(&t, 1), 0);
	CHECK_EQ_INT(code_table_put(&t, 2, 5), 0); /* 2 is the smallest real key */
	CHECK_EQ_INT(code_table_put(&t, 1, 99), 0);
	CHECK_EQ_INT(code_table_put(&t, 0, 99), 0);
	CHECK_EQ_INT(t.live, 1);
	CHECK_EQ_U64(code_table_take(&t, 1), 0);
	CHECK_EQ_U64(code_table_take(&t, 0), 0);
	CHECK_EQ_U64(code_table_take(&t, 2), 5);
	CHECK_EQ_INT(t.live, 0);
	code_table_free(&t);
}

/* 100k entries through several doublings, then taken back in another order. */
static void test_many(void)
{
	enum { N = 100000 };
	struct code_table t;
	int bad = 0;

	code_table_init(&t);
	for (size_t i = 0; i < N; i++)
		bad |= code_table_put(&t, addr(i), i + 1) != 0;
	CHECK(!bad);
	CHECK_EQ_INT(t.live, N);
	CHECK(t.cap >= (size_t)N);
	/* replace the odd ones */
	for (size_t i = 1; i < N; i += 2)
		bad |= code_table_put(&t, addr(i), 3 * i) != 0;
	CHECK(!bad);
	CHECK_EQ_INT(t.live, N);
	size_t wrong = 0;
	for (size_t k = 0; k < N; k++) {
		size_t i = (k * 7919) % N; /* 7919 is prime, so this visits all */
		uint64_t want = i % 2 ? 3 * i : i + 1;
		wrong += code_table_take(&t, addr(i)) != want;
	}
	CHECK_EQ_INT(wrong, 0);
	CHECK_EQ_INT(t.live, 0);
	for (size_t i = 0; i < N; i += 1000)
		wrong += code_table_take(&t, addr(i)) != 0;
	CHECK_EQ_INT(wrong, 0);
	code_table_free(&t);
}

/* Removing entries leaves tombstones that later lookups probe past and later
 * puts reuse; fill close to the rehash point so probe chains are long. */
static void test_tombstones(void)
{
	enum { N = 500 };
	struct code_table t;
	size_t wrong = 0;

	code_table_init(&t);
	for (size_t i = 0; i < N; i++)
		code_table_put(&t, addr(i), i + 1);
	size_t cap = t.cap, used = t.used; /* the first table: probe chains collide */
	for (size_t i = 0; i < N; i += 2)
		wrong += code_table_take(&t, addr(i)) != i + 1;
	CHECK_EQ_INT(wrong, 0);
	CHECK_EQ_INT(t.live, N / 2);
	/* the survivors are found past the tombstones */
	for (size_t i = 1; i < N; i += 2) {
		code_table_put(&t, addr(i), 2 * i); /* replace, found past tombstones */
		wrong += t.live != N / 2;
	}
	CHECK_EQ_INT(wrong, 0);
	/* putting the removed keys back reuses their tombstones */
	for (size_t i = 0; i < N; i += 2)
		code_table_put(&t, addr(i), 5 * i);
	CHECK_EQ_INT(t.live, N);
	CHECK_EQ_INT(t.cap, cap);
	CHECK_EQ_INT(t.used, used);
	for (size_t i = 0; i < N; i++)
		wrong += code_table_take(&t, addr(i)) != (i % 2 ? 2 * i : 5 * i);
	CHECK_EQ_INT(wrong, 0);

	/* taking and putting the same key over and over does not grow the table */
	for (size_t k = 0; k < 100000; k++) {
		code_table_put(&t, 0x5000, k);
		wrong += code_table_take(&t, 0x5000) != k;
	}
	CHECK_EQ_INT(wrong, 0);
	CHECK_EQ_INT(t.cap, cap);
	CHECK(t.used <= used + 1);
	code_table_free(&t);
}

/*
 * Regression (fixed in jvmagent/code_table.c, grow()): the table grows with the number
 * of keys ever put, not with the number live. A JIT keeps compiling and
 * unloading methods at new addresses; with 16 live entries, 1M put+take pairs
 * of distinct addresses should stay in the first 1024-slot table (a rehash
 * drops the tombstones), but grow() always doubles cap, so it reaches 1M slots
 * (16 MB) and keeps growing for as long as the JVM runs.
 */
static void regression_churn_does_not_grow(void)
{
	enum { LIVE = 16, ROUNDS = 1000000 };
	struct code_table t;
	size_t wrong = 0;

	code_table_init(&t);
	for (size_t i = 0; i < LIVE; i++)
		code_table_put(&t, addr(i), i + 1);
	for (size_t i = LIVE; i < ROUNDS; i++) {
		code_table_put(&t, addr(i), i + 1);
		wrong += code_table_take(&t, addr(i - LIVE)) != i - LIVE + 1;
	}
	CHECK_EQ_INT(wrong, 0);
	CHECK_EQ_INT(t.live, LIVE);
	CHECK_MSG(t.cap <= 4096, "cap %zu slots for %zu live entries after %d distinct puts", t.cap, t.live,
		  (int)ROUNDS);
	code_table_free(&t);
}

int main(void)
{
	test_basic();
	test_replace();
	test_reserved_keys();
	test_many();
	test_tombstones();
	regression_churn_does_not_grow();
	return check_report("code_table");
}
