/* stub_cfa.c - where the caller's frame is at each instruction of a HotSpot
 * stub that records no frame size, worked out from its x86-64 machine code. */
#include "stub_cfa.h"

#include <capstone/capstone.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"

#define STUB_CFA_MAX_BYTES (1u << 20) /* longer code is left unknown */

struct stub_cfa {
	csh cs;
	cs_insn *insn;
};

/* What is known before an instruction: rsp and rbp against the CFA, a
 * register or stack slot holding an old rsp, where the caller's rbp is. */
struct state {
	bool reached, sp_known, fpf, rbp_ok, copy, slot;
	uint8_t fp; /* enum stub_cfa_fp of the saved copy: SAVED or not */
	int8_t copy_reg;
	int32_t sp;		/* CFA - rsp */
	int32_t fpd;		/* fpf: CFA - rbp */
	int32_t fp_off;		/* fp == STUB_FP_SAVED: the caller's rbp at CFA - fp_off */
	int32_t copy_d;		/* copy: copy_reg = CFA - copy_d */
	int32_t slot_x, slot_d; /* slot: *(rsp + slot_x) = CFA - slot_d */
};

struct stub_cfa *stub_cfa_new(char *err, size_t errlen)
{
	struct stub_cfa *sc = calloc(1, sizeof(*sc));
	cs_err e;
	if (!sc) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if ((e = cs_open(CS_ARCH_X86, CS_MODE_64, &sc->cs)) != CS_ERR_OK ||
	    (e = cs_option(sc->cs, CS_OPT_DETAIL, CS_OPT_ON)) != CS_ERR_OK) {
		snprintf(err, errlen, "capstone: %s", cs_strerror(e));
		if (sc->cs)
			cs_close(&sc->cs);
		free(sc);
		return NULL;
	}
	sc->insn = cs_malloc(sc->cs);
	if (!sc->insn) {
		snprintf(err, errlen, "out of memory");
		cs_close(&sc->cs);
		free(sc);
		return NULL;
	}
	return sc;
}

void stub_cfa_free(struct stub_cfa *sc)
{
	if (!sc)
		return;
	cs_free(sc->insn, 1);
	cs_close(&sc->cs);
	free(sc);
}

/* The general register a capstone register is part of (0 rax ... 15 r15), or -1. */
static int gpr(unsigned r)
{
	static const unsigned fam[][4] = {
		{ X86_REG_RAX, X86_REG_EAX, X86_REG_AX, X86_REG_AL },
		{ X86_REG_RCX, X86_REG_ECX, X86_REG_CX, X86_REG_CL },
		{ X86_REG_RDX, X86_REG_EDX, X86_REG_DX, X86_REG_DL },
		{ X86_REG_RBX, X86_REG_EBX, X86_REG_BX, X86_REG_BL },
		{ X86_REG_RSP, X86_REG_ESP, X86_REG_SP, X86_REG_SPL },
		{ X86_REG_RBP, X86_REG_EBP, X86_REG_BP, X86_REG_BPL },
		{ X86_REG_RSI, X86_REG_ESI, X86_REG_SI, X86_REG_SIL },
		{ X86_REG_RDI, X86_REG_EDI, X86_REG_DI, X86_REG_DIL },
		{ X86_REG_R8, X86_REG_R8D, X86_REG_R8W, X86_REG_R8B },
		{ X86_REG_R9, X86_REG_R9D, X86_REG_R9W, X86_REG_R9B },
		{ X86_REG_R10, X86_REG_R10D, X86_REG_R10W, X86_REG_R10B },
		{ X86_REG_R11, X86_REG_R11D, X86_REG_R11W, X86_REG_R11B },
		{ X86_REG_R12, X86_REG_R12D, X86_REG_R12W, X86_REG_R12B },
		{ X86_REG_R13, X86_REG_R13D, X86_REG_R13W, X86_REG_R13B },
		{ X86_REG_R14, X86_REG_R14D, X86_REG_R14W, X86_REG_R14B },
		{ X86_REG_R15, X86_REG_R15D, X86_REG_R15W, X86_REG_R15B },
	};
	if (r == X86_REG_AH)
		return 0;
	if (r == X86_REG_CH)
		return 1;
	if (r == X86_REG_DH)
		return 2;
	if (r == X86_REG_BH)
		return 3;
	for (int i = 0; i < 16; i++)
		for (int k = 0; k < 4; k++)
			if (fam[i][k] == r)
				return i;
	return -1;
}

