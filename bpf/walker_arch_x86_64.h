/* walker_arch_x86_64.h - what the HotSpot walker (profile.bpf.c) knows of x86-64: the user
 * registers it starts from, the frame record, HotSpot's interpreter frame and compiled code's edges.
 *
 * A port to another architecture (arm64: frame_aarch64.hpp) writes walker_arch_<arch>.h with the
 * same names, selected in profile.bpf.c by libbpf's __TARGET_ARCH_<arch>:
 * - USER_REG_*: the pt_regs fields of pc, sp, frame pointer, the interpreter's bcp register and
 *   the syscall number, and user_mode_sampled() for a perf event's registers;
 * - the frame record (saved fp and return address) and where a caller's sp is after it;
 * - INTERP_*: the interpreter frame's slots, in words from its frame pointer;
 * - the places a compiled leaf's return address is in its prologue, and the instructions
 *   its epilogue is recognised by.
 * - WALKER_LINK_REGISTER and USER_REG_LR where a call leaves the return address in a register
 *   (arm64's x30) rather than on the stack, and strip_pac() for signed return addresses.
 * A leaf's prologue and epilogue are handled per architecture in profile.bpf.c's
 * unwind_leaf_edges (x86-64: by bytes; arm64: by the instruction words its header names). */
#ifndef JFLAME_WALKER_ARCH_X86_64_H
#define JFLAME_WALKER_ARCH_X86_64_H

/* ---- user registers (struct pt_regs; a perf event's bpf_user_pt_regs_t is the same) ---- */
#define USER_REG_PC	     ip
#define USER_REG_SP	     sp
#define USER_REG_FP	     bp	     /* rbp: native code's frame pointer, and the interpreter's */
#define USER_REG_BCP	     r13     /* the running interpreter frame's bytecode pointer */
#define USER_REG_SENDER_SP   r13     /* at a method entry: the sender sp (the bcp register in a frame) */
#define USER_REG_SYSCALL     orig_ax /* the syscall the task entered the kernel for */
#define WALKER_LINK_REGISTER 0	     /* a call pushes the return address: no link register */

/* Whether a perf event's sample hit user mode (cs's privilege level 3). The
 * context's registers are uapi (struct pt_regs of <asm/ptrace.h>, cs its 18th
 * word) and read whole, 8 bytes (the verifier allows no less): cs is read at
 * that fixed place, not through CO-RE, which sizes the access by the kernel's
 * own pt_regs.cs (2 bytes up to 6.1, a union of 8 on newer kernels) and then
 * refuses the 8-byte read on 5.10 and 6.1. */
#define PT_REGS_CS_WORD 17
static __always_inline bool user_mode_sampled(struct bpf_perf_event_data *pe)
{
	return (((volatile const __u64 *)pe)[PT_REGS_CS_WORD] & 3) == 3;
}

/* Return addresses are plain addresses (no pointer authentication). */
#define strip_pac(addr) (addr)

/* ---- the frame record: `push rbp; mov rbp, rsp` after a call ---- */
/* Its words, read at the frame pointer: the caller's saved frame pointer, then
 * the return address above it. */
#define FRAME_RECORD_WORDS	  2
#define frame_saved_fp(rec)	  ((rec)[0])
#define frame_return_address(rec) ((rec)[1])
/* The caller's sp once the frame at fp has returned: above the record. */
#define frame_caller_sp(fp) ((fp) + 16)
/* The record around a return address kept at ra_at (the saved frame pointer,
 * when the frame saved one, is the word below it), and the caller's sp once
 * that return address is popped. */
#define record_of_return_at(ra_at)	 ((ra_at)-8)
#define caller_sp_after_return_at(ra_at) ((ra_at) + 8)
/* A compiled frame of frame_bytes (CodeBlob::_frame_size in bytes: the return
 * address included) keeps its return address in its top word. */
#define compiled_return_at(sp, frame_bytes) ((sp) + (frame_bytes)-8)

/* ---- HotSpot's interpreter frame (frame_x86.hpp): slots in words from rbp ---- */
#define INTERP_SENDER_SP (-1)
#define INTERP_METHOD	 (-3)
#define INTERP_BCP	 (-8)
#define INTERP_SLOTS	 10 /* words read below rbp: down to the bcp slot and one more */

/* ---- compiled code's prologue and epilogue (a leaf frame caught in them) ---- */
/* In the prologue the return address is at sp until `push rbp`, then above
 * the saved rbp: where it is while only the frame pointer is pushed on it (in
 * the prologue after `push rbp`, in the epilogue before `pop rbp`). */
#define return_above_saved_fp(sp) ((sp) + 8)
/* The code bytes a leaf's epilogue is recognised by: EPILOGUE_CODE_BYTES from
 * pc - EPILOGUE_CODE_BEFORE, and the instructions in them. */
#define EPILOGUE_CODE_BEFORE 1
#define EPILOGUE_CODE_BYTES  16
#define code_is_ret(byte)    ((byte) == 0xc3) /* ret */
#define code_is_pop_fp(byte) ((byte) == 0x5d) /* pop rbp */
#define code_is_leave(byte)  ((byte) == 0xc9) /* leave */
/* the return's safepoint poll: `ja rel32` to its stub, then `ret` */
#define code_is_return_poll(code) ((code)[0] == 0x0f && (code)[1] == 0x87 && code_is_ret((code)[6]))

#endif
