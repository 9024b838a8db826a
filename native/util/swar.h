/* swar.h - byte-parallel tests on eight bytes in a 64-bit word, for the text
 * scanners' hot loops (perf script frames, folded stacks). */
#ifndef JFLAME_SWAR_H
#define JFLAME_SWAR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SWAR_ONES 0x0101010101010101ull
#define SWAR_LOW7 0x7f7f7f7f7f7f7f7full

/* eight copies of byte c */
static inline uint64_t swar_rep(unsigned char c)
{
	return SWAR_ONES * c;
}

/* 0x80 in each byte of w that equals the byte of rep (exact: no false
 * positives next to a match, so the result can be used to edit bytes) */
static inline uint64_t swar_eq(uint64_t w, uint64_t rep)
{
	uint64_t x = w ^ rep;
	return ~(((x & SWAR_LOW7) + SWAR_LOW7) | x | SWAR_LOW7);
}

static inline uint64_t swar_load(const void *p)
{
	uint64_t w;
	memcpy(&w, p, 8);
	return w;
}

/* a[0..n) == b[0..n), eight bytes a step, never reading outside either */
static inline int swar_same(const char *a, const char *b, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8)
		if (swar_load(a + i) != swar_load(b + i))
			return 0;
	if (n >= 8)
		return swar_load(a + n - 8) == swar_load(b + n - 8);
	for (; i < n; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

#endif