#define GPR_RSP 4
#define GPR_RBP 5

static bool op_reg(const cs_x86_op *o, int g)
{
	return o->type == X86_OP_REG && gpr(o->reg) == g;
}

/* [rsp + disp] or [rbp + disp], no index: disp in *d. */
static bool op_mem_on(const cs_x86_op *o, int base, int64_t *d)
{
	if (o->type != X86_OP_MEM || o->mem.index != X86_REG_INVALID || gpr(o->mem.base) != base ||
	    o->mem.segment != X86_REG_INVALID)
		return false;
	*d = o->mem.disp;
	return true;
}

static void sp_unknown(struct state *s)
{
	s->sp_known = false;
}

/* rsp moved by delta bytes (a push: -8): the saved-rsp slot moves with it,
 * a saved rbp freed by the move is given back (rbp unchanged since). */
static void sp_move(struct state *s, int64_t delta)
{
	if (s->slot)
		s->slot_x -= (int32_t)delta;
	if (!s->sp_known)
		return;
	s->sp -= (int32_t)delta;
	if (s->fp == STUB_FP_SAVED && s->sp < s->fp_off) {
		s->fp = s->rbp_ok ? STUB_FP_SAME : STUB_FP_LOST;
		if (!s->rbp_ok)
			s->fp_off = 0;
	}
}

/* mov rsp, rbp (and leave's first half): rsp is known where rbp is a frame pointer. */
static void sp_from_fp(struct state *s)
{
	s->sp = s->fpd;
	s->sp_known = s->fpf;
	s->slot = false;
}

/* rbp written with something other than a known value. */
static void rbp_clobbered(struct state *s)
{
	s->fpf = false;
	s->rbp_ok = false;
	if (s->fp != STUB_FP_SAVED)
		s->fp = STUB_FP_LOST;
}

static void reg_written(struct state *s, int g)
{
	if (g < 0)
		return;
	if (s->copy && s->copy_reg == g)
		s->copy = false;
	if (g == GPR_RSP) {
		sp_unknown(s);
		s->slot = false;
	}
	if (g == GPR_RBP)
		rbp_clobbered(s);
}

static void do_push(struct state *s, const cs_x86_op *o)
{
	sp_move(s, -8);
	if (o && op_reg(o, GPR_RBP) && s->sp_known && s->rbp_ok && s->fp == STUB_FP_SAME) {
		s->fp = STUB_FP_SAVED;
		s->fp_off = s->sp;
	}
}

static void do_pop(struct state *s, const cs_x86_op *o)
{
	int g = o && o->type == X86_OP_REG ? gpr(o->reg) : -1;
	/* the caller's rbp popped back into rbp */
	bool restores = g == GPR_RBP && s->sp_known && s->fp == STUB_FP_SAVED && s->fp_off == s->sp;
	sp_move(s, 8);
	if (g == GPR_RBP) {
		rbp_clobbered(s);
		if (restores) {
			s->fp = STUB_FP_SAME;
			s->rbp_ok = true;
		}
	} else if (g >= 0) {
		reg_written(s, g);
	}
}

