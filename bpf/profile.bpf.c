/* profile.bpf.c - the sampler: a perf_event program on every CPU that records
 * time, task, cgroup and the kernel and user stacks of selected tasks; JVMs'
 * user stacks are walked by a HotSpot-aware walker (compiled, interpreted and
 * native frames), other processes' by the kernel's frame-pointer walk. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "profile.h"

/* The walker's registers and frame layout for the architecture built for. */
#if defined(__TARGET_ARCH_x86)
#include "walker_arch_x86_64.h"
#elif defined(__TARGET_ARCH_arm64)
#include "walker_arch_arm64.h"
#else
#error "the HotSpot walker knows x86-64 and arm64: a port adds bpf/walker_arch_<arch>.h (see walker_arch_x86_64.h) and selects it here"
#endif

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by jflame between open and load. */
const volatile bool filter_pids = false; /* only tasks whose tgid is in `pids` */
const volatile bool include_idle = false;
const volatile __u32 self_pid = 0;	     /* jflame itself, never sampled */
const volatile bool follow_children = false; /* processes forked by selected ones are selected too */
/* jflame's pid namespace when it is not the initial one (a sidecar sharing a
 * pod's): its nsfs device and inode. Pids and tids are then reported, and
 * looked up in `pids` and `hotspot_procs`, as jflame sees them; tasks outside
 * it are not sampled. Both 0: the kernel's pids. */
const volatile __u64 pidns_dev = 0;
const volatile __u64 pidns_ino = 0;
const volatile __u64 min_block_ns = 0; /* off-CPU: shorter blocks are counted, not recorded */
/* perf samples say only whose they are (-e alloc/lock alone: the sampler finds
 * processes): no user stack, and the walker, known dead at load, is not verified */
const volatile bool pids_only = false;
/* The legacy walker's frames in the CPU program (then its tail calls go on)
 * and in the off-CPU one (at most PROFILE_LEGACY_USER_FRAMES and
 * PROFILE_LEGACY_OFF_FRAMES): jflame halves them while the kernel's verifier
 * finds a program too large. */
const volatile __u32 legacy_frames = PROFILE_LEGACY_USER_FRAMES;
const volatile __u32 legacy_off_frames = PROFILE_LEGACY_OFF_FRAMES;

/* The ring's largest size; jflame sizes it for the sample rate before load
 * (sampler_ring_bytes) and wakes when a quarter of it is queued. */
#define RING_BYTES (16 * 1024 * 1024)
const volatile __u64 ring_wakeup_bytes = RING_BYTES / 4;

#define SEGMAP_STEPS	12	   /* segment map hops to a blob's start (OTel saw at most 9) */
#define RA_SEARCH_SLOTS 6	   /* stack words searched for a return address */
#define RA_SEARCH_LOOSE 14	   /* ... after a native frame whose sp is a guess (arm64) */
#define BLOB_HEADER	512	   /* CodeBlob bytes read at once, at most */
#define MAX_FRAME_BYTES (1 << 20)  /* a frame pointer further from sp than this is not one */
#define BLOB_NMETHOD	0x74656d6e /* the first four characters of CodeBlob::_name: "nmet" */
#define BLOB_NATIVE	0x6974616e /* "native nmethod" */
#define BLOB_INTERP	0x65746e49 /* "Interpreter" */
#define BLOB_VTABLE	0x62617476 /* "vtable chunks" */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RING_BYTES);
} samples SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} pids SEC(".maps");

/* The HotSpot layout of each JVM being walked, by tgid (filled by jflame). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, struct hotspot_proc);
} hotspot_procs SEC(".maps");

/* The stubs' unwinding rows of the JVMs in hotspot_procs (profile.h). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, PROFILE_STUB_ROWS);
	__type(key, __u32);
	__type(value, struct stub_row);
} stub_rows SEC(".maps");

/* What a return address into the code cache told the walker last time: its
 * blob and how to unwind it. Entries older than BLOB_CACHE_NS are looked up
 * again (a freed blob's memory may hold another blob by then); a frame whose
 * cached size gives no return address into the code is looked up again too. */
#define BLOB_CACHE    4096 /* direct-mapped, per CPU */
#define BLOB_CACHE_NS 200000000ULL

enum cached_kind { CACHED_SIZE = 1, CACHED_FP, CACHED_RA };

struct blob_cache_entry {
	__u64 pc, blob, ts_ns;
	__u32 tgid, frame_bytes, cookie;
	__u8 frame_kind; /* enum profile_frame_kind */
	__u8 how;	 /* enum cached_kind */
	__u16 pad;
};

/* The walker reads the stack a window at a time: one read for many frames,
 * where a read a frame costs more than copying the window. */
#define WINDOW_WORDS 512 /* 4 KiB */
#define WINDOW_SLACK 16	 /* words past the window, so that a view of up to 16 words stays in bounds */

/* What a walk step changes. In map memory, not on the BPF stack: bpf_loop's
 * callback is verified again for each new state it leaves on the stack (it
 * was 60 times, with these values tracked precisely), but values in a map are
 * not tracked, so that walk_step is verified about twice. */
struct walk_regs {
	__u64 pc, sp, fp, bcp; /* bcp: the interpreter's bcp register (USER_REG_BCP) */
	__u64 lr;	       /* the link register where there is one (arm64's x30), else 0 */
	__u64 sender_sp;       /* the interpreter's sender sp register (USER_REG_SENDER_SP) */
	__u8 sp_loose;	       /* sp is a native frame's record + 16, below the caller's true sp (arm64):
				* 2 when the step that set it has just run, 1 in the next step */
	__u64 win_lo, win_hi;
	__u32 n;
	__u8 end;
	bool done;
	__u16 pad;
};

/* One sample under construction per CPU, the code blob header being looked
 * at, and the blob cache (too large for the BPF stack and for a per-CPU
 * map's value); jflame sets max_entries to the number of CPUs. */
struct cpu_scratch {
	struct profile_sample s;
	__u8 hdr[BLOB_HEADER];
	__u64 win[WINDOW_WORDS + WINDOW_SLACK];
	struct walk_regs regs;
	struct blob_cache_entry cache[BLOB_CACHE];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cpu_scratch);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PROFILE_STAT_MAX);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static __always_inline void count(__u32 which)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &which);
	if (v)
		*v += 1;
}

/* The state of one HotSpot walk, passed to each bpf_loop step: pointers on
 * the BPF stack, the registers and counters that change in map memory (see
 * struct walk_regs). */
struct walk {
	struct profile_sample *s;
	const struct hotspot_proc *hp;
	__u8 *hdr;
	__u64 *win; /* stack words [r->win_lo, r->win_hi) */
	struct blob_cache_entry *cache;
	struct walk_regs *r;
	__u64 now;
	__u32 tgid;
};

static __always_inline bool in_code(const struct hotspot_proc *hp, __u64 a)
{
	return a >= hp->code_low && a < hp->code_high;
}

/* The CodeBlob holding pc, found through its code heap's segment map: each
 * segment's byte says how many segments back its blob's first one is (0: this
 * is the first, 0xff: free). 0 when none. */
