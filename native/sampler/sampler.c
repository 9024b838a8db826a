/* sampler.c - loads the profile BPF skeleton, opens cpu-clock (or cycles) perf
 * events on every online CPU, attaches, and polls the ring buffer. */
#include "sampler.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stddef.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "msg.h"
#include "proc_info.h"
#include "profile.skel.h"

#define MAX_STACK_SYSCTL "/proc/sys/kernel/perf_event_max_stack"

struct sampler {
	struct profile_bpf *skel;
	struct ring_buffer *rb;
	int *fds;
	struct bpf_link **links;
	struct bpf_link *fork_link;		  /* follow_children */
	struct bpf_link *switch_link, *exit_link; /* offcpu */
	int ncpus, nopen;
	sampler_fn fn;
	void *ctx;
	int old_max_stack; /* restored at close; 0 when unchanged */
	int max_stack;
	const struct event_kind *event; /* the perf event's row opened; NULL none */
	bool ksym_ok;			/* the ksym_names program is loaded */
	/* the programs of the set loaded (profile.bpf.c: as written, or _legacy) */
	struct bpf_program *p_sample, *p_switch, *p_exit, *p_fork;
	/* the drain's budget (sampler_drain): records and time left, or skip
	 * (records counted as lost, not handed on) */
	uint32_t budget_left;
	uint64_t budget_end_ns;
	bool skip;
	uint64_t discarded;    /* records skipped unread: lost */
	int stats_fd;	       /* -v: the kernel's BPF run-time statistics, on while open */
	uint32_t user_frames;  /* the HotSpot walker's depth of off-CPU samples */
	uint32_t cpu_frames;   /* ... of CPU samples (legacy: with its tail calls) */
	struct sampler_opts o; /* as opened (pids: NULL), for sampler_start */
	/* the JVMs' ranges of the stub_rows map, sorted by first */
	struct stub_range {
		pid_t pid;
		__u32 first, count;
	} stub_ranges[SAMPLER_STUB_JVMS];
	size_t nstub_ranges;
};

/* The callback's "budget spent": libbpf stops consuming (the record that
 * returned it was consumed) and returns it. */
#define BUDGET_SPENT (-EALREADY)

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static bool verbose_libbpf;

/* The program the last failed load failed at ("prog 'NAME': failed to load"). */
static char failed_prog[64];

static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[512];
	va_list copy;
	va_copy(copy, ap);
	vsnprintf(line, sizeof(line), fmt, copy);
	va_end(copy);
	const char *at = strstr(line, "prog '"), *end = at ? strchr(at + 6, '\'') : NULL;
	if (at && end && strstr(end, "': failed to load") == end && (size_t)(end - at - 6) < sizeof(failed_prog))
		snprintf(failed_prog, sizeof(failed_prog), "%.*s", (int)(end - at - 6), at + 6);
	if (!verbose_libbpf)
		return 0;
	(void)level;
	return fputs(line, stderr);
}