/* The state after one instruction; false when the path ends (ret, jmp, ud2). */
static bool step(const cs_insn *in, struct state *s, csh cs)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *o0 = x->op_count > 0 ? &x->operands[0] : NULL, *o1 = x->op_count > 1 ? &x->operands[1] : NULL;
	int64_t d;
	switch (in->id) {
	case X86_INS_PUSH:
		do_push(s, o0);
		return true;
	case X86_INS_PUSHFQ:
		sp_move(s, -8);
		return true;
	case X86_INS_POP:
		do_pop(s, o0);
		return true;
	case X86_INS_POPFQ:
		sp_move(s, 8);
		return true;
	case X86_INS_SUB:
	case X86_INS_ADD:
		if (o0 && o1 && op_reg(o0, GPR_RSP) && o1->type == X86_OP_IMM) {
			sp_move(s, in->id == X86_INS_ADD ? o1->imm : -o1->imm);
			return true;
		}
		break;
	case X86_INS_AND:
		if (o0 && op_reg(o0, GPR_RSP)) { /* aligned: rsp no longer known against the CFA */
			sp_unknown(s);
			s->slot = false;
			return true;
		}
		break;
	case X86_INS_LEA:
		if (o0 && o1 && op_reg(o0, GPR_RSP)) {
			if (op_mem_on(o1, GPR_RSP, &d)) {
				sp_move(s, d);
				return true;
			}
			if (op_mem_on(o1, GPR_RBP, &d) && s->fpf) {
				s->sp = s->fpd - (int32_t)d;
				s->sp_known = true;
				s->slot = false;
				return true;
			}
		}
		break;
	case X86_INS_MOV:
		if (!o0 || !o1)
			break;
		if (op_reg(o0, GPR_RBP) && op_reg(o1, GPR_RSP) && o0->size == 8) {
			bool known = s->sp_known;
			int32_t sp = s->sp;
			rbp_clobbered(s);
			if (known) {
				s->fpf = true;
				s->fpd = sp;
			}
			return true;
		}
		if (op_reg(o0, GPR_RSP) && op_reg(o1, GPR_RBP) && o0->size == 8) {
			sp_from_fp(s);
			return true;
		}
		if (o0->type == X86_OP_REG && op_reg(o1, GPR_RSP) && o0->size == 8) { /* an old rsp kept */
			int g = gpr(o0->reg);
			reg_written(s, g);
			if (s->sp_known && g >= 0) {
				s->copy = true;
				s->copy_reg = (int8_t)g;
				s->copy_d = s->sp;
			}
			return true;
		}
		if (op_reg(o0, GPR_RSP) && o1->type == X86_OP_REG) {
			bool copy = s->copy && gpr(o1->reg) == s->copy_reg;
			s->sp = s->copy_d;
			s->sp_known = copy;
			s->slot = false;
			return true;
		}
		if (op_mem_on(o0, GPR_RSP, &d) && o1->type == X86_OP_REG && s->copy && gpr(o1->reg) == s->copy_reg) {
			s->slot = true;
			s->slot_x = (int32_t)d;
			s->slot_d = s->copy_d;
			return true;
		}
		if (op_reg(o0, GPR_RSP) && op_mem_on(o1, GPR_RSP, &d)) {
			bool slot = s->slot && s->slot_x == d;
			s->sp = s->slot_d;
			s->sp_known = slot;
			s->slot = false;
			return true;
		}
		break;
	case X86_INS_LEAVE:
		sp_from_fp(s);
		do_pop(s, &(cs_x86_op){ .type = X86_OP_REG, .reg = X86_REG_RBP, .size = 8 });
		return true;
	case X86_INS_ENTER:
		do_push(s, &(cs_x86_op){ .type = X86_OP_REG, .reg = X86_REG_RBP, .size = 8 });
		rbp_clobbered(s);
		if (s->sp_known) {
			s->fpf = true;
			s->fpd = s->sp;
		}
		sp_move(s, o0 && o0->type == X86_OP_IMM ? -o0->imm : 0);
		return true;
	case X86_INS_CALL: {
		/* the callee returns with rsp and the callee-saved registers as they were */
		static const int8_t clobbered[] = { 0, 1, 2, 6, 7, 8, 9, 10, 11 };
		for (size_t i = 0; i < sizeof(clobbered); i++)
			if (s->copy && s->copy_reg == clobbered[i])
				s->copy = false;
		return true;
	}
	case X86_INS_RET:
	case X86_INS_JMP:
	case X86_INS_UD2:
	case X86_INS_HLT:
	case X86_INS_INT3:
		return false;
	default:
		break;
	}
	/* anything else: what it writes */
	cs_regs rr, rw;
	uint8_t nr = 0, nw = 0;
	if (cs_regs_access(cs, in, rr, &nr, rw, &nw) != CS_ERR_OK) {
		sp_unknown(s);
		s->slot = false;
		rbp_clobbered(s);
		s->copy = false;
		return true;
	}
	for (uint8_t i = 0; i < nw; i++)
		reg_written(s, gpr(rw[i]));
	return true;
}

