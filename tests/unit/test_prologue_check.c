/* test_prologue_check.c - hand-assembled x86-64 method entries (checked with
 * objdump -D -b binary -mi386:x86-64 -M intel) and aarch64 ones (llvm-mc
 * --triple=aarch64 -show-encoding) -> frame pointer or not. */
#include "check.h"
#include "prologue_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Building blocks, as HotSpot emits them (MacroAssembler::verified_entry). */
#define PUSH_RBP       "55"			    /* push rbp */
#define MOV_RBP_RSP    "48 89 e5"		    /* mov rbp, rsp */
#define MOV_RBP_RSP_8B "48 8b ec"		    /* mov rbp, rsp (the other encoding) */
#define SUB_RSP_20     "48 83 ec 20"		    /* sub rsp, 0x20 */
#define SUB_RSP_28     "48 83 ec 28"		    /* sub rsp, 0x28 */
#define BANG	       "89 84 24 00 c0 fe ff"	    /* mov dword ptr [rsp - 0x14000], eax */
#define STORE_RBP      "48 89 6c 24 20"		    /* mov qword ptr [rsp + 0x20], rbp */
#define ADD_RBP_20     "48 83 c5 20"		    /* add rbp, 0x20 */
#define BODY	       "48 89 3c 24 b8 01 00 00 00" /* mov [rsp], rdi; mov eax, 1 */
#define EPILOGUE       "48 83 c4 20 5d c3"	    /* add rsp, 0x20; pop rbp; ret */
#define LOAD_RBP       "48 8b 6c 24 20"		    /* mov rbp, qword ptr [rsp + 0x20] */
#define EPILOGUE_STORE LOAD_RBP " 48 83 c4 28 c3"   /* ...; add rsp, 0x28; ret */
/* inline-cache check: mov r10d, [rsi + 8]; shl r10, 3; cmp rax, r10; jne rel32 */
#define IC_CHECK "44 8b 56 08 49 c1 e2 03 49 3b c2 0f 85 00 01 00 00"
#define NOPS	 "90 0f 1f 40 00 66 90" /* nop; nop dword [rax]; xchg ax, ax */

struct prologue_case {
	const char *name, *hex;
	enum prologue_kind want;
};

