/* fuzz_stub_cfa.c - libFuzzer target for stub_cfa_analyze: the bytes as a
 * stub's machine code; rows in order from offset 0, every offset finds one. */
/* module: native/hotspot/stub_cfa.c native/util/grow.c */
#include "stub_cfa.h"

#include <stdio.h>
#include <stdlib.h>

static __attribute__((noreturn)) void fail(const char *what, size_t at)
{
	fprintf(stderr, "fuzz_stub_cfa: %s (at %zu)\n", what, at);
	abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct stub_cfa *sc;
	char err[256];
	struct stub_cfa_row *rows = NULL;
	struct stub_cfa_stats st;
	size_t n = 0;
	if (!sc && !(sc = stub_cfa_new(err, sizeof(err))))
		fail(err, 0);
	if (stub_cfa_analyze(sc, data, size, 0x7f0000000000ULL, &rows, &n, &st) != 0)
		return 0; /* out of memory */
	if (n == 0 || rows[0].at != 0)
		fail("no row at offset 0", 0);
	for (size_t i = 1; i < n; i++)
		if (rows[i].at <= rows[i - 1].at || rows[i].at >= size)
			fail("rows out of order", i);
	for (size_t i = 0; i < n; i++)
		if (rows[i].base > STUB_CFA_SP_DEREF || rows[i].fp > STUB_FP_LOST)
			fail("a rule out of range", i);
	for (size_t at = 0; at < size; at++)
		if (!stub_cfa_find(rows, n, (uint32_t)at))
			fail("an offset without a row", at);
	if (st.unknown > st.insns || st.insns > size || st.bytes_unreached > size)
		fail("stats out of range", 0);
	free(rows);
	return 0;
}
