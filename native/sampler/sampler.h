/* sampler.h - the eBPF stack sampler: loads profile.bpf.c, opens a perf event
 * per online CPU, and hands each sample from the ring buffer to a callback. */
#ifndef JFLAME_SAMPLER_H
#define JFLAME_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>
#include "event_table.h"
#include "profile.h"

struct sampler_opts {
	int freq;	   /* samples per second per CPU */
	const pid_t *pids; /* sample only these processes (tgids); NULL = all */
	size_t npids;
	bool follow_children;		/* with pids: processes they fork are sampled too */
	bool include_idle;		/* also sample the idle task */
	const struct event_kind *event; /* the row (event_table.h): its perf event (EVENT_PERF), its
					   blocks off the CPU (EVENT_BLOCKS); NULL: cpu's perf event */
	uint64_t period;		/* a row with a period: this one instead (record -c); 0 its own */
	uint64_t min_block_ns;		/* offcpu: shorter blocks are counted, not recorded */
	bool verbose;			/* libbpf's messages, and each program's verification, on stderr */
	bool legacy;			/* load the _legacy programs (kernel_features.h: before 5.18) */
	bool pids_only;			/* perf samples without stacks: only whose they are (the walker not loaded) */
};

struct sampler_stats {
	uint64_t samples; /* taken for selected tasks */
	uint64_t dropped; /* lost: ring buffer full, or left unread at the end (sampler_discard) */
	uint64_t kstack_failed, ustack_failed;
	uint64_t short_blocks, short_ns; /* off-CPU blocks under min_block_ns, and their time */
	uint64_t blocks_lost;		 /* off-CPU blocks lost: too many threads off the CPU at once */
};

/* s holds `size` bytes: the header, the kernel stack and as many user frames
 * as the sample has (struct profile_sample's user arrays are cut there). */
typedef void (*sampler_fn)(void *ctx, const struct profile_sample *s, size_t size);

struct sampler;

#define SAMPLER_RING_MIN	  (2u << 20)
#define SAMPLER_RING_MAX	  (16u << 20)
#define SAMPLER_RING_SAMPLE_BYTES 8192 /* a JVM sample of ~300 frames and its kernel stack */
/* The BPF ring's size for freq samples per second on each of ncpus CPUs: a
 * second of samples of SAMPLER_RING_SAMPLE_BYTES, rounded up to a power of two,
 * from SAMPLER_RING_MIN to SAMPLER_RING_MAX; SAMPLER_RING_MAX with offcpu (its
 * rate has no bound) or an unknown rate. The ring's data pages are resident
 * from the start, twice: this is most of jflame's memory at low rates. */
uint32_t sampler_ring_bytes(int freq, int ncpus, bool offcpu);

/* Checks privileges and kernel features, loads and attaches. NULL with one line
 * naming what is missing and how to get it in err. */
struct sampler *sampler_open(const struct sampler_opts *o, sampler_fn fn, void *ctx, char *err, size_t errlen);
/* Starts sampling: the perf events, off-CPU's tracepoints and the fork
 * tracepoint attached. Apart from sampler_open so that the JVMs' walker
 * entries (sampler_walk_hotspot) are in before the first sample: a JVM's
 * sample without one is walked by frame pointers, which it has not. 0, or -1
 * with err said. */
int sampler_start(struct sampler *s, char *err, size_t errlen);
/* The kernel's name for a kernel text address (its own kallsyms lookup, run
 * by a BPF program: nothing of /proc/kallsyms is read or kept): 1 with the
 * symbol's name in out, 0 when no symbol covers addr, -1 when the kernel
 * cannot say (before 5.14: use /proc/kallsyms). ctx: the sampler. */
int sampler_kernel_name(void *ctx, uint64_t addr, char *out, size_t len);
/* The same for n <= PROFILE_KSYM_BATCH addresses at once (one system call):
 * out[i] gets the name, "" where no symbol covers addr[i]; 0, or -1. */
int sampler_kernel_names(void *ctx, const uint64_t *addr, size_t n, char (*out)[PROFILE_KSYM_LEN]);
/* An fd (epoll) readable when the ring fills up (wait on it with others),
 * then read the ring with sampler_drain(). */
int sampler_fd(const struct sampler *s);
/* Waits up to timeout_ms, less when the ring fills up, without reading it:
 * the caller can look at the targets (their class unloading) before the
 * samples taken meanwhile are read. >= 0, or a negative errno. */
int sampler_wait(struct sampler *s, int timeout_ms);
/* The drain's budget: after this many records or this much time, sampler_drain
 * returns (to the caller's deadline, signals and windows) with the rest left in
 * the ring; a ring that user space cannot keep up with fills, and the kernel
 * drops and counts what does not fit. */
#define SAMPLER_DRAIN_RECORDS 4096
#define SAMPLER_DRAIN_NS      50000000ULL
/* Hands the samples in the ring to fn, at most max_records of them and for
 * about max_ns (the sample at hand is finished): *more says the budget ran
 * out with samples left. Samples handled, or a negative errno. */
int sampler_drain(struct sampler *s, uint32_t max_records, uint64_t max_ns, bool *more);
/* Empties the ring without handing anything on: what it held is counted as
 * lost (sampler_stats.dropped). How many. */
uint64_t sampler_discard(struct sampler *s);
/* Stops sampling (detaches the perf events); samples already taken can still
 * be drained with sampler_drain() until it returns 0. */
void sampler_stop(struct sampler *s);
void sampler_read_stats(struct sampler *s, struct sampler_stats *st);
/* Frames the kernel walks at most (kernel.perf_event_max_stack, capped): the
 * user stacks of processes that are not walked as JVMs. */
int sampler_max_user_frames(const struct sampler *s);
/* The HotSpot walker's depth in the programs loaded, for CPU samples or
 * off-CPU ones (sampler_opts.legacy: as deep as the kernel's verifier took;
 * CPU samples go on in tail calls, off-CPU ones end there). */
int sampler_walker_frames(const struct sampler *s, bool offcpu);
/* JVMs with stub rows at once, at most (hotspot_procs holds 256). */
#define SAMPLER_STUB_JVMS 256
/* pid's stubs' unwinding rows (hotspot_stubs_rows) put in the walker's
 * stub_rows map, where they begin in *first (for its hotspot_proc): 0, or a
 * negative errno (-ENOSPC: no room left). Rows it had before are given back. */
int sampler_stub_rows(struct sampler *s, pid_t pid, const struct stub_row *rows, size_t n, __u32 *first);
/* Walks pid's user stacks with the HotSpot walker from now on, with layout hp
 * (NULL: back to the kernel's frame-pointer walk). 0 or a negative errno. */
int sampler_walk_hotspot(struct sampler *s, pid_t pid, const struct hotspot_proc *hp);
int sampler_max_kernel_frames(const struct sampler *s);
/* The row of the perf event sampled on (cpu's fallback taken where its own is
 * missing); NULL without one (offcpu). */
const struct event_kind *sampler_event(const struct sampler *s);
int sampler_ncpus(const struct sampler *s);
void sampler_close(struct sampler *s);

#endif