static int read_int(const char *path)
{
	FILE *f = fopen(path, "re");
	int v = -1;
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static int write_int(const char *path, int v)
{
	FILE *f = fopen(path, "we");
	if (!f)
		return -1;
	int ok = fprintf(f, "%d\n", v) > 0;
	return (fclose(f) == 0 && ok) ? 0 : -1;
}

/* Online CPUs from /sys/devices/system/cpu/online ("0-3,5"): a bitmap in out. */
static int online_cpus(bool *out, int max)
{
	char buf[1024];
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	int n = 0;
	if (!f || !fgets(buf, sizeof(buf), f)) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	for (char *p = buf; *p && *p != '\n';) {
		char *end;
		long a = strtol(p, &end, 10), b = a;
		if (end == p)
			return -1;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (long i = a; i <= b && i < max; i++) {
			out[i] = true;
			n = i + 1 > n ? (int)i + 1 : n;
		}
		p = *end == ',' ? end + 1 : end;
	}
	return n;
}

/* Records end after the user frames they hold: a record shorter than its own
 * counts say is dropped (it cannot be, but nothing past it is read). */
static int handle(void *ctx, void *data, size_t size)
{
	struct sampler *s = ctx;
	const struct profile_sample *ps = data;
	size_t head = offsetof(struct profile_sample, user), need = head;
	if (s->skip) {
		s->discarded++;
		return 0;
	}
	if (size < head)
		return 0;
	if (ps->walk == PROFILE_WALK_HOTSPOT)
		need += (size_t)ps->nframes * sizeof(struct profile_frame);
	else if (ps->ustack_bytes > 0)
		need += (size_t)ps->ustack_bytes;
	if (size >= need && need <= sizeof(*ps))
		s->fn(s->ctx, ps, size);
	/* the budget: the caller gets back to its deadline, signals and windows */
	if (--s->budget_left == 0 || mono_ns() >= s->budget_end_ns)
		return BUDGET_SPENT;
	return 0;
}

uint32_t sampler_ring_bytes(int freq, int ncpus, bool offcpu)
{
	uint64_t want, bytes = SAMPLER_RING_MIN;
	if (offcpu || freq <= 0 || ncpus <= 0)
		return SAMPLER_RING_MAX;
	want = (uint64_t)freq * (uint64_t)ncpus * SAMPLER_RING_SAMPLE_BYTES;
	while (bytes < want && bytes < SAMPLER_RING_MAX)
		bytes *= 2;
	return (uint32_t)bytes;
}

/* The row's perf event on cpu: a sample every period events (the row's, or
 * the caller's for such a row), else freq a second. */
static int open_event(const struct event_kind *e, uint64_t period, int freq, int cpu)
{
	struct perf_event_attr attr = { 0 };
	attr.size = sizeof(attr);
	attr.type = e->perf_type;
	attr.config = e->perf_config;
	if (e->period) {
		attr.sample_period = period ? period : e->period;
	} else {
		attr.freq = 1;
		attr.sample_freq = (__u64)freq;
	}
	return (int)syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* Whether o's event samples a perf event (cpu's when none is named), and
 * whether it times blocks off the CPU. */
static bool opens_perf(const struct sampler_opts *o)
{
	return !o->event || (o->event->flags & EVENT_PERF);
}

static bool times_blocks(const struct sampler_opts *o)
{
	return o->event && (o->event->flags & EVENT_BLOCKS);
}

/* Off-CPU: sched_switch times blocks and keeps the kernel stacks of long
 * ones, sys_exit adds their user stacks (see profile.bpf.c). */
static int attach_offcpu(struct sampler *s, char *err, size_t errlen)
{
	s->switch_link = bpf_program__attach(s->p_switch);
	if (s->switch_link)
		s->exit_link = bpf_program__attach(s->p_exit);
	if (!s->switch_link || !s->exit_link) {
		snprintf(err, errlen,
			 "failed to attach to the %s tracepoint for off-CPU recording: %s; it needs "
			 "a kernel with BTF tracepoints (5.5 or later)",
			 s->switch_link ? "sys_exit" : "sched_switch", strerror(errno));
		return -1;
	}
	return 0;
}

/* -v: each program loaded, the instructions the verifier went through (its
 * log's "processed N insns") and its time, and the whole load's time. */
static void say_verified(struct sampler *s, uint64_t t0, char (*vlog)[2048], int nlog)
{
	struct bpf_program *prog;
	int k = 0;
	bpf_object__for_each_program(prog, s->skel->obj)
	{
		if (!bpf_program__autoload(prog) || k >= nlog)
			continue;
		const char *log = vlog[k++], *p = strstr(log, "processed "), *t = strstr(log, "verification time ");
		unsigned long insns = 0, usec = 0;
		if (p)
			sscanf(p, "processed %lu", &insns);
		if (t)
			sscanf(t, "verification time %lu", &usec);
		msg_say("BPF program %s: %lu instructions verified in %.1f ms, %zu instructions\n",
			bpf_program__name(prog), insns, (double)usec / 1000.0, bpf_program__insn_cnt(prog));
	}
	msg_say("BPF programs loaded in %.1f ms\n", (double)(mono_ns() - t0) / 1e6);
}

/* -v, at the end: each program's runs and its mean time a run (a sample's
 * walk, for the sampling program), from the kernel's statistics. */
static void say_run_time(struct sampler *s)
{
	struct bpf_program *prog;
	bpf_object__for_each_program(prog, s->skel->obj)
	{
		struct bpf_prog_info info;
		__u32 len = sizeof(info);
		int fd = bpf_program__fd(prog);
		memset(&info, 0, sizeof(info));
		if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) != 0 || !info.run_cnt)
			continue;
		msg_say("BPF program %s: %llu runs, %.2f ms in all, %.2f us a run\n", bpf_program__name(prog),
			(unsigned long long)info.run_cnt, (double)info.run_time_ns / 1e6,
			(double)info.run_time_ns / (double)info.run_cnt / 1000.0);
	}
}

