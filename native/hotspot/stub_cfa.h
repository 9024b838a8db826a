/* stub_cfa.h - where the caller's frame is at each instruction of a HotSpot
 * stub that records no frame size, worked out from its x86-64 machine code. */
#ifndef JFLAME_STUB_CFA_H
#define JFLAME_STUB_CFA_H

#include <stddef.h>
#include <stdint.h>

/* The canonical frame address (CFA): the caller's stack pointer once the
 * stub has returned; the return address is the word below it. */
enum stub_cfa_base {
	STUB_CFA_UNKNOWN = 0, /* not worked out: the walker's heuristics apply */
	STUB_CFA_SP,	      /* CFA = rsp + off */
	STUB_CFA_FP,	      /* CFA = rbp + off (a frame pointer set up by the stub) */
	STUB_CFA_SP_DEREF,    /* CFA = *(rsp + off) + off2 (rsp aligned, the old one saved on the stack) */
};

/* Where the caller's rbp is. */
enum stub_cfa_fp {
	STUB_FP_SAME = 0, /* still in rbp */
	STUB_FP_SAVED,	  /* on the stack at CFA - fp_off */
	STUB_FP_LOST,	  /* overwritten and not saved (the caller's frame pointer is not known) */
};

/* From offset `at` of the stub (an instruction's start) up to the next row's. */
struct stub_cfa_row {
	uint32_t at;
	uint8_t base; /* enum stub_cfa_base */
	uint8_t fp;   /* enum stub_cfa_fp */
	int32_t off, off2, fp_off;
};

/* What an analysis found, for the rows and for diagnostics. */
struct stub_cfa_stats {
	size_t insns;	  /* instructions reached from the entry */
	size_t unknown;	  /* of them, without a CFA */
	size_t conflicts; /* times paths into an instruction disagreed (what they agree on is kept) */
	size_t bytes_unreached;
};

struct stub_cfa;

/* A capstone handle for x86-64 with details on; NULL with a line in err. */
struct stub_cfa *stub_cfa_new(char *err, size_t errlen);
void stub_cfa_free(struct stub_cfa *sc);

/* Works out code's rows (len bytes, loaded at addr, entered at offset 0 with
 * the return address on top of the stack): *rows (malloc'ed, the caller frees)
 * and *nrows, consecutive rows with the same rule merged. 0, or -1 when out of
 * memory. Code not reached from the entry has STUB_CFA_UNKNOWN rows. */
int stub_cfa_analyze(struct stub_cfa *sc, const uint8_t *code, size_t len, uint64_t addr, struct stub_cfa_row **rows,
		     size_t *nrows, struct stub_cfa_stats *stats);

/* The row for offset at (the last one at or before it), or NULL. */
const struct stub_cfa_row *stub_cfa_find(const struct stub_cfa_row *rows, size_t nrows, uint32_t at);

/* "rsp+8 fp=same" and the like (tests, hotspot_probe). */
void stub_cfa_row_format(const struct stub_cfa_row *r, char *out, size_t len);

#endif
