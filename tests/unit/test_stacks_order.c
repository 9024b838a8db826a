/* test_stacks_order.c - unit tests for stacks_order, the .stacks output's
 * reorder window: held until the window passes, written in time order (ties
 * in arrival order), flushed at the end; stragglers, the size bound, free. */
#include <stdlib.h>

#include "check.h"
#include "stacks_order.h"

#define MS 1000000ULL

/* An order window writing into a memory stream. */
struct fx {
	struct stacks_order o;
	FILE *f;
	char *buf;
	size_t len;
};

static void fx_open(struct fx *x, uint64_t window_ns)
{
	memset(x, 0, sizeof(*x));
	x->o.window_ns = window_ns;
	x->f = open_memstream(&x->buf, &x->len);
}

/* What was written so far. */
static const char *text(struct fx *x)
{
	fflush(x->f);
	return x->buf ? x->buf : "";
}

/* What was written once all is flushed. */
static const char *flushed(struct fx *x)
{
	stacks_order_flush(&x->o, x->f);
	return text(x);
}

static void fx_close(struct fx *x)
{
	stacks_order_free(&x->o);
	fclose(x->f);
	free(x->buf);
}

/* A sample "<name> <ms>\n" taken at ms. */
static void add(struct fx *x, uint64_t ms, const char *name)
{
	FILE *f = stacks_order_begin(&x->o, x->f);
	CHECK(f != x->f);
	fprintf(f, "%s %" PRIu64 "\n", name, ms);
	stacks_order_end(&x->o, ms * MS, x->f);
}

static void test_held_until_the_window_passes(void)
{
	struct fx x;
	fx_open(&x, 0);
	add(&x, 1000, "a");
	add(&x, 1500, "b");
	CHECK_EQ_STR(text(&x), ""); /* both within 1 s of the newest */
	add(&x, 2000, "c");
	CHECK_EQ_STR(text(&x), "a 1000\n"); /* a is 1 s older than c */
	add(&x, 1200, "d");		    /* late, but inside the window: put in order */
	CHECK_EQ_STR(text(&x), "a 1000\n");
	add(&x, 2600, "e");
	CHECK_EQ_STR(text(&x), "a 1000\nd 1200\nb 1500\n");
	CHECK_EQ_STR(flushed(&x), "a 1000\nd 1200\nb 1500\nc 2000\ne 2600\n");
	CHECK_EQ_INT(x.o.stragglers, 0);
	CHECK_EQ_INT(x.o.n, 0);
	fx_close(&x);
}

static void test_ties_keep_arrival_order(void)
{
	struct fx x;
	fx_open(&x, 0);
	add(&x, 5, "x");
	add(&x, 3, "y");
	add(&x, 5, "z");
	add(&x, 3, "w");
	CHECK_EQ_STR(flushed(&x), "y 3\nw 3\nx 5\nz 5\n");
	fx_close(&x);
}

static void test_a_straggler_is_written_not_lost(void)
{
	struct fx x;
	fx_open(&x, 100 * MS);
	add(&x, 1000, "a");
	add(&x, 1200, "b"); /* a written */
	add(&x, 900, "late");
	CHECK_EQ_STR(text(&x), "a 1000\nlate 900\n");
	CHECK_EQ_INT(x.o.stragglers, 1);
	CHECK_EQ_STR(flushed(&x), "a 1000\nlate 900\nb 1200\n");
	fx_close(&x);
}

/* Samples up to 900 ms late, as per-CPU buffers and the late queue deliver
 * them: every one written once, in time order. */
static void test_jittered_stream_comes_out_sorted(void)
{
	struct fx x;
	enum { N = 20000 };
	fx_open(&x, 0);
	srand(12);
	for (int i = 0; i < N; i++) {
		uint64_t t = 1000 + (uint64_t)i / 4; /* ms: 4 samples a ms */
		uint64_t late = (uint64_t)(rand() % 900);
		add(&x, t > late + 1000 ? t - late : t, "s");
	}
	const char *p = flushed(&x);
	uint64_t prev = 0, n = 0;
	bool sorted = true;
	while (*p) {
		uint64_t ms = strtoull(p + 2, NULL, 10);
		sorted = sorted && ms >= prev;
		prev = ms;
		n++;
		p = strchr(p, '\n') + 1;
	}
	CHECK(sorted);
	CHECK_EQ_INT(n, N);
	CHECK_EQ_INT(x.o.stragglers, 0);
	CHECK_EQ_INT(x.o.lost, 0);
	fx_close(&x);
}

/* More than STACKS_ORDER_MAX samples inside one window: the oldest goes out
 * first, the order holds, nothing is lost. */
static void test_bounded_size(void)
{
	struct fx x;
	fx_open(&x, UINT64_MAX / 2);
	for (uint64_t i = 0; i < STACKS_ORDER_MAX + 10; i++)
		add(&x, i, "s");
	CHECK_EQ_INT(x.o.n, STACKS_ORDER_MAX);
	CHECK(strncmp(text(&x), "s 0\ns 1\n", 8) == 0);
	add(&x, 9, "old"); /* older than all that is held, not than what went: still in order */
	CHECK(strstr(text(&x), "s 9\nold 9\n") != NULL);
	CHECK(strstr(flushed(&x), "s 9\nold 9\ns 10\n") != NULL);
	CHECK_EQ_INT(x.o.stragglers, 0);
	CHECK_EQ_INT(x.o.lost, 0);
	fx_close(&x);
}

/* Freed with samples held and one being composed: nothing leaks (ASan). */
static void test_free_what_is_held(void)
{
	struct fx x;
	fx_open(&x, 0);
	add(&x, 1, "a");
	add(&x, 2, "b");
	FILE *f = stacks_order_begin(&x.o, x.f);
	fputs("c 3\n", f);
	fx_close(&x); /* frees the held and the composed samples */
}

int main(void)
{
	test_held_until_the_window_passes();
	test_ties_keep_arrival_order();
	test_a_straggler_is_written_not_lost();
	test_jittered_stream_comes_out_sorted();
	test_bounded_size();
	test_free_what_is_held();
	return check_report("stacks_order");
}