static void perf_error(int e, const char *event, char *err, size_t errlen)
{
	int paranoid = read_int("/proc/sys/kernel/perf_event_paranoid");
	if (e == EACCES || e == EPERM)
		snprintf(err, errlen,
			 "not permitted to open %s perf events (kernel.perf_event_paranoid=%d); run as root, "
			 "or grant CAP_PERFMON, or set sysctl kernel.perf_event_paranoid=-1",
			 event, paranoid);
	else if (e == ENOENT || e == EOPNOTSUPP)
		snprintf(err, errlen,
			 "this machine has no %s counter (virtual machines rarely offer hardware counters); "
			 "record -e cpu or another event",
			 event);
	else
		snprintf(err, errlen, "failed to open a %s perf event: %s", event, strerror(e));
}

/* The legacy walker's frames in each of its programs. */
struct legacy_depth {
	uint32_t first, chunk, off; /* profile_sample_legacy, profile_walk_more, offcpu_sys_exit_legacy */
};

/* Opens, sets up and loads the programs' set (legacy: the walker to d's
 * frames). 0; -E2BIG when a legacy program is over the verifier's budget at
 * that depth (failed_prog names it; nothing said); else -1 with err said. */
static int skel_load(struct sampler *s, const struct sampler_opts *o, const struct legacy_depth *d, char *err,
		     size_t errlen)
{
	int rc = -1, e;
	s->skel = profile_bpf__open();
	if (!s->skel) {
		snprintf(err, errlen, "failed to open the BPF program: %s", strerror(errno));
		goto out;
	}
	s->skel->rodata->filter_pids = o->pids != NULL;
	s->skel->rodata->include_idle = o->include_idle;
	s->skel->rodata->self_pid = (__u32)getpid();
	/* in a sidecar's pid namespace: pids as this /proc has them, and only its tasks */
	uint64_t ns_dev, ns_ino;
	if (proc_info_self_pidns(&ns_dev, &ns_ino) < 0) {
		snprintf(err, errlen, "failed to read its pid namespace (/proc/self/ns/pid): %s", strerror(errno));
		goto out;
	}
	s->skel->rodata->pidns_dev = ns_dev;
	s->skel->rodata->pidns_ino = ns_ino;
	s->skel->rodata->follow_children = o->pids && o->follow_children;
	s->skel->rodata->min_block_ns = o->min_block_ns;
	s->skel->rodata->pids_only = o->pids_only;
	s->skel->rodata->legacy_frames = d->first;
	s->skel->rodata->legacy_chunk = d->chunk;
	s->skel->rodata->legacy_off_frames = d->off;
	/* a period's rate is the workload's: the largest ring */
	uint32_t ring = sampler_ring_bytes(opens_perf(o) && !(o->event && o->event->period) ? o->freq : 0, s->ncpus,
					   times_blocks(o));
	s->skel->rodata->ring_wakeup_bytes = ring / 4;
	if (bpf_map__set_max_entries(s->skel->maps.samples, ring) != 0) {
		snprintf(err, errlen, "failed to size the BPF ring buffer: %s", strerror(errno));
		goto out;
	}
	/* one set of programs: as written, or their _legacy twins */
	s->p_sample = o->legacy ? s->skel->progs.profile_sample_legacy : s->skel->progs.profile_sample;
	s->p_switch = o->legacy ? s->skel->progs.offcpu_switch_legacy : s->skel->progs.offcpu_switch;
	s->p_exit = o->legacy ? s->skel->progs.offcpu_sys_exit_legacy : s->skel->progs.offcpu_sys_exit;
	s->p_fork = o->legacy ? s->skel->progs.follow_fork_legacy : s->skel->progs.follow_fork;
	struct bpf_program *prog;
	bpf_object__for_each_program(prog, s->skel->obj) bpf_program__set_autoload(prog, false);
	bpf_program__set_autoload(s->p_sample, opens_perf(o));
	bpf_program__set_autoload(s->skel->progs.profile_walk_more, o->legacy && opens_perf(o) && !o->pids_only);
	bpf_program__set_autoload(s->p_switch, times_blocks(o));
	bpf_program__set_autoload(s->p_exit, times_blocks(o));
	if (!times_blocks(o)) {
		bpf_map__set_max_entries(s->skel->maps.offcpu_start, 1);
		bpf_map__set_max_entries(s->skel->maps.offcpu_pending, 1);
	}
	bpf_program__set_autoload(s->p_fork, o->pids && o->follow_children);
	/* kernel frames named by the kernel (5.14+); else from /proc/kallsyms */
	s->ksym_ok = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_SYSCALL, NULL) == 1 &&
		     libbpf_probe_bpf_helper(BPF_PROG_TYPE_SYSCALL, BPF_FUNC_snprintf, NULL) == 1;
	bpf_program__set_autoload(s->skel->progs.ksym_names, s->ksym_ok);
	/* each program's verification (instructions, time) for -v and bench/kernels.sh */
	char vlog[8][2048];
	int nlog = 0;
	bpf_object__for_each_program(prog, s->skel->obj)
	{
		if (o->verbose && bpf_program__autoload(prog) && nlog < 8) {
			vlog[nlog][0] = '\0';
			bpf_program__set_log_buf(prog, vlog[nlog], sizeof(vlog[nlog]));
			bpf_program__set_log_level(prog, 4); /* BPF_LOG_STATS: the totals only */
			nlog++;
		}
	}
	/* one sample under construction per CPU, indexed by CPU number */
	int possible = libbpf_num_possible_cpus();
	if (possible <= 0 || bpf_map__set_max_entries(s->skel->maps.scratch, (__u32)possible) != 0) {
		snprintf(err, errlen, "failed to size the BPF scratch map: %s", strerror(errno));
		goto out;
	}
	uint64_t t0 = mono_ns();
	failed_prog[0] = '\0';
	if (profile_bpf__load(s->skel) != 0) {
		e = errno;
		/* over the verifier's budget (a million instructions: E2BIG; 8192
		 * branches pending: EFAULT before 6.x): the caller tries fewer frames */
		if ((e == E2BIG || e == EFAULT) && o->legacy) {
			rc = -E2BIG;
			goto out;
		}
		if (e == EPERM || e == EACCES)
			snprintf(err, errlen,
				 "not permitted to load eBPF programs; run as root (or grant "
				 "CAP_BPF, CAP_PERFMON and CAP_SYS_RESOURCE)");
		else
			snprintf(err, errlen,
				 "failed to load the BPF program: %s (run with -v for the "
				 "verifier's log)",
				 strerror(e));
		goto out;
	}
	if (bpf_program__autoload(s->skel->progs.profile_walk_more)) { /* the legacy walker's tail call */
		__u32 zero = 0;
		int fd = bpf_program__fd(s->skel->progs.profile_walk_more);
		if (bpf_map__update_elem(s->skel->maps.walk_more, &zero, sizeof(zero), &fd, sizeof(fd), BPF_ANY) != 0) {
			snprintf(err, errlen, "failed to set up the legacy walker's tail call: %s", strerror(errno));
			goto out;
		}
	}
	if (o->verbose) {
		say_verified(s, t0, vlog, nlog);
		s->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME); /* 5.8; said at close */
	}
	rc = 0;