static __always_inline __u64 find_blob(const struct hotspot_proc *hp, __u64 pc)
{
	__u64 low = 0, segmap = 0, seg;
	__u8 tag = 0xff;
	for (int h = 0; h < PROFILE_HOTSPOT_HEAPS; h++) {
		if (h < hp->nheaps && pc >= hp->heap_low[h] && pc < hp->heap_high[h]) {
			low = hp->heap_low[h];
			segmap = hp->heap_segmap[h];
			break;
		}
	}
	if (!segmap)
		return 0;
	seg = (pc - low) >> (hp->segment_shift & 31);
	for (int i = 0; i < SEGMAP_STEPS; i++) {
		if (bpf_probe_read_user(&tag, 1, (void *)(segmap + seg)) != 0)
			return 0;
		if (tag == 0 || tag == 0xff)
			break;
		seg -= tag;
	}
	if (tag != 0)
		return 0;
	return low + (seg << (hp->segment_shift & 31)) + hp->heapblock_size;
}

static __always_inline __u64 field64(const __u8 *hdr, __u16 off)
{
	__u64 v = 0;
	if (off <= BLOB_HEADER - 8)
		__builtin_memcpy(&v, hdr + off, 8);
	return v;
}

static __always_inline __u32 field32(const __u8 *hdr, __u16 off)
{
	__u32 v = 0;
	if (off <= BLOB_HEADER - 4)
		__builtin_memcpy(&v, hdr + off, 4);
	return v;
}

/* n (at most WINDOW_SLACK) words of the stack at addr, from the window;
 * the window is read anew from addr when it does not hold them: as much as
 * fits, or to the end of addr's page if the stack's mapping ends sooner, or
 * just the n words. NULL when they cannot be read. */
static __always_inline const __u64 *stack_at(struct walk *w, __u64 addr, __u32 n)
{
	__u64 len = WINDOW_WORDS * 8;
	if (addr >= w->r->win_lo && addr + 8 * n <= w->r->win_hi && !((addr - w->r->win_lo) & 7))
		return &w->win[((addr - w->r->win_lo) >> 3) & (WINDOW_WORDS - 1)];
	if (bpf_probe_read_user(w->win, WINDOW_WORDS * 8, (void *)addr) != 0) {
		len = 4096 - (addr & 4095);
		if (len < 8 * n || len > WINDOW_WORDS * 8 || bpf_probe_read_user(w->win, len, (void *)addr) != 0) {
			len = 8 * n;
			if (len > WINDOW_SLACK * 8 || bpf_probe_read_user(w->win, len, (void *)addr) != 0) {
				w->r->win_lo = w->r->win_hi = 0;
				return NULL;
			}
		}
	}
	w->r->win_lo = addr;
	w->r->win_hi = addr + len;
	return w->win;
}

/* Unwinds through the return address at ra_at (the saved frame pointer, if
 * the frame saved one, just below it). false when it is not code of the JVM. */
static __always_inline bool take_return(struct walk *w, __u64 ra_at, bool fp_saved)
{
	const __u64 *rec = stack_at(w, record_of_return_at(ra_at), FRAME_RECORD_WORDS);
	if (!rec)
		return false;
	if (!in_code(w->hp, frame_return_address(rec)))
		return false;
	w->r->pc = frame_return_address(rec);
	w->r->sp = caller_sp_after_return_at(ra_at);
	if (fp_saved)
		w->r->fp = frame_saved_fp(rec);
	return true;
}

#if WALKER_LINK_REGISTER
/* The return address still (or again) in the link register: the caller's sp
 * is sp + add, its frame pointer the one in x29 now. */
static __always_inline bool take_link(struct walk *w, __u64 add)
{
	if (!in_code(w->hp, w->r->lr))
		return false;
	w->r->pc = w->r->lr;
	w->r->sp += add;
	return true;
}

#endif

/* A function's return address as it is on its entry, before its prologue:
 * on top of the stack (x86-64's call), or in the link register. */
static __always_inline bool take_entry_return(struct walk *w)
{
#if WALKER_LINK_REGISTER
	return take_link(w, 0);
#else
	return take_return(w, w->r->sp, false);
#endif
}

/* A compiled frame's return address is in its top word (compiled_return_at);
 * code that pushed more than the blob says is covered by searching a few words
 * further, as HotSpot's own safe_for_sender and the OTel profiler do. */
static __always_inline bool unwind_by_size(struct walk *w, __u64 frame_bytes, bool fp_saved)
{
	__u64 at = compiled_return_at(w->r->sp, frame_bytes);
	const __u64 *rec = stack_at(w, record_of_return_at(at), FRAME_RECORD_WORDS);
	/* the return address where the frame size says, most of the time */
	if (!rec)
		return false;
	if (in_code(w->hp, frame_return_address(rec))) {
		w->r->pc = frame_return_address(rec);
		w->r->sp = caller_sp_after_return_at(at);
		if (fp_saved)
			w->r->fp = frame_saved_fp(rec);
		return true;
	}
	if (!(rec = stack_at(w, record_of_return_at(at), RA_SEARCH_LOOSE + 1)))
		return false;
	/* after a native frame on arm64 the sp is short by that frame's locals */
	int slots = w->r->sp_loose ? RA_SEARCH_LOOSE : RA_SEARCH_SLOTS;
	for (int i = 0; i < RA_SEARCH_LOOSE; i++) {
		if (i >= slots)
			break;
		/* the record one word further */
		if (in_code(w->hp, frame_return_address(rec + i))) {
			w->r->pc = frame_return_address(rec + i);
			w->r->sp = caller_sp_after_return_at(at + 8 * i);
			if (fp_saved)
				w->r->fp = rec[i];
			return true;
		}
	}
	return false;
}

/* Frame-pointer step: what the kernel does for native code. */
static __always_inline void unwind_fp(struct walk *w)
{
	const __u64 *rec = NULL;
	if (!w->r->fp || w->r->fp < w->r->sp || w->r->fp - w->r->sp > MAX_FRAME_BYTES || (w->r->fp & 7) ||
	    !(rec = stack_at(w, w->r->fp, FRAME_RECORD_WORDS)) || !frame_return_address(rec)) {
		w->r->done = true; /* the stack's root, or a frame without a frame pointer */
		return;
	}
	w->r->pc = frame_return_address(rec);
	w->r->sp = frame_caller_sp(w->r->fp);
	w->r->fp = frame_saved_fp(rec);
	w->r->sp_loose = WALKER_LINK_REGISTER ? 2 : 0; /* exact where records top their frames (x86-64) */
}

static __always_inline bool fp_plausible(const struct walk *w)
{
	return w->r->fp >= w->r->sp && w->r->fp - w->r->sp <= MAX_FRAME_BYTES && !(w->r->fp & 7);
}

static __always_inline void walk_fail(struct walk *w, __u8 why)
{
	w->r->end = why;
	w->r->done = true;
}

/* An interpreter frame: frame-pointer based with fixed slots (INTERP_*, below
 * the frame record). The caller's sp is the sender sp the interpreter saved
 * (its caller may have been extended by an adapter). */
static __always_inline void unwind_interp(struct walk *w, struct profile_frame *f, bool leaf)
{
	const __u64 *slots;
	__u64 cm = 0, bcp, bci;
	if (!fp_plausible(w) || !w->r->fp ||
	    !(slots = stack_at(w, w->r->fp - 8 * INTERP_SLOTS, INTERP_SLOTS + FRAME_RECORD_WORDS)))
		return walk_fail(w, PROFILE_END_BAD_INTERP);
	const __u64 *rec = slots + INTERP_SLOTS; /* the frame record, at fp */
	__u64 method = rec[INTERP_METHOD];
	/* the running frame keeps its bcp in a register; callers have it saved */
	bcp = leaf ? w->r->bcp : rec[INTERP_BCP];
	if (!method || (method & 7) ||
	    bpf_probe_read_user(&cm, sizeof(cm), (void *)(method + w->hp->method_const_method)) != 0 || !cm)
		return walk_fail(w, PROFILE_END_BAD_INTERP);
	bci = bcp - (cm + w->hp->const_method_size);
	f->kind = PROFILE_FRAME_INTERP;
	f->method = method;
	f->cookie = (__u32)(cm >> 3);
	f->bci = bcp >= cm + w->hp->const_method_size && bci < 0xffff ? (__u16)bci : 0xffff;
	w->r->pc = frame_return_address(rec);
	w->r->sp = rec[INTERP_SENDER_SP];
	w->r->fp = frame_saved_fp(rec);
	if (!w->r->pc)
		w->r->done = true;
}