static bool same_state(const struct state *a, const struct state *b)
{
	return a->sp_known == b->sp_known && (!a->sp_known || a->sp == b->sp) && a->fpf == b->fpf &&
	       (!a->fpf || a->fpd == b->fpd) && a->fp == b->fp && (a->fp != STUB_FP_SAVED || a->fp_off == b->fp_off) &&
	       a->rbp_ok == b->rbp_ok && a->slot == b->slot &&
	       (!a->slot || (a->slot_x == b->slot_x && a->slot_d == b->slot_d));
}

static struct stub_cfa_row row_of(const struct state *s, uint32_t at)
{
	struct stub_cfa_row r = { .at = at };
	if (!s->reached)
		return r;
	if (s->sp_known) {
		r.base = STUB_CFA_SP;
		r.off = s->sp;
	} else if (s->fpf) {
		r.base = STUB_CFA_FP;
		r.off = s->fpd;
	} else if (s->slot) {
		r.base = STUB_CFA_SP_DEREF;
		r.off = s->slot_x;
		r.off2 = s->slot_d;
	}
	if (s->rbp_ok)
		r.fp = STUB_FP_SAME;
	else if (s->fp == STUB_FP_SAVED) {
		r.fp = STUB_FP_SAVED;
		r.fp_off = s->fp_off;
	} else {
		r.fp = STUB_FP_LOST;
	}
	return r;
}

static bool same_rule(const struct stub_cfa_row *a, const struct stub_cfa_row *b)
{
	return a->base == b->base && a->fp == b->fp && a->off == b->off && a->off2 == b->off2 && a->fp_off == b->fp_off;
}

/* A VEX- or EVEX-encoded instruction (AVX, AVX-512, the mask registers' kmov
 * and kshift) that capstone 4 does not know: its length and, for the few that
 * write a general register, which one (Intel SDM vol. 2, 2.3 and 2.7). */
struct vec_insn {
	size_t len;
	int writes; /* the general register written, or -1 */
};

static struct vec_insn vec_decode(const uint8_t *p, size_t left)
{
	struct vec_insn v = { 0, -1 };
	unsigned map, pre, rbit, bbit;
	if (left >= 3 && p[0] == 0xc5) { /* c5 [R vvvv L pp]: map 0f */
		map = 1;
		pre = 2;
		rbit = p[1] & 0x80;
		bbit = 0x20;			/* no B: r/m below r8 */
	} else if (left >= 4 && p[0] == 0xc4) { /* c4 [R X B mmmmm] [W vvvv L pp] */
		map = p[1] & 0x1f;
		pre = 3;
		rbit = p[1] & 0x80;
		bbit = p[1] & 0x20;
	} else if (left >= 6 && p[0] == 0x62) { /* 62 [R X B R' 0 mmm] [W vvvv 1 pp] [z L'L b V' aaa] */
		map = p[1] & 7;
		pre = 4;
		rbit = p[1] & 0x80;
		bbit = p[1] & 0x20;
	} else {
		return v;
	}
	if (map < 1 || map > 3 || left < pre + 2)
		return v;
	unsigned op = p[pre], modrm = p[pre + 1], mod = modrm >> 6, rm = modrm & 7;
	size_t n = pre + 2;
	if (mod != 3 && rm == 4) {
		if (left < n + 1)
			return v;
		if (mod == 0 && (p[n] & 7) == 5)
			n += 4;
		n++;
	}
	if (mod == 1)
		n += 1;
	else if (mod == 2 || (mod == 0 && rm == 5))
		n += 4;
	if (map == 3 || (map == 1 && ((op >= 0x70 && op <= 0x73) || op == 0xc2 || (op >= 0xc4 && op <= 0xc6))))
		n += 1;
	if (n > left)
		return v;
	v.len = n;
	int reg = (int)((modrm >> 3) & 7) + (rbit ? 0 : 8), r_m = (int)rm + (bbit ? 0 : 8);
	if (mod == 3) {
		if (map == 1 && (op == 0x93 || op == 0xc5 || op == 0x50 || op == 0xd7)) /* kmov r, k; vpextrw; movmsk */
			v.writes = reg;
		else if ((map == 1 && op == 0x7e) || (map == 3 && op >= 0x14 && op <= 0x17)) /* vmovd/q r/m; vpextr* */
			v.writes = r_m;
	}
	return v;
}