out:
	return rc;
}

struct sampler *sampler_open(const struct sampler_opts *o, sampler_fn fn, void *ctx, char *err, size_t errlen)
{
	struct sampler *s = NULL;
	bool online[1024] = { false };
	int ncpus;

	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		snprintf(err, errlen,
			 "the kernel has no BTF (/sys/kernel/btf/vmlinux); jflame needs a kernel "
			 "built with CONFIG_DEBUG_INFO_BTF=y (Debian's are)");
		return NULL;
	}
	ncpus = online_cpus(online, 1024);
	if (ncpus <= 0) {
		snprintf(err, errlen, "failed to read /sys/devices/system/cpu/online");
		return NULL;
	}
	verbose_libbpf = o->verbose;
	libbpf_set_print(libbpf_log);

	s = calloc(1, sizeof(*s));
	if (!s)
		goto oom;
	s->fn = fn;
	s->ctx = ctx;
	s->o = *o;
	s->o.pids = NULL; /* the caller's; in the BPF map once loaded */
	s->stats_fd = -1;
	s->ncpus = ncpus;
	s->fds = malloc((size_t)ncpus * sizeof(*s->fds));
	s->links = calloc((size_t)ncpus, sizeof(*s->links));
	if (!s->fds || !s->links)
		goto oom;
	for (int i = 0; i < ncpus; i++)
		s->fds[i] = -1;

	/* Deeper stacks: raise kernel.perf_event_max_stack where we may. */
	s->max_stack = read_int(MAX_STACK_SYSCTL);
	if (s->max_stack > 0 && s->max_stack < PROFILE_MAX_FP_FRAMES &&
	    write_int(MAX_STACK_SYSCTL, PROFILE_MAX_FP_FRAMES) == 0) {
		s->old_max_stack = s->max_stack;
		s->max_stack = PROFILE_MAX_FP_FRAMES;
	}
	if (s->max_stack <= 0)
		s->max_stack = 127;

	/* the legacy walker's frames: as many as the verifier takes (its
	 * budget goes further on some kernels than on others), each program's
	 * halved while it is too large */
	struct legacy_depth d = { PROFILE_LEGACY_USER_FRAMES, PROFILE_LEGACY_CHUNK_FRAMES, PROFILE_LEGACY_OFF_FRAMES };
	int lr;
	while ((lr = skel_load(s, o, &d, err, errlen)) == -E2BIG) {
		uint32_t *f = strcmp(failed_prog, "profile_walk_more") == 0	 ? &d.chunk :
			      strcmp(failed_prog, "offcpu_sys_exit_legacy") == 0 ? &d.off :
										   &d.first;
		profile_bpf__destroy(s->skel);
		s->skel = NULL;
		if (*f <= 8)
			break;
		*f /= 2;
	}
	if (lr == -E2BIG)
		snprintf(err, errlen,
			 "failed to load the BPF program: the kernel's verifier refuses %s even with an "
			 "8-frame walker (run with -v for its log)",
			 failed_prog[0] ? failed_prog : "it");
	if (lr != 0)
		goto fail;
	s->user_frames = o->legacy ? d.off : PROFILE_MAX_USER_FRAMES;
	s->cpu_frames = PROFILE_MAX_USER_FRAMES;
	if (o->legacy) { /* the first program's frames, and on in tail calls */
		uint32_t more = d.first + PROFILE_LEGACY_TAIL_CALLS * d.chunk;
		s->cpu_frames = more < PROFILE_MAX_USER_FRAMES ? more : PROFILE_MAX_USER_FRAMES;
	}
	for (size_t i = 0; o->pids && i < o->npids; i++) {
		__u32 pid = (__u32)o->pids[i];
		__u8 one = 1;
		if (bpf_map__update_elem(s->skel->maps.pids, &pid, sizeof(pid), &one, sizeof(one), BPF_ANY) != 0) {
			snprintf(err, errlen, "failed to select pid %u: %s", pid, strerror(errno));
			goto fail;
		}
	}

	if (o->pids && o->follow_children) {
		s->fork_link = bpf_program__attach(s->p_fork);
		if (!s->fork_link) {
			snprintf(err, errlen, "failed to follow child processes (sched_process_fork): %s",
				 strerror(errno));
			goto fail;
		}
	}

	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.samples), handle, s, NULL);
	if (!s->rb) {
		snprintf(err, errlen, "failed to open the BPF ring buffer: %s", strerror(errno));
		goto fail;
	}
	return s;
