/* profile.bpf.c - the sampler: a perf_event program on every CPU that records
 * time, task, cgroup and the kernel and user stacks of selected tasks. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "profile.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* Set by jflame between open and load. */
const volatile bool filter_pids = false; /* only tasks whose tgid is in `pids` */
const volatile bool include_idle = false;
const volatile __u32 self_pid = 0;       /* jflame itself, never sampled */
const volatile bool follow_children = false; /* processes forked by selected ones are selected too */

#define RING_BYTES (16 * 1024 * 1024)
#define RING_WAKEUP_BYTES (RING_BYTES / 4)

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

SEC("perf_event")
int profile_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 pid = id >> 32, tid = (__u32)id;
	struct profile_sample *s;

	if (pid == self_pid && self_pid)
		return 0;
	if (pid == 0 && !include_idle)
		return 0;
	if (filter_pids && !bpf_map_lookup_elem(&pids, &pid))
		return 0;
	count(PROFILE_STAT_SAMPLES);

	s = bpf_ringbuf_reserve(&samples, sizeof(*s), 0);
	if (!s) {
		count(PROFILE_STAT_DROPPED);
		return 0;
	}
	s->ts_ns = bpf_ktime_get_ns();
	s->cgroup_id = bpf_get_current_cgroup_id();
	s->pid = pid;
	s->tid = tid;
	s->cpu = bpf_get_smp_processor_id();
	s->pad = 0;
	bpf_get_current_comm(s->comm, sizeof(s->comm));
	s->kstack_bytes = bpf_get_stack(ctx, s->kstack, sizeof(s->kstack), 0);
	if (s->kstack_bytes < 0 && pid != 0)
		count(PROFILE_STAT_KSTACK_FAILED);
	s->ustack_bytes = 0;
	if (pid != 0) {
		s->ustack_bytes = bpf_get_stack(ctx, s->ustack, sizeof(s->ustack), BPF_F_USER_STACK);
		if (s->ustack_bytes < 0)
			count(PROFILE_STAT_USTACK_FAILED);
	}
	/* jflame reads the ring every 100 ms: wake it early only when the ring
	 * fills up, not for every sample (a context switch each) */
	__u64 queued = bpf_ringbuf_query(&samples, BPF_RB_AVAIL_DATA);
	bpf_ringbuf_submit(s, queued > RING_WAKEUP_BYTES ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	return 0;
}

/* A launched command's children (a wrapper script starting java) are recorded too. */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(follow_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ppid, cpid;
	__u8 one = 1;

	if (!follow_children)
		return 0;
	cpid = BPF_CORE_READ(child, tgid);
	if (BPF_CORE_READ(child, pid) != cpid)
		return 0; /* a new thread, not a process */
	ppid = BPF_CORE_READ(parent, tgid);
	if (!bpf_map_lookup_elem(&pids, &ppid))
		return 0;
	bpf_map_update_elem(&pids, &cpid, &one, BPF_ANY);
	return 0;
}