/* The leaf frame of compiled code caught in its prologue or epilogue, where
 * the frame is not (or no longer) frame_size words: true when handled. */
#if !WALKER_LINK_REGISTER
static __always_inline bool unwind_leaf_edges(struct walk *w, __u64 code_begin, __s32 complete)
{
	__u8 code[EPILOGUE_CODE_BYTES];
	if (complete > 0 && w->r->pc < code_begin + (__u32)complete) {
		/* before the frame pointer is pushed the return address is at sp, after it above it */
		if (take_return(w, w->r->sp, false))
			return true;
		return take_return(w, return_above_saved_fp(w->r->sp), true);
	}
	if (bpf_probe_read_user(code, sizeof(code), (void *)(w->r->pc - EPILOGUE_CODE_BEFORE)) != 0)
		return false;
	/* code[1] is the instruction at pc */
	if (code_is_ret(code[1]))
		return take_return(w, w->r->sp, false);
	bool ret_ahead = false;
	for (int i = 2; i < EPILOGUE_CODE_BYTES; i++)
		ret_ahead |= code_is_ret(code[i]);
	if (!ret_ahead)
		return false;
	if (code_is_pop_fp(code[1])) /* pop the frame pointer; ... ret */
		return take_return(w, return_above_saved_fp(w->r->sp), true);
	/* just after popping the frame pointer or `leave`, or on the return's safepoint poll */
	if (code_is_pop_fp(code[0]) || code_is_leave(code[0]) || code_is_return_poll(code + 1))
		return take_return(w, w->r->sp, false);
	return false;
}
#else
static __always_inline bool unwind_leaf_edges(struct walk *w, __u64 code_begin, __s32 complete)
{
	__u32 code[EDGE_WORDS_BEFORE + EDGE_WORDS_AFTER];
	__u64 from = w->r->pc - 4 * EDGE_WORDS_BEFORE;
	if (bpf_probe_read_user(code, sizeof(code), (void *)from) != 0)
		return false;
	if (complete > 0 && w->r->pc < code_begin + (__u32)complete) {
		/* build_frame so far, read back from pc (its words at code_begin and after):
		 * `sub sp, sp, #F; stp x29, x30, [sp, #F-16]`, or `stp x29, x30, [sp, #-16]!;
		 * sub sp, sp, #F-16`; the stack bang and entry barrier around them move no sp */
		__u64 sub = 0, rec = 0;
		bool saved = false, subbed = false;
		for (int i = EDGE_WORDS_BEFORE - 1; i >= 0; i--) {
			__u32 insn = code[i];
			if (from + 4 * (__u64)i < code_begin)
				break;
			if (!subbed && insn_is_sub_sp(insn)) {
				subbed = true;
				sub = insn_sp_imm(insn);
			} else if (!saved && insn_is_stp_fp_lr(insn)) {
				saved = true;
				rec = insn_pair_offset(insn); /* after the sub: the record above it */
			} else if (!saved && insn_is_stp_fp_lr_pre(insn)) {
				saved = true;
				rec = subbed ? sub : 0; /* pushed, then the rest of the frame below it */
			}
		}
		if (saved)
			return take_return(w, w->r->sp + rec + 8, true);
		return take_link(w, subbed ? sub : 0);
	}
	/* remove_frame then the return's safepoint poll, then ret: `ldp x29, x30,
	 * [sp, #F-16]; add sp, sp, #F`, or `add sp, sp, #F-16; ldp x29, x30, [sp], #16` */
	bool ret_ahead = false;
	for (int i = EDGE_WORDS_BEFORE; i < EDGE_WORDS_BEFORE + EDGE_WORDS_AFTER; i++)
		ret_ahead |= insn_is_ret(code[i]);
	if (!ret_ahead)
		return false;
	__u32 at = code[EDGE_WORDS_BEFORE], before = code[EDGE_WORDS_BEFORE - 1];
	if (insn_is_ldp_fp_lr(at))
		return take_return(w, w->r->sp + insn_pair_offset(at) + 8, true);
	if (insn_is_ldp_fp_lr_post(at))
		return take_return(w, w->r->sp + 8, true);
	if (insn_is_add_sp(at))
		return insn_is_ldp_fp_lr(before) ? take_link(w, insn_sp_imm(at)) :
						   take_return(w, w->r->sp + insn_sp_imm(at) + 8, true);
	/* past the frame's removal (on the poll or the ret): x29 and x30 restored, sp the caller's */
	for (int i = EDGE_WORDS_BEFORE - 4; i < EDGE_WORDS_BEFORE; i++)
		if (insn_is_ldp_fp_lr(code[i]) || insn_is_ldp_fp_lr_post(code[i]))
			return take_link(w, 0);
	return false;
}
#endif

static __always_inline struct blob_cache_entry *cache_slot(struct walk *w, __u64 pc)
{
	return &w->cache[((pc * 0x9e3779b97f4a7c15ULL) >> 52) & (BLOB_CACHE - 1)];
}

/* A caller's frame unwound as its return address's blob was last time. */
static __always_inline bool unwind_cached(struct walk *w, struct profile_frame *f)
{
	struct blob_cache_entry *c = cache_slot(w, w->r->pc);
	if (c->pc != w->r->pc || c->tgid != w->tgid || w->now - c->ts_ns > BLOB_CACHE_NS)
		return false;
	f->kind = c->frame_kind;
	f->method = c->blob;
	f->cookie = c->cookie;
	if (c->how == CACHED_SIZE)
		return unwind_by_size(w, c->frame_bytes, true);
	if (c->how == CACHED_RA)
		return take_return(w, w->r->sp, false);
	if (!fp_plausible(w))
		return false;
	unwind_fp(w);
	return true;
}

static __always_inline void cache_put(struct walk *w, const struct profile_frame *f, __u64 pc, __u32 frame_bytes,
				      __u8 how)
{
	struct blob_cache_entry *c = cache_slot(w, pc);
	c->pc = pc;
	c->blob = f->method;
	c->ts_ns = w->now;
	c->tgid = w->tgid;
	c->frame_bytes = frame_bytes;
	c->cookie = f->cookie;
	c->frame_kind = f->kind;
	c->how = how;
}

#define STUB_SEARCH_STEPS 17 /* a binary search of up to 2^17 rows */

/* The row of the JVM's stub rows in effect at pc (the last at or before it),
 * NULL when none is. */
