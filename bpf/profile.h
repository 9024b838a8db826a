/* profile.h - types shared by profile.bpf.c and the jflame command: one sample
 * record in the ring buffer, the per-JVM layout the HotSpot walker reads, and
 * the indices of the loss counters. */
#ifndef JFLAME_PROFILE_H
#define JFLAME_PROFILE_H

/* User frames kept per stack. Processes other than JVMs are walked by the
 * kernel (bpf_get_stack), at most kernel.perf_event_max_stack frames (127 by
 * default; jflame raises it to PROFILE_MAX_FP_FRAMES where it may); JVMs by
 * the HotSpot walker, up to PROFILE_MAX_USER_FRAMES. */
#define PROFILE_MAX_USER_FRAMES 2048
/* The walker's depth on kernels without bpf_loop (before 5.17): there it is a
 * bounded loop, which the verifier checks frame by frame within its budget of
 * a million instructions (measured on 5.10: bench/kernels.sh). */
/* CPU samples: the first PROFILE_LEGACY_USER_FRAMES frames, then tail calls
 * of PROFILE_LEGACY_CHUNK_FRAMES each (32 of them at most before 5.17), up to
 * PROFILE_MAX_USER_FRAMES; off-CPU samples (tracepoints) are walked in one
 * program, to PROFILE_LEGACY_OFF_FRAMES. jflame halves a program's frames
 * while the verifier finds it too large. */
#define PROFILE_LEGACY_USER_FRAMES  16
#define PROFILE_LEGACY_CHUNK_FRAMES 64
#define PROFILE_LEGACY_OFF_FRAMES   128
#define PROFILE_LEGACY_TAIL_CALLS   32
#define PROFILE_MAX_FP_FRAMES	    512
#define PROFILE_MAX_KERNEL_FRAMES   128
#define PROFILE_COMM_LEN	    16
/* Kernel addresses named at once by the ksym_names program, and the room for
 * each name ("name+0x1f/0x80 [module]", cut short past this). */
#define PROFILE_KSYM_BATCH    32
#define PROFILE_KSYM_LEN      256
#define PROFILE_HOTSPOT_HEAPS 4

/* How the user stack of a sample was walked. */
enum profile_walk {
	PROFILE_WALK_KERNEL = 0, /* bpf_get_stack: user.pcs[] holds ustack_bytes / 8 addresses */
	PROFILE_WALK_HOTSPOT,	 /* the HotSpot walker: user.frames[] holds nframes frames */
};

/* What a sample measures. */
enum profile_kind {
	PROFILE_KIND_CPU = 0, /* a perf event's sample of a running task */
	PROFILE_KIND_OFFCPU,  /* a block: the stack where the task left the CPU, weight_ns off it */
};

/* The sample has no user stack: an off-CPU block that did not end where it
 * began (a preemption, a page fault), whose user stack was gone by then. */
#define PROFILE_FLAG_NO_USER 1

/* How a HotSpot walk ended. */
enum profile_walk_end {
	PROFILE_END_OK = 0,	/* reached the stack's root (a zero frame pointer or return address) */
	PROFILE_END_TRUNCATED,	/* PROFILE_MAX_USER_FRAMES frames and more to go */
	PROFILE_END_NO_BLOB,	/* a pc in the code cache that no code blob covers */
	PROFILE_END_BAD_FRAME,	/* a compiled frame whose return address is not code */
	PROFILE_END_BAD_INTERP, /* an interpreter frame that does not hold together */
	PROFILE_END_READ,	/* memory of the stack or the code cache could not be read */
	PROFILE_END_MAX,
};

/* What one frame of a HotSpot walk is. */
enum profile_frame_kind {
	PROFILE_FRAME_NATIVE = 0,     /* outside the code cache (libjvm, libc, JNI): walked by frame pointer */
	PROFILE_FRAME_INTERP,	      /* the template interpreter: method = Method*, cookie = ConstMethod* >> 3, bci */
	PROFILE_FRAME_JIT,	      /* a compiled Java method: method = its nmethod, cookie = compile_id */
	PROFILE_FRAME_NATIVE_WRAPPER, /* a JNI method's wrapper nmethod: as JIT */
	PROFILE_FRAME_STUB,	      /* other code cache blobs (stubs, adapters): method = the CodeBlob */
};

struct profile_frame {
	__u64 pc;     /* the frame's pc: a return address for every frame but the first */
	__u64 method; /* see profile_frame_kind */
	__u32 cookie; /* proves `method` is still what it was when sampled */
	__u16 bci;    /* interpreted: bytecode index (0xffff unknown) */
	__u8 kind;    /* enum profile_frame_kind */
	__u8 flags;
};

/* One sample. Stack lengths are byte counts as bpf_get_stack() returns them,
 * or a negative errno when the read failed. The record in the ring buffer
 * ends after the user frames it holds (records have variable length). */
