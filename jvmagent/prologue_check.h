/* prologue_check.h - does a compiled method's code set up a frame pointer?
 * Disassembles its entry with capstone (libcapstone.so.4, loaded at run time)
 * and looks for `mov rbp, rsp` (aarch64: `add x29, sp, #N` or `mov x29, sp`). */
#ifndef JFLAME_PROLOGUE_CHECK_H
#define JFLAME_PROLOGUE_CHECK_H

#include <stddef.h>
#include <stdint.h>

enum prologue_kind {
	PROLOGUE_FRAME_POINTER = 0, /* push rbp (or a store of rbp) then mov rbp, rsp; aarch64 alike */
	PROLOGUE_NO_FRAME_POINTER,  /* a frame without rbp set up */
	PROLOGUE_UNKNOWN,	    /* could not decode or no frame found */
};

enum prologue_arch {
	PROLOGUE_X86_64,
	PROLOGUE_AARCH64,
};

struct prologue_checker;

/* For the architecture the agent runs on. NULL if capstone cannot be loaded
 * or opened, with why in err (dlerror's words: "libcapstone.so.4: cannot open
 * shared object file: ..."). */
struct prologue_checker *prologue_checker_new(char *err, size_t errlen);
/* For code of the given architecture, whichever the agent runs on (tests). */
struct prologue_checker *prologue_checker_new_arch(enum prologue_arch arch, char *err, size_t errlen);
void prologue_checker_free(struct prologue_checker *pc);

/* Classifies the code at [code, code+size) loaded at address addr. */
enum prologue_kind prologue_check(struct prologue_checker *pc, const uint8_t *code, size_t size, uint64_t addr);

#endif