oom:
	snprintf(err, errlen, "out of memory");
fail:
	sampler_close(s);
	return NULL;
}

int sampler_start(struct sampler *s, char *err, size_t errlen)
{
	bool online[1024] = { false };
	if (online_cpus(online, 1024) <= 0) {
		snprintf(err, errlen, "failed to read /sys/devices/system/cpu/online");
		return -1;
	}
	if (times_blocks(&s->o) && attach_offcpu(s, err, errlen) != 0)
		return -1;

	s->event = !opens_perf(&s->o) ? NULL : s->o.event ? s->o.event : event_kind_named("cpu");
	for (int cpu = 0; s->event && cpu < s->ncpus; cpu++) {
		if (!online[cpu])
			continue;
		int fd = open_event(s->event, s->o.period, s->o.freq, cpu);
		if (fd < 0 && s->event->fallback && cpu == 0 &&
		    (errno == ENOENT || errno == EOPNOTSUPP || errno == ENODEV)) {
			s->event = event_kind_named(s->event->fallback); /* no hardware counters (a VM) */
			fd = open_event(s->event, s->o.period, s->o.freq, cpu);
		}
		if (fd < 0) {
			if (errno == ENODEV)
				continue;
			perf_error(errno, s->event->perf_name, err, errlen);
			return -1;
		}
		s->fds[cpu] = fd;
		s->links[cpu] = bpf_program__attach_perf_event(s->p_sample, fd);
		if (!s->links[cpu]) {
			snprintf(err, errlen, "failed to attach the BPF program to CPU %d: %s", cpu, strerror(errno));
			return -1;
		}
		s->nopen++;
	}
	return 0;
}