static __always_inline const struct stub_row *stub_row_find(const struct hotspot_proc *hp, __u64 pc)
{
	__u32 lo = 0, hi = hp->stub_count, first = hp->stub_first, idx;
	if (!hi || hi > PROFILE_STUB_ROWS || first > PROFILE_STUB_ROWS - hi)
		return NULL;
	for (int k = 0; k < STUB_SEARCH_STEPS && lo < hi; k++) {
		__u32 mid = lo + (hi - lo) / 2;
		const struct stub_row *r;
		idx = first + mid;
		if (!(r = bpf_map_lookup_elem(&stub_rows, &idx)))
			return NULL;
		if (r->pc <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	idx = first + lo - 1;
	return bpf_map_lookup_elem(&stub_rows, &idx);
}

/* One word of the stack at addr, into *v: false when it cannot be read. */
static __always_inline bool stack_word(struct walk *w, __u64 addr, __u64 *v)
{
	const __u64 *p = stack_at(w, addr, 1);
	if (!p)
		return false;
	*v = *p;
	return true;
}

/* A stub without a frame size, unwound by its row: the CFA (the caller's
 * stack pointer) from rsp or rbp, the return address below it, the caller's
 * rbp where the row says. false when the row has no rule or does not hold. */
static __always_inline bool unwind_stub_row(struct walk *w, __u64 pc)
{
	const struct stub_row *row = stub_row_find(w->hp, pc);
	__u64 cfa, ra, fp = w->r->fp, sp = w->r->sp;
	if (!row || row->base == PROFILE_STUB_UNKNOWN)
		return false;
	__u8 base = row->base, fp_rule = row->fp;
	__s64 off = row->off, off2 = row->off2, fp_off = row->fp_off;
	if (base == PROFILE_STUB_SP)
		cfa = sp + off;
	else if (base == PROFILE_STUB_FP)
		cfa = fp + off;
	else if (base == PROFILE_STUB_SP_DEREF && stack_word(w, sp + off, &cfa))
		cfa += off2;
	else
		return false;
	if ((cfa & 7) || cfa <= sp || cfa - sp > MAX_FRAME_BYTES || !stack_word(w, cfa - 8, &ra) || !ra)
		return false;
	if (fp_rule == PROFILE_STUB_FP_SAVED && !stack_word(w, cfa - fp_off, &fp))
		return false;
	if (fp_rule == PROFILE_STUB_FP_LOST)
		fp = 0;
	w->r->pc = ra;
	w->r->sp = cfa + 8 * (__u64)(row->args & 7);
	w->r->fp = fp;
	return true;
}

/* The interpreter's intrinsic entries (CRC32's and CRC32C's updateBytes, the
 * math functions) call a stub or the VM without a frame of their own; a
 * compiled caller reaches them through a c2i adapter, so that the frame
 * pointer is not an interpreter frame's. The return address into the caller
 * is the word below the sender sp the entry keeps in a register
 * (USER_REG_SENDER_SP: the c2i adapter and the interpreter's invokes set it
 * there) and its callee, a stub or C, preserves: the sample's value, for the
 * frame just above the leaf only. */
static __always_inline bool unwind_interp_entry(struct walk *w, struct profile_frame *f)
{
	__u64 sender = w->r->sender_sp, ra = 0;
	if (sender <= w->r->sp || sender - w->r->sp > MAX_FRAME_BYTES || (sender & 7) ||
	    !stack_word(w, sender - 8, &ra) || !in_code(w->hp, strip_pac(ra)))
		return false;
	f->kind = PROFILE_FRAME_STUB; /* named as the interpreter's code blob */
	f->method = find_blob(w->hp, w->r->pc);
	w->r->pc = strip_pac(ra);
	w->r->sp = sender;
	w->r->end = PROFILE_END_OK;
	w->r->done = false;
	return true;
}

static __always_inline void unwind_code(struct walk *w, struct profile_frame *f, bool leaf, bool legacy)
{
	const struct hotspot_proc *hp = w->hp;
	__u8 *hdr = w->hdr;
	__u32 type = 0;
	__u64 pc = w->r->pc;
	if (!leaf && unwind_cached(w, f))
		return;
	__u64 blob = find_blob(hp, w->r->pc);
	if (!blob)
		return walk_fail(w, PROFILE_END_NO_BLOB);
	__u32 hdr_bytes = hp->blob_header;
	if (hdr_bytes < 64 || hdr_bytes > BLOB_HEADER)
		hdr_bytes = BLOB_HEADER;
	/* a blob at the end of the committed code heap may be shorter: its
	 * CodeBlob fields come first */
	if (bpf_probe_read_user(hdr, hdr_bytes, (void *)blob) != 0 &&
	    (bpf_probe_read_user(hdr, 128, (void *)blob) != 0 || !(__builtin_memset(hdr + 128, 0, 128), 1)))
		return walk_fail(w, PROFILE_END_READ);
	__u64 name = field64(hdr, hp->blob_name);
	if (bpf_probe_read_user(&type, sizeof(type), (void *)name) != 0)
		return walk_fail(w, PROFILE_END_READ);
	/* words, an int up to JDK 22, an int16_t from JDK 23: its low half. -1
	 * (C1's stubs that never set one: g1_post_barrier_slow) is no size */
	__s16 frame_words = (__s16)(field32(hdr, hp->blob_frame_size) & 0xffff);
	__u64 frame_bytes = frame_words > 0 ? (__u64)frame_words * 8 : 0;
	/* an int up to JDK 22, an int16_t from JDK 23: its low half, sign-extended,
	 * is right for both (offsets are far below 32 KiB; -1 is "never") */
	__s32 complete = (__s16)(field32(hdr, hp->blob_frame_complete) & 0xffff);
	__u64 code_begin = hp->blob_code_offsets ? blob + field32(hdr, hp->blob_code_begin) :
						   field64(hdr, hp->blob_code_begin);
	f->method = blob;
	if (type == BLOB_INTERP) {
		unwind_interp(w, f, leaf);
		return;
	}
	if (type == BLOB_NMETHOD || type == BLOB_NATIVE) {
		f->kind = type == BLOB_NMETHOD ? PROFILE_FRAME_JIT : PROFILE_FRAME_NATIVE_WRAPPER;
		f->cookie = field32(hdr, hp->nmethod_compile_id);
	} else {
		f->kind = PROFILE_FRAME_STUB;
	}
	if (type == BLOB_VTABLE) { /* vtable and itable stubs: only the return address */
		if (!take_entry_return(w))
			walk_fail(w, PROFILE_END_BAD_FRAME);
		else if (!leaf)
			cache_put(w, f, pc, 0, CACHED_RA);
		return;
	}
	if (frame_bytes) {
		if (leaf && unwind_leaf_edges(w, code_begin, complete))
			return;
#if WALKER_LINK_REGISTER
		/* the sp a native callee leaves is not exact on arm64 (gcc puts a
		 * frame's record at its bottom, below its locals). Blobs that build
		 * their frame with enter() (native wrappers, the safepoint and resolve
		 * blobs, C1's stubs) keep x29 as their record at the frame's top: taken
		 * when x29 is where that top can be (not C2's runtime stubs, whose x29
		 * is a stale caller's), else the return address is searched for */
		const __u64 *rec;
		__u64 top = w->r->sp + frame_bytes - 16;
		if (!leaf && type != BLOB_NMETHOD && w->r->sp_loose && w->r->fp >= top &&
		    w->r->fp <= top + 8 * RA_SEARCH_LOOSE && !(w->r->fp & 7) &&
		    (rec = stack_at(w, w->r->fp, FRAME_RECORD_WORDS)) && in_code(hp, frame_return_address(rec))) {
			unwind_fp(w);
			w->r->sp_loose = 0; /* the caller's sp is exact: above the record */
			return;
		}
#endif
		if (!unwind_by_size(w, frame_bytes, true))
			walk_fail(w, PROFILE_END_BAD_FRAME);
		else if (!leaf)
			cache_put(w, f, pc, (__u32)frame_bytes, CACHED_SIZE);
		return;
	}
	/* blobs without a frame size: a stub's row, worked out from its code (on
	 * kernels with bpf_loop); */
	if (!legacy && unwind_stub_row(w, pc))
		return;
	/* else they (StubRoutines, adapters, call_stub) keep rbp as a frame
	 * pointer, or (adapters, leaf stubs) have only a return address on top:
	 * rbp is then still the caller's */
	if (leaf && (WALKER_LINK_REGISTER ? take_entry_return(w) : unwind_by_size(w, 8, false)))
		return;
	if (!fp_plausible(w))
		return walk_fail(w, PROFILE_END_BAD_FRAME);
	unwind_fp(w);
	if (!leaf)
		cache_put(w, f, pc, 0, CACHED_FP);
}

#if WALKER_LINK_REGISTER
/* A native leaf whose frame record is not the one at x29 (leaf functions save
 * none; others not before their prologue's stp): the link register is its
 * return address. Into the JVM's code: the caller's sp is sp (a frameless
 * leaf moves none); else the caller is named from x30 and the walk goes on by
 * x29, which is still the caller's record. */
static __always_inline bool native_leaf_link(struct walk *w)
{
	const __u64 *rec;
	__u64 lr = w->r->lr;
	if (!lr || lr == w->r->pc)
		return false;
	if (fp_plausible(w) && (rec = stack_at(w, w->r->fp, FRAME_RECORD_WORDS)) && frame_return_address(rec) == lr)
		return false; /* its own record holds x30: the frame-pointer walk takes it */
	if (in_code(w->hp, lr) || (lr >= w->hp->jvm_text_low && lr < w->hp->jvm_text_high)) {
		w->r->pc = lr;
		w->r->lr = 0;
		return true;
	}
	return false;
}
#endif

#define SCAN_WORDS 256 /* stack words searched past a native frame without a frame pointer */

struct scan {
	struct walk *w;
	__u64 at; /* the word's address */
	bool found;
};

static __always_inline long scan_word(__u32 j, struct scan *q)
{
	struct walk *w = q->w;
	__u64 a = q->at + 8 * (__u64)j;
	if (a + 8 > w->r->win_hi || a < w->r->win_lo + 8)
		return a + 8 > w->r->win_hi ? 1 : 0;
	__u64 idx = ((a - w->r->win_lo) >> 3) & (WINDOW_WORDS - 1);
	__u64 ra = strip_pac(w->win[idx]), fp = w->win[(idx - 1) & (WINDOW_WORDS - 1)];
	/* a return address into libjvm with a saved frame pointer below it that
	 * points up the stack: a call from libjvm's frame-pointer code */
	if (ra < w->hp->jvm_text_low || ra >= w->hp->jvm_text_high || fp <= a || fp - a > MAX_FRAME_BYTES || (fp & 7))
		return 0;
	w->r->pc = ra;
	w->r->sp = caller_sp_after_return_at(a);
	w->r->fp = fp;
	q->found = true;
	return 1;
}

static long scan_step(__u32 j, void *ctx)
{
	return scan_word(j, ctx);
}

/* Native code without frame pointers (libc's pthread and futex wrappers, where
 * threads block) ends a frame-pointer walk: the walk goes on from the first
 * return address into libjvm found in the next SCAN_WORDS words of the stack.
 * legacy: without bpf_loop (kernels before 5.17), a bounded loop. */
static __always_inline bool scan_to_jvm(struct walk *w, __u64 sp, bool legacy)
{
	struct scan q = { .w = w, .at = sp };
	if (!w->hp->jvm_text_high || !stack_at(w, sp, 1))
		return false;
	if (!legacy) {
		bpf_loop(SCAN_WORDS, scan_step, &q, 0);
		return q.found;
	}
#pragma clang loop unroll(disable)
	for (__u32 j = 0; j < SCAN_WORDS; j++)
		if (scan_word(j, &q))
			break;
	return q.found;
}

/* One frame of the walk (frame i): 1 when the walk is over. later: frame i
 * is known not to be among the first four (the legacy walker's tail calls),
 * so that neither the leaf's cases nor the scan are verified there. */
static __always_inline long walk_one(__u32 i, struct walk *w, bool legacy, bool later)
{
	struct profile_sample *s = w->s;
	const struct hotspot_proc *hp = w->hp;
	if (i >= PROFILE_MAX_USER_FRAMES)
		return 1;
	struct profile_frame *f = &s->user.frames[i & (PROFILE_MAX_USER_FRAMES - 1)];
	bool leaf = !later && i == 0;
	__u64 pc = w->r->pc;
	f->pc = pc;
	f->method = 0;
	f->cookie = 0;
	f->bci = 0xffff;
	f->kind = PROFILE_FRAME_NATIVE;
	f->flags = 0;
	w->r->n = i + 1;
	if (pc >= hp->interp_low && pc < hp->interp_high) {
		unwind_interp(w, f, leaf);
		if (w->r->done && w->r->end == PROFILE_END_BAD_INTERP && !later && i == 1)
			unwind_interp_entry(w, f);
	} else if (in_code(hp, pc))
		unwind_code(w, f, leaf, legacy);
#if WALKER_LINK_REGISTER
	else if (leaf && native_leaf_link(w))
		; /* a native leaf that saved no frame record (yet): its caller is in x30 */
#else
	else if (leaf && !fp_plausible(w) && take_return(w, w->r->sp, false))
		; /* a native leaf called from compiled code before it set up rbp */
#endif
	else {
		__u64 sp = w->r->sp;
		unwind_fp(w);
		if (w->r->done && !later && i < 4 && scan_to_jvm(w, sp, legacy))
			w->r->done = false;
	}
	w->r->lr = 0; /* the link register is the leaf's return address only */
	if (w->r->sp_loose)
		w->r->sp_loose--; /* loose for the step after the native frame's only */
	if (!w->r->done && !w->r->pc)
		w->r->done = true;
	if (w->r->done)
		return 1;
	return 0;
}

static long walk_step(__u32 i, void *ctx)
{
	return walk_one(i, ctx, false, false);
}

/* The walk of a JVM's user stack from the registers in w->r: by bpf_loop to
 * PROFILE_MAX_USER_FRAMES frames, or (legacy) by a loop the verifier checks
 * frame by frame, to legacy_frames (within its budget of 1M instructions). */
static __always_inline void walk_stack(struct walk *w, bool legacy, bool perf)
{
	if (!legacy) {
		bpf_loop(PROFILE_MAX_USER_FRAMES, walk_step, w, 0);
		return;
	}
	__u32 frames = perf ? legacy_frames : legacy_off_frames;
#pragma clang loop unroll(disable)
	for (__u32 i = 0; i < PROFILE_LEGACY_OFF_FRAMES && i < frames; i++)
		if (walk_one(i, w, true, false))
			break;
}

#define PIDNS_LEVELS 32 /* MAX_PID_NS_LEVEL */

struct pidns_search {
	struct pid *p;
	__u32 level, nr;
};

static __always_inline long pidns_level(__u32 i, struct pidns_search *q)
{
	struct pid *p = q->p; /* the kernel's type: only its fields are relocated */
	struct upid up = {};

	if (i > q->level)
		return 1;
	if (bpf_core_read(&up, sizeof(up), &p->numbers[i & (PIDNS_LEVELS - 1)]) != 0 || !up.ns)
		return 1;
	if (BPF_CORE_READ(up.ns, ns.inum) != pidns_ino)
		return 0;
	q->nr = up.nr > 0 ? (__u32)up.nr : 0;
	return 1;
}

static long pidns_step(__u32 i, void *ctx)
{
	return pidns_level(i, ctx);
}

/* The number of pid p in jflame's pid namespace (p of a task there, or in a
 * namespace below it); 0 when p is not seen there. Its numbers go from the
 * initial namespace (level 0) down to the task's own. */
static __always_inline __u32 pidns_nr(struct pid *p, bool legacy)
{
	struct pidns_search q = { .p = p };

	if (!p)
		return 0;
	q.level = BPF_CORE_READ(p, level);
	if (!legacy) {
		bpf_loop(PIDNS_LEVELS, pidns_step, &q, 0);
		return q.nr;
	}
#pragma clang loop unroll(disable)
	for (__u32 i = 0; i < PIDNS_LEVELS; i++)
		if (pidns_level(i, &q))
			break;
	return q.nr;
}

/* A task's tgid and tid in jflame's pid namespace: false when it has none there. */
static __always_inline bool task_ns_ids(struct task_struct *t, __u32 *tgid, __u32 *tid, bool legacy)
{
	*tid = pidns_nr(BPF_CORE_READ(t, thread_pid), legacy);
	*tgid = pidns_nr(BPF_CORE_READ(t, group_leader, thread_pid), legacy);
	return *tid && *tgid;
}

/* The current task: its BTF pointer (5.11), or (legacy) the plain one, read
 * only through BPF_CORE_READ. */
static __always_inline struct task_struct *current_task(bool legacy)
{
	if (legacy)
		return (struct task_struct *)bpf_get_current_task();
	return bpf_get_current_task_btf();
}

/* x86-64's kernel stack: THREAD_SIZE (16 KiB; 32 KiB with KASAN, which
 * production kernels do not have) with the user registers at its top. */
#define KERNEL_STACK_BYTES 16384

/* The user registers a task saved on entering the kernel: bpf_task_pt_regs
 * (5.15), or (legacy) task_pt_regs() done by hand, as the kernel does it: the
 * top of the task's kernel stack. */
static __always_inline struct pt_regs *task_regs(struct task_struct *t, bool legacy)
{
	if (!legacy)
		return (struct pt_regs *)bpf_task_pt_regs(t);
	void *stack = BPF_CORE_READ(t, stack);
	if (!stack)
		return NULL;
	return (struct pt_regs *)((__u8 *)stack + KERNEL_STACK_BYTES - bpf_core_type_size(struct pt_regs));
}

/* The registers of the sampled task's user mode: the sampled ones (a perf
 * event's sample that hit user mode), else those saved on kernel entry. */
static __always_inline int user_regs(void *ctx, bool perf, struct walk *w, bool legacy)
{
	if (perf && user_mode_sampled(ctx)) {
		struct bpf_perf_event_data *pe = ctx;
		w->r->pc = pe->regs.USER_REG_PC;
		w->r->sp = pe->regs.USER_REG_SP;
		w->r->fp = pe->regs.USER_REG_FP;
		w->r->bcp = pe->regs.USER_REG_BCP;
		w->r->sender_sp = pe->regs.USER_REG_SENDER_SP;
#if WALKER_LINK_REGISTER
		w->r->lr = strip_pac(pe->regs.USER_REG_LR);
#endif
		return 0;
	}
	struct pt_regs *regs = task_regs(current_task(legacy), legacy);
	if (!regs)
		return -1;
	w->r->pc = BPF_CORE_READ(regs, USER_REG_PC);
	w->r->sp = BPF_CORE_READ(regs, USER_REG_SP);
	w->r->fp = BPF_CORE_READ(regs, USER_REG_FP);
	w->r->bcp = BPF_CORE_READ(regs, USER_REG_BCP);
	w->r->sender_sp = BPF_CORE_READ(regs, USER_REG_SENDER_SP);
#if WALKER_LINK_REGISTER
	w->r->lr = strip_pac(BPF_CORE_READ(regs, USER_REG_LR));
#endif
	return 0;
}

/* Whether the current task is selected (not idle unless asked, not jflame, of
 * the selected processes), and its tgid and tid as jflame sees them. */
static __always_inline bool select_current(__u32 *tgid, __u32 *tid, bool legacy)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, t = (__u32)id;

	if (pid == 0 && !include_idle)
		return false;
	if (pidns_ino && pid != 0) {
		/* as jflame sees it: the helper for tasks of its own namespace,
		 * the task's pid numbers for those of namespaces below it */
		struct bpf_pidns_info ns = {};
		if (bpf_get_ns_current_pid_tgid(pidns_dev, pidns_ino, &ns, sizeof(ns)) == 0) {
			pid = ns.tgid;
			t = ns.pid;
		} else if (!task_ns_ids(current_task(legacy), &pid, &t, legacy)) {
			return false; /* another pod's, or the host's */
		}
	}
	if (pid == self_pid && self_pid)
		return false;
	if (filter_pids && !bpf_map_lookup_elem(&pids, &pid))
		return false;
	*tgid = pid;
	*tid = t;
	return true;
}

/* The legacy walker's tail call: profile_walk_more, which walks legacy_chunk
 * frames more and calls itself again (at most 32 times, the kernel's limit
 * before 5.17) until the stack ends or PROFILE_MAX_USER_FRAMES. jflame puts
 * it in when the legacy set is loaded; without it the walk ends where the
 * first program's frames do. */
const volatile __u32 legacy_chunk = PROFILE_LEGACY_CHUNK_FRAMES;

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} walk_more SEC(".maps");

