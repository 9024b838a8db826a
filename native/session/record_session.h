/* record_session.h - one `jflame record` session: its options, windows and state, shared by the
 * session's files (sample_gate.c, record_windows.c, record_outputs.c); the command fills the options. */
#ifndef JFLAME_RECORD_SESSION_H
#define JFLAME_RECORD_SESSION_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "kernel_features.h"
#include "agent_samples.h"
#include "attach.h"
#include "heatmap.h"
#include "out_file.h"
#include "format_table.h"
#include "recording.h"
#include "sample_pipeline.h"
#include "stacks_order.h"
#include "u64_map.h"

#define MAX_OUTPUTS 16
#define MAX_SPECS   (MAX_OUTPUTS * 3) /* outputs once the naming rule of several events is applied */
#define MAX_PIDS    256
#define ERR_LEN	    1024
/* After a stop signal: attaches under way may finish for this long, then are
 * told to stop and killed this much later (well under the 2 s a stop takes). */
#define ATTACH_GRACE_NS 400000000ULL
#define ATTACH_STOP_NS	200000000ULL
#define MAX_DEFERRED	8192 /* samples kept while their JVM is being attached to (~40 MiB) */
#define PID_LIMIT	4194304
#define MAX_LABELS	16
/* A window is written this long after its end: its samples that waited for
 * names (SAMPLE_LATE_NS) or were read late (every 100 ms) are in by then. */
#define WINDOW_GRACE_NS (SAMPLE_LATE_NS + 200000000ULL)
/* The recording loop wakes up every TICK_BUSY_NS while something settles (a
 * JVM's walker or agent, attaches, late names, the agents' rings), else every
 * TICK_STEADY_NS: each wake-up costs ~50 us of CPU on a VM, most of jflame's
 * steady cost at 100 ms. The ring's fill level, the targets' exits and
 * signals wake it at once either way. */
#define TICK_BUSY_NS   100000000ULL
#define TICK_STEADY_NS 1000000000ULL
#define SETTLE_NS      3000000000ULL /* busy for this long from the start and after a new JVM */
#define PROGRESS_NS    250000000ULL
/* Samples left in the ring when sampling stops are read for this long at most
 * (the rest is counted as dropped): the first signal ends a recording in 2 s. */
#define END_DRAIN_NS 1000000000ULL
/* A window keeps at most this many bytes of distinct stacks of one process,
 * and of all: past that, a sample whose stack the window does not have yet
 * keeps its root frames and WINDOW_CAPPED_FRAME (its count is kept, its
 * frames are not); said once per process and window. A process that makes
 * every sample a new stack cannot grow jflame's memory without bound. */
#define WINDOW_PID_STACK_BYTES (32ull << 20)
#define WINDOW_STACK_BYTES     (256ull << 20)
#define WINDOW_CAPPED_FRAME    "[jflame: too many distinct stacks]"
/* The sample log's thread of the idle task's samples (pid 0): the heat map leaves them out. */
#define RECORD_IDLE_THREAD "[idle]"
/* Without --window, processes that exited are forgotten this often. */
#define FORGET_NS 10000000000ULL

/* The recordings of one run, by where their samples come from: the
 * sampler's (one of its rows in event_table.c: cpu, offcpu, wall, a perf
 * event), and the agents' (alloc, lock; a row's agent kind is its slot
 * after EV_AGENT). */
enum rec_event { EV_BPF, EV_AGENT, EV_N = EV_AGENT + 2 };
#define EV_ALLOC (EV_AGENT + AGENT_ALLOC)
#define EV_LOCK	 (EV_AGENT + AGENT_LOCK)
#define J_ALLOC	 AGENT_ALLOC /* index of the agents' recordings in a window */
#define J_LOCK	 AGENT_LOCK