static const struct prologue_case cases[] = {
	{ "push+mov", PUSH_RBP " " MOV_RBP_RSP " " SUB_RSP_20, PROLOGUE_FRAME_POINTER },
	{ "push+mov (8b)", PUSH_RBP " " MOV_RBP_RSP_8B " " SUB_RSP_20, PROLOGUE_FRAME_POINTER },
	{ "bang+push+mov", BANG " " PUSH_RBP " " MOV_RBP_RSP " " SUB_RSP_20 " " BODY " " EPILOGUE,
	  PROLOGUE_FRAME_POINTER },
	{ "bang+push, no mov", BANG " " PUSH_RBP " " SUB_RSP_20 " " BODY " " EPILOGUE, PROLOGUE_NO_FRAME_POINTER },
	{ "bang+push, code ends", BANG " " PUSH_RBP " " SUB_RSP_20, PROLOGUE_NO_FRAME_POINTER },
	{ "store+mov+add", SUB_RSP_28 " " STORE_RBP " " MOV_RBP_RSP " " ADD_RBP_20, PROLOGUE_FRAME_POINTER },
	{ "store+mov+add+body", SUB_RSP_28 " " STORE_RBP " " MOV_RBP_RSP " " ADD_RBP_20 " " BODY " " EPILOGUE_STORE,
	  PROLOGUE_FRAME_POINTER },
	{ "store, no mov", SUB_RSP_28 " " STORE_RBP " " BODY " " EPILOGUE_STORE, PROLOGUE_NO_FRAME_POINTER },
	{ "store, code ends", SUB_RSP_28 " " STORE_RBP, PROLOGUE_NO_FRAME_POINTER },
	/* the same after the inline-cache check and alignment nops */
	{ "ic+push+mov", IC_CHECK " " NOPS " " PUSH_RBP " " MOV_RBP_RSP " " SUB_RSP_20, PROLOGUE_FRAME_POINTER },
	{ "ic+bang+push+mov", IC_CHECK " " NOPS " " BANG " " PUSH_RBP " " MOV_RBP_RSP " " SUB_RSP_20 " " BODY,
	  PROLOGUE_FRAME_POINTER },
	{ "ic+bang+push", IC_CHECK " " NOPS " " BANG " " PUSH_RBP " " SUB_RSP_20 " " BODY " " EPILOGUE,
	  PROLOGUE_NO_FRAME_POINTER },
	{ "ic+store+mov", IC_CHECK " " NOPS " " SUB_RSP_28 " " STORE_RBP " " MOV_RBP_RSP " " ADD_RBP_20 " " BODY,
	  PROLOGUE_FRAME_POINTER },
	{ "ic+store", IC_CHECK " " NOPS " " SUB_RSP_28 " " STORE_RBP " " BODY " " EPILOGUE_STORE,
	  PROLOGUE_NO_FRAME_POINTER },
	{ "nop sled+push+mov", "90 90 90 90 90 90 90 90 90 90 90 90 90 90 90 90 " PUSH_RBP " " MOV_RBP_RSP,
	  PROLOGUE_FRAME_POINTER },
	/* no frame found */
	{ "mov rbp,rsp without save", MOV_RBP_RSP " " SUB_RSP_20 " " BODY " c3", PROLOGUE_UNKNOWN },
	{ "leaf without frame", "b8 01 00 00 00 c3", PROLOGUE_UNKNOWN },
	{ "ic check only", IC_CHECK " " NOPS, PROLOGUE_UNKNOWN },
	{ "call before push", "e8 00 00 00 00 " PUSH_RBP " " MOV_RBP_RSP, PROLOGUE_UNKNOWN },
	{ "jmp stub", "e9 00 10 00 00 " PUSH_RBP " " MOV_RBP_RSP, PROLOGUE_UNKNOWN },
	{ "ret", "c3", PROLOGUE_UNKNOWN },
	{ "int3", "cc cc cc cc", PROLOGUE_UNKNOWN },
	{ "ud2", "0f 0b " PUSH_RBP " " MOV_RBP_RSP, PROLOGUE_UNKNOWN },
	/* garbage that does not decode */
	{ "invalid opcode", "06", PROLOGUE_UNKNOWN },
	{ "invalid then push", "06 " PUSH_RBP " " MOV_RBP_RSP, PROLOGUE_UNKNOWN },
	{ "truncated insn", "48 89", PROLOGUE_UNKNOWN },
	{ "truncated bang", "89 84 24 00 c0", PROLOGUE_UNKNOWN },
};
#define NCASES (sizeof(cases) / sizeof(cases[0]))

/* aarch64, as MacroAssembler::build_frame emits them (little-endian words) */
#define A64_SUB_SP_30	 "ff c3 00 d1" /* sub sp, sp, #0x30 */
#define A64_STP_FP_LR_20 "fd 7b 02 a9" /* stp x29, x30, [sp, #0x20] */
#define A64_ADD_FP_20	 "fd 83 00 91" /* add x29, sp, #0x20 */
#define A64_STP_PRE	 "fd 7b bf a9" /* stp x29, x30, [sp, #-0x10]! */
#define A64_MOV_FP_SP	 "fd 03 00 91" /* mov x29, sp */
#define A64_SUB_SP_400	 "ff 03 10 d1" /* sub sp, sp, #0x400 */
#define A64_MOV_X8	 "08 46 82 d2" /* mov x8, #0x1230 */
#define A64_SUB_SP_X8	 "ff 63 28 cb" /* sub sp, sp, x8 */
/* inline-cache check: ldr w8, [x1, #8]; cmp x9, x8; b.ne */
#define A64_IC_CHECK "28 08 40 b9 3f 01 08 eb 01 08 00 54"
#define A64_BANG     "e9 53 40 d1 3f 01 00 f9" /* sub x9, sp, #0x14, lsl #12; str xzr, [x9] */
#define A64_PAC	     "3f 23 03 d5"	       /* paciasp */
#define A64_NOP	     "1f 20 03 d5"
#define A64_BODY     "20 00 80 52 e0 03 00 f9"		   /* mov w0, #1; str x0, [sp] */
#define A64_EPILOGUE "fd 7b 42 a9 ff c3 00 91 c0 03 5f d6" /* ldp x29, x30, [sp, #0x20]; add sp, sp, #0x30; ret */

