/* test_stack_cache.c - folded stacks kept by raw stack: a hit only for the same
 * process, generation, walk and bytes; texts copied; starting over when full. */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "stack_cache.h"

static struct stack_cache_key key(uint32_t pid, uint64_t gen, uint64_t head, const void *a, size_t alen, const void *b,
				  size_t blen)
{
	struct stack_cache_key k = { pid, gen, head, { a, b }, { alen, blen }, 0 };
	stack_cache_hash(&k);
	return k;
}

static void test_hits(void)
{
	struct stack_cache *c = stack_cache_new(1 << 20);
	uint64_t kpcs[3] = { 0xffffffff81000010ULL, 0xffffffff81000020ULL, 0xffffffff81000030ULL };
	uint64_t upcs[4] = { 0x401000, 0x402000, 0x403000, 0x404000 };
	char text[] = ";main;work;compute";
	struct stack_cache_value v = { text, strlen(text), NULL, 0, 1, 0 };
	struct stack_cache_key k = key(42, 7, 1, kpcs, sizeof(kpcs), upcs, sizeof(upcs));

	CHECK(c != NULL);
	if (!c)
		return;
	CHECK(stack_cache_get(c, &k) == NULL);
	CHECK_EQ_INT(stack_cache_put(c, &k, &v), 0);
	memset(text, 'x', sizeof(text) - 1); /* the cache holds its own copy */
	const struct stack_cache_value *hit = stack_cache_get(c, &k);
	CHECK(hit != NULL);
	if (hit) {
		CHECK_EQ_STR(hit->text, ";main;work;compute");
		CHECK_EQ_INT(hit->len, 18);
		CHECK(hit->plain == NULL);
		CHECK_EQ_INT(hit->flags, 1);
	}
	/* the same bytes split differently, another frame, process, generation or walk: misses */
	struct stack_cache_key other[] = {
		key(42, 7, 1, kpcs, 2 * sizeof(uint64_t), (const char *)kpcs + 16, 8), /* not the same bytes after */
		key(42, 7, 1, kpcs, sizeof(kpcs), upcs, 3 * sizeof(uint64_t)),
		key(43, 7, 1, kpcs, sizeof(kpcs), upcs, sizeof(upcs)),
		key(42, 8, 1, kpcs, sizeof(kpcs), upcs, sizeof(upcs)),
		key(42, 7, 2, kpcs, sizeof(kpcs), upcs, sizeof(upcs)),
	};
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		CHECK_MSG(stack_cache_get(c, &other[i]) == NULL, "key %zu hit the kept stack", i);
	upcs[2] = 0x403001;
	struct stack_cache_key changed = key(42, 7, 1, kpcs, sizeof(kpcs), upcs, sizeof(upcs));
	CHECK(stack_cache_get(c, &changed) == NULL);
	upcs[2] = 0x403000;
	/* a key equal in bytes but given from other memory hits */
	uint64_t copy[4];
	memcpy(copy, upcs, sizeof(copy));
	struct stack_cache_key same = key(42, 7, 1, kpcs, sizeof(kpcs), copy, sizeof(copy));
	CHECK(stack_cache_get(c, &same) != NULL);

	/* with lines: both texts */
	char lines[] = ";main\x1fMain.java:3;work";
	struct stack_cache_value lv = { lines, strlen(lines), ";main;work", 10, 0, 2 };
	struct stack_cache_key lk = key(42, 7, 1, NULL, 0, upcs, 8);
	CHECK_EQ_INT(stack_cache_put(c, &lk, &lv), 0);
	hit = stack_cache_get(c, &lk);
	CHECK(hit != NULL && hit->plain != NULL);
	if (hit && hit->plain) {
		CHECK_EQ_STR(hit->text, lines);
		CHECK_EQ_STR(hit->plain, ";main;work");
		CHECK_EQ_INT(hit->stack_errors, 2);
	}
	struct stack_cache_stats st;
	stack_cache_stats(c, &st);
	CHECK_EQ_INT(st.entries, 2);
	CHECK_EQ_INT(st.hits, 3);
	CHECK_EQ_INT(st.misses, 7);
	stack_cache_free(c);
}

/* Full: it starts over; an entry larger than the whole cache is not kept. */
static void test_full(void)
{
	struct stack_cache *c = stack_cache_new(64 * 1024);
	char text[1000];
	memset(text, 'a', sizeof(text));
	struct stack_cache_value v = { text, sizeof(text), NULL, 0, 0, 0 };
	uint64_t pcs[2000];
	for (size_t i = 0; i < 2000; i++)
		pcs[i] = i;
	CHECK(c != NULL);
	if (!c)
		return;
	for (uint64_t i = 0; i < 2000; i++) {
		struct stack_cache_key k = key(1, 1, 0, &pcs[i], 8, NULL, 0);
		CHECK_EQ_INT(stack_cache_put(c, &k, &v), 0);
		CHECK(stack_cache_get(c, &k) != NULL);
	}
	struct stack_cache_stats st;
	stack_cache_stats(c, &st);
	CHECK(st.flushes > 0);
	CHECK(st.bytes <= 64 * 1024);
	CHECK(st.entries > 0 && st.entries < 2000);
	struct stack_cache_key first = key(1, 1, 0, &pcs[0], 8, NULL, 0);
	CHECK(stack_cache_get(c, &first) == NULL);
	struct stack_cache_key last = key(1, 1, 0, &pcs[1999], 8, NULL, 0);
	CHECK(stack_cache_get(c, &last) != NULL);
	stack_cache_free(c);
	c = stack_cache_new(4096);
	CHECK(c != NULL);
	struct stack_cache_key huge = key(1, 1, 0, pcs, sizeof(pcs), NULL, 0);
	CHECK_EQ_INT(stack_cache_put(c, &huge, &v), -1);
	CHECK(stack_cache_get(c, &huge) == NULL);
	stack_cache_free(c);
	stack_cache_free(NULL);
}

int main(void)
{
	test_hits();
	test_full();
	return check_report("test_stack_cache");
}