struct record_opts {
	bool all;
	pid_t pids[MAX_PIDS];
	size_t npids;
	int freq;
	double duration;		/* seconds; 0 = until Ctrl-C or every target exited */
	const char *outputs[MAX_SPECS]; /* after the naming rule: one event each */
	const struct profile_format *formats[MAX_SPECS];
	enum rec_event out_ev[MAX_SPECS];
	size_t noutputs;
	const char *user_outputs[MAX_OUTPUTS]; /* as given with -o */
	const struct profile_format *user_formats[MAX_OUTPUTS];
	size_t nuser_outputs;
	const struct event_kind *ev[EV_N]; /* -e: each slot's row (event_table.h), NULL off */
	bool ev_given;			   /* -e was given */
	size_t period;			   /* -c: a counted perf event's period (0: its row's) */
	bool period_set;
	uint64_t alloc_interval; /* --alloc-interval: bytes between allocation samples */
	uint64_t lock_min_ns;	 /* --lock-min: shorter monitor waits are counted, not recorded */
	bool alloc_interval_set, lock_min_set, count_view, freq_set;
	uint64_t min_block_ns; /* --min-block: shorter off-CPU blocks are counted, not recorded */
	bool min_block_set;
	bool include_idle, verbose;
	bool attach;		   /* --attach: load the agent into the JVMs recorded */
	bool no_attach;		   /* --no-attach: never load it, not even for -e alloc/lock */
	bool load_agent;	   /* what the two and the events make of it */
	bool no_inline;		   /* compiled frames without their inlined callees */
	bool no_walker;		   /* JVMs' stacks by frame pointers only, as perf does */
	const char *agent;	   /* --agent, else found next to jflame */
	const char *agent_options; /* for attached and launched JVMs */
	int attach_timeout_ms;
	char **command; /* launch mode: the command after the options */
	int ncommand;
	uint64_t window_ns;  /* --window: a recording cut into windows this long; 0 one window */
	size_t keep;	     /* --keep: window files kept per output (0 all) */
	uint64_t keep_bytes; /* --keep-bytes: bytes of window files kept per output (0 all) */
	const char *push;    /* --push: a Pyroscope server's URL */
	const char *app;     /* --app: every series' application name */
	const char *label_keys[MAX_LABELS], *label_values[MAX_LABELS]; /* --label k=v */
	size_t nlabels;
	const char *push_token, *push_basic_auth, *push_tenant, *push_ca; /* options, else environment */
	int push_timeout_ms;
};

/* One window of a recording (the whole recording without --window): the
 * samples taken in [start_ns, end_ns), each in exactly one window. */
struct window {
	bool open;
	uint64_t seq;		   /* 1, 2, ... */
	uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC, as samples' times; end UINT64_MAX: open-ended */
	int64_t start_real_ns;	   /* the wall clock at start_ns: %t, pprof's time */
	struct recording rec;	   /* the sampler's samples: the one store (frames with source lines when an
				 output wants them; the sample log when .jfr or .html does) */
	struct out_file stacks;	   /* the .stacks output, written as samples come */
	bool stacks_open;
	char stacks_path[4096];
	struct stacks_order stacks_order; /* its samples on their way, put in time order */
	uint64_t handled, truncated, stack_errors, unwind_failed, oom;
	struct recording jrec[2]; /* the agents' samples: allocations (J_ALLOC) and locks (J_LOCK) */
	uint64_t jhandled[2], jtruncated[2];
	/* the bytes of the distinct stacks each process added, for
	 * WINDOW_PID_STACK_BYTES; and of all */
	struct pid_bytes {
		uint32_t pid;
		bool said;
		uint64_t bytes;
	} * pid_bytes;
	size_t npid_bytes, pid_bytes_cap;
	struct u64_map pid_ids; /* pid -> pid_bytes index */
	uint64_t stack_bytes;
	uint64_t capped; /* samples whose new stack was cut to its roots */
};

/* A window of the sampler's event once written: what its regression check
 * needs besides the recording (files: the paths written, space-separated). */
struct record_window_done {
	uint64_t seq;
	int64_t start_real_ns;
	const char *when, *files;
	pid_t pid;
};
typedef void (*record_window_sink)(void *ctx, const struct recording *rec, const struct record_window_done *wd);