static const struct prologue_case a64_cases[] = {
	{ "a64 sub+stp+add", A64_SUB_SP_30 " " A64_STP_FP_LR_20 " " A64_ADD_FP_20, PROLOGUE_FRAME_POINTER },
	{ "a64 sub+stp+add+body", A64_SUB_SP_30 " " A64_STP_FP_LR_20 " " A64_ADD_FP_20 " " A64_BODY " " A64_EPILOGUE,
	  PROLOGUE_FRAME_POINTER },
	{ "a64 sub+stp, no add", A64_SUB_SP_30 " " A64_STP_FP_LR_20 " " A64_BODY " " A64_EPILOGUE,
	  PROLOGUE_NO_FRAME_POINTER },
	{ "a64 sub+stp, code ends", A64_SUB_SP_30 " " A64_STP_FP_LR_20, PROLOGUE_NO_FRAME_POINTER },
	/* a large frame: the record pushed first, then sp lowered */
	{ "a64 stp!+mov+sub", A64_STP_PRE " " A64_MOV_FP_SP " " A64_SUB_SP_400, PROLOGUE_FRAME_POINTER },
	{ "a64 stp!+mov+mov+sub", A64_STP_PRE " " A64_MOV_FP_SP " " A64_MOV_X8 " " A64_SUB_SP_X8,
	  PROLOGUE_FRAME_POINTER },
	{ "a64 stp!, no mov", A64_STP_PRE " " A64_SUB_SP_400 " " A64_BODY " " A64_EPILOGUE, PROLOGUE_NO_FRAME_POINTER },
	/* after the inline-cache check (its b.ne goes on), the stack bang, return-address signing */
	{ "a64 ic+bang+pac+sub+stp+add",
	  A64_IC_CHECK " " A64_NOP " " A64_BANG " " A64_PAC " " A64_SUB_SP_30 " " A64_STP_FP_LR_20 " " A64_ADD_FP_20,
	  PROLOGUE_FRAME_POINTER },
	{ "a64 ic+bang+sub+stp", A64_IC_CHECK " " A64_BANG " " A64_SUB_SP_30 " " A64_STP_FP_LR_20 " " A64_BODY,
	  PROLOGUE_NO_FRAME_POINTER },
	/* no frame found */
	{ "a64 add x29 without save", A64_ADD_FP_20 " " A64_BODY " c0 03 5f d6", PROLOGUE_UNKNOWN },
	{ "a64 leaf without frame", A64_BODY " c0 03 5f d6", PROLOGUE_UNKNOWN },
	{ "a64 bl before stp", "10 00 00 94 " A64_STP_PRE " " A64_MOV_FP_SP, PROLOGUE_UNKNOWN },
	{ "a64 b stub", "20 00 00 14 " A64_STP_PRE " " A64_MOV_FP_SP, PROLOGUE_UNKNOWN },
	{ "a64 blr", "00 01 3f d6 " A64_STP_PRE " " A64_MOV_FP_SP, PROLOGUE_UNKNOWN },
	{ "a64 brk", "00 7d 20 d4 " A64_STP_PRE " " A64_MOV_FP_SP, PROLOGUE_UNKNOWN },
	{ "a64 udf (does not decode)", "00 00 00 00 " A64_STP_PRE " " A64_MOV_FP_SP, PROLOGUE_UNKNOWN },
	{ "a64 truncated word", "fd 7b bf", PROLOGUE_UNKNOWN },
	/* x86-64's frame is not aarch64's */
	{ "a64 x86 push+mov", PUSH_RBP " " MOV_RBP_RSP " " SUB_RSP_20, PROLOGUE_UNKNOWN },
};
#define NA64 (sizeof(a64_cases) / sizeof(a64_cases[0]))

/* "55 48 89 e5" -> bytes; returns the count. */
static size_t unhex(const char *hex, uint8_t *out, size_t max)
{
	size_t n = 0;
	while (*hex && n < max) {
		if (*hex == ' ') {
			hex++;
			continue;
		}
		char two[3] = { hex[0], hex[1], '\0' };
		out[n++] = (uint8_t)strtoul(two, NULL, 16);
		hex += 2;
	}
	return n;
}

static const char *kind(enum prologue_kind k)
{
	return k == PROLOGUE_FRAME_POINTER    ? "FRAME_POINTER" :
	       k == PROLOGUE_NO_FRAME_POINTER ? "NO_FRAME_POINTER" :
	       k == PROLOGUE_UNKNOWN	      ? "UNKNOWN" :
						"?";
}

