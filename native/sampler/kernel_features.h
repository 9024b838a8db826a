/* kernel_features.h - what the running kernel's BPF offers jflame, probed once
 * at start: whether it runs there at all, which set of its BPF programs loads
 * (profile.bpf.c's _legacy twins before 5.18) and what an older kernel costs. */
#ifndef JFLAME_KERNEL_FEATURES_H
#define JFLAME_KERNEL_FEATURES_H

#include <stdbool.h>
#include <stddef.h>

/* The oldest kernel jflame loads on (the BPF ring buffer is 5.8,
 * bpf_get_task_stack 5.9), and the oldest it is tested on. */
#define KERNEL_MIN_VERSION    "5.9"
#define KERNEL_TESTED_VERSION "5.10"

struct kernel_features {
	char release[65];  /* uname -r */
	char version[16];  /* "5.10": major.minor of the release */
	bool bpf_loop;	   /* bpf_loop (5.17) */
	bool switch_state; /* sched_switch's prev_state argument (5.18) */
	bool legacy;	   /* the _legacy programs load: no bpf_loop or no prev_state, or JFLAME_BPF_LEGACY=1 */
	bool forced;	   /* legacy by JFLAME_BPF_LEGACY=1 (the tests' way to walk as on 5.10 here) */
	int cpu_frames, off_frames; /* the depth of the HotSpot walker on the CPU and off it */
	/* what the kernel costs, said once at start and kept in the graph's
	 * subtitle: "kernel 5.10 has no bpf_loop: Java stacks are walked to 128
	 * frames (2048 from 5.17)"; "" when nothing */
	char note[320];
};

/* Whether a kernel (release: uname -r) with or without the BPF ring buffer and
 * bpf_get_task_stack is one jflame runs on: 0, or -1 with one line in err
 * naming it, the minimum and the first feature missing (exit 2). */
int kernel_features_minimum(const char *release, bool ringbuf, bool task_stack, char *err, size_t errlen);
/* Probes the kernel. -1 when jflame cannot run on it, with one line in err
 * naming the kernel, the minimum and the feature missing; else 0. */
int kernel_features_probe(struct kernel_features *kf, char *err, size_t errlen);
/* The note again for the walker's depths the kernel took (sampler_walker_frames),
 * on the CPU and off it (-1: not recorded). */
void kernel_features_note(struct kernel_features *kf, int cpu_frames, int off_frames);

#endif