struct record {
	struct record_opts o;
	struct kernel_features kf; /* probed at start: the BPF programs' set, and what the kernel costs */
	struct str_intern *si;
	struct symbolizer *sy;
	struct sampler *sampler;
	bool drain_more;      /* the last drain ran out of budget: samples are waiting */
	struct window win[2]; /* the current window, and the next once samples reach past its end */
	int cur;
	int64_t real_minus_mono_ns;		/* CLOCK_REALTIME - CLOCK_MONOTONIC when recording started */
	uint64_t dropped_before;		/* ring-buffer losses counted into windows already closed */
	uint64_t short_before, short_ns_before; /* off-CPU blocks under --min-block, likewise */
	uint64_t closed;			/* windows written */
	uint64_t total_samples, total_lost;	/* over the windows closed */
	uint64_t no_window;			/* samples dropped: no memory for a window */
	uint64_t offcpu_outside;		/* blocks wholly before the start or after -d's time: left out */
	struct pusher *pusher;			/* --push */
	record_window_sink window_done;		/* --baseline: each window of the sampler's event once written */
	void *window_done_ctx;
	uint64_t pushed_profiles;
	bool want_lines, want_heatmap, want_stacks;
	bool want_times; /* a .jfr output: each sample's time, in its window's store's timeline */
	/* the agents' rings */
	struct agent_samples *agents;
	uint64_t ring_dropped_before[2], ring_short_before; /* counted into windows already closed */
	uint64_t ring_samples;
	struct sample_pipeline *pipe; /* the sampler's samples: named, folded, handed to record_windows_add_folded */
	/* attaching */
	char agent[4096];
	struct attach_opts attach;
	struct attach_queue *aq;      /* -a: JVMs seen without the agent get it */
	uint8_t *considered;	      /* -a: bitmap of JVM pids looked at for attaching */
	struct sample_queue deferred; /* samples of JVMs being attached to */
	int fp_warnings;	      /* "PreserveFramePointer is off" lines printed */
	int pidfd[MAX_PIDS];	      /* -p: each target's pidfd, -1 where none (its /proc/PID/stat is read) */
	size_t npidfds;
	int child_pidfd;	/* launch mode: the command's pidfd, -1 where none */
	bool pidfd_missing;	/* an exit is learned by looking (busy ticks) */
	int epfd;		/* what the loop waits on: the ring, the pidfds */
	size_t walkers_pending; /* JVMs whose walker waits for their code cache */
	/* launch mode */
	pid_t child;
	int child_status;
	bool child_exited;
	int go_fd; /* write end: lets the launched child exec */
	int launch_status_fd;
	bool tty_progress;
	volatile sig_atomic_t *stop;			/* the command's count of stop signals (SIGINT, SIGTERM) */
	volatile sig_atomic_t *hup;			/* --window: set by SIGHUP, which closes the window early */
	volatile pid_t *launched;			/* launch mode: the command the signals are passed on to */
	uint64_t start_ns, last_refresh, last_progress; /* the loop's: when sampling began, refreshed, said */
	uint64_t last_forget;				/* exited processes last forgotten */
	uint64_t stop_ns; /* when -d's time is up (UINT64_MAX: none; the end once it came): off-CPU
			   * time past it, or before start_ns, is not counted */
	/* The JVMs of the targets (a launched command's children too) as last seen
	 * alive: what the graph says of them holds after they exit and are forgotten. */
	struct jvm_fact {
		pid_t pid;
		bool walked; /* by the HotSpot walker */
		int fp;	     /* frame pointers: 1 on, 0 off, -1 unknown */
	} jvm_facts[64];
	size_t njvm_facts;
	bool await_agents;	   /* -e alloc/lock alone of -p targets: -d's clock starts when their events are on */
	uint64_t cache_mismatches; /* JFLAME_STACK_CACHE=verify: kept stacks folded differently */
};

static inline uint64_t record_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The word of slot ev's event in output names and lines (its row's). */
static inline const char *ev_word(const struct record_opts *o, enum rec_event ev)
{
	return o->ev[ev] ? o->ev[ev]->word : "";
}

/* Whether slot ev records, and how many do. */
static inline bool ev_on(const struct record_opts *o, enum rec_event ev)
{
	return o->ev[ev] != NULL;
}

static inline size_t ev_count(const struct record_opts *o)
{
	size_t n = 0;
	for (int i = 0; i < EV_N; i++)
		n += o->ev[i] != NULL;
	return n;
}

/* Whether the sampler's event has flag (EVENT_PERF, EVENT_BLOCKS, ...). */
static inline bool ev_bpf_has(const struct record_opts *o, unsigned flag)
{
	return o->ev[EV_BPF] && (o->ev[EV_BPF]->flags & flag);
}

/* Sets the session up from r->o (r->stop, r->hup, r->launched and the fds at -1
 * set by the command): the agent found, the symbolizer, the pipeline, the
 * attach queue, the first window (its .stacks file), the pusher. 0, or -1
 * with one line in err. */
int record_session_open(struct record *r, char *err, size_t errlen);
/* record_session_open's return for a kernel jflame does not run on (exit 2) */
#define RECORD_KERNEL_UNSUPPORTED (-2)
/* Starts sampling (the gate as the sampler's sink), lets a launched command
 * run, starts walkers and attaches, opens the agents' rings. tty: progress
 * lines on standard error. 0, or -1 with one line in err. */
int record_session_start(struct record *r, bool tty, char *err, size_t errlen);
/* One turn of the command's loop at now: waits for samples or the next tick,
 * reads them, refreshes what it knows, rotates windows. 0 go on, 1 the
 * targets have exited, -1 with one line in err. */
int record_session_step(struct record *r, uint64_t now, char *err, size_t errlen);
/* Stops sampling and takes in every sample left; with --window writes the
 * last windows. 0, or -1 with one line in err. */
int record_session_end(struct record *r, char *err, size_t errlen);
/* Says what the recording did and, without --window, writes each event's
 * outputs: 0, 1 (an event without samples or an output failed; said), or -1
 * with one line in err. */
int record_session_finish(struct record *r, char *err, size_t errlen);
void record_session_close(struct record *r);

#endif