/* s (in ring-record order) into the ring, size bytes of it. */
static __always_inline void ring_send(struct profile_sample *s, __u64 size)
{
	if (size > sizeof(*s))
		size = sizeof(*s);
	/* jflame reads the ring every 100 ms: wake it early only when the ring
	 * fills up, not for every sample (a context switch each) */
	__u64 queued = bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA);
	if (bpf_ringbuf_output(&samples, s, size,
			       queued > ring_wakeup_bytes ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP) != 0)
		count(PROFILE_STAT_DROPPED);
}

/* A HotSpot-walked sample, its walk over (or cut short), into the ring. */
static __always_inline void hotspot_send(struct cpu_scratch *cs)
{
	struct profile_sample *s = &cs->s;
	__u32 n = cs->regs.n;
	if (n > PROFILE_MAX_USER_FRAMES)
		n = PROFILE_MAX_USER_FRAMES;
	if (!cs->regs.done && cs->regs.end == PROFILE_END_OK)
		cs->regs.end = PROFILE_END_TRUNCATED; /* frames left */
	s->nframes = (__u16)n;
	s->walk_end = cs->regs.end;
	s->ustack_bytes = (__s32)(n * 8);
	ring_send(s, offsetof(struct profile_sample, user) + (__u64)n * sizeof(struct profile_frame));
}