int sampler_kernel_names(void *ctx, const uint64_t *addr, size_t n, char (*out)[PROFILE_KSYM_LEN])
{
	struct sampler *s = ctx;
	LIBBPF_OPTS(bpf_test_run_opts, run);
	if (!s->ksym_ok || !s->skel->bss || n > PROFILE_KSYM_BATCH)
		return -1;
	for (size_t i = 0; i < n; i++) {
		s->skel->bss->ksym_addr[i] = addr[i];
		s->skel->bss->ksym_out[i][0] = '\0';
	}
	s->skel->bss->ksym_n = (__u32)n;
	if (bpf_prog_test_run_opts(bpf_program__fd(s->skel->progs.ksym_names), &run) != 0) {
		s->ksym_ok = false;
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		const char *r = s->skel->bss->ksym_out[i];
		size_t len = strnlen(r, PROFILE_KSYM_LEN - 1);
		const char *plus = memchr(r, '+', len);
		len = plus ? (size_t)(plus - r) : 0; /* "0x...": no symbol there */
		memcpy(out[i], r, len);
		out[i][len] = '\0';
	}
	return 0;
}

int sampler_kernel_name(void *ctx, uint64_t addr, char *out, size_t len)
{
	char name[1][PROFILE_KSYM_LEN];
	if (len == 0 || sampler_kernel_names(ctx, &addr, 1, name) != 0)
		return -1;
	snprintf(out, len, "%s", name[0]);
	return name[0][0] ? 1 : 0;
}

int sampler_fd(const struct sampler *s)
{
	return ring_buffer__epoll_fd(s->rb);
}

int sampler_wait(struct sampler *s, int timeout_ms)
{
	struct epoll_event ev;
	int n = epoll_wait(ring_buffer__epoll_fd(s->rb), &ev, 1, timeout_ms);
	return n < 0 ? -errno : n;
}

int sampler_drain(struct sampler *s, uint32_t max_records, uint64_t max_ns, bool *more)
{
	s->budget_left = max_records ? max_records : 1;
	s->budget_end_ns = mono_ns() + max_ns;
	uint32_t given = s->budget_left;
	/* without a wait, no system call: the program wakes us only when the
	 * ring fills up */
	int m = ring_buffer__consume(s->rb);
	*more = m == BUDGET_SPENT;
	if (m < 0 && m != BUDGET_SPENT)
		return m;
	return (int)(given - s->budget_left);
}

uint64_t sampler_discard(struct sampler *s)
{
	uint64_t before = s->discarded;
	s->skip = true;
	while (ring_buffer__consume(s->rb) > 0)
		;
	s->skip = false;
	return s->discarded - before;
}

void sampler_stop(struct sampler *s)
{
	if (!s)
		return;
	bpf_link__destroy(s->switch_link);
	bpf_link__destroy(s->exit_link);
	s->switch_link = s->exit_link = NULL;
	for (int i = 0; s && i < s->ncpus; i++) {
		if (s->links[i])
			bpf_link__destroy(s->links[i]);
		s->links[i] = NULL;
		if (s->fds[i] >= 0)
			close(s->fds[i]);
		s->fds[i] = -1;
	}
}