/* What two paths into one instruction agree on: a loop that pushes (the call
 * stub's arguments) leaves rsp unknown there, the frame pointer still holds. */
static struct state meet(const struct state *a, const struct state *b)
{
	struct state m = *a;
	m.sp_known = a->sp_known && b->sp_known && a->sp == b->sp;
	m.fpf = a->fpf && b->fpf && a->fpd == b->fpd;
	m.rbp_ok = a->rbp_ok && b->rbp_ok;
	if (a->fp != b->fp || (a->fp == STUB_FP_SAVED && a->fp_off != b->fp_off))
		m.fp = STUB_FP_LOST;
	m.copy = a->copy && b->copy && a->copy_reg == b->copy_reg && a->copy_d == b->copy_d;
	m.slot = a->slot && b->slot && a->slot_x == b->slot_x && a->slot_d == b->slot_d;
	return m;
}

/* The state s flows into offset to: queued when new, or when what the paths
 * into it agree on is less than before (each field only ever weakens, so
 * this ends). */
static void propagate(struct state *st, bool *queued, uint32_t *work, size_t *nwork, uint32_t to, const struct state *s,
		      struct stub_cfa_stats *stats)
{
	if (!st[to].reached) {
		st[to] = *s;
	} else {
		struct state m = meet(&st[to], s);
		if (same_state(&m, &st[to]))
			return;
		stats->conflicts++;
		st[to] = m;
	}
	if (!queued[to]) {
		queued[to] = true;
		work[(*nwork)++] = to;
	}
}