/* Builds the current task's sample (kernel and user stacks, HotSpot-walked
 * for JVMs) and puts it in the ring. perf: ctx is a perf event's. */
struct offcpu_pending;
static __always_inline void pending_kstack(struct profile_sample *s, const struct offcpu_pending *pend);

/* pend: an off-CPU block, whose kernel stack was taken when it ended; its
 * user stack is walked now when user, else left out (PROFILE_FLAG_NO_USER). */
static __always_inline int emit_sample(void *ctx, bool perf, __u32 pid, __u32 tid, __u8 kind, __u64 weight_ns,
				       const struct offcpu_pending *pend, bool user, bool legacy)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct cpu_scratch *cs;
	struct profile_sample *s;
	const struct hotspot_proc *hp;
	__u64 size = offsetof(struct profile_sample, user);

	cs = bpf_map_lookup_elem(&scratch, &cpu);
	if (!cs) {
		count(PROFILE_STAT_DROPPED);
		return 0;
	}
	s = &cs->s;
	s->ts_ns = bpf_ktime_get_ns();
	s->cgroup_id = bpf_get_current_cgroup_id();
	s->weight_ns = weight_ns;
	s->pid = pid;
	s->tid = tid;
	s->cpu = cpu;
	s->nframes = 0;
	s->walk = PROFILE_WALK_KERNEL;
	s->walk_end = PROFILE_END_OK;
	s->kind = kind;
	s->flags = user ? 0 : PROFILE_FLAG_NO_USER;
	bpf_get_current_comm(s->comm, sizeof(s->comm));
	if (pend)
		pending_kstack(s, pend);
	else
		s->kstack_bytes = bpf_get_stack(ctx, s->kstack, sizeof(s->kstack), 0);
	if (s->kstack_bytes < 0 && pid != 0)
		count(PROFILE_STAT_KSTACK_FAILED);
	s->ustack_bytes = 0;
	hp = pid && user ? bpf_map_lookup_elem(&hotspot_procs, &pid) : NULL;
	if (hp) {
		struct walk w = { .s = s,
				  .hp = hp,
				  .hdr = cs->hdr,
				  .win = cs->win,
				  .cache = cs->cache,
				  .r = &cs->regs,
				  .now = s->ts_ns,
				  .tgid = pid };
		__builtin_memset(&cs->regs, 0, sizeof(cs->regs));
		s->walk = PROFILE_WALK_HOTSPOT;
		if (user_regs(ctx, perf, &w, legacy) == 0) {
			walk_stack(&w, legacy, perf);
			/* the legacy walker goes on in profile_walk_more (a perf
			 * event's program: not for off-CPU's tracepoints) */
			if (legacy && perf && !cs->regs.done && cs->regs.n < PROFILE_MAX_USER_FRAMES)
				bpf_tail_call(ctx, &walk_more, 0);
		} else {
			cs->regs.end = PROFILE_END_READ;
			cs->regs.done = true;
		}
		hotspot_send(cs);
		return 0;
	} else if (pid != 0 && user) {
		s->ustack_bytes = bpf_get_stack(ctx, s->user.pcs, sizeof(s->user.pcs), BPF_F_USER_STACK);
		if (s->ustack_bytes < 0)
			count(PROFILE_STAT_USTACK_FAILED);
		else
			size += (__u64)(s->ustack_bytes & (sizeof(s->user.pcs) * 2 - 1));
	}
	ring_send(s, size);
	return 0;
}

