/* prologue_check.c - classifies a compiled method's entry code with capstone:
 * HotSpot saves rbp (push or store) and, with PreserveFramePointer, sets rbp = rsp. */
#include "prologue_check.h"

#include <capstone/capstone.h>
#include <stdlib.h>
#include <string.h>

/* Enough for the inline-cache check, alignment nops, stack bang and frame setup. */
#define MAX_INSNS 40
/* After rbp is saved, the frame pointer is set within this many instructions. */
#define FP_WINDOW 4

struct prologue_checker {
	csh handle;
	cs_insn *insn;
};

struct prologue_checker *prologue_checker_new(void)
{
	struct prologue_checker *pc = calloc(1, sizeof(*pc));
	if (!pc)
		return NULL;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &pc->handle) != CS_ERR_OK) {
		free(pc);
		return NULL;
	}
	pc->insn = cs_malloc(pc->handle);
	if (!pc->insn) {
		cs_close(&pc->handle);
		free(pc);
		return NULL;
	}
	return pc;
}

void prologue_checker_free(struct prologue_checker *pc)
{
	if (!pc)
		return;
	cs_free(pc->insn, 1);
	cs_close(&pc->handle);
	free(pc);
}

static int is(const cs_insn *i, const char *mnemonic, const char *ops)
{
	return strcmp(i->mnemonic, mnemonic) == 0 && (!ops || strcmp(i->op_str, ops) == 0);
}

/* push rbp, or mov qword ptr [rsp + N], rbp */
static int saves_rbp(const cs_insn *i)
{
	if (is(i, "push", "rbp"))
		return 1;
	if (!is(i, "mov", NULL))
		return 0;
	size_t n = strlen(i->op_str);
	return strncmp(i->op_str, "qword ptr [rsp", 14) == 0 && n > 5 && strcmp(i->op_str + n - 5, ", rbp") == 0;
}

static int ends_prologue(const cs_insn *i)
{
	return is(i, "call", NULL) || is(i, "ret", NULL) || is(i, "jmp", NULL) || is(i, "hlt", NULL) ||
	       is(i, "int3", NULL) || is(i, "ud2", NULL);
}

enum prologue_kind prologue_check(struct prologue_checker *pc, const uint8_t *code, size_t size, uint64_t addr)
{
	int saved_at = -1;
	if (!pc || !code || size == 0)
		return PROLOGUE_UNKNOWN;
	for (int n = 0; n < MAX_INSNS && cs_disasm_iter(pc->handle, &code, &size, &addr, pc->insn); n++) {
		const cs_insn *i = pc->insn;
		if (saved_at >= 0 && is(i, "mov", "rbp, rsp"))
			return PROLOGUE_FRAME_POINTER;
		if (saved_at < 0 && saves_rbp(i)) {
			saved_at = n;
			continue;
		}
		if (saved_at >= 0 && n - saved_at >= FP_WINDOW)
			return PROLOGUE_NO_FRAME_POINTER;
		if (ends_prologue(i))
			break;
	}
	return saved_at >= 0 ? PROLOGUE_NO_FRAME_POINTER : PROLOGUE_UNKNOWN;
}
