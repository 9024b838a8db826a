/* walker_arch_arm64.h - what the HotSpot walker (profile.bpf.c) knows of aarch64: the user
 * registers it starts from, the frame record, HotSpot's interpreter frame and compiled code's edges.
 *
 * The same names as walker_arch_x86_64.h (see there), from HotSpot's frame_aarch64.hpp,
 * register_aarch64.hpp and MacroAssembler::build_frame/remove_frame, and the kernel's
 * user_pt_regs. What differs from x86-64: a function's return address is in the link register
 * (x30) from the call until its prologue's `stp x29, x30` and again from its epilogue's
 * `ldp x29, x30` to the `ret` (WALKER_LINK_REGISTER: the walk starts with x30 too); compiled
 * code's edges are recognised by 32-bit instruction words; saved return addresses may carry
 * pointer-authentication bits (pac-ret), stripped before they are looked up. */
#ifndef JFLAME_WALKER_ARCH_ARM64_H
#define JFLAME_WALKER_ARCH_ARM64_H

/* ---- user registers (struct user_pt_regs, and the kernel's struct pt_regs around it) ---- */
#define USER_REG_PC	     pc
#define USER_REG_SP	     sp
#define USER_REG_FP	     regs[29]  /* x29: native code's frame pointer, and the interpreter's */
#define USER_REG_LR	     regs[30]  /* x30: the return address until a prologue saves it */
#define USER_REG_BCP	     regs[22]  /* rbcp: the running interpreter frame's bytecode pointer */
#define USER_REG_SENDER_SP   regs[19]  /* r19_sender_sp: the sender sp at a method entry */
#define USER_REG_SYSCALL     syscallno /* the kernel's pt_regs only (not the uapi registers) */
#define WALKER_LINK_REGISTER 1

/* Whether a perf event's sample hit user mode: pstate's mode bits are EL0t
 * (0; an aarch32 task's mode 0x10 has them 0 too). user_pt_regs is uapi, all
 * u64: pstate is its 34th word, read at that fixed place as x86-64 reads cs. */
#define PT_REGS_PSTATE_WORD 33
static __always_inline bool user_mode_sampled(struct bpf_perf_event_data *pe)
{
	return (((volatile const __u64 *)pe)[PT_REGS_PSTATE_WORD] & 0xf) == 0;
}

/* Return addresses signed by pac-ret keep the pointer-authentication code in
 * the bits above the virtual address (48 bits on Debian's arm64 kernels, and
 * user space below 2^48 on the 52-bit ones too): stripped. */
#define strip_pac(addr) ((addr)&0x0000ffffffffffffULL)

/* ---- the frame record: `stp x29, x30, [sp, ...]` then x29 pointing at it ---- */
#define FRAME_RECORD_WORDS	  2
#define frame_saved_fp(rec)	  ((rec)[0])
#define frame_return_address(rec) strip_pac((rec)[1])
/* The caller's sp once the frame at fp has returned: above the record. Exact
 * for HotSpot's frames (the record at the frame's top: sender_sp_offset 2);
 * gcc's native frames put the record at their bottom, below their locals, so
 * that for them this is only where the walk resumes by frame pointer. */
#define frame_caller_sp(fp)		 ((fp) + 16)
#define record_of_return_at(ra_at)	 ((ra_at)-8)
#define caller_sp_after_return_at(ra_at) ((ra_at) + 8)
/* build_frame: `sub sp, sp, #F; stp x29, x30, [sp, #F-16]` (or the record
 * pushed first for a large frame): the return address in the frame's top word. */
#define compiled_return_at(sp, frame_bytes) ((sp) + (frame_bytes)-8)

/* ---- HotSpot's interpreter frame (frame_aarch64.hpp): slots in words from x29 ---- */
/* the same on JDK 17 and 21+ (21 renamed 17's padding slot extended_sp) */
#define INTERP_SENDER_SP (-1)
#define INTERP_METHOD	 (-3)
#define INTERP_BCP	 (-9)
#define INTERP_SLOTS	 10 /* words read below x29: down to the bcp slot and one more */

/* ---- compiled code's prologue and epilogue: the instructions they are recognised by ---- */
/* Words read before pc (the prologue's so far; the epilogue's frame removal
 * just done) and from pc on (the epilogue's ret ahead). */
#define EDGE_WORDS_BEFORE 12
#define EDGE_WORDS_AFTER  8
#define insn_is_ret(i)	  ((i) == 0xd65f03c0u) /* ret (x30) */
/* stp x29, x30, [sp, #imm] (signed offset) and ldp x29, x30, [sp, #imm]: imm7 scaled by 8 */
#define insn_is_stp_fp_lr(i) (((i)&0xffc07fffu) == 0xa9007bfdu)
#define insn_is_ldp_fp_lr(i) (((i)&0xffc07fffu) == 0xa9407bfdu)
#define insn_pair_offset(i)  ((__u64)(((i) >> 15) & 0x3f) * 8) /* non-negative imm7 only */
/* stp x29, x30, [sp, #-16]! and ldp x29, x30, [sp], #16 */
#define insn_is_stp_fp_lr_pre(i)  ((i) == 0xa9bf7bfdu)
#define insn_is_ldp_fp_lr_post(i) ((i) == 0xa8c17bfdu)
/* sub sp, sp, #imm12{, lsl #12} and add sp, sp, #imm12{, lsl #12} */
#define insn_is_sub_sp(i) (((i)&0xff8003ffu) == 0xd10003ffu)
#define insn_is_add_sp(i) (((i)&0xff8003ffu) == 0x910003ffu)
#define insn_sp_imm(i)	  ((__u64)(((i) >> 10) & 0xfff) << (((i) >> 22) & 1 ? 12 : 0))

#endif