/* Each program comes twice: as written for kernels with bpf_loop (5.17) and
 * sched_switch's prev_state (5.18), and a _legacy twin for older ones (down to
 * 5.8, the ring buffer's): no bpf_loop (bounded loops), bpf_task_pt_regs,
 * bpf_get_current_task_btf or prev_state. jflame loads one set (sampler.c). */
static __always_inline int sample_cpu(struct bpf_perf_event_data *ctx, bool legacy)
{
	__u32 pid, tid;

	if (!select_current(&pid, &tid, legacy))
		return 0;
	count(PROFILE_STAT_SAMPLES);
	/* its weight: the events it stands for (the kernel's period at -F Hz: ns
	 * for cpu-clock, faults for page-faults, ...) */
	return emit_sample(ctx, true, pid, tid, PROFILE_KIND_CPU, ctx->sample_period, NULL, !pids_only, legacy);
}

SEC("perf_event")
int profile_sample(struct bpf_perf_event_data *ctx)
{
	return sample_cpu(ctx, false);
}

SEC("perf_event")
int profile_sample_legacy(struct bpf_perf_event_data *ctx)
{
	return sample_cpu(ctx, true);
}

/* The legacy walker's next legacy_chunk frames of the sample in this CPU's
 * scratch (see walk_more), then the next call, or the sample into the ring. */
SEC("perf_event")
int profile_walk_more(struct bpf_perf_event_data *ctx)
{
	__u32 cpu = bpf_get_smp_processor_id();
	struct cpu_scratch *cs = bpf_map_lookup_elem(&scratch, &cpu);
	if (!cs)
		return 0;
	struct profile_sample *s = &cs->s;
	__u32 pid = s->pid;
	const struct hotspot_proc *hp = bpf_map_lookup_elem(&hotspot_procs, &pid);
	if (!hp) { /* forgotten meanwhile: the frames so far */
		cs->regs.end = PROFILE_END_READ;
		cs->regs.done = true;
		hotspot_send(cs);
		return 0;
	}
	struct walk w = { .s = s,
			  .hp = hp,
			  .hdr = cs->hdr,
			  .win = cs->win,
			  .cache = cs->cache,
			  .r = &cs->regs,
			  .now = s->ts_ns,
			  .tgid = pid };
	__u32 base = cs->regs.n;
#pragma clang loop unroll(disable)
	for (__u32 j = 0; j < PROFILE_LEGACY_CHUNK_FRAMES && j < legacy_chunk; j++)
		if (walk_one(base + j, &w, true, true))
			break;
	if (!cs->regs.done && cs->regs.n < PROFILE_MAX_USER_FRAMES)
		bpf_tail_call(ctx, &walk_more, 0);
	hotspot_send(cs);
	return 0;
}

/* Off-CPU. No kprobe or fentry is needed (kernels without CONFIG_KPROBES or
 * BPF trampolines have neither), only tracepoints:
 * 1. sched_switch, the task leaving (it is current): its time, and the
 *    syscall it is in (its state says whether it blocked or was preempted);
 * 2. sched_switch, the task coming back (not current yet, its stacks as it
 *    left them): the time off the CPU; a block under min_block_ns is counted
 *    and forgotten, a longer one keeps its kernel stack (bpf_get_task_stack)
 *    and waits for
 * 3. sys_exit of that syscall, in the task's own context before it runs any
 *    user code: its user stack is still the one it blocked in (walked with
 *    its own memory, the HotSpot walker for JVMs), and the sample goes out.
 *    A task switched out again before that exit (preempted in the syscall,
 *    or blocked in it once more) adds that time off the CPU to the block,
 *    which still waits for the exit. A block that did not end in a syscall
 *    (preemption, a page fault) goes out at the task's next sys_exit or
 *    switch-out without a user stack (PROFILE_FLAG_NO_USER): it is not there
 *    to be walked any more. */
#define PF_KTHREAD 0x00200000 /* include/linux/sched.h, the same since 2.6 */

struct offcpu_start_val {
	__u64 ts;
	__s64 nr; /* the syscall the task left the CPU in; -1 none (preempted) */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32); /* kernel tid */
	__type(value, struct offcpu_start_val);
} offcpu_start SEC(".maps");

struct offcpu_pending {
	__u64 weight_ns;
	__s64 nr;
	__s32 kstack_bytes;
	__u32 pad;
	__u64 kstack[PROFILE_MAX_KERNEL_FRAMES];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32); /* kernel tid */
	__type(value, struct offcpu_pending);
} offcpu_pending SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_pending);
} pending_scratch SEC(".maps");

static __always_inline void pending_kstack(struct profile_sample *s, const struct offcpu_pending *pend)
{
	s->kstack_bytes = pend->kstack_bytes;
	if (bpf_probe_read_kernel(s->kstack, sizeof(s->kstack), pend->kstack) != 0)
		s->kstack_bytes = -14; /* -EFAULT */
}

static __always_inline void count_add(__u32 which, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &which);
	if (v)
		*v += n;
}