int stub_cfa_analyze(struct stub_cfa *sc, const uint8_t *code, size_t len, uint64_t addr, struct stub_cfa_row **rows,
		     size_t *nrows, struct stub_cfa_stats *stats)
{
	struct state *st = NULL;
	uint32_t *work = NULL;
	uint8_t *size = NULL; /* an instruction's length where one starts, else 0 */
	bool *queued = NULL;  /* in work */
	struct stub_cfa_row *out = NULL;
	size_t nwork = 0, n = 0;
	int rc = -1;
	struct stub_cfa_stats zs = { 0 };
	*rows = NULL;
	*nrows = 0;
	if (!stats)
		stats = &zs;
	memset(stats, 0, sizeof(*stats));
	if (len == 0 || len > STUB_CFA_MAX_BYTES) { /* one unknown row */
		if (!(out = calloc(1, sizeof(*out))))
			return -1;
		stats->bytes_unreached = len;
		*rows = out;
		*nrows = 1;
		return 0;
	}
	st = calloc(len, sizeof(*st));
	work = malloc(len * sizeof(*work));
	size = calloc(len, 1);
	queued = calloc(len, sizeof(*queued));
	if (!st || !work || !size || !queued)
		goto out;
	/* entered at its start; a stub that begins with a jmp (generic_arraycopy's
	 * shared failure exit, bound before its entry) is entered after it, and the
	 * jmp gets its state from the jumps to it */
	uint32_t entry = 0;
	const uint8_t *p0 = code;
	size_t left0 = len;
	uint64_t pc0 = addr;
	if (cs_disasm_iter(sc->cs, &p0, &left0, &pc0, sc->insn) && sc->insn->id == X86_INS_JMP && sc->insn->size < len)
		entry = sc->insn->size;
	st[entry] = (struct state){ .reached = true, .sp_known = true, .sp = 8, .rbp_ok = true };
	work[nwork++] = entry;
	queued[entry] = true;
	while (nwork) {
		uint32_t at = work[--nwork];
		queued[at] = false;
		const uint8_t *p = code + at;
		size_t left = len - at;
		uint64_t pc = addr + at;
		struct state s = st[at];
		bool falls = true;
		size_t isize;
		int64_t target = -1; /* a direct jump's target, in this code */
		struct vec_insn v;
		if (cs_disasm_iter(sc->cs, &p, &left, &pc, sc->insn)) {
			isize = sc->insn->size;
			falls = step(sc->insn, &s, sc->cs);
			const cs_x86 *x = &sc->insn->detail->x86;
			if (cs_insn_group(sc->cs, sc->insn, CS_GRP_JUMP) && x->op_count == 1 &&
			    x->operands[0].type == X86_OP_IMM) {
				uint64_t t = (uint64_t)x->operands[0].imm;
				if (t >= addr && t < addr + len)
					target = (int64_t)(t - addr);
				falls = sc->insn->id != X86_INS_JMP;
			}
		} else if ((v = vec_decode(code + at, len - at)).len) {
			isize = v.len;
			reg_written(&s, v.writes);
		} else {
			st[at].reached = false; /* not code: no row from here */
			continue;
		}
		size[at] = (uint8_t)isize;
		s.reached = true;
		uint32_t next = at + (uint32_t)isize;
		if (target >= 0)
			propagate(st, queued, work, &nwork, (uint32_t)target, &s, stats);
		if (falls && next < len)
			propagate(st, queued, work, &nwork, next, &s, stats);
	}
	/* rows at instruction starts, and where code no instruction covers begins */
	size_t cap = 64;
	out = malloc(sizeof(*out) * cap);
	if (!out)
		goto out;
	uint32_t covered_to = 0; /* the end of the last instruction seen */
	for (uint32_t at = 0; at < len; at++) {
		struct stub_cfa_row r;
		if (size[at]) {
			r = row_of(&st[at], at);
			stats->insns++;
			if (r.base == STUB_CFA_UNKNOWN)
				stats->unknown++;
			if (at + size[at] > covered_to)
				covered_to = at + size[at];
		} else if (at >= covered_to) {
			stats->bytes_unreached++;
			if (n && out[n - 1].base == STUB_CFA_UNKNOWN && out[n - 1].fp == STUB_FP_SAME)
				continue;
			r = (struct stub_cfa_row){ .at = at };
		} else {
			continue;
		}
		if (n && same_rule(&out[n - 1], &r))
			continue;
		if (ARRAY_GROW(out, cap, n + 1) != 0)
			goto out;
		out[n++] = r;
	}
	*rows = out;
	*nrows = n;
	out = NULL;
	rc = 0;
out:
	free(out);
	free(st);
	free(work);
	free(size);
	free(queued);
	return rc;
}

const struct stub_cfa_row *stub_cfa_find(const struct stub_cfa_row *rows, size_t nrows, uint32_t at)
{
	size_t lo = 0, hi = nrows;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (rows[mid].at <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &rows[lo - 1] : NULL;
}

void stub_cfa_row_format(const struct stub_cfa_row *r, char *out, size_t len)
{
	char cfa[48], fp[32];
	switch (r->base) {
	case STUB_CFA_SP:
		snprintf(cfa, sizeof(cfa), "rsp+%d", r->off);
		break;
	case STUB_CFA_FP:
		snprintf(cfa, sizeof(cfa), "rbp+%d", r->off);
		break;
	case STUB_CFA_SP_DEREF:
		snprintf(cfa, sizeof(cfa), "[rsp+%d]+%d", r->off, r->off2);
		break;
	default:
		snprintf(cfa, sizeof(cfa), "unknown");
		break;
	}
	if (r->fp == STUB_FP_SAVED)
		snprintf(fp, sizeof(fp), "cfa-%d", r->fp_off);
	else
		snprintf(fp, sizeof(fp), "%s", r->fp == STUB_FP_SAME ? "same" : "lost");
	snprintf(out, len, "%s fp=%s", cfa, fp);
}