struct profile_sample {
	__u64 ts_ns;	 /* CLOCK_MONOTONIC (bpf_ktime_get_ns); off-CPU: when the task ran again */
	__u64 cgroup_id; /* of the sampled task, cgroup v2 */
	__u64 weight_ns; /* PROFILE_KIND_OFFCPU: nanoseconds off the CPU; CPU samples: the perf event's period */
	__u32 pid;	 /* tgid, in jflame's pid namespace (the initial one on a host) */
	__u32 tid;
	__u32 cpu;
	__s32 kstack_bytes;
	__s32 ustack_bytes; /* PROFILE_WALK_KERNEL; HotSpot walks: nframes * 8 */
	__u16 nframes;	    /* PROFILE_WALK_HOTSPOT: frames in user.frames */
	__u8 walk;	    /* enum profile_walk */
	__u8 walk_end;	    /* enum profile_walk_end */
	__u8 kind;	    /* enum profile_kind */
	__u8 flags;	    /* PROFILE_FLAG_* */
	__u8 pad[6];
	char comm[PROFILE_COMM_LEN];
	__u64 kstack[PROFILE_MAX_KERNEL_FRAMES];
	union {
		__u64 pcs[PROFILE_MAX_FP_FRAMES];
		struct profile_frame frames[PROFILE_MAX_USER_FRAMES];
	} user;
};

/* The HotSpot layout of one JVM, found by jflame through the JVM's
 * gHotSpotVMStructs tables and handed to the walker (map hotspot_procs, keyed
 * by tgid as jflame sees it). Offsets are in bytes. */
struct hotspot_proc {
	__u64 code_low, code_high;     /* every code heap lies in [code_low, code_high) */
	__u64 interp_low, interp_high; /* the template interpreter's code */
	__u64 heap_low[PROFILE_HOTSPOT_HEAPS], heap_high[PROFILE_HOTSPOT_HEAPS];
	__u64 heap_segmap[PROFILE_HOTSPOT_HEAPS]; /* each heap's segment map (one byte a segment) */
	__u32 nheaps;
	__u32 segment_shift;	   /* log2(CodeCacheSegmentSize) */
	__u32 heapblock_size;	   /* sizeof(HeapBlock): the CodeBlob follows its header */
	__u16 blob_name;	   /* CodeBlob::_name (const char*) */
	__u16 blob_frame_size;	   /* CodeBlob::_frame_size (int, words) */
	__u16 blob_frame_complete; /* CodeBlob::_frame_complete_offset (int, from code begin) */
	__u16 blob_code_begin;	   /* CodeBlob::_code_begin (pointer) or _code_offset (int, JDK 23+) */
	__u16 blob_code_end;	   /* CodeBlob::_code_end (pointer) or _data_offset (int, JDK 23+) */
	__u16 nmethod_compile_id;  /* nmethod::_compile_id (int) */
	__u16 method_const_method; /* Method::_constMethod */
	__u16 const_method_size;   /* sizeof(ConstMethod): the bytecodes follow it */
	__u16 blob_header;	   /* bytes of a blob to read: past the last field above, at most 512 */
	__u8 blob_code_offsets;	   /* 1: code begin/end are int offsets from the blob (JDK 23+) */
	__u8 pad[5];
	__u64 jvm_text_low, jvm_text_high; /* libjvm's code: where a scan past native frames
					      without frame pointers (libc's) resumes; 0 none */
	__u32 stub_first, stub_count;	   /* its rows in stub_rows (none: count 0) */
};

/* The stubs' unwinding rows (map stub_rows, an array shared by the JVMs, each
 * JVM's rows consecutive and sorted by pc): from pc on, up to the next row's,
 * where the caller's frame is (native/hotspot/stub_cfa.h, worked out by jflame
 * from the stubs' machine code). */
#define PROFILE_STUB_ROWS 65536

enum profile_stub_base {
	PROFILE_STUB_UNKNOWN = 0, /* the walker's heuristics */
	PROFILE_STUB_SP,	  /* CFA = rsp + off */
	PROFILE_STUB_FP,	  /* CFA = rbp + off */
	PROFILE_STUB_SP_DEREF,	  /* CFA = *(rsp + off) + off2 */
};

enum profile_stub_fp {
	PROFILE_STUB_FP_SAME = 0, /* the caller's rbp is still in rbp */
	PROFILE_STUB_FP_SAVED,	  /* at CFA - fp_off */
	PROFILE_STUB_FP_LOST,	  /* not known */
};

struct stub_row {
	__u64 pc;
	__s16 off, off2, fp_off;
	__u8 base, fp;
	/* words the caller pushed before its call (the stub's arguments, which
	 * it leaves for the caller to pop: C1's slow_subtype_check): the
	 * caller's frame begins that far above the CFA */
	__u8 args;
};

/* Per-CPU counters in the `stats` array map. */
enum profile_stat {
	PROFILE_STAT_SAMPLES = 0,     /* samples taken for selected tasks */
	PROFILE_STAT_DROPPED,	      /* ring buffer full: sample lost */
	PROFILE_STAT_KSTACK_FAILED,   /* kernel stack could not be read */
	PROFILE_STAT_USTACK_FAILED,   /* user stack could not be read */
	PROFILE_STAT_OFFCPU_SHORT,    /* blocks shorter than min_block_ns: counted, not recorded */
	PROFILE_STAT_OFFCPU_SHORT_NS, /* their nanoseconds */
	PROFILE_STAT_OFFCPU_LOST,     /* a switch-out not remembered (map full): its block is lost */
	PROFILE_STAT_MAX,
};

#endif
