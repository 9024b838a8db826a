/* profile.h - types shared by profile.bpf.c and the jflame command: one sample
 * record in the ring buffer, and the indices of the loss counters. */
#ifndef JFLAME_PROFILE_H
#define JFLAME_PROFILE_H

/* Frames kept per stack. The kernel walks at most kernel.perf_event_max_stack
 * frames (127 by default; jflame raises it to this where it may). */
#define PROFILE_MAX_USER_FRAMES 512
#define PROFILE_MAX_KERNEL_FRAMES 128
#define PROFILE_COMM_LEN 16

/* One sample: a fixed-size ring buffer record. Stack lengths are byte counts
 * as bpf_get_stack() returns them, or a negative errno when the read failed. */
struct profile_sample {
	__u64 ts_ns;     /* CLOCK_MONOTONIC (bpf_ktime_get_ns) */
	__u64 cgroup_id; /* of the sampled task, cgroup v2 */
	__u32 pid;       /* tgid, in the initial pid namespace */
	__u32 tid;
	__u32 cpu;
	__s32 kstack_bytes;
	__s32 ustack_bytes;
	__u32 pad;
	char comm[PROFILE_COMM_LEN];
	__u64 kstack[PROFILE_MAX_KERNEL_FRAMES];
	__u64 ustack[PROFILE_MAX_USER_FRAMES];
};

/* Per-CPU counters in the `stats` array map. */
enum profile_stat {
	PROFILE_STAT_SAMPLES = 0,   /* samples taken for selected tasks */
	PROFILE_STAT_DROPPED,       /* ring buffer full: sample lost */
	PROFILE_STAT_KSTACK_FAILED, /* kernel stack could not be read */
	PROFILE_STAT_USTACK_FAILED, /* user stack could not be read */
	PROFILE_STAT_MAX,
};

#endif