static void test_table(struct prologue_checker *pc, const struct prologue_case *cases, size_t ncases)
{
	/* twice, so one call's state cannot leak into the next */
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < ncases; i++) {
			uint8_t code[256];
			size_t n = unhex(cases[i].hex, code, sizeof(code));
			/* exact-size heap copy: ASan catches a read past the end */
			uint8_t *heap = malloc(n);
			memcpy(heap, code, n);
			enum prologue_kind k = prologue_check(pc, heap, n, 0x7f12340000a0ULL + i * 0x100);
			CHECK_MSG(k == cases[i].want, "%s: %s, want %s", cases[i].name, kind(k), kind(cases[i].want));
			free(heap);
		}
	}
}

/* Only size bytes are looked at: a frame past them is not seen. */
static void test_size_limits(struct prologue_checker *pc)
{
	uint8_t code[64];
	size_t n = unhex(BANG " " PUSH_RBP " " MOV_RBP_RSP, code, sizeof(code));

	CHECK_EQ_INT(prologue_check(pc, code, n, 0x1000), PROLOGUE_FRAME_POINTER);
	CHECK_EQ_INT(prologue_check(pc, code, 7, 0x1000), PROLOGUE_UNKNOWN);	      /* the bang only */
	CHECK_EQ_INT(prologue_check(pc, code, 8, 0x1000), PROLOGUE_NO_FRAME_POINTER); /* + push rbp */
	CHECK_EQ_INT(prologue_check(pc, code, 0, 0x1000), PROLOGUE_UNKNOWN);
	CHECK_EQ_INT(prologue_check(pc, NULL, 0, 0x1000), PROLOGUE_UNKNOWN);
	CHECK_EQ_INT(prologue_check(pc, NULL, 16, 0x1000), PROLOGUE_UNKNOWN);
	CHECK_EQ_INT(prologue_check(NULL, code, n, 0x1000), PROLOGUE_UNKNOWN);
}

/* Garbage never crashes and decodes the same each time. */
static void test_garbage(struct prologue_checker *pc)
{
	uint32_t x = 2463534242u;
	int bad = 0;

	for (int round = 0; round < 2000; round++) {
		uint8_t code[64];
		size_t n = 1 + round % 64;
		for (size_t i = 0; i < n; i++) {
			x ^= x << 13, x ^= x >> 17, x ^= x << 5;
			code[i] = (uint8_t)x;
		}
		enum prologue_kind a = prologue_check(pc, code, n, 0x4000);
		enum prologue_kind b = prologue_check(pc, code, n, 0x4000);
		bad += a != b ||
		       (a != PROLOGUE_FRAME_POINTER && a != PROLOGUE_NO_FRAME_POINTER && a != PROLOGUE_UNKNOWN);
	}
	CHECK_EQ_INT(bad, 0);
	uint8_t ff[16];
	memset(ff, 0xff, sizeof(ff));
	CHECK_EQ_INT(prologue_check(pc, ff, sizeof(ff), 0x4000), PROLOGUE_UNKNOWN);
	uint8_t zeros[16] = { 0 }; /* add [rax], al ... */
	CHECK_EQ_INT(prologue_check(pc, zeros, sizeof(zeros), 0x4000), PROLOGUE_UNKNOWN);
}

int main(void)
{
	char err[256] = "";
	struct prologue_checker *pc = prologue_checker_new(err, sizeof(err));

	CHECK(pc != NULL);
	if (!pc)
		fprintf(stderr, "prologue_checker_new: %s\n", err);
	if (!pc)
		return check_report("prologue_check");
#if defined(__aarch64__)
	test_table(pc, a64_cases, NA64);
	prologue_checker_free(pc);
	pc = prologue_checker_new_arch(PROLOGUE_X86_64, err, sizeof(err));
	CHECK(pc != NULL);
	if (!pc)
		return check_report("prologue_check");
#endif
	/* the x86-64 checks, whichever machine runs them */
	test_table(pc, cases, NCASES);
	test_size_limits(pc);
	test_garbage(pc);
	prologue_checker_free(pc);
	prologue_checker_free(NULL);
	/* and aarch64's code, read on any machine */
	struct prologue_checker *a64 = prologue_checker_new_arch(PROLOGUE_AARCH64, err, sizeof(err));
	CHECK(a64 != NULL);
	if (a64) {
		test_table(a64, a64_cases, NA64);
		test_garbage(a64);
		prologue_checker_free(a64);
	}
	return check_report("prologue_check");
}
