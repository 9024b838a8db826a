/* kernel_features.c - probes what the running kernel's BPF offers jflame (its
 * helpers, map types and tracepoint arguments), once at start. */
#include "kernel_features.h"

#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "profile.h"

/* 1 yes, 0 no, -1 cannot tell (then it is assumed there: the load says) */
static int has_helper(enum bpf_prog_type type, enum bpf_func_id id)
{
	int r = libbpf_probe_bpf_helper(type, id, NULL);
	return r < 0 ? -1 : r;
}

/* Whether sched_switch's BTF tracepoint has prev_state (its 4th argument,
 * 5.18): the kernel's typedef btf_trace_sched_switch, a pointer to a function
 * of (void *, bool preempt, prev, next[, prev_state]). */
static bool switch_has_state(void)
{
	struct btf *btf = btf__load_vmlinux_btf();
	bool yes = false;
	if (!btf)
		return false;
	int id = btf__find_by_name_kind(btf, "btf_trace_sched_switch", BTF_KIND_TYPEDEF);
	const struct btf_type *t = id > 0 ? btf__type_by_id(btf, (__u32)id) : NULL;
	if (t)
		t = btf__type_by_id(btf, t->type);
	if (t && btf_is_ptr(t))
		t = btf__type_by_id(btf, t->type);
	if (t && btf_is_func_proto(t))
		yes = btf_vlen(t) >= 5;
	btf__free(btf);
	return yes;
}

int kernel_features_minimum(const char *release, bool ringbuf, bool task_stack, char *err, size_t errlen)
{
	const char *missing = NULL, *since = NULL;
	if (!ringbuf)
		missing = "BPF ring buffer", since = "5.8";
	else if (!task_stack)
		missing = "bpf_get_task_stack", since = "5.9";
	if (!missing)
		return 0;
	snprintf(err, errlen,
		 "kernel %s is older than jflame supports: it has no %s (Linux %s); "
		 "jflame needs Linux " KERNEL_MIN_VERSION " or later (tested from " KERNEL_TESTED_VERSION ")",
		 release[0] ? release : "?", missing, since);
	return -1;
}

int kernel_features_probe(struct kernel_features *kf, char *err, size_t errlen)
{
	struct utsname u;
	int major = 0, minor = 0;

	memset(kf, 0, sizeof(*kf));
	if (uname(&u) == 0)
		snprintf(kf->release, sizeof(kf->release), "%s", u.release);
	if (sscanf(kf->release, "%d.%d", &major, &minor) == 2)
		snprintf(kf->version, sizeof(kf->version), "%d.%d", major % 1000, minor % 1000);
	else
		snprintf(kf->version, sizeof(kf->version), "%.15s", kf->release[0] ? kf->release : "?");

	/* the minimum: what every program set needs */
	if (kernel_features_minimum(kf->release, libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) != 0,
				    has_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_task_stack) != 0, err, errlen) != 0)
		return -1;

	kf->bpf_loop = has_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_loop) != 0;
	kf->switch_state = switch_has_state();
	const char *force = getenv("JFLAME_BPF_LEGACY");
	kf->forced = force && strcmp(force, "1") == 0;
	kf->legacy = kf->forced || !kf->bpf_loop || !kf->switch_state;
	kernel_features_note(kf, PROFILE_MAX_USER_FRAMES,
			     kf->legacy ? PROFILE_LEGACY_USER_FRAMES : PROFILE_MAX_USER_FRAMES);
	return 0;
}

void kernel_features_note(struct kernel_features *kf, int cpu_frames, int off_frames)
{
	char depth[96], why[96];
	kf->cpu_frames = cpu_frames;
	kf->off_frames = off_frames;
	kf->note[0] = '\0';
	if (!kf->legacy)
		return;
	/* "to 2048 frames", "to 2048 frames on the CPU and 256 off it", "to 256 frames" */
	if (cpu_frames >= 0 && off_frames >= 0 && cpu_frames != off_frames)
		snprintf(depth, sizeof(depth), "to %d frames on the CPU and %d off it", cpu_frames, off_frames);
	else
		snprintf(depth, sizeof(depth), "to %d frames", cpu_frames >= 0 ? cpu_frames : off_frames);
	if (kf->forced)
		snprintf(why, sizeof(why), ", with JFLAME_BPF_LEGACY=1:");
	else if (!kf->bpf_loop)
		snprintf(why, sizeof(why), " has no bpf_loop:");
	else
		snprintf(why, sizeof(why), " has no prev_state in sched_switch:");
	bool whole = (cpu_frames < 0 || cpu_frames >= PROFILE_MAX_USER_FRAMES) &&
		     (off_frames < 0 || off_frames >= PROFILE_MAX_USER_FRAMES);
	snprintf(kf->note, sizeof(kf->note), "kernel %s%s Java stacks are walked %s%s (%d %s)", kf->version, why, depth,
		 whole ? " in tail calls" : "", PROFILE_MAX_USER_FRAMES,
		 kf->forced    ? "with bpf_loop" :
		 !kf->bpf_loop ? "from 5.17" :
				 "from 5.18");
}
