/* test_grow.c - unit tests for grow.c: the first allocation, doubling to what is
 * needed, contents kept, new elements zeroed, overflow refused with nothing changed. */
#include <stdint.h>
#include <stdlib.h>

#include "check.h"
#include "grow.h"

static void test_doubling(void)
{
	uint32_t *a = NULL;
	size_t cap = 0, none = 0;

	CHECK(ARRAY_GROW(a, cap, none) == 0 && !a && cap == 0);
	CHECK(ARRAY_GROW(a, cap, 1) == 0 && a && cap == ARRAY_GROW_FIRST);
	for (uint32_t i = 0; i < cap; i++)
		a[i] = i * 7;
	uint32_t *was = a;
	CHECK(ARRAY_GROW(a, cap, ARRAY_GROW_FIRST) == 0 && a == was && cap == ARRAY_GROW_FIRST);
	CHECK(ARRAY_GROW(a, cap, ARRAY_GROW_FIRST + 1) == 0 && cap == 2 * ARRAY_GROW_FIRST);
	CHECK(ARRAY_GROW(a, cap, 1000) == 0 && cap == 1024);
	for (uint32_t i = 0; i < ARRAY_GROW_FIRST; i++)
		CHECK_MSG(a[i] == i * 7, "element %u lost", i);
	/* one at a time, as the callers append */
	size_t n = 0;
	uint32_t *b = NULL;
	size_t bcap = 0;
	for (uint32_t i = 0; i < 100000; i++) {
		if (ARRAY_GROW(b, bcap, n + 1) != 0)
			break;
		b[n++] = i;
	}
	CHECK(n == 100000 && bcap == 131072);
	size_t bad = 0;
	for (size_t i = 0; i < n; i++)
		bad += b[i] != i;
	CHECK(bad == 0);
	free(a);
	free(b);
}

static void test_zeroed(void)
{
	uint64_t *a = NULL;
	size_t cap = 0, nonzero = 0;

	CHECK(ARRAY_GROW_ZEROED(a, cap, 5) == 0 && cap == ARRAY_GROW_FIRST);
	for (size_t i = 0; i < cap; i++)
		nonzero += a[i] != 0;
	for (size_t i = 0; i < cap; i++)
		a[i] = i + 1;
	size_t old = cap;
	CHECK(ARRAY_GROW_ZEROED(a, cap, 3 * ARRAY_GROW_FIRST) == 0 && cap == 4 * ARRAY_GROW_FIRST);
	for (size_t i = 0; i < old; i++)
		CHECK(a[i] == i + 1);
	for (size_t i = old; i < cap; i++)
		nonzero += a[i] != 0;
	CHECK(nonzero == 0);
	/* a capacity shared by two arrays: each grown from a copy of it */
	uint64_t *b = NULL;
	size_t c = 0;
	CHECK(ARRAY_GROW_ZEROED(b, c, old) == 0 && c == old);
	free(a);
	free(b);
}

static void test_overflow(void)
{
	struct big {
		char x[4096];
	} *a = NULL;
	size_t cap = 0;

	CHECK(ARRAY_GROW(a, cap, 4) == 0 && cap == ARRAY_GROW_FIRST);
	struct big *was = a;
	/* elements fit a size_t, their bytes do not: refused, nothing changed */
	CHECK(ARRAY_GROW(a, cap, SIZE_MAX / sizeof(*a) + 1) == -1);
	CHECK(a == was && cap == ARRAY_GROW_FIRST);
	/* the count itself cannot double that far */
	CHECK(ARRAY_GROW(a, cap, SIZE_MAX) == -1 && a == was && cap == ARRAY_GROW_FIRST);
	char *s = NULL;
	size_t scap = 0;
	CHECK(ARRAY_GROW(s, scap, SIZE_MAX / 2 + 2) == -1 && !s && scap == 0);
	/* the untyped form refuses an element of no size */
	CHECK(array_grow(&s, &scap, 1, 0) == -1 && !s && scap == 0);
	free(a);
}

int main(void)
{
	test_doubling();
	test_zeroed();
	test_overflow();
	return check_report("grow");
}
