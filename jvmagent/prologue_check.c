/* prologue_check.c - classifies a compiled method's entry code with capstone:
 * HotSpot saves the frame pointer (x86-64: push or store of rbp; aarch64: stp x29, x30)
 * and, with PreserveFramePointer, points it at the saved one (mov rbp, rsp; add/mov x29, sp).
 *
 * capstone is loaded at run time (dlopen), not linked: the agent is copied
 * into JVMs' containers, whose images rarely have it. Without it prologues go
 * unchecked. Only its header is needed to build. */
#include "prologue_check.h"

#include <capstone/capstone.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Enough for the inline-cache check, alignment nops, stack bang and frame setup. */
#define MAX_INSNS 40
/* After the frame pointer is saved, it is set within this many instructions. */
#define FP_WINDOW 4

#define STR_(x) #x
#define STR(x)	STR_(x)
/* the library of the ABI of the header built with (cs_insn's layout) */
#define CAPSTONE_SONAME "libcapstone.so." STR(CS_API_MAJOR)

struct prologue_checker {
	enum prologue_arch arch;
	void *lib;
	unsigned (*version)(int *major, int *minor);
	cs_err (*open)(cs_arch arch, cs_mode mode, csh *handle);
	cs_err (*close)(csh *handle);
	cs_insn *(*malloc)(csh handle);
	void (*free)(cs_insn *insn, size_t count);
	bool (*disasm_iter)(csh handle, const uint8_t **code, size_t *size, uint64_t *address, cs_insn *insn);
	csh handle;
	bool opened;
	cs_insn *insn;
};

static bool load_sym(void *lib, const char *name, void *fn, size_t fn_size)
{
	void *sym = dlsym(lib, name);
	if (!sym)
		return false;
	memcpy(fn, &sym, fn_size); /* ISO C has no object-to-function pointer cast */
	return true;
}

struct prologue_checker *prologue_checker_new(char *err, size_t errlen)
{
#if defined(__aarch64__)
	return prologue_checker_new_arch(PROLOGUE_AARCH64, err, errlen);
#else
	return prologue_checker_new_arch(PROLOGUE_X86_64, err, errlen);
#endif
}

struct prologue_checker *prologue_checker_new_arch(enum prologue_arch arch, char *err, size_t errlen)
{
	struct prologue_checker *pc = calloc(1, sizeof(*pc));
	const char *missing = NULL;
	int major = 0, minor = 0;

	if (!pc) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	pc->lib = dlopen(CAPSTONE_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!pc->lib) {
		const char *e = dlerror();
		snprintf(err, errlen, "%s", e ? e : CAPSTONE_SONAME ": cannot be loaded");
		goto fail;
	}
	if (!load_sym(pc->lib, "cs_version", &pc->version, sizeof(pc->version)))
		missing = "cs_version";
	else if (!load_sym(pc->lib, "cs_open", &pc->open, sizeof(pc->open)))
		missing = "cs_open";
	else if (!load_sym(pc->lib, "cs_close", &pc->close, sizeof(pc->close)))
		missing = "cs_close";
	else if (!load_sym(pc->lib, "cs_malloc", &pc->malloc, sizeof(pc->malloc)))
		missing = "cs_malloc";
	else if (!load_sym(pc->lib, "cs_free", &pc->free, sizeof(pc->free)))
		missing = "cs_free";
	else if (!load_sym(pc->lib, "cs_disasm_iter", &pc->disasm_iter, sizeof(pc->disasm_iter)))
		missing = "cs_disasm_iter";
	if (missing) {
		snprintf(err, errlen, CAPSTONE_SONAME " has no %s", missing);
		goto fail;
	}
	pc->version(&major, &minor);
	if (major != CS_API_MAJOR) {
		snprintf(err, errlen, CAPSTONE_SONAME " is capstone %d.%d, not %d.x", major, minor, CS_API_MAJOR);
		goto fail;
	}
	pc->arch = arch;
	if (arch == PROLOGUE_AARCH64 ? pc->open(CS_ARCH_ARM64, CS_MODE_ARM, &pc->handle) != CS_ERR_OK :
				       pc->open(CS_ARCH_X86, CS_MODE_64, &pc->handle) != CS_ERR_OK) {
		snprintf(err, errlen, "capstone cannot disassemble %s",
			 arch == PROLOGUE_AARCH64 ? "aarch64" : "x86_64");
		goto fail;
	}
	pc->opened = true;
	pc->insn = pc->malloc(pc->handle);
	if (!pc->insn) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	return pc;
fail:
	prologue_checker_free(pc);
	return NULL;
}

void prologue_checker_free(struct prologue_checker *pc)
{
	if (!pc)
		return;
	if (pc->insn)
		pc->free(pc->insn, 1);
	if (pc->opened)
		pc->close(&pc->handle);
	if (pc->lib)
		dlclose(pc->lib);
	free(pc);
}

static int is(const cs_insn *i, const char *mnemonic, const char *ops)
{
	return strcmp(i->mnemonic, mnemonic) == 0 && (!ops || strcmp(i->op_str, ops) == 0);
}

static int starts(const cs_insn *i, const char *mnemonic, const char *ops)
{
	return strcmp(i->mnemonic, mnemonic) == 0 && strncmp(i->op_str, ops, strlen(ops)) == 0;
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

/* aarch64 (MacroAssembler::build_frame): the frame record stored, stp x29, x30,
 * [sp, #N] below a sub sp or stp x29, x30, [sp, #-16]! for a large frame ... */
static int saves_x29(const cs_insn *i)
{
	return starts(i, "stp", "x29, x30, [sp");
}

/* ... then, with PreserveFramePointer, x29 pointed at it: add x29, sp, #N or mov x29, sp */
static int sets_x29(const cs_insn *i)
{
	return is(i, "mov", "x29, sp") || starts(i, "add", "x29, sp, #");
}

/* a call, a jump away or a trap (conditional branches, b.ne to the inline-cache miss, go on) */
static int ends_prologue_a64(const cs_insn *i)
{
	return is(i, "bl", NULL) || is(i, "blr", NULL) || is(i, "br", NULL) || is(i, "b", NULL) || is(i, "ret", NULL) ||
	       is(i, "brk", NULL) || is(i, "hlt", NULL) || is(i, "udf", NULL);
}

enum prologue_kind prologue_check(struct prologue_checker *pc, const uint8_t *code, size_t size, uint64_t addr)
{
	int saved_at = -1;
	if (!pc || !code || size == 0)
		return PROLOGUE_UNKNOWN;
	bool a64 = pc->arch == PROLOGUE_AARCH64;
	for (int n = 0; n < MAX_INSNS && pc->disasm_iter(pc->handle, &code, &size, &addr, pc->insn); n++) {
		const cs_insn *i = pc->insn;
		if (saved_at >= 0 && (a64 ? sets_x29(i) : is(i, "mov", "rbp, rsp")))
			return PROLOGUE_FRAME_POINTER;
		if (saved_at < 0 && (a64 ? saves_x29(i) : saves_rbp(i))) {
			saved_at = n;
			continue;
		}
		if (saved_at >= 0 && n - saved_at >= FP_WINDOW)
			return PROLOGUE_NO_FRAME_POINTER;
		if (a64 ? ends_prologue_a64(i) : ends_prologue(i))
			break;
	}
	return saved_at >= 0 ? PROLOGUE_NO_FRAME_POINTER : PROLOGUE_UNKNOWN;
}