void sampler_read_stats(struct sampler *s, struct sampler_stats *st)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t sum[PROFILE_STAT_MAX] = { 0 };
	memset(st, 0, sizeof(*st));
	if (ncpu <= 0)
		return;
	uint64_t *vals = calloc((size_t)ncpu, sizeof(*vals));
	if (!vals)
		return;
	for (__u32 k = 0; k < PROFILE_STAT_MAX; k++) {
		if (bpf_map__lookup_elem(s->skel->maps.stats, &k, sizeof(k), vals, (size_t)ncpu * sizeof(*vals), 0) !=
		    0)
			continue;
		for (int c = 0; c < ncpu; c++)
			sum[k] += vals[c];
	}
	free(vals);
	st->samples = sum[PROFILE_STAT_SAMPLES];
	st->dropped = sum[PROFILE_STAT_DROPPED] + s->discarded;
	st->kstack_failed = sum[PROFILE_STAT_KSTACK_FAILED];
	st->ustack_failed = sum[PROFILE_STAT_USTACK_FAILED];
	st->short_blocks = sum[PROFILE_STAT_OFFCPU_SHORT];
	st->short_ns = sum[PROFILE_STAT_OFFCPU_SHORT_NS];
	st->blocks_lost = sum[PROFILE_STAT_OFFCPU_LOST];
}

int sampler_max_user_frames(const struct sampler *s)
{
	return s->max_stack < PROFILE_MAX_FP_FRAMES ? s->max_stack : PROFILE_MAX_FP_FRAMES;
}

int sampler_walker_frames(const struct sampler *s, bool offcpu)
{
	return (int)(offcpu ? s->user_frames : s->cpu_frames);
}

/* pid's range of stub_rows given back. */
static void stub_range_free(struct sampler *s, pid_t pid)
{
	for (size_t i = 0; i < s->nstub_ranges; i++)
		if (s->stub_ranges[i].pid == pid) {
			memmove(&s->stub_ranges[i], &s->stub_ranges[i + 1],
				(s->nstub_ranges - i - 1) * sizeof(s->stub_ranges[0]));
			s->nstub_ranges--;
			return;
		}
}

int sampler_stub_rows(struct sampler *s, pid_t pid, const struct stub_row *rows, size_t n, __u32 *first)
{
	__u32 at = 0;
	size_t i;
	stub_range_free(s, pid);
	if (n == 0 || n > PROFILE_STUB_ROWS || s->nstub_ranges >= SAMPLER_STUB_JVMS)
		return -ENOSPC;
	/* the first gap that holds them */
	for (i = 0; i < s->nstub_ranges; i++) {
		if (s->stub_ranges[i].first - at >= n)
			break;
		at = s->stub_ranges[i].first + s->stub_ranges[i].count;
	}
	if (PROFILE_STUB_ROWS - at < n)
		return -ENOSPC;
	for (size_t k = 0; k < n; k++) {
		__u32 key = at + (__u32)k;
		if (bpf_map__update_elem(s->skel->maps.stub_rows, &key, sizeof(key), &rows[k], sizeof(rows[k]),
					 BPF_ANY) != 0)
			return -errno;
	}
	memmove(&s->stub_ranges[i + 1], &s->stub_ranges[i], (s->nstub_ranges - i) * sizeof(s->stub_ranges[0]));
	s->stub_ranges[i] = (struct stub_range){ pid, at, (__u32)n };
	s->nstub_ranges++;
	*first = at;
	return 0;
}

int sampler_walk_hotspot(struct sampler *s, pid_t pid, const struct hotspot_proc *hp)
{
	__u32 key = (__u32)pid;
	if (!hp)
		stub_range_free(s, pid);
	if (!hp)
		return bpf_map__delete_elem(s->skel->maps.hotspot_procs, &key, sizeof(key), 0) == 0 ? 0 : -errno;
	return bpf_map__update_elem(s->skel->maps.hotspot_procs, &key, sizeof(key), hp, sizeof(*hp), BPF_ANY) == 0 ?
		       0 :
		       -errno;
}

int sampler_max_kernel_frames(const struct sampler *s)
{
	return s->max_stack < PROFILE_MAX_KERNEL_FRAMES ? s->max_stack : PROFILE_MAX_KERNEL_FRAMES;
}

const struct event_kind *sampler_event(const struct sampler *s)
{
	return s->event;
}

int sampler_ncpus(const struct sampler *s)
{
	return s->nopen;
}

void sampler_close(struct sampler *s)
{
	if (!s)
		return;
	sampler_stop(s);
	if (s->stats_fd >= 0) {
		say_run_time(s);
		close(s->stats_fd);
	}
	bpf_link__destroy(s->fork_link);
	ring_buffer__free(s->rb);
	profile_bpf__destroy(s->skel);
	if (s->old_max_stack > 0)
		write_int(MAX_STACK_SYSCTL, s->old_max_stack);
	free(s->fds);
	free(s->links);
	free(s);
}
