/* test_u64_map.c - unit tests for u64_map.c: keys 0 and all ones, colliding keys,
 * probes wrapping past the table's end, growth at half full, many keys, clear. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "u64_map.h"

/* the map's hash (murmur3's finalizer), to pick keys for given slots */
static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	return k ^ (k >> 33);
}

/* n keys from from on whose home slot in a table of cap slots is slot */
static void keys_at(uint64_t *out, size_t n, size_t slot, size_t cap, uint64_t from)
{
	for (uint64_t k = from; n; k++)
		if ((mix(k) & (cap - 1)) == slot)
			out[--n] = k;
}

static void test_empty(void)
{
	struct u64_map z = { 0 };
	CHECK(u64_map_find(&z, 0) == U64_MAP_NONE && u64_map_find(&z, 42) == U64_MAP_NONE);
	CHECK(u64_map_add(&z, 0, 7) == 7 && z.cap == U64_MAP_FIRST && z.n == 1);
	CHECK(u64_map_add(&z, 0, 9) == 7 && z.n == 1); /* there: its value, not changed */
	CHECK(u64_map_add(&z, UINT64_MAX, 8) == 8 && u64_map_find(&z, UINT64_MAX) == 8);
	CHECK(u64_map_find(&z, 0) == 7 && u64_map_find(&z, 1) == U64_MAP_NONE);
	u64_map_free(&z);
	CHECK(!z.keys && !z.vals && z.cap == 0 && z.n == 0);
	CHECK(u64_map_find(&z, 0) == U64_MAP_NONE);

	struct u64_map m;
	CHECK(u64_map_init(&m, 0) == 0 && m.cap == U64_MAP_FIRST && m.n == 0);
	u64_map_free(&m);
	CHECK(u64_map_init(&m, 1000) == 0 && m.cap == 2048);
	u64_map_free(&m);
}

static void test_collisions_wrap(void)
{
	struct u64_map m;
	uint64_t last[4], first[3];

	CHECK(u64_map_init(&m, 0) == 0);
	size_t cap = m.cap;
	keys_at(last, 4, cap - 1, cap, 1);
	keys_at(first, 3, 0, cap, 1);
	/* four keys wanting the last slot: three wrap to slots 0, 1, 2 */
	for (uint32_t i = 0; i < 4; i++)
		CHECK(u64_map_add(&m, last[i], 100 + i) == 100 + i);
	/* keys wanting slot 0 probe past the wrapped ones */
	for (uint32_t i = 0; i < 3; i++)
		CHECK(u64_map_add(&m, first[i], 200 + i) == 200 + i);
	CHECK(m.cap == cap && m.n == 7);
	CHECK(m.keys[cap - 1] == last[0] && m.keys[0] == last[1] && m.keys[2] == last[3] && m.keys[3] == first[0]);
	for (uint32_t i = 0; i < 4; i++)
		CHECK(u64_map_find(&m, last[i]) == 100 + i);
	for (uint32_t i = 0; i < 3; i++)
		CHECK(u64_map_find(&m, first[i]) == 200 + i);
	/* a key not there whose probe runs through the whole cluster */
	uint64_t absent;
	keys_at(&absent, 1, cap - 1, cap, last[0] + 1);
	CHECK(u64_map_find(&m, absent) == U64_MAP_NONE);
	/* clear: nothing found, the table kept, keys added again */
	u64_map_clear(&m);
	CHECK(m.n == 0 && m.cap == cap);
	for (uint32_t i = 0; i < 4; i++)
		CHECK(u64_map_find(&m, last[i]) == U64_MAP_NONE);
	CHECK(u64_map_add(&m, last[3], 5) == 5 && u64_map_find(&m, last[3]) == 5);
	u64_map_free(&m);
}

static void test_growth(void)
{
	struct u64_map m = { 0 };
	uint32_t i;

	/* doubled when an add would fill more than half */
	for (i = 0; i < U64_MAP_FIRST / 2; i++)
		u64_map_add(&m, i * 3, i);
	CHECK(m.cap == U64_MAP_FIRST && m.n == U64_MAP_FIRST / 2);
	u64_map_add(&m, 1, 999);
	CHECK(m.cap == 2 * U64_MAP_FIRST && m.n == U64_MAP_FIRST / 2 + 1);
	/* an add of a key there grows nothing */
	struct u64_map f = { 0 };
	for (i = 0; i < U64_MAP_FIRST / 2; i++)
		u64_map_add(&f, i, i);
	CHECK(u64_map_add(&f, 0, 5) == 0 && f.cap == U64_MAP_FIRST);
	u64_map_free(&f);
	u64_map_free(&m);
}

static void test_many(void)
{
	struct u64_map m = { 0 };
	const uint32_t n = 200000;
	size_t wrong = 0;
	uint32_t i;

	/* keys alike in their low bits, their high bits, and sequential */
	for (i = 0; i < n; i++) {
		uint64_t k = i % 3 == 0 ? (uint64_t)i << 40 : i % 3 == 1 ? (uint64_t)i * 4096 : i;
		wrong += u64_map_add(&m, k, i) != i;
	}
	CHECK(wrong == 0 && m.n == n && m.cap >= 2 * (size_t)n);
	for (i = 0; i < n; i++) {
		uint64_t k = i % 3 == 0 ? (uint64_t)i << 40 : i % 3 == 1 ? (uint64_t)i * 4096 : i;
		wrong += u64_map_find(&m, k) != i;
	}
	CHECK(wrong == 0);
	for (i = 1; i < 1000; i++)
		wrong += u64_map_find(&m, ((uint64_t)i << 40) + 1) != U64_MAP_NONE;
	CHECK(wrong == 0);
	u64_map_free(&m);
}

int main(void)
{
	test_empty();
	test_collisions_wrap();
	test_growth();
	test_many();
	return check_report("u64_map");
}