/* The current task's pending block, sent with its user stack when user. */
static __always_inline int offcpu_emit(void *ctx, __u32 ktid, struct offcpu_pending *pend, bool user, bool legacy)
{
	__u32 pid, tid;
	int rc = 0;
	if (select_current(&pid, &tid, legacy)) {
		count(PROFILE_STAT_SAMPLES);
		rc = emit_sample(ctx, false, pid, tid, PROFILE_KIND_OFFCPU, pend->weight_ns, pend, user, legacy);
	}
	bpf_map_delete_elem(&offcpu_pending, &ktid);
	return rc;
}

/* A task's state before 5.14 (a long named state; __state since). */
struct task_struct___state_long {
	long state;
} __attribute__((preserve_access_index));

static __always_inline long task_state(struct task_struct *t)
{
	if (bpf_core_field_exists(t->__state))
		return BPF_CORE_READ(t, __state);
	return BPF_CORE_READ((struct task_struct___state_long *)t, state);
}

/* prev_state: the state prev left in (sched_switch's 4th argument from 5.18;
 * legacy: read from prev, as the kernel's own tracepoint did before). */
static __always_inline int offcpu_switched(void *ctx, struct task_struct *prev, struct task_struct *next,
					   long prev_state, bool legacy)
{
	__u32 pid, tid, ktid = (__u32)bpf_get_current_pid_tgid(), zero = 0;
	__u64 now = bpf_ktime_get_ns();
	struct offcpu_start_val *st, v = { .ts = now, .nr = -1 };
	struct offcpu_pending *pend;

	/* a kernel thread has no user registers: its saved ones are zeros, which
	 * read as syscall 0 would hold its blocks for an exit that never comes */
	struct pt_regs *regs = ktid && !(BPF_CORE_READ(prev, flags) & PF_KTHREAD) ? task_regs(prev, legacy) : NULL;

	/* prev, leaving: a block it came back from without a syscall exit goes
	 * out first, unless prev is still in the syscall it blocked in (preempted
	 * before its exit, or blocked in it again): then the block waits for that
	 * exit, to go out with its user stack, and this time off the CPU is
	 * added to it when prev comes back */
	if (ktid && (pend = bpf_map_lookup_elem(&offcpu_pending, &ktid)) &&
	    !(regs && pend->nr >= 0 && pend->nr == (__s64)BPF_CORE_READ(regs, USER_REG_SYSCALL)))
		offcpu_emit(ctx, ktid, pend, false, legacy);
	if (ktid && select_current(&pid, &tid, legacy)) {
		if (prev_state != 0 && regs) /* blocked (not preempted): in which syscall */
			v.nr = (__s64)BPF_CORE_READ(regs, USER_REG_SYSCALL);
		if (bpf_map_update_elem(&offcpu_start, &ktid, &v, BPF_ANY) != 0)
			count(PROFILE_STAT_OFFCPU_LOST);
	}

	/* next, coming back */
	__u32 nk = BPF_CORE_READ(next, pid);
	if (!nk || !(st = bpf_map_lookup_elem(&offcpu_start, &nk)))
		return 0;
	__u64 delta = now - st->ts;
	__s64 nr = st->nr;
	bpf_map_delete_elem(&offcpu_start, &nk);
	pend = bpf_map_lookup_elem(&offcpu_pending, &nk);
	if (pend) { /* back in the syscall of a block still waiting for its exit: the same block */
		pend->weight_ns += delta;
		return 0;
	}
	if (delta < min_block_ns) {
		count(PROFILE_STAT_OFFCPU_SHORT);
		count_add(PROFILE_STAT_OFFCPU_SHORT_NS, delta);
		return 0;
	}
	pend = bpf_map_lookup_elem(&pending_scratch, &zero);
	if (!pend)
		return 0;
	pend->weight_ns = delta;
	pend->nr = nr;
	pend->kstack_bytes = bpf_get_task_stack(next, pend->kstack, sizeof(pend->kstack), 0);
	if (bpf_map_update_elem(&offcpu_pending, &nk, pend, BPF_ANY) != 0)
		count(PROFILE_STAT_OFFCPU_LOST);
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_switch, bool preempt, struct task_struct *prev, struct task_struct *next, unsigned int prev_state)
{
	return offcpu_switched(ctx, prev, next, prev_state, false);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(offcpu_switch_legacy, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	return offcpu_switched(ctx, prev, next, task_state(prev), true);
}

/* Every syscall's return: one hash lookup unless the task has a block to send. */
static __always_inline int offcpu_exited(void *ctx, struct pt_regs *regs, bool legacy)
{
	__u32 ktid = (__u32)bpf_get_current_pid_tgid();
	struct offcpu_pending *pend;

	if (!ktid || !(pend = bpf_map_lookup_elem(&offcpu_pending, &ktid)))
		return 0;
	return offcpu_emit(ctx, ktid, pend, pend->nr >= 0 && pend->nr == (__s64)BPF_CORE_READ(regs, USER_REG_SYSCALL),
			   legacy);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(offcpu_sys_exit, struct pt_regs *regs, long ret)
{
	return offcpu_exited(ctx, regs, false);
}

SEC("tp_btf/sys_exit")
int BPF_PROG(offcpu_sys_exit_legacy, struct pt_regs *regs, long ret)
{
	return offcpu_exited(ctx, regs, true);
}

/* A launched command's children (a wrapper script starting java) are recorded too. */
static __always_inline int forked(struct task_struct *parent, struct task_struct *child, bool legacy)
{
	__u32 ppid, cpid;
	__u8 one = 1;

	if (!follow_children)
		return 0;
	cpid = BPF_CORE_READ(child, tgid);
	if (BPF_CORE_READ(child, pid) != cpid)
		return 0; /* a new thread, not a process */
	ppid = BPF_CORE_READ(parent, tgid);
	if (pidns_ino) { /* `pids` holds pids as jflame sees them */
		__u32 tid;
		if (!task_ns_ids(parent, &ppid, &tid, legacy) || !task_ns_ids(child, &cpid, &tid, legacy))
			return 0;
	}
	if (!bpf_map_lookup_elem(&pids, &ppid))
		return 0;
	bpf_map_update_elem(&pids, &cpid, &one, BPF_ANY);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(follow_fork, struct task_struct *parent, struct task_struct *child)
{
	return forked(parent, child, false);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(follow_fork_legacy, struct task_struct *parent, struct task_struct *child)
{
	return forked(parent, child, true);
}

/* Kernel symbols named by the kernel itself (kallsyms_lookup behind %pS): jflame
 * writes ksym_addr[0..ksym_n) and runs this program (BPF_PROG_TEST_RUN); each
 * ksym_out[i] gets "name+0xoff/0xsize [module]", or "0x..." where no symbol
 * covers the address. Nothing of /proc/kallsyms is read or kept. */
__u64 ksym_addr[PROFILE_KSYM_BATCH];
__u32 ksym_n;
char ksym_out[PROFILE_KSYM_BATCH][PROFILE_KSYM_LEN];

SEC("syscall")
int ksym_names(void *ctx)
{
	static const char fmt[] = "%pS";

	for (__u32 i = 0; i < PROFILE_KSYM_BATCH; i++) {
		__u64 arg[1];

		if (i >= ksym_n)
			break;
		arg[0] = ksym_addr[i];
		if (bpf_snprintf(ksym_out[i], PROFILE_KSYM_LEN, fmt, arg, sizeof(arg)) < 0)
			ksym_out[i][0] = '\0';
	}
	return 0;
}
