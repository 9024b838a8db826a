/* builtin-record.c - `jflame record`: options, launch mode, attaching, the main loop, and
 * the windows and outputs the folded samples of record/sample_pipeline.c and agent_samples.c go to. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent_options.h"
#include "agent_samples.h"
#include "attach.h"
#include "attach_queue.h"
#include "builtin.h"
#include "caps.h"
#include "cli_io.h"
#include "cli_num.h"
#include "diff_graph.h"
#include "window_regress.h"
#include "flamegraph.h"
#include "heatmap.h"
#include "html_heatmap.h"
#include "out_file.h"
#include "out_name.h"
#include "pprof.h"
#include "push.h"
#include "proc_info.h"
#include "recording.h"
#include "sample_pipeline.h"
#include "sample_ring.h"
#include "sampler.h"
#include "speedscope.h"
#include "stack_table.h"
#include "stacks_order.h"
#include "str_intern.h"
#include "symbolize.h"

#define MAX_OUTPUTS 16
#define MAX_SPECS (MAX_OUTPUTS * 3) /* outputs once the naming rule of several events is applied */
#define MAX_PIDS 256
#define ERR_LEN 1024
/* After a stop signal: attaches under way may finish for this long, then are
 * told to stop and killed this much later (well under the 2 s a stop takes). */
#define ATTACH_GRACE_NS 400000000ULL
#define ATTACH_STOP_NS 200000000ULL
#define MAX_DEFERRED 8192 /* samples kept while their JVM is being attached to (~40 MiB) */
#define PID_LIMIT 4194304
#define MAX_LABELS 16
/* A window is written this long after its end: its samples that waited for
 * names (SAMPLE_LATE_NS) or were read late (every 100 ms) are in by then. */
#define WINDOW_GRACE_NS (SAMPLE_LATE_NS + 200000000ULL)
/* The recording loop wakes up every TICK_BUSY_NS while something settles (a
 * JVM's walker or agent, attaches, late names, the agents' rings), else every
 * TICK_STEADY_NS: each wake-up costs ~50 us of CPU on a VM, most of jflame's
 * steady cost at 100 ms. The ring's fill level, the targets' exits and
 * signals wake it at once either way. */
#define TICK_BUSY_NS 100000000ULL
#define TICK_STEADY_NS 1000000000ULL
#define SETTLE_NS 3000000000ULL /* busy for this long from the start and after a new JVM */
#define PROGRESS_NS 250000000ULL

/* What a recording measures (-e). */
enum rec_mode { MODE_CPU, MODE_OFFCPU, MODE_WALL };

/* The recordings of one run: the sampler's (cpu, offcpu or wall), and the
 * agents' allocation and lock samples. */
enum rec_event { EV_BPF, EV_ALLOC, EV_LOCK, EV_N };
#define J_ALLOC AGENT_ALLOC /* index of the agents' recordings in a window */
#define J_LOCK AGENT_LOCK

enum out_format { OUT_SVG, OUT_FOLDED, OUT_STACKS, OUT_PPROF, OUT_SPEEDSCOPE, OUT_HEATMAP };

struct record_opts {
	bool all;
	pid_t pids[MAX_PIDS];
	size_t npids;
	int freq;
	double duration; /* seconds; 0 = until Ctrl-C or every target exited */
	const char *outputs[MAX_SPECS];     /* after the naming rule: one event each */
	enum out_format formats[MAX_SPECS];
	enum rec_event out_ev[MAX_SPECS];
	size_t noutputs;
	const char *user_outputs[MAX_OUTPUTS]; /* as given with -o */
	enum out_format user_formats[MAX_OUTPUTS];
	size_t nuser_outputs;
	const char *event;         /* the perf event of CPU samples; NULL: chosen */
	enum rec_mode mode;        /* -e cpu (default), offcpu, wall */
	bool ev_given;             /* -e was given */
	bool bpf_on;               /* a sampler event (cpu, offcpu, wall, a perf event) is recorded */
	const char *bpf_word;      /* its word in output names: cpu, offcpu or wall */
	bool alloc, lock;          /* -e alloc, -e lock: the agents' samples */
	uint64_t alloc_interval;   /* --alloc-interval: bytes between allocation samples */
	uint64_t lock_min_ns;      /* --lock-min: shorter monitor waits are counted, not recorded */
	bool alloc_interval_set, lock_min_set, count_view, freq_set;
	uint64_t min_block_ns;     /* --min-block: shorter off-CPU blocks are counted, not recorded */
	bool min_block_set;
	bool include_idle, verbose;
	bool attach;               /* --attach: load the agent into the JVMs recorded */
	bool no_attach;            /* --no-attach: never load it, not even for -e alloc/lock */
	bool load_agent;           /* what the two and the events make of it */
	bool no_inline;            /* compiled frames without their inlined callees */
	bool no_walker;            /* JVMs' stacks by frame pointers only, as perf does */
	const char *agent;         /* --agent, else found next to jflame */
	const char *agent_options; /* for attached and launched JVMs */
	int attach_timeout_ms;
	char **command;            /* launch mode: the command after the options */
	int ncommand;
	uint64_t window_ns;        /* --window: a recording cut into windows this long; 0 one window */
	size_t keep;               /* --keep: window files kept per output (0 all) */
	uint64_t keep_bytes;       /* --keep-bytes: bytes of window files kept per output (0 all) */
	const char *push;          /* --push: a Pyroscope server's URL */
	const char *app;           /* --app: every series' application name */
	const char *label_keys[MAX_LABELS], *label_values[MAX_LABELS]; /* --label k=v */
	size_t nlabels;
	const char *push_token, *push_basic_auth, *push_tenant, *push_ca; /* options, else environment */
	int push_timeout_ms;
	const char *baseline;      /* --baseline: first, previous:N or a profile file */
	bool confirm_given, alpha_given; /* --confirm, --alpha (they need --baseline) */
	struct window_regress_opts regress;
};

static const struct record_opts defaults = {
	.freq = 99,
	.min_block_ns = 1000, /* 1 us, offcputime's default */
	.alloc_interval = SAMPLE_RING_DEFAULT_ALLOC_INTERVAL,
	/* 100 us: a contended enter that waits less mostly spun and got the
	 * monitor; the agent walks the waiter's stack only for longer waits, so
	 * its cost (a few us a wait) stays a small part of the time blocked */
	.lock_min_ns = 100000,
	.bpf_on = true,
	.bpf_word = "cpu",
	.agent_options = "",
	.attach_timeout_ms = ATTACH_DEFAULT_TIMEOUT_MS,
	.regress = { .b = { .alpha = 0.01, .confirm = 2 } },
};

/* One window of a recording (the whole recording without --window): the
 * samples taken in [start_ns, end_ns), each in exactly one window. */
struct window {
	bool open;
	uint64_t seq;               /* 1, 2, ... */
	uint64_t start_ns, end_ns;  /* CLOCK_MONOTONIC, as samples' times; end UINT64_MAX: open-ended */
	int64_t start_real_ns;      /* the wall clock at start_ns: %t, pprof's time */
	struct recording rec;
	struct recording rec_lines; /* pprof and speedscope: the stacks with interpreted frames' source lines */
	struct heatmap heatmap;     /* the .html output: every sample with its time */
	struct out_file stacks;     /* the .stacks output, written as samples come */
	bool stacks_open;
	char stacks_path[4096];
	struct stacks_order stacks_order; /* its samples on their way, put in time order */
	uint64_t handled, truncated, stack_errors, unwind_failed, oom;
	struct recording jrec[2];   /* the agents' samples: allocations (J_ALLOC) and locks (J_LOCK) */
	uint64_t jhandled[2], jtruncated[2];
};

struct record {
	struct record_opts o;
	struct str_intern *si;
	struct symbolizer *sy;
	struct sampler *sampler;
	struct window win[2];       /* the current window, and the next once samples reach past its end */
	int cur;
	int64_t real_minus_mono_ns; /* CLOCK_REALTIME - CLOCK_MONOTONIC when recording started */
	uint64_t dropped_before;    /* ring-buffer losses counted into windows already closed */
	uint64_t short_before, short_ns_before; /* off-CPU blocks under --min-block, likewise */
	uint64_t closed;            /* windows written */
	uint64_t total_samples, total_lost; /* over the windows closed */
	uint64_t no_window;         /* samples dropped: no memory for a window */
	struct pusher *pusher;      /* --push */
	struct window_regress *regress; /* --baseline */
	uint64_t pushed_profiles;
	bool want_lines, want_heatmap, want_stacks;
	/* the agents' rings */
	struct agent_samples *agents;
	uint64_t ring_dropped_before[2], ring_short_before; /* counted into windows already closed */
	uint64_t ring_samples;
	struct sample_pipeline *pipe; /* the sampler's samples: named, folded, handed to on_folded */
	/* attaching */
	char agent[4096];
	struct attach_opts attach;
	struct attach_queue *aq;       /* -a: JVMs seen without the agent get it */
	uint8_t *considered;           /* -a: bitmap of JVM pids looked at for attaching */
	struct sample_queue deferred;  /* samples of JVMs being attached to */
	int fp_warnings;               /* "PreserveFramePointer is off" lines printed */
	int pidfd[MAX_PIDS];           /* -p: each target's pidfd, -1 where none (its /proc/PID/stat is read) */
	size_t npidfds;
	int child_pidfd;               /* launch mode: the command's pidfd, -1 where none */
	bool pidfd_missing;            /* an exit is learned by looking (busy ticks) */
	int epfd;                      /* what the loop waits on: the ring, the pidfds */
	size_t walkers_pending;        /* JVMs whose walker waits for their code cache */
	/* launch mode */
	pid_t child;
	int child_status;
	bool child_exited;
	int go_fd;        /* write end: lets the launched child exec */
	int launch_status_fd;
	bool tty_progress;
};

/* SIGINT, SIGTERM (SIGHUP without --window) counted: the first stops the
 * recording and writes it (attaches under way get ATTACH_GRACE_NS), the
 * second ends every wait at once; the outputs are written either way. */
static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t hup_closes_window, hup_requested; /* --window: SIGHUP closes the window early */
static volatile pid_t launched; /* launch mode: signals are passed on to the command */

static void on_signal(int sig)
{
	if (sig == SIGHUP && hup_closes_window) {
		hup_requested = 1;
		return;
	}
	if (stop_requested < 2)
		stop_requested++;
	if (launched > 0)
		kill(launched, sig);
}

static const char usage[] =
	"usage: jflame record (-p PID[,PID...] | -a) [-F HZ] [-d SECONDS] [-o FILE]...\n"
	"       jflame record [-F HZ] [-d SECONDS] [-o FILE]... -- java ARGS...\n"
	"\n"
	"Samples on-CPU stacks with eBPF and writes a mixed-mode flame graph: Java\n"
	"(interpreted, JIT-compiled and inlined, read from the JVM's own memory: nothing\n"
	"is loaded into it), JVM, native and kernel frames in one stack per sample.\n"
	"\n"
	"  -p, --pid PID[,PID...]  record these processes (JVMs as they run)\n"
	"  -a, --all-cpus          record every process on the host\n"
	"  -- COMMAND...           launch COMMAND (java ... gets the agent,\n"
	"                          -XX:+PreserveFramePointer and -XX:+DebugNonSafepoints;\n"
	"                          another command passes them in JAVA_TOOL_OPTIONS),\n"
	"                          record it and its children until it exits or -d,\n"
	"                          and exit with its exit code\n"
	"  -F, --freq HZ           samples per second per CPU (default 99)\n"
	"  -d, --duration SECONDS  stop after this long (default: at Ctrl-C, SIGTERM,\n"
	"                          or when every -p target has exited)\n"
	"  -o, --output FILE       write FILE, format by extension; may repeat; %t in\n"
	"                          the name is the (window's) start in UTC as\n"
	"                          20261125T015823Z, %p the pid, %h the host, %n the\n"
	"                          window's number, %e the event, %% a percent sign:\n"
	"                          .svg flame graph (default jflame.svg; none with --push),\n"
	"                          .folded/.collapsed folded stacks,\n"
	"                          .stacks timestamped samples (perf script text),\n"
	"                          .pb.gz pprof, .json speedscope,\n"
	"                          .html subsecond-offset heat map (FlameScope);\n"
	"                          '-' the flame graph on standard output (one event,\n"
	"                          no --window, no launched command); each name once\n"
	"  -e, --event EVENT[,EVENT]  what to record: one of cpu, offcpu, wall or a\n"
	"                          perf event, and/or alloc and lock:\n"
	"                          cpu: on-CPU stacks sampled at -F (default; cycles\n"
	"                          where the CPU counts them, else cpu-clock; or name\n"
	"                          the perf event: -e cycles, -e cpu-clock),\n"
	"                          offcpu: a sample each time a thread blocks, weighted\n"
	"                          by the nanoseconds it was off the CPU,\n"
	"                          wall: cpu-clock samples and off-CPU blocks together,\n"
	"                          each weighted by its time (a thread's width is its\n"
	"                          elapsed time),\n"
	"                          alloc: Java allocations sampled by the agent, weighted\n"
	"                          by bytes, the allocated class as leaf (_[a]),\n"
	"                          lock: contended synchronized monitors and\n"
	"                          java.util.concurrent locks (ReentrantLock & co.),\n"
	"                          weighted by the time blocked, the lock's class as\n"
	"                          leaf (_[l]);\n"
	"                          with several events each -o holds one: an output\n"
	"                          named with an event as a word (cpu.svg, x/alloc.svg)\n"
	"                          holds it, %e in a name is each event in turn, any\n"
	"                          other is written per event as NAME-EVENT.EXT\n"
	"      --alloc-interval SIZE  alloc: bytes between samples, on average (default\n"
	"                          512k; 64k, 2m; from 1k to 1g)\n"
	"      --lock-min DURATION  lock: record waits at least this long (default\n"
	"                          100us; a bare number is us); shorter ones are counted\n"
	"      --count             alloc, lock: folded, SVG and speedscope weigh stacks\n"
	"                          by samples, not bytes or time (pprof has both)\n"
	"      --min-block DURATION  offcpu, wall: record blocks at least this long\n"
	"                          (500us, 1ms, 2ms; a bare number is us; default 1us);\n"
	"                          shorter ones are counted in the subtitle\n"
	"      --include-idle      also sample the idle task\n"
	"      --attach            load the jflame agent into the JVMs recorded (the\n"
	"                          attach mechanism; -a: every JVM seen): compiled\n"
	"                          code named by JVMTI; -e alloc and -e lock load it\n"
	"                          themselves, nothing else needs it\n"
	"      --no-attach         never load the agent, not even for -e alloc or lock\n"
	"      --agent PATH        the agent library (default: next to jflame)\n"
	"      --agent-options OPTS  options for the agents jflame loads (e.g. msig)\n"
	"      --no-inline         compiled Java frames without their inlined callees\n"
	"      --no-walker         walk JVM stacks by frame pointers only (as perf)\n"
	"      --attach-timeout SECONDS  how long a JVM may take to answer (default 5)\n"
	"      --window DURATION   continuous mode: cut the recording into windows this\n"
	"                          long (30, 30s, 5m); each window's outputs are written\n"
	"                          when it closes; SIGHUP closes one early\n"
	"      --baseline first|previous:N|FILE  with --window: compare each window with\n"
	"                          the first window, the previous N (as replicates) or\n"
	"                          a saved profile; a frame that grew beyond sampling\n"
	"                          noise is said in a 'regression in window' line (the\n"
	"                          test of jflame diff --report; names normalized) once\n"
	"                          it has grown in --confirm windows in a row\n"
	"      --diff-out FILE     with --baseline: a differential graph (.svg, .html\n"
	"                          or .folded; %t %n as in -o) for each window with a\n"
	"                          regression\n"
	"      --on-regression CMD with --baseline: run CMD (sh -c) for such a window,\n"
	"                          with JFLAME_WINDOW, JFLAME_WINDOW_START, JFLAME_FRAME,\n"
	"                          JFLAME_BEFORE, JFLAME_AFTER, JFLAME_CHANGE (points),\n"
	"                          JFLAME_REGRESSIONS, JFLAME_FILES, JFLAME_DIFF set\n"
	"      --confirm N         --baseline: windows in a row a frame must grow in\n"
	"                          (default 2: a one-window burst is not a regression;\n"
	"                          1: every window on its own)\n"
	"      --alpha A           --baseline's error rate over all frames (default 0.01)\n"
	"      --no-normalize      --baseline: compare names as recorded\n"
	"      --keep N            keep the newest N files of each -o (with --window)\n"
	"      --keep-bytes SIZE   keep at most SIZE bytes of each -o's files (500M, 2G)\n"
	"      --push URL          send each window to a Pyroscope server (pprof), one\n"
	"                          series per JVM (others together as jflame-host)\n"
	"      --app NAME          the series' application name (default: each JVM's\n"
	"                          -Dpyroscope.application.name, jar or main class)\n"
	"      --label KEY=VALUE   a label on every series; may repeat\n"
	"      --push-token T      bearer token (or JFLAME_PUSH_TOKEN)\n"
	"      --push-basic-auth USER:PASSWORD  (or JFLAME_PUSH_BASIC_AUTH)\n"
	"      --push-tenant ID    X-Scope-OrgID (or JFLAME_PUSH_TENANT)\n"
	"      --push-ca FILE      CA certificates for an https server\n"
	"      --push-timeout DURATION  per request (default 10s); failed pushes are\n"
	"                          retried 3 times with backoff (1 s, 2 s, 4 s)\n"
	"  -v, --verbose           libbpf's messages, the stack cache's figures\n"
	"  -h, --help              this text\n"
	"\n"
	"Examples:\n"
	"  jflame record -p 4242 -d 30 -o cpu.svg\n"
	"  jflame record -a -d 10 -o host.svg -o host.folded\n"
	"  jflame record -p 4242 -o run.stacks        # until Ctrl-C\n"
	"  jflame record -p 4242 -d 30 -o cpu.pb.gz   # go tool pprof -http=: cpu.pb.gz\n"
	"  jflame record -o app.svg -- java -jar app.jar\n"
	"  jflame record -e offcpu -p 4242 -d 30 -o blocked.svg   # where threads wait\n"
	"  jflame record -e wall --min-block 1ms -p 4242 -d 30 -o wall.svg\n"
	"  jflame record -e alloc -p 4242 -d 30 -o alloc.svg       # bytes allocated\n"
	"  jflame record -e cpu,lock -p 4242 -d 30 -o cpu.svg -o lock.svg\n"
	"  jflame record -a --window 30s -o /out/cpu-%t.pb.gz --keep 120   # always on\n"
	"  jflame record -p 4242 --window 30s --baseline previous:5 --diff-out diff-%t.svg\n"
	"\n"
	"JVM stacks are walked through HotSpot's own frame layout: whole stacks with\n"
	"or without -XX:+PreserveFramePointer; interpreted (_[0]), compiled (_[j]) and\n"
	"inlined (_[i]) methods named from the JVM's memory and its compiled code's\n"
	"debug info (exact with -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints,\n"
	"else inlining is placed at the nearest safepoint, said in the subtitle). The\n"
	"agent is loaded only for -e alloc, -e lock, --attach, and a launched command\n"
	"(-- java ...); a JVM started with -agentpath:libjflame-agent.so is read as is.\n";

/* ---- options --------------------------------------------------------------- */

static int parse_pids(struct record_opts *o, const char *arg)
{
	char buf[4096];
	snprintf(buf, sizeof(buf), "%s", arg);
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long pid;
		char path[64];
		if (cli_parse_long(tok, 1, 4194304, &pid) != 0) {
			fprintf(stderr, "jflame: -p takes process ids like 1234 or 1234,5678, not '%s'\n", tok);
			return -1;
		}
		snprintf(path, sizeof(path), "/proc/%ld", pid);
		if (access(path, F_OK) != 0) {
			fprintf(stderr, "jflame: no process with pid %ld; check the pid with ps or jps\n", pid);
			return -1;
		}
		if (pid == getpid()) {
			fprintf(stderr, "jflame: pid %ld is jflame itself; give the pid of the process to profile\n", pid);
			return -1;
		}
		if (o->npids == MAX_PIDS) {
			fprintf(stderr, "jflame: at most %d pids with -p; use -a for more\n", MAX_PIDS);
			return -1;
		}
		o->pids[o->npids++] = (pid_t)pid;
	}
	if (o->npids == 0) {
		fprintf(stderr, "jflame: -p needs at least one pid\n");
		return -1;
	}
	return 0;
}

static int output_format(const char *path, enum out_format *f)
{
	const char *dot = strrchr(path, '.');
	const char *slash = strrchr(path, '/');
	if (strcmp(path, "-") == 0) { /* standard output: the flame graph */
		*f = OUT_SVG;
		return 0;
	}
	if (!dot || (slash && dot < slash))
		return -1;
	if (strcmp(dot, ".svg") == 0)
		*f = OUT_SVG;
	else if (strcmp(dot, ".folded") == 0 || strcmp(dot, ".collapsed") == 0)
		*f = OUT_FOLDED;
	else if (strcmp(dot, ".stacks") == 0)
		*f = OUT_STACKS;
	else if (strcmp(dot, ".gz") == 0 && dot - path >= 3 && strncmp(dot - 3, ".pb", 3) == 0)
		*f = OUT_PPROF;
	else if (strcmp(dot, ".json") == 0)
		*f = OUT_SPEEDSCOPE;
	else if (strcmp(dot, ".html") == 0)
		*f = OUT_HEATMAP;
	else
		return -1;
	return 0;
}

/* -e: a comma list, at most one sampler event (cpu, offcpu, wall or a perf
 * event) and alloc and/or lock; -e may repeat, adding to the list. */
static int parse_events(struct record_opts *o, const char *arg)
{
	char buf[256];
	if (!o->ev_given) { /* the first -e replaces the default (cpu) */
		o->ev_given = true;
		o->bpf_on = false;
	}
	if (!*arg || strlen(arg) >= sizeof(buf)) {
		fprintf(stderr, "jflame: -e takes events such as cpu, offcpu, wall, alloc or lock (cpu,alloc for "
			"more than one), not '%s'\n", arg);
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", arg);
	for (char *p = buf, *tok; p; p = tok) {
		tok = strchr(p, ',');
		if (tok)
			*tok++ = '\0';
		bool agent_ev = strcmp(p, "alloc") == 0 || strcmp(p, "lock") == 0;
		bool known = agent_ev || strcmp(p, "cpu") == 0 || strcmp(p, "offcpu") == 0 || strcmp(p, "wall") == 0 ||
			     strcmp(p, "cpu-clock") == 0 || strcmp(p, "cycles") == 0;
		if (!known) {
			fprintf(stderr, "jflame: -e takes cpu, offcpu, wall, cpu-clock, cycles, alloc or lock (comma-"
				"separated), not '%s'; see jflame record --help\n", p);
			return -1;
		}
		if (agent_ev) {
			bool *on = p[0] == 'a' ? &o->alloc : &o->lock;
			if (*on) {
				fprintf(stderr, "jflame: -e names %s twice\n", p);
				return -1;
			}
			*on = true;
			continue;
		}
		if (o->bpf_on) {
			fprintf(stderr, "jflame: -e takes at most one of cpu, offcpu, wall, cpu-clock and cycles (they are "
				"all the sampler's), not '%s' after '%s'\n", p,
				o->mode == MODE_OFFCPU ? "offcpu" : o->mode == MODE_WALL ? "wall" :
				o->event ? o->event : "cpu");
			return -1;
		}
		o->bpf_on = true;
		o->mode = MODE_CPU;
		o->event = NULL;
		o->bpf_word = "cpu";
		if (strcmp(p, "offcpu") == 0) {
			o->mode = MODE_OFFCPU;
			o->bpf_word = "offcpu";
		} else if (strcmp(p, "wall") == 0) {
			o->mode = MODE_WALL;
			o->bpf_word = "wall";
			o->event = "cpu-clock"; /* time-based: its samples are CPU time */
		} else if (strcmp(p, "cpu-clock") == 0) {
			o->event = "cpu-clock";
		} else if (strcmp(p, "cycles") == 0) {
			o->event = "cycles";
		}
	}
	return 0;
}

static const char *const event_words[] = { "cpu", "offcpu", "wall", "alloc", "lock" };

static const char *ev_word(const struct record_opts *o, enum rec_event ev)
{
	return ev == EV_ALLOC ? "alloc" : ev == EV_LOCK ? "lock" : o->bpf_word;
}

static bool ev_on(const struct record_opts *o, enum rec_event ev)
{
	return ev == EV_ALLOC ? o->alloc : ev == EV_LOCK ? o->lock : o->bpf_on;
}

/* Adds one output of event ev (its name copied). */
static int add_spec(struct record_opts *o, const char *name, enum out_format f, enum rec_event ev)
{
	static char names[MAX_SPECS][4096];
	if (o->noutputs == MAX_SPECS) {
		fprintf(stderr, "jflame: too many outputs once expanded per event (at most %d)\n", MAX_SPECS);
		return -1;
	}
	if (strlen(name) >= sizeof(names[0])) {
		fprintf(stderr, "jflame: output name '%.200s...' is too long\n", name);
		return -1;
	}
	snprintf(names[o->noutputs], sizeof(names[0]), "%s", name);
	o->outputs[o->noutputs] = names[o->noutputs];
	o->formats[o->noutputs] = f;
	o->out_ev[o->noutputs++] = ev;
	return 0;
}

/* The naming rule of several events (out_name.h): each -o becomes the
 * outputs of the events it holds. .stacks and .html hold the sampler's
 * samples only (they are per-sample timelines of CPU or off-CPU time). */
static int expand_outputs(struct record_opts *o)
{
	size_t nev = (size_t)o->bpf_on + o->alloc + o->lock;
	for (size_t i = 0; i < o->nuser_outputs; i++) {
		const char *name = o->user_outputs[i];
		enum out_format f = o->user_formats[i];
		bool timeline = f == OUT_STACKS || f == OUT_HEATMAP;
		const char *what = f == OUT_STACKS ? "the .stacks output (timestamped samples)" :
				   "the .html heat map";
		char buf[4096];
		int w = out_name_event_word(name, event_words, 5);
		enum rec_event named = EV_N;
		if (w >= 0 && w <= 2) {
			if (!o->bpf_on || strcmp(event_words[w], o->bpf_word) != 0)
				named = EV_N + 1; /* names a sampler event not recorded */
			else
				named = EV_BPF;
		} else if (w == 3 || w == 4) {
			named = w == 3 ? EV_ALLOC : EV_LOCK;
		}
		if (out_name_has_event(name)) {
			bool any = false;
			for (int ev = 0; ev < EV_N; ev++) {
				if (!ev_on(o, (enum rec_event)ev) || (timeline && ev != EV_BPF))
					continue;
				if (out_name_for_event(name, ev_word(o, (enum rec_event)ev), buf, sizeof(buf)) != 0 ||
				    add_spec(o, buf, f, (enum rec_event)ev) != 0)
					return -1;
				any = true;
			}
			if (!any) {
				fprintf(stderr, "jflame: %s holds CPU, off-CPU or wall samples; '%s' has nothing to hold "
					"with -e %s\n", what, name, o->alloc && o->lock ? "alloc,lock" : o->alloc ? "alloc" : "lock");
				return -1;
			}
			continue;
		}
		if (nev == 1) { /* one event: every output holds it, whatever its name */
			enum rec_event ev = o->bpf_on ? EV_BPF : o->alloc ? EV_ALLOC : EV_LOCK;
			if (timeline && ev != EV_BPF) {
				fprintf(stderr, "jflame: %s holds CPU, off-CPU or wall samples, not %s; write %s to .svg, "
					".folded, .pb.gz or .json\n", what, ev_word(o, ev), ev_word(o, ev));
				return -1;
			}
			if (add_spec(o, name, f, ev) != 0)
				return -1;
			continue;
		}
		if (w == -2) {
			fprintf(stderr, "jflame: output '%s' names more than one event; name it for one (cpu.svg, "
				"alloc.svg) or use %%e\n", name);
			return -1;
		}
		if (named != EV_N && (named > EV_LOCK || !ev_on(o, named))) {
			fprintf(stderr, "jflame: output '%s' is named for %s, which is not recorded; add it to -e or "
				"rename the output\n", name, event_words[w]);
			return -1;
		}
		if (named != EV_N) {
			if (timeline && named != EV_BPF) {
				fprintf(stderr, "jflame: %s holds CPU, off-CPU or wall samples, not %s ('%s')\n", what,
					ev_word(o, named), name);
				return -1;
			}
			if (add_spec(o, name, f, named) != 0)
				return -1;
			continue;
		}
		if (timeline) { /* the sampler's event only, under its own name */
			if (!o->bpf_on) {
				fprintf(stderr, "jflame: %s holds CPU, off-CPU or wall samples; '%s' has nothing to hold "
					"with -e alloc,lock\n", what, name);
				return -1;
			}
			if (add_spec(o, name, f, EV_BPF) != 0)
				return -1;
			continue;
		}
		for (int ev = 0; ev < EV_N; ev++) {
			if (!ev_on(o, (enum rec_event)ev))
				continue;
			if (out_name_insert_event(name, ev_word(o, (enum rec_event)ev), buf, sizeof(buf)) != 0 ||
			    add_spec(o, buf, f, (enum rec_event)ev) != 0) {
				fprintf(stderr, "jflame: output name '%.200s' is too long\n", name);
				return -1;
			}
		}
	}
	return 0;
}

enum { O_BASELINE = 1000, O_DIFF_OUT, O_ON_REGRESSION, O_ALPHA, O_NO_NORMALIZE, O_CONFIRM };

static int parse_options(struct record_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },      { "all-cpus", no_argument, NULL, 'a' },
		{ "freq", required_argument, NULL, 'F' },     { "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },   { "event", required_argument, NULL, 'e' },
		{ "include-idle", no_argument, NULL, 'I' },   { "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },           { "no-attach", no_argument, NULL, 'N' },
		{ "attach", no_argument, NULL, 'Y' },
		{ "agent", required_argument, NULL, 'A' },    { "agent-options", required_argument, NULL, 'O' },
		{ "attach-timeout", required_argument, NULL, 'T' }, { "no-inline", no_argument, NULL, 'L' },
		{ "no-walker", no_argument, NULL, 'W' },      { "window", required_argument, NULL, 'w' },
		{ "keep", required_argument, NULL, 'K' },     { "keep-bytes", required_argument, NULL, 'B' },
		{ "push", required_argument, NULL, 'P' },     { "app", required_argument, NULL, 'n' },
		{ "label", required_argument, NULL, 'l' },    { "push-token", required_argument, NULL, 't' },
		{ "push-basic-auth", required_argument, NULL, 'b' }, { "push-tenant", required_argument, NULL, 'X' },
		{ "push-ca", required_argument, NULL, 'C' },  { "push-timeout", required_argument, NULL, 'M' },
		{ "min-block", required_argument, NULL, 'Q' },
		{ "alloc-interval", required_argument, NULL, 'G' }, { "lock-min", required_argument, NULL, 'H' },
		{ "count", no_argument, NULL, 'U' },
		{ "baseline", required_argument, NULL, O_BASELINE }, { "diff-out", required_argument, NULL, O_DIFF_OUT },
		{ "on-regression", required_argument, NULL, O_ON_REGRESSION }, { "alpha", required_argument, NULL, O_ALPHA },
		{ "no-normalize", no_argument, NULL, O_NO_NORMALIZE }, { "confirm", required_argument, NULL, O_CONFIRM },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	long v;
	*o = defaults;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+p:aF:d:o:e:vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_pids(o, optarg) != 0)
				return -1;
			break;
		case 'a':
			o->all = true;
			break;
		case 'F':
			if (cli_parse_long(optarg, 1, 50000, &v) != 0) {
				fprintf(stderr, "jflame: -F takes samples per second from 1 to 50000, not '%s'\n", optarg);
				return -1;
			}
			o->freq = (int)v;
			o->freq_set = true;
			break;
		case 'd': {
			double d;
			if (cli_parse_duration(optarg, 0.001, 1e7, &d) != 0) {
				fprintf(stderr, "jflame: -d takes a duration such as 30, 0.5, 30s, 5m or 2h, not '%s'\n", optarg);
				return -1;
			}
			o->duration = d;
			break;
		}
		case 'w': {
			double d;
			if (cli_parse_duration(optarg, 1, 86400, &d) != 0) {
				fprintf(stderr, "jflame: --window takes a duration from 1 s to 24 h such as 30, 30s or 5m, "
					"not '%s'\n", optarg);
				return -1;
			}
			o->window_ns = (uint64_t)(d * 1e9);
			break;
		}
		case 'P':
			o->push = optarg;
			break;
		case 'n':
			if (!*optarg) {
				fprintf(stderr, "jflame: --app needs a name\n");
				return -1;
			}
			o->app = optarg;
			break;
		case 'l': {
			char *eq = strchr(optarg, '=');
			if (!eq || eq == optarg || !eq[1]) {
				fprintf(stderr, "jflame: --label takes KEY=VALUE such as env=prod, not '%s'\n", optarg);
				return -1;
			}
			if (o->nlabels == MAX_LABELS) {
				fprintf(stderr, "jflame: at most %d --label options\n", MAX_LABELS);
				return -1;
			}
			*eq = '\0';
			o->label_keys[o->nlabels] = optarg;
			o->label_values[o->nlabels++] = eq + 1;
			break;
		}
		case 't':
			o->push_token = optarg;
			break;
		case 'b':
			if (!strchr(optarg, ':')) {
				fprintf(stderr, "jflame: --push-basic-auth takes USER:PASSWORD\n"); /* never echo a secret */
				return -1;
			}
			o->push_basic_auth = optarg;
			break;
		case 'X':
			o->push_tenant = optarg;
			break;
		case 'M': {
			double t;
			if (cli_parse_duration(optarg, 0.1, 600, &t) != 0) {
				fprintf(stderr, "jflame: --push-timeout takes a duration from 0.1 s to 10 m, not '%s'\n", optarg);
				return -1;
			}
			o->push_timeout_ms = (int)(t * 1000);
			break;
		}
		case 'C':
			if (access(optarg, R_OK) != 0) {
				fprintf(stderr, "jflame: --push-ca %s: %s\n", optarg, strerror(errno));
				return -1;
			}
			o->push_ca = optarg;
			break;
		case O_BASELINE: {
			char e[256];
			if (baseline_parse(optarg, &o->regress.b, &o->regress.file, e, sizeof(e)) != 0) {
				fprintf(stderr, "jflame: %s\n", e);
				return -1;
			}
			if (o->regress.file && access(o->regress.file, R_OK) != 0) {
				fprintf(stderr, "jflame: --baseline %s: %s; give first, previous:N or a saved profile "
					"(.folded, .pb.gz)\n", optarg, strerror(errno));
				return -1;
			}
			o->baseline = optarg;
			break;
		}
		case O_DIFF_OUT: {
			char e[512];
			if (out_name_check(optarg, e, sizeof(e)) != 0) {
				fprintf(stderr, "jflame: --diff-out: %s\n", e);
				return -1;
			}
			enum diff_graph_kind k;
			if (strcmp(optarg, "-") == 0 || diff_graph_kind_of(optarg, &k) != 0) {
				fprintf(stderr, "jflame: --diff-out %s: name it .svg (a differential flame graph), .html (the "
					"compare page) or .folded\n", optarg);
				return -1;
			}
			o->regress.diff_out = optarg;
			break;
		}
		case O_ON_REGRESSION:
			if (!optarg[0]) {
				fprintf(stderr, "jflame: --on-regression takes a shell command; it is empty\n");
				return -1;
			}
			o->regress.on_regression = optarg;
			break;
		case O_ALPHA: {
			double a;
			if (cli_parse_seconds(optarg, 1e-12, 0.5, &a) != 0) {
				fprintf(stderr, "jflame: --alpha %s: give an error rate between 0 and 0.5 (e.g. 0.01)\n", optarg);
				return -1;
			}
			o->regress.b.alpha = a;
			o->alpha_given = true;
			break;
		}
		case O_NO_NORMALIZE:
			o->regress.b.no_normalize = true;
			break;
		case O_CONFIRM: {
			char e[256];
			if (baseline_parse_confirm(optarg, &o->regress.b.confirm, e, sizeof(e)) != 0) {
				fprintf(stderr, "jflame: %s\n", e);
				return -1;
			}
			o->confirm_given = true;
			break;
		}
		case 'K':
			if (cli_parse_long(optarg, 1, 1000000, &v) != 0) {
				fprintf(stderr, "jflame: --keep takes a number of windows from 1 to 1000000, not '%s'\n", optarg);
				return -1;
			}
			o->keep = (size_t)v;
			break;
		case 'B':
			if (cli_parse_size(optarg, 1024, (uint64_t)1 << 50, &o->keep_bytes) != 0) {
				fprintf(stderr, "jflame: --keep-bytes takes a size such as 500M or 2G (at least 1k), not '%s'\n",
					optarg);
				return -1;
			}
			break;
		case 'o': {
			enum out_format f;
			if (output_format(optarg, &f) != 0) {
				fprintf(stderr, "jflame: cannot tell the format of '%s'; name it .svg, .folded, .collapsed, "
					".stacks, .pb.gz, .json or .html\n", optarg);
				return -1;
			}
			if (o->nuser_outputs < MAX_OUTPUTS)
				o->user_formats[o->nuser_outputs] = f;
			if (cli_output_add("record", o->user_outputs, &o->nuser_outputs, MAX_OUTPUTS, optarg) != 0)
				return -1;
			break;
		}
		case 'e':
			if (parse_events(o, optarg) != 0)
				return -1;
			break;
		case 'G':
			if (cli_parse_size(optarg, 1024, (uint64_t)1 << 30, &o->alloc_interval) != 0) {
				fprintf(stderr, "jflame: --alloc-interval takes a size from 1k to 1g such as 512k or 2m, not "
					"'%s'\n", optarg);
				return -1;
			}
			o->alloc_interval_set = true;
			break;
		case 'H':
			if (cli_parse_nanos(optarg, 0, 3600000000000ULL, &o->lock_min_ns) != 0) {
				fprintf(stderr, "jflame: --lock-min takes a duration such as 100us, 1ms or 0.5s (a bare "
					"number is microseconds), not '%s'\n", optarg);
				return -1;
			}
			o->lock_min_set = true;
			break;
		case 'U':
			o->count_view = true;
			break;
		case 'Q':
			if (cli_parse_nanos(optarg, 0, 3600000000000ULL, &o->min_block_ns) != 0) {
				fprintf(stderr, "jflame: --min-block takes a duration such as 500us, 1ms or 0.5s (a bare "
					"number is microseconds), not '%s'\n", optarg);
				return -1;
			}
			o->min_block_set = true;
			break;
		case 'I':
			o->include_idle = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'N':
			o->no_attach = true;
			break;
		case 'Y':
			o->attach = true;
			break;
		case 'L':
			o->no_inline = true;
			break;
		case 'W':
			o->no_walker = true;
			break;
		case 'A':
			o->agent = optarg;
			break;
		case 'O': {
			struct agent_options ao;
			char err[256];
			if (agent_options_parse(optarg, &ao, err, sizeof(err)) != 0 || ao.help) {
				fprintf(stderr, "jflame: bad --agent-options: %s\n", ao.help ? "help lists: unfold, nounfold, "
					"msig, dottedclass, sourcepos, quiet" : err);
				return -1;
			}
			o->agent_options = optarg;
			break;
		}
		case 'T': {
			double t;
			if (cli_parse_seconds(optarg, 0.1, 3600, &t) != 0) {
				fprintf(stderr, "jflame: --attach-timeout takes seconds from 0.1 to 3600, not '%s'\n", optarg);
				return -1;
			}
			o->attach_timeout_ms = (int)(t * 1000);
			break;
		}
		case 'h':
			fputs(usage, stdout);
			return 1;
		default: {
			const char *arg = argv[optind - 1];
			bool needs_value = false;
			for (const struct option *lo = longopts; lo->name && strncmp(arg, "--", 2) == 0; lo++)
				needs_value |= lo->has_arg == required_argument && strcmp(arg + 2, lo->name) == 0;
			if (needs_value)
				fprintf(stderr, "jflame: option %s needs a value; see jflame record --help\n", arg);
			else if (optopt && strchr("pFdoe", optopt))
				fprintf(stderr, "jflame: option -%c needs a value; see jflame record --help\n", optopt);
			else
				fprintf(stderr, "jflame: unknown option '%s'; see jflame record --help\n", arg);
			return -1;
		}
		}
	}
	if (optind < argc) {
		o->command = argv + optind;
		o->ncommand = argc - optind;
	}
	if (o->min_block_set && (o->mode == MODE_CPU || !o->bpf_on)) {
		fprintf(stderr, "jflame: --min-block goes with -e offcpu or -e wall\n");
		return -1;
	}
	if (o->alloc_interval_set && !o->alloc) {
		fprintf(stderr, "jflame: --alloc-interval goes with -e alloc\n");
		return -1;
	}
	if (o->lock_min_set && !o->lock) {
		fprintf(stderr, "jflame: --lock-min goes with -e lock\n");
		return -1;
	}
	if (o->count_view && !o->alloc && !o->lock) {
		fprintf(stderr, "jflame: --count goes with -e alloc or -e lock (CPU graphs count samples already)\n");
		return -1;
	}
	if (o->push && (o->alloc || o->lock)) {
		fprintf(stderr, "jflame: --push sends CPU, off-CPU or wall profiles only; write alloc and lock to files "
			"(-o alloc.pb.gz) and push those with your tooling\n");
		return -1;
	}

	if (o->attach && o->no_attach) {
		fprintf(stderr, "jflame: --attach loads the agent and --no-attach keeps it out: give one of them\n");
		return -1;
	}
	/* agentless unless asked for, or needed by alloc and lock samples */
	o->load_agent = !o->no_attach && (o->attach || o->alloc || o->lock);
	if (o->all && o->npids > 0) {
		fprintf(stderr, "jflame: give -p PID or -a, not both\n");
		return -1;
	}
	if (o->command && o->npids > 0) {
		fprintf(stderr, "jflame: give -p PID or a command to launch, not both (did you mean -- before '%s'?)\n",
			o->command[0]);
		return -1;
	}
	if (!o->all && !o->npids && !o->command) {
		fprintf(stderr, "jflame: say what to record: -p PID for processes, -a for the whole host, or -- java ... "
			"to launch a JVM\n");
		return -1;
	}
	if (o->nuser_outputs == 0 && !o->push) { /* with --push, files only when asked for */
		o->user_outputs[0] = "jflame.svg";
		o->user_formats[0] = OUT_SVG;
		o->nuser_outputs = 1;
	}
	for (size_t i = 0; i < o->nuser_outputs; i++) {
		char err[512];
		const char *why = NULL;
		if (strcmp(o->user_outputs[i], "-") == 0) {
			/* one flame graph on standard output, written at the end */
			if ((size_t)o->bpf_on + o->alloc + o->lock > 1)
				why = "it holds one event's flame graph; name files for several events (cpu.svg, alloc.svg)";
			else if (o->window_ns)
				why = "--window writes a flame graph per window; name files (cpu-%t.svg)";
			else if (o->command)
				why = "the launched command writes there too; name a file";
		}
		if (why) {
			fprintf(stderr, "jflame: -o - (standard output): %s\n", why);
			return -1;
		}
		if (out_name_check(o->user_outputs[i], err, sizeof(err)) != 0) {
			fprintf(stderr, "jflame: %s\n", err);
			return -1;
		}
	}
	if (expand_outputs(o) != 0)
		return -1;
	size_t nstacks = 0;
	for (size_t i = 0; i < o->noutputs; i++) {
		char err[512];
		for (size_t j = 0; j < i; j++) {
			if (cli_same_file(o->outputs[i], o->outputs[j])) {
				fprintf(stderr, "jflame: output %s is named twice once the events are in the names; give each "
					"output once\n", o->outputs[i]);
				return -1;
			}
		}
		if (out_name_check(o->outputs[i], err, sizeof(err)) != 0) {
			fprintf(stderr, "jflame: %s\n", err);
			return -1;
		}
		if ((o->keep || o->keep_bytes) && out_name_varies(o->outputs[i]) && !out_name_fixed_dir(o->outputs[i])) {
			fprintf(stderr, "jflame: --keep rotates files in one directory; '%s' has fields in its directory "
				"part: put %%t or %%n in the file name only\n", o->outputs[i]);
			return -1;
		}
		nstacks += o->formats[i] == OUT_STACKS;
	}
	if (nstacks > 1) {
		fprintf(stderr, "jflame: only one .stacks output at a time\n");
		return -1;
	}
	if (!o->push && (o->app || o->nlabels || o->push_token || o->push_basic_auth || o->push_tenant || o->push_ca ||
			 o->push_timeout_ms)) {
		fprintf(stderr, "jflame: --app, --label and the --push-* options go with --push URL\n");
		return -1;
	}
	if (o->push) {
		const char *e;
		if (!o->push_token && (e = getenv("JFLAME_PUSH_TOKEN")) && *e)
			o->push_token = e;
		if (!o->push_basic_auth && (e = getenv("JFLAME_PUSH_BASIC_AUTH")) && *e)
			o->push_basic_auth = e;
		if (!o->push_tenant && (e = getenv("JFLAME_PUSH_TENANT")) && *e)
			o->push_tenant = e;
		if (o->push_basic_auth && !strchr(o->push_basic_auth, ':')) {
			fprintf(stderr, "jflame: JFLAME_PUSH_BASIC_AUTH takes USER:PASSWORD\n");
			return -1;
		}
	}
	if (o->baseline && !o->window_ns) {
		fprintf(stderr, "jflame: --baseline compares each window with it; add --window 30s\n");
		return -1;
	}
	if (o->baseline && !o->bpf_on) {
		fprintf(stderr, "jflame: --baseline compares the sampled event's windows (cpu, offcpu, wall); record one "
			"(-e cpu,alloc)\n");
		return -1;
	}
	if (!o->baseline && (o->confirm_given || o->alpha_given || o->regress.b.no_normalize)) {
		fprintf(stderr, "jflame: --confirm, --alpha and --no-normalize tune --baseline; add --baseline first (or "
			"previous:N, or a saved profile)\n");
		return -1;
	}
	if (!o->baseline && (o->regress.diff_out || o->regress.on_regression)) {
		fprintf(stderr, "jflame: --diff-out and --on-regression act on regressions against a baseline; add "
			"--baseline first (or previous:N, or a saved profile)\n");
		return -1;
	}
	if ((o->keep || o->keep_bytes) && !o->window_ns) {
		fprintf(stderr, "jflame: --keep and --keep-bytes rotate the files of --window; add --window 30s\n");
		return -1;
	}
	if ((o->keep || o->keep_bytes)) {
		bool any = false;
		for (size_t i = 0; i < o->noutputs; i++)
			any |= out_name_varies(o->outputs[i]);
		if (!any) {
			fprintf(stderr, "jflame: --keep rotates window files, but no -o names one: put %%t (the window's "
				"start) in the name, e.g. -o cpu-%%t.pb.gz\n");
			return -1;
		}
	}
	return 0;
}

/* ---- samples ------------------------------------------------------------------ */

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* perf script's text: "comm pid/tid [cpu] secs: period event:", frames leaf first. */
static void write_stacks_sample(struct record *r, struct window *w, const struct profile_sample *s,
				const char *thread, const struct frame *f, size_t n)
{
	FILE *out = stacks_order_begin(&w->stacks_order, w->stacks.f);
	const char *event = r->sampler && sampler_event(r->sampler) ? sampler_event(r->sampler) : "cpu-clock";
	uint64_t period = strcmp(event, "cpu-clock") == 0 ? 1000000000ULL / (uint64_t)r->o.freq : 1;
	if (s->kind == PROFILE_KIND_OFFCPU) { /* as perf's offcpu-time: the period is the time blocked */
		event = "offcpu-time";
		period = s->weight_ns;
	}
	fprintf(out, "%s %u/%u [%03u] %" PRIu64 ".%06" PRIu64 ": %" PRIu64 " %s:\n", thread, s->pid, s->tid, s->cpu,
		(uint64_t)(s->ts_ns / 1000000000ULL), (uint64_t)(s->ts_ns % 1000000000ULL) / 1000, period, event);
	for (size_t i = 0; i < n; i++) {
		if (f[i].line > 0) /* perf script -F+srcline puts "file:line" under its frame */
			fprintf(out, "\t%16" PRIx64 " %s (%s)\n  %s:%d\n", (uint64_t)f[i].addr, f[i].name, f[i].dso,
				f[i].file ? f[i].file : "??", f[i].line);
		else
			fprintf(out, "\t%16" PRIx64 " %s (%s)\n", (uint64_t)f[i].addr, f[i].name, f[i].dso);
	}
	fputc('\n', out);
	stacks_order_end(&w->stacks_order, s->ts_ns, w->stacks.f);
}

/* ---- windows ------------------------------------------------------------------- */

static int window_open(struct record *r, struct window *w, uint64_t start_ns, uint64_t seq);

/* The window a sample taken at ts belongs to: the current one, or the next
 * when ts is past the current one's end (opened then). NULL when there is no
 * memory for a window. */
static struct window *window_for(struct record *r, uint64_t ts)
{
	struct window *w = &r->win[r->cur], *next = &r->win[!r->cur];
	if (!w->open && window_open(r, w, w->start_ns, w->seq) != 0)
		return NULL;
	if (ts < w->end_ns)
		return w;
	if (!next->open && window_open(r, next, w->end_ns, w->seq + 1) != 0)
		return w; /* no memory for another window: it stays in this one */
	return next;
}

/* The pipeline's sink: a named and folded sample goes into the window of its
 * time, with its counts, and into the .stacks and heat map outputs. */
static void on_folded(void *ctx, const struct folded_sample *fs)
{
	struct record *r = ctx;
	const struct profile_sample *s = fs->s;
	struct window *w = window_for(r, s->ts_ns);
	if (!w) {
		r->no_window++;
		return;
	}
	w->handled++;
	if (fs->flags & FOLDED_UNWIND_FAILED)
		w->unwind_failed++;
	if (fs->flags & FOLDED_TRUNCATED)
		w->truncated++;
	w->stack_errors += fs->stack_errors;
	if (r->want_lines && (fs->lines_oom || recording_add_weighted(&w->rec_lines, fs->lines, fs->lines_len, 1,
								   fs->weight) != 0))
		w->oom++;
	if (fs->oom || recording_add_weighted(&w->rec, fs->stack, fs->len, 1, fs->weight) != 0)
		w->oom++;
	if (w->stacks_open)
		write_stacks_sample(r, w, s, fs->thread, fs->frames, fs->nframes);
	/* the heat map leaves the idle task out, as FlameScope does */
	if (r->want_heatmap && s->pid != 0 && !fs->oom && heatmap_add(&w->heatmap, (double)s->ts_ns / 1e9, fs->stack,
									 fs->len, 1) != 0)
		w->oom++;
}

/* Hands the kept samples of pid (all of them when pid is 0) on, in order. */
static void release_deferred(struct record *r, pid_t pid)
{
	size_t keep = 0;
	for (size_t i = 0; i < r->deferred.n; i++) {
		if (pid == 0 || (pid_t)r->deferred.v[i]->pid == pid) {
			sample_pipeline_add(r->pipe, r->deferred.v[i], pid ? mono_ns() : 0);
			free(r->deferred.v[i]);
		} else {
			r->deferred.v[keep++] = r->deferred.v[i];
		}
	}
	r->deferred.n = keep;
}

/* Hands on, as they are, the held samples (deferred or late) taken before
 * end: a window that closes takes every sample of its time. */
static void release_before(struct record *r, uint64_t end)
{
	size_t keep = 0;
	for (size_t i = 0; i < r->deferred.n; i++) {
		if (r->deferred.v[i]->ts_ns < end) {
			sample_pipeline_add(r->pipe, r->deferred.v[i], 0);
			free(r->deferred.v[i]);
		} else {
			r->deferred.v[keep++] = r->deferred.v[i];
		}
	}
	r->deferred.n = keep;
	sample_pipeline_release_before(r->pipe, end);
}

static void on_sample(void *ctx, const struct profile_sample *s, size_t size)
{
	struct record *r = ctx;
	(void)size; /* the sampler checked that s holds what its counts say */
	pid_t pid = (pid_t)s->pid;
	if (r->aq && attach_queue_is_child(r->aq, pid))
		return; /* jflame's own attaching child, as jflame itself is not sampled */
	if (r->aq && pid > 0 && pid < PID_LIMIT) {
		/* a process becomes a JVM when the java launcher has loaded libjvm.so
		 * (or after an exec): looked at until then, attached to once */
		if (!(r->considered[pid / 8] & (1u << (pid % 8))) && symbolizer_is_jvm(r->sy, pid)) {
			r->considered[pid / 8] |= (uint8_t)(1u << (pid % 8));
			if (!symbolizer_has_agent(r->sy, pid))
				attach_queue_start(r->aq, pid);
		}
		/* a sample is kept until the attach to its JVM has finished, so the
		 * code it ran is named by the map the attach produces (if there is room) */
		if (r->o.bpf_on && attach_queue_pending(r->aq, pid) && sample_queue_push(&r->deferred, MAX_DEFERRED, s))
			return;
	}
	if (!r->o.bpf_on) {
		/* -e alloc/lock alone: the sampler only finds the processes (-a, a
		 * launched command's children), whose rings are then looked for */
		if (pid > 0)
			(void)symbolizer_is_jvm(r->sy, pid);
		return;
	}
	sample_pipeline_add(r->pipe, s, mono_ns());
}

/* ---- the agents' samples (-e alloc, -e lock) ------------------------------------- */

/* The agents' samples' sink: into the window of their time, with its counts. */
static void on_agent_sample(void *ctx, const struct agent_sample *as)
{
	struct record *r = ctx;
	struct window *w = window_for(r, as->ts_ns);
	if (!w) {
		r->no_window++;
		return;
	}
	r->ring_samples++;
	w->jhandled[as->kind]++;
	if (as->truncated)
		w->jtruncated[as->kind]++;
	if (as->oom || recording_add_weighted(&w->jrec[as->kind], as->stack, as->len, 1, as->weight) != 0)
		w->oom++;
}

/* ---- attaching ------------------------------------------------------------------ */

/* Frame pointers matter only to a JVM the HotSpot walker cannot walk. */
static void warn_frame_pointers(struct record *r, pid_t pid)
{
	if (!r->o.bpf_on) /* the agents' stacks do not need them */
		return;
	if (symbolizer_frame_pointers(r->sy, pid) != 0 || (!r->o.no_walker && symbolizer_can_walk(r->sy, pid)))
		return;
	r->fp_warnings++;
	fprintf(stderr, "jflame: pid %d runs without -XX:+PreserveFramePointer: stacks through JIT-compiled code lose "
		"their callers (the graph is marked); restart it with -XX:+PreserveFramePointer\n", (int)pid);
}

static void report_attach(struct record *r, pid_t pid, enum attach_outcome outcome, const struct attach_info *info,
			  const char *msg)
{
	if (outcome == ATTACH_FAILED) {
		if (!r->o.no_walker && symbolizer_can_walk(r->sy, pid))
			fprintf(stderr, "jflame: warning: no agent in pid %d, so compiled Java frames are named from the "
				"JVM's memory, inlined callees from its debug info: %s\n", (int)pid, msg);
		else
			fprintf(stderr, "jflame: warning: Java frames of pid %d stay unnamed: %s\n", (int)pid, msg);
		return;
	}
	symbolizer_recheck_agent(r->sy, pid);
	if (outcome == ATTACH_LOADED)
		fprintf(stderr, "jflame: loaded the agent into pid %d (%s) in %.2f s\n", (int)pid,
			symbolizer_process_name(r->sy, pid), info->seconds);
	warn_frame_pointers(r, pid);
}

static void on_attached(void *ctx, pid_t pid, enum attach_outcome outcome, const struct attach_info *info,
			const char *msg)
{
	struct record *r = ctx;
	if (r->tty_progress)
		fprintf(stderr, "\r\033[K");
	report_attach(r, pid, outcome, info, msg);
	release_deferred(r, pid);
}

/* -p: JVMs without an agent (and without any perf map) get it, each in an
 * attach child while the sampler runs (a JVM that does not answer holds up
 * nobody); their samples wait for it (deferred) to be named by its map. */
static void attach_targets(struct record *r)
{
	for (size_t i = 0; i < r->o.npids; i++) {
		pid_t pid = r->o.pids[i];
		if (proc_info_is_hotspot(pid) != 1)
			continue;
		if (pid > 0 && pid < PID_LIMIT)
			r->considered[pid / 8] |= (uint8_t)(1u << (pid % 8));
		if (!symbolizer_has_agent(r->sy, pid))
			attach_queue_start(r->aq, pid);
		else
			warn_frame_pointers(r, pid);
	}
}

/* ---- the HotSpot walker ------------------------------------------------------------ */

/* JVMs' stacks go to the HotSpot walker once their layout can be read (a
 * starting JVM's code cache after a moment): the targets of -p and launch
 * mode, and with -a every JVM seen so far. */
static size_t start_walkers(struct record *r)
{
	static pid_t seen[8192];
	size_t n = r->o.all ? symbolizer_processes(r->sy, seen, 8192) : r->o.npids, pending = 0;
	const pid_t *pids = r->o.all ? seen : r->o.pids;
	struct hotspot_proc hp;
	if (r->o.no_walker)
		return 0;
	for (size_t i = 0; i < n; i++) {
		int rc = symbolizer_walker_info(r->sy, pids[i], &hp);
		if (rc == 2)
			sampler_walk_hotspot(r->sampler, pids[i], NULL);
		if (rc == 0 && symbolizer_is_jvm(r->sy, pids[i]) && !symbolizer_walks_hotspot(r->sy, pids[i]))
			pending++; /* its code cache is looked at again */
		if (rc != 1)
			continue;
		int e = sampler_walk_hotspot(r->sampler, pids[i], &hp);
		if (e != 0)
			fprintf(stderr, "jflame: warning: pid %d is walked by frame pointers: the BPF map of JVMs "
				"failed: %s\n", (int)pids[i], strerror(-e));
	}
	return pending;
}

/* ---- outputs -------------------------------------------------------------------- */

/* What a window's outputs say about it: time, rate, counts, targets and the
 * frame-pointer finding. Samples lost in the ring buffer count in the window
 * open when they are noticed. */
static void describe(struct record *r, struct window *w, double seconds)
{
	struct recording *rec = &w->rec;
	struct sampler_stats st;
	char *fp = rec->frame_pointers;
	size_t fplen = sizeof(rec->frame_pointers);
	pid_t seen[64];
	size_t nseen;
	const pid_t *targets;
	size_t ntargets;
	int on = 0, off = 0, unknown = 0, walked = 0, walked_on = 0, walked_off = 0;
	pid_t off_pid = 0, unknown_pid = 0;

	sampler_read_stats(r->sampler, &st);
	rec->seconds = seconds;
	rec->freq = r->o.freq;
	snprintf(rec->event, sizeof(rec->event), "%s", r->o.mode == MODE_OFFCPU ? "sched_switch" :
		 r->o.mode == MODE_WALL ? "cpu-clock+sched_switch" : sampler_event(r->sampler));
	if (r->o.mode != MODE_CPU) {
		snprintf(rec->weight_type, sizeof(rec->weight_type), "%s", r->o.mode == MODE_WALL ? "wall" : "off_cpu");
		rec->min_block_ns = r->o.min_block_ns;
		rec->short_blocks = st.short_blocks - r->short_before;
		rec->short_ns = st.short_ns - r->short_ns_before;
		r->short_before = st.short_blocks;
		r->short_ns_before = st.short_ns;
	}
	rec->lost = st.dropped - r->dropped_before;
	rec->samples = r->o.window_ns ? w->handled + rec->lost : st.samples;
	r->dropped_before = st.dropped;
	rec->truncated = w->truncated;
	rec->unwind_failed = w->unwind_failed;
	rec->stack_errors = w->stack_errors;
	if (r->o.all) {
		snprintf(rec->target, sizeof(rec->target), "all processes");
		nseen = symbolizer_processes(r->sy, seen, 64);
		targets = seen;
		ntargets = nseen;
	} else {
		/* whole entries only: a name cut in the middle would not be UTF-8 */
		size_t pos = 0;
		for (size_t i = 0; i < r->o.npids; i++) {
			char one[128];
			int k = snprintf(one, sizeof(one), "%spid %d (%s)", i ? ", " : "", (int)r->o.pids[i],
					 symbolizer_process_name(r->sy, r->o.pids[i]));
			if (k < 0 || (size_t)k >= sizeof(one) || pos + (size_t)k >= sizeof(rec->target))
				break;
			memcpy(rec->target + pos, one, (size_t)k + 1);
			pos += (size_t)k;
		}
		targets = r->o.pids;
		ntargets = r->o.npids;
	}
	for (size_t i = 0; i < ntargets; i++) {
		if (!symbolizer_is_jvm(r->sy, targets[i]))
			continue;
		int v = symbolizer_frame_pointers(r->sy, targets[i]);
		if (symbolizer_walks_hotspot(r->sy, targets[i])) {
			walked++; /* frame pointers do not matter to it */
			walked_on += v > 0;
			walked_off += v == 0;
			continue;
		}
		if (v > 0)
			on++;
		else if (v == 0)
			off++, off_pid = off_pid ? off_pid : targets[i];
		else
			unknown++, unknown_pid = unknown_pid ? unknown_pid : targets[i];
	}
	rec->fp_warning = off || unknown;
	if (off)
		snprintf(fp, fplen, "WARNING frame pointers: off in pid %d%s: Java frames below compiled code are lost; "
			 "restart it with -XX:+PreserveFramePointer", (int)off_pid, off > 1 ? " and others" : "");
	else if (unknown)
		snprintf(fp, fplen, "WARNING frame pointers: unknown in pid %d%s (no jflame agent): Java frames "
			 "are not named; start it with -agentpath:libjflame-agent.so", (int)unknown_pid,
			 unknown > 1 ? " and others" : "");
	else if (walked)
		snprintf(fp, fplen, "Java stacks: HotSpot walker%s", walked_on || on ? (walked_off ? "; frame pointers: "
			 "on in some JVMs (not needed)" : "; frame pointers: on") : walked_off ? "; frame pointers: off "
			 "(not needed)" : "");
	else if (on)
		snprintf(fp, fplen, "frame pointers: on");
	else
		snprintf(fp, fplen, "frame pointers: n/a (no JVM)");
	/* compiled frames named from the JVMs' own debug info (no agent) */
	const struct symbolizer_inline *inl = symbolizer_inline_stats(r->sy);
	size_t used = strlen(fp);
	if (inl->unsupported_pid && !r->o.no_inline)
		snprintf(fp + used, fplen - used, "; inlined frames not shown in pid %d (debug info of a layout this "
			 "jflame does not read)", (int)inl->unsupported_pid);
	else if (inl->safepoint_only_pid && !r->o.no_inline)
		snprintf(fp + used, fplen - used, "; inlining placed at safepoints only in pid %d (no "
			 "-XX:+DebugNonSafepoints)", (int)inl->safepoint_only_pid);
	used = strlen(fp);
	if (inl->bad)
		snprintf(fp + used, fplen - used, "; %" PRIu64 " compiled frames without inlining (debug info did not "
			 "decode)", inl->bad);
	/* the agents' recordings: drops in the rings (shared by alloc and lock)
	 * count in the window open when they are noticed */
	const struct agent_samples_stats *ast = agent_samples_stats(r->agents);
	for (int k = 0; k < 2; k++) {
		struct recording *j = &w->jrec[k];
		if (!(k == J_ALLOC ? r->o.alloc : r->o.lock))
			continue;
		j->seconds = seconds;
		snprintf(j->target, sizeof(j->target), "%s", rec->target);
		snprintf(j->weight_type, sizeof(j->weight_type), "%s", k == J_ALLOC ? "alloc" : "lock");
		snprintf(j->event, sizeof(j->event), "%s", k == J_ALLOC ? "SampledObjectAlloc" : "MonitorContendedEnter, Unsafe.park");
		j->interval = r->o.alloc_interval;
		if (k == J_LOCK) {
			j->min_block_ns = r->o.lock_min_ns;
			j->short_blocks = ast->lock_short - r->ring_short_before;
			r->ring_short_before = ast->lock_short;
		}
		j->lost = ast->dropped - r->ring_dropped_before[k];
		r->ring_dropped_before[k] = ast->dropped;
		j->samples = w->jhandled[k];
		j->truncated = w->jtruncated[k];
		snprintf(j->frame_pointers, sizeof(j->frame_pointers), "Java stacks from JVMTI (the agent)");
		snprintf(j->note, sizeof(j->note), "%s", ast->agent_error);
	}
}

/* "512 KiB" */
static void human_bytes(char *out, size_t len, double v)
{
	static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;
	while (v >= 1024 && u < 4)
		v /= 1024, u++;
	if (u == 0 || v == (double)(uint64_t)v)
		snprintf(out, len, "%.0f %s", v, units[u]);
	else
		snprintf(out, len, "%.1f %s", v, units[u]);
}

/* A stack's number in folded and SVG outputs: CPU samples; time modes and
 * lock microseconds; alloc bytes; samples in the count view. */
static uint64_t stack_value(const struct recording *rec, const struct stack_count *s, bool count_view)
{
	if (recording_alloc(rec))
		return count_view ? s->count : s->weight;
	if (recording_lock(rec))
		return count_view ? s->count : (s->weight + 500) / 1000;
	return recording_timed(rec) ? (s->weight + 500) / 1000 : s->count;
}

static int write_folded(FILE *f, const struct recording *rec, bool count_view)
{
	size_t n;
	struct stack_count *s = recording_sorted(rec, &n);
	if (!s)
		return -1;
	/* time modes and lock: microseconds, integers as flamegraph.pl wants them; alloc: bytes */
	for (size_t i = 0; i < n; i++) {
		uint64_t v = stack_value(rec, &s[i], count_view);
		if (v)
			fprintf(f, "%s %" PRIu64 "\n", s[i].stack, v);
	}
	free(s);
	return 0;
}

static int write_svg(FILE *f, const struct recording *rec, bool count_view, char *err, size_t errlen)
{
	size_t n;
	char title[400], subtitle[800];
	struct stack_count *s = recording_sorted(rec, &n);
	struct fg_stack *st = s ? malloc((n ? n : 1) * sizeof(*st)) : NULL;
	int rc = -1;
	if (!st) {
		snprintf(err, errlen, "jflame: out of memory");
		goto out;
	}
	/* time modes and lock: widths in microseconds, shown in ms; alloc: bytes */
	for (size_t i = 0; i < n; i++)
		st[i] = (struct fg_stack){ s[i].stack, stack_value(rec, &s[i], count_view), 0 };
	snprintf(title, sizeof(title), "%s: %s", recording_title(rec), rec->target);
	bool agent = recording_alloc(rec) || recording_lock(rec);
	if (agent) {
		char every[32], total[32];
		human_bytes(every, sizeof(every), (double)rec->interval);
		human_bytes(total, sizeof(total), (double)rec->total_weight);
		if (recording_alloc(rec))
			snprintf(subtitle, sizeof(subtitle),
				 "%sJava allocations sampled every %s on average (%s), %.1f s: %s in %" PRIu64
				 " samples%s, %" PRIu64 " dropped, %" PRIu64 " truncated%s%s",
				 rec->note[0] ? "WARNING " : "", every, rec->event, rec->seconds, total, rec->samples,
				 count_view ? " (widths: samples)" : "", rec->lost, rec->truncated,
				 rec->note[0] ? "; agent: " : "", rec->note);
		else
			snprintf(subtitle, sizeof(subtitle),
				 "%scontended monitor and lock waits of %.3f ms or more (%s), %.1f s: %.1f ms in %" PRIu64
				 " samples%s, %" PRIu64 " dropped, %" PRIu64 " truncated; shorter waits not drawn: %" PRIu64
				 "%s%s",
				 rec->note[0] ? "WARNING " : "", (double)rec->min_block_ns / 1e6, rec->event, rec->seconds,
				 (double)rec->total_weight / 1e6, rec->samples, count_view ? " (widths: samples)" : "",
				 rec->lost, rec->truncated, rec->short_blocks, rec->note[0] ? "; agent: " : "", rec->note);
	} else if (!recording_timed(rec))
		snprintf(subtitle, sizeof(subtitle),
			 "%.1f s at %d Hz (%s): %" PRIu64 " samples, %" PRIu64 " lost, %" PRIu64 " truncated, %" PRIu64
			 " unwind failed, %" PRIu64 " failed stack reads; %s",
			 rec->seconds, rec->freq, rec->event, rec->samples, rec->lost, rec->truncated, rec->unwind_failed,
			 rec->stack_errors, rec->frame_pointers);
	else
		snprintf(subtitle, sizeof(subtitle),
			 "%s, %.1f s (%s%s): %.1f ms in %" PRIu64 " samples, %" PRIu64 " lost, %" PRIu64
			 " truncated, %" PRIu64 " unwind failed; blocks under %.3f ms not drawn: %" PRIu64 " (%.1f ms); %s",
			 strcmp(rec->weight_type, "wall") == 0 ? "wall-clock time" : "off-CPU time", rec->seconds,
			 rec->event, strcmp(rec->weight_type, "wall") == 0 ? "" : ", weighted by time blocked",
			 (double)rec->total_weight / 1e6, rec->samples, rec->lost, rec->truncated, rec->unwind_failed,
			 (double)rec->min_block_ns / 1e6, rec->short_blocks, (double)rec->short_ns / 1e6,
			 rec->frame_pointers);
	struct fg_options o = {
		.title = title,
		.subtitle = subtitle,
		.subtitle_warning = agent ? rec->note[0] != '\0' : rec->fp_warning,
		.colors = "java",
		.legend = true,
		.hash = true,
		.countname = recording_timed(rec) || (recording_lock(rec) && !count_view) ? "ms" : NULL,
		.count_scale = recording_timed(rec) || (recording_lock(rec) && !count_view) ? 1000 : 0,
		.bytes = recording_alloc(rec) && !count_view,
	};
	rc = flamegraph_write(f, st, n, &o, err, errlen);
out:
	free(st);
	free(s);
	return rc;
}

/* pprof or speedscope: counts are samples, weights samples x 1e9/freq cpu ns;
 * the stacks of lines, whose interpreted frames carry their source lines. */
static int write_profile(FILE *f, const struct recording *rec, const struct recording *lines, int64_t end_real_ns,
			 bool pprof, bool count_view, char *err, size_t errlen)
{
	struct stack_table t;
	int rc = -1;
	stack_table_init(&t);
	if (stack_table_from_recording(&t, rec, lines, end_real_ns) != 0) {
		snprintf(err, errlen, "jflame: out of memory");
	} else {
		if (!pprof && count_view && (recording_alloc(rec) || recording_lock(rec)))
			t.meta.has_weight = false; /* speedscope: the samples */
		rc = pprof ? pprof_write(f, &t, false, err, errlen) : speedscope_write(f, &t, err, errlen);
		if (rc != 0)
			cli_err_prefix(err, errlen);
	}
	stack_table_free(&t);
	return rc;
}

/* The heat map of the samples (pid 0, the idle task, left out). */
static int write_heatmap(struct window *w, FILE *f, char *err, size_t errlen)
{
	const struct recording *rec = &w->rec;
	char subtitle[sizeof(rec->target) + sizeof(rec->frame_pointers) + 64];
	snprintf(subtitle, sizeof(subtitle), "%s, %.1f s at %d Hz, %s", rec->target, rec->seconds, rec->freq,
		 rec->frame_pointers);
	struct heatmap_options ho = { .title = "CPU heat map", .subtitle = subtitle };
	if (heatmap_check(&w->heatmap, &ho, err, errlen) != 0 || heatmap_write_html(f, &w->heatmap, &ho, err, errlen) != 0)
		return cli_err_prefix(err, errlen);
	return 0;
}

/* The path output i of window w goes to (its template expanded). */
static int output_path(const struct record *r, const struct window *w, size_t i, char *out, size_t len, char *err,
		       size_t errlen)
{
	char host[256] = "";
	struct out_name_vars v = {
		.time_ns = w->start_real_ns,
		.pid = r->o.npids ? r->o.pids[0] : getpid(),
		.host = host,
		.seq = w->seq,
	};
	gethostname(host, sizeof(host) - 1);
	if (out_name_expand(r->o.outputs[i], &v, out, len) != 0) {
		snprintf(err, errlen, "jflame: output name '%s' is too long once expanded", r->o.outputs[i]);
		return -1;
	}
	return 0;
}

/* Writes window w's outputs (the .stacks file was written as samples came)
 * and lists their paths in wrote. A failed output does not stop the others:
 * the first error is in err. */
static int write_outputs(struct record *r, struct window *w, enum rec_event ev, char *wrote, size_t wrote_len,
			 char *err, size_t errlen)
{
	const struct recording *rec = ev == EV_BPF ? &w->rec : &w->jrec[ev == EV_ALLOC ? J_ALLOC : J_LOCK];
	int64_t end_real_ns = w->start_real_ns + (int64_t)(w->rec.seconds * 1e9);
	size_t pos = 0;
	int rc = 0;
	char e[ERR_LEN];
	wrote[0] = '\0';
	for (size_t i = 0; i < r->o.noutputs; i++) {
		struct out_file of;
		char path[4096];
		int wr = 0;
		e[0] = '\0';
		if (r->o.out_ev[i] != ev)
			continue;
		if (r->o.formats[i] == OUT_STACKS) {
			if (!w->stacks_open)
				continue;
			w->stacks_open = false;
			snprintf(path, sizeof(path), "%s", w->stacks_path);
			stacks_order_flush(&w->stacks_order, w->stacks.f);
			if ((wr = out_file_commit(&w->stacks, e, sizeof(e))) != 0)
				cli_err_prefix(e, sizeof(e));
		} else if (output_path(r, w, i, path, sizeof(path), e, sizeof(e)) != 0) {
			wr = -1;
		} else if (out_file_open(&of, path, e, sizeof(e)) != 0) {
			wr = cli_err_prefix(e, sizeof(e));
		} else {
			if (r->o.formats[i] == OUT_SVG)
				wr = write_svg(of.f, rec, r->o.count_view, e, sizeof(e));
			else if (r->o.formats[i] == OUT_PPROF || r->o.formats[i] == OUT_SPEEDSCOPE)
				wr = write_profile(of.f, rec, ev == EV_BPF && r->want_lines ? &w->rec_lines : NULL,
						   end_real_ns, r->o.formats[i] == OUT_PPROF, r->o.count_view, e, sizeof(e));
			else if (r->o.formats[i] == OUT_HEATMAP)
				wr = write_heatmap(w, of.f, e, sizeof(e));
			else
				wr = write_folded(of.f, rec, r->o.count_view);
			if (wr != 0) {
				if (!e[0])
					snprintf(e, sizeof(e), "jflame: out of memory writing %.900s", path);
				out_file_abort(&of);
			} else if ((wr = out_file_commit(&of, e, sizeof(e))) != 0) {
				cli_err_prefix(e, sizeof(e));
			}
		}
		if (wr != 0) {
			if (!rc)
				snprintf(err, errlen, "%s", e);
			rc = -1;
			continue;
		}
		pos += (size_t)snprintf(wrote + pos, pos < wrote_len ? wrote_len - pos : 0, " %s",
					strcmp(path, "-") == 0 ? "standard output" : path);
		if (pos >= wrote_len)
			pos = wrote_len - 1;
		if ((r->o.keep || r->o.keep_bytes) && out_name_varies(r->o.outputs[i]) &&
		    out_name_rotate(r->o.outputs[i], r->o.keep, r->o.keep_bytes, e, sizeof(e)) < 0)
			fprintf(stderr, "jflame: warning: %s\n", e);
	}
	return rc;
}

/* ---- pushing ------------------------------------------------------------------ */

/* The stacks of one series in a window: a JVM's, or every other process's. */
struct series {
	pid_t pid; /* 0: the processes that are not JVMs */
	char pod[128], con[128];
	struct stack_table t;
};

/* The series a folded stack belongs to, and where its frames start once the
 * roots that become labels ([Pod], [Con], and a JVM's [pid]) are cut off. */
static struct series *series_of(struct record *r, struct series **all, size_t *n, const char *stack,
				const char **rest)
{
	const char *pod = NULL, *con = NULL, *p = stack;
	size_t podn = 0, conn = 0;
	unsigned pid = 0;
	for (;;) {
		const char *semi = strchr(p, ';');
		size_t len = semi ? (size_t)(semi - p) : strlen(p);
		if (len > 5 && strncmp(p, "[Pod]", 5) == 0)
			pod = p + 5, podn = len - 5;
		else if (len > 5 && strncmp(p, "[Con]", 5) == 0)
			con = p + 5, conn = len - 5;
		else if (sscanf(p, "[%u] ", &pid) == 1)
			break;
		if (!semi)
			return NULL;
		p = semi + 1;
	}
	bool jvm = symbolizer_is_jvm(r->sy, (pid_t)pid);
	const char *after = strchr(p, ';');
	*rest = jvm ? (after ? after + 1 : p + strlen(p)) : p; /* others keep their "[pid] name" */
	pid_t key = jvm ? (pid_t)pid : 0;
	for (size_t i = 0; i < *n; i++)
		if ((*all)[i].pid == key)
			return &(*all)[i];
	struct series *grown = realloc(*all, (*n + 1) * sizeof(**all));
	if (!grown)
		return NULL;
	*all = grown;
	struct series *s = &grown[(*n)++];
	memset(s, 0, sizeof(*s));
	s->pid = key;
	if (jvm) {
		snprintf(s->pod, sizeof(s->pod), "%.*s", (int)(podn < 127 ? podn : 127), pod ? pod : "");
		snprintf(s->con, sizeof(s->con), "%.*s", (int)(conn < 127 ? conn : 127), con ? con : "");
	}
	stack_table_init(&s->t);
	return s;
}

/* Hands window w to the pusher: one pprof per series, named and labelled as
 * Pyroscope's own clients do. */
static void push_window(struct record *r, struct window *w)
{
	const struct recording *src = r->want_lines ? &w->rec_lines : &w->rec;
	uint64_t period = r->o.freq > 0 ? 1000000000ULL / (uint64_t)r->o.freq : 0;
	int64_t end_real = w->start_real_ns + (int64_t)(w->rec.seconds * 1e9);
	struct series *all = NULL;
	size_t n = 0, ns = 0;
	char host[256] = "", pidbuf[16], err[ERR_LEN];
	struct stack_count *sc = recording_sorted(src, &n);
	gethostname(host, sizeof(host) - 1);
	for (size_t i = 0; sc && i < n; i++) {
		const char *rest;
		struct series *s = series_of(r, &all, &ns, sc[i].stack, &rest);
		if (s && *rest)
			stack_table_add(&s->t, rest, strlen(rest), sc[i].count,
					recording_timed(&w->rec) ? sc[i].weight : sc[i].count * period);
	}
	free(sc);
	for (size_t i = 0; i < ns; i++) {
		struct series *s = &all[i];
		const char *keys[MAX_LABELS + 6], *values[MAX_LABELS + 6];
		size_t k = 0;
		char *body = NULL;
		size_t len = 0;
		FILE *f;
		for (size_t j = 0; j < r->o.nlabels; j++, k++)
			keys[k] = r->o.label_keys[j], values[k] = r->o.label_values[j];
		const char *app = r->o.app ? r->o.app : s->pid ? symbolizer_app_name(r->sy, s->pid) : "jflame-host";
		snprintf(pidbuf, sizeof(pidbuf), "%d", (int)s->pid);
		keys[k] = "service_name", values[k++] = app;
		keys[k] = "host", values[k++] = host;
		if (s->pid) {
			keys[k] = "pid", values[k++] = pidbuf;
			keys[k] = "process", values[k++] = symbolizer_process_name(r->sy, s->pid);
			keys[k] = "pod", values[k++] = s->pod;
			keys[k] = "container", values[k++] = s->con;
		}
		stack_table_meta_from_recording(&s->t, &w->rec, end_real);
		s->t.meta.lines = src == &w->rec_lines;
		struct push_profile *prof = calloc(1, sizeof(*prof));
		if (!prof || !(f = open_memstream(&body, &len)) ||
		    (pprof_write(f, &s->t, false, err, sizeof(err)) != 0 ? (fclose(f), 1) : fclose(f) != 0) ||
		    !(prof->name = push_series_name(app, keys, values, k))) {
			free(body);
			if (prof)
				free(prof->name);
			free(prof);
			fprintf(stderr, "jflame: warning: window %" PRIu64 " not pushed: out of memory\n", w->seq);
		} else {
			prof->pprof = (uint8_t *)body;
			prof->len = len;
			prof->from_ns = w->start_real_ns;
			prof->until_ns = end_real;
			prof->sample_rate = r->o.freq;
			push_enqueue(r->pusher, prof);
			r->pushed_profiles++;
		}
		stack_table_free(&s->t);
	}
	free(all);
}

static void window_free(struct record *r, struct window *w)
{
	recording_free(&w->rec);
	recording_free(&w->jrec[J_ALLOC]);
	recording_free(&w->jrec[J_LOCK]);
	if (r->want_lines)
		recording_free(&w->rec_lines);
	if (r->want_heatmap)
		heatmap_free(&w->heatmap);
	if (w->stacks_open)
		out_file_abort(&w->stacks);
	stacks_order_free(&w->stacks_order);
	w->stacks_open = false;
	w->open = false;
}

static int window_open_err(struct record *r, struct window *w, uint64_t start_ns, uint64_t seq, char *err,
			   size_t errlen)
{
	memset(w, 0, sizeof(*w));
	w->seq = seq;
	w->start_ns = start_ns;
	w->end_ns = r->o.window_ns ? start_ns + r->o.window_ns : UINT64_MAX;
	w->start_real_ns = (int64_t)start_ns + r->real_minus_mono_ns;
	if (recording_init(&w->rec) != 0 || (r->want_lines && recording_init(&w->rec_lines) != 0) ||
	    (r->o.alloc && recording_init(&w->jrec[J_ALLOC]) != 0) || (r->o.lock && recording_init(&w->jrec[J_LOCK]) != 0) ||
	    (r->want_heatmap && heatmap_init(&w->heatmap) != 0)) {
		window_free(r, w);
		snprintf(err, errlen, "jflame: out of memory");
		return -1;
	}
	for (size_t i = 0; i < r->o.noutputs; i++) {
		if (r->o.formats[i] != OUT_STACKS)
			continue;
		if (output_path(r, w, i, w->stacks_path, sizeof(w->stacks_path), err, errlen) != 0 ||
		    (out_file_open(&w->stacks, w->stacks_path, err, errlen) != 0 && cli_err_prefix(err, errlen))) {
			window_free(r, w);
			return -1;
		}
		w->stacks_open = true;
	}
	w->open = true;
	return 0;
}

/* Opens window seq from start_ns. A window after the first that cannot be
 * opened is said in a warning; its samples stay in the window before. */
static int window_open(struct record *r, struct window *w, uint64_t start_ns, uint64_t seq)
{
	char err[ERR_LEN];
	if (window_open_err(r, w, start_ns, seq, err, sizeof(err)) == 0)
		return 0;
	fprintf(stderr, "jflame: warning: window %" PRIu64 ": %s\n", seq, strncmp(err, "jflame: ", 8) == 0 ? err + 8 : err);
	return -1;
}

/* Writes window w, which ended at end_ns, says so in one line, and frees it.
 * A window's outputs that cannot be written are warned about; the recording
 * goes on. -1 when some output failed. */
static int window_close(struct record *r, struct window *w, uint64_t end_ns)
{
	char wrote[8192], err[ERR_LEN] = "", when[32];
	struct out_name_vars v = { .time_ns = w->start_real_ns };
	int rc;
	if (end_ns > w->end_ns)
		end_ns = w->end_ns;
	describe(r, w, end_ns > w->start_ns ? (double)(end_ns - w->start_ns) / 1e9 : 0);
	const struct recording *rec = &w->rec;
	out_name_expand("%t", &v, when, sizeof(when));
	if (r->tty_progress)
		fprintf(stderr, "\r\033[K");
	rc = 0;
	if (r->o.bpf_on) {
		rc = write_outputs(r, w, EV_BPF, wrote, sizeof(wrote), err, sizeof(err));
		if (r->pusher)
			push_window(r, w);
		fprintf(stderr, "jflame: window %" PRIu64 " from %s, %.1f s: %s%s%" PRIu64 " samples (%" PRIu64 " lost, %" PRIu64
			" truncated, %" PRIu64 " unwind failed, %" PRIu64 " failed stack reads); wrote%s\n", w->seq, when,
			rec->seconds, r->o.alloc || r->o.lock ? r->o.bpf_word : "", r->o.alloc || r->o.lock ? ": " : "", rec->samples, rec->lost, rec->truncated,
			rec->unwind_failed, rec->stack_errors, wrote[0] ? wrote : " nothing");
		if (rc != 0)
			fprintf(stderr, "jflame: warning: window %" PRIu64 ": %s\n", w->seq,
				strncmp(err, "jflame: ", 8) == 0 ? err + 8 : err);
		if (r->regress) {
			struct window_regress_window rw = { w->seq, w->start_real_ns, when, wrote[0] == ' ' ? wrote + 1 : wrote,
							    r->o.npids ? r->o.pids[0] : getpid() };
			window_regress_check(r->regress, rec, &rw);
		}
	}
	for (int ev = EV_ALLOC; ev <= EV_LOCK; ev++) {
		const struct recording *j = &w->jrec[ev == EV_ALLOC ? J_ALLOC : J_LOCK];
		char total[32];
		int jrc = 0;
		if (!ev_on(&r->o, (enum rec_event)ev))
			continue;
		wrote[0] = '\0';
		if (j->total) /* an empty one writes nothing */
			jrc = write_outputs(r, w, (enum rec_event)ev, wrote, sizeof(wrote), err, sizeof(err));
		if (ev == EV_ALLOC)
			human_bytes(total, sizeof(total), (double)j->total_weight);
		else
			snprintf(total, sizeof(total), "%.1f ms", (double)j->total_weight / 1e6);
		fprintf(stderr, "jflame: window %" PRIu64 " from %s, %.1f s: %s: %" PRIu64 " samples, %s (%" PRIu64
			" dropped); wrote%s\n", w->seq, when, j->seconds, ev_word(&r->o, (enum rec_event)ev), j->samples,
			total, j->lost, wrote[0] ? wrote : " nothing");
		if (jrc != 0) {
			fprintf(stderr, "jflame: warning: window %" PRIu64 ": %s\n", w->seq,
				strncmp(err, "jflame: ", 8) == 0 ? err + 8 : err);
			rc = -1;
		}
	}
	if (w->oom)
		fprintf(stderr, "jflame: warning: window %" PRIu64 ": out of memory, %" PRIu64 " samples not kept\n",
			w->seq, w->oom);
	r->closed++;
	if (r->o.bpf_on) {
		r->total_samples += rec->samples;
		r->total_lost += rec->lost;
	}
	for (int k = 0; k < 2; k++) {
		r->total_samples += w->jrec[k].samples;
		r->total_lost += w->jrec[k].lost;
	}
	window_free(r, w);
	return rc;
}

/* The current window's time is over (and its late samples' grace too): it is
 * written, the next one becomes current, and processes that have exited are
 * forgotten (their names, maps and walker entries). */
static void window_next(struct record *r)
{
	struct window *w = &r->win[r->cur], *next = &r->win[!r->cur];
	uint64_t end = w->end_ns, seq = w->seq;
	static pid_t gone[4096];
	release_before(r, end);
	if (w->open)
		window_close(r, w, end);
	r->cur = !r->cur;
	if (!next->open)
		window_open(r, next, end, seq + 1); /* when it fails, the next sample tries again */
	size_t n = symbolizer_forget_exited(r->sy, gone, sizeof(gone) / sizeof(gone[0]));
	for (size_t i = 0; i < n; i++) {
		if (!r->o.no_walker)
			sampler_walk_hotspot(r->sampler, gone[i], NULL);
		if (r->considered && gone[i] > 0 && gone[i] < PID_LIMIT)
			r->considered[gone[i] / 8] &= (uint8_t) ~(1u << (gone[i] % 8));
	}
}

/* ---- the recording loop ---------------------------------------------------------- */

/* -p: whether the target lives, from its /proc/PID/stat (a zombie has exited). */
static bool target_alive(pid_t pid)
{
	char path[64], buf[512];
	bool alive = false;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	if (n > 0) {
		buf[n] = '\0';
		char *p = strrchr(buf, ')');
		alive = p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
	}
	close(fd);
	return alive;
}

/* fd joins what the loop waits on (-1 when it cannot: then busy ticks). */
static int loop_watch(struct record *r, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };
	return fd >= 0 && epoll_ctl(r->epfd, EPOLL_CTL_ADD, fd, &ev) == 0 ? 0 : -1;
}

/* -p: the targets' pidfds, so that their exits are learned from the kernel
 * (they wake the loop) rather than from /proc (which walks every thread of a
 * JVM for its CPU times); launch mode: the command's. Where pidfd_open fails
 * (kernels before 5.3), -1: that target's /proc/PID/stat is read every 100
 * ms. A target gone already stays -1 and target_alive says so. */
static void targets_watch(struct record *r)
{
	r->npidfds = r->o.all || r->o.command ? 0 : r->o.npids;
	for (size_t i = 0; i < r->npidfds; i++) {
		r->pidfd[i] = (int)syscall(SYS_pidfd_open, r->o.pids[i], 0);
		if (loop_watch(r, r->pidfd[i]) != 0)
			r->pidfd_missing = true;
	}
	if (r->o.command && r->child > 0 && !r->child_exited) {
		r->child_pidfd = (int)syscall(SYS_pidfd_open, r->child, 0);
		if (loop_watch(r, r->child_pidfd) != 0)
			r->pidfd_missing = true;
	}
}

static void targets_unwatch(struct record *r)
{
	for (size_t i = 0; i < r->npidfds; i++)
		if (r->pidfd[i] >= 0)
			close(r->pidfd[i]);
	r->npidfds = 0;
	if (r->child_pidfd >= 0)
		close(r->child_pidfd);
	r->child_pidfd = -1;
	if (r->epfd >= 0)
		close(r->epfd);
	r->epfd = -1;
}

/* Whether the loop wakes every TICK_BUSY_NS: something is settling. */
static bool loop_busy(const struct record *r, uint64_t now, uint64_t start)
{
	uint64_t jvm = symbolizer_jvm_seen(r->sy);
	return now - start < SETTLE_NS || (jvm && now - jvm < SETTLE_NS) || r->walkers_pending || r->pidfd_missing ||
	       r->o.alloc || r->o.lock || r->deferred.n || sample_pipeline_nlate(r->pipe) ||
	       (r->aq && attach_queue_npending(r->aq));
}

/* How long the loop may sleep: to its next tick, the end of -d or of the window. */
static int loop_wait_ms(const struct record *r, uint64_t now, uint64_t start)
{
	uint64_t t = loop_busy(r, now, start) ? TICK_BUSY_NS : TICK_STEADY_NS, end;
	if (r->tty_progress && t > PROGRESS_NS)
		t = PROGRESS_NS;
	if (r->o.duration > 0) {
		end = start + (uint64_t)(r->o.duration * 1e9);
		t = end <= now ? 0 : end - now < t ? end - now : t;
	}
	if (r->o.window_ns) {
		end = r->win[r->cur].end_ns + WINDOW_GRACE_NS;
		t = end <= now ? 0 : end - now < t ? end - now : t;
	}
	return (int)((t + 999999) / 1000000);
}

static bool targets_alive(const struct record *r)
{
	struct pollfd pfd[MAX_PIDS];
	size_t n = 0;
	for (size_t i = 0; i < r->npidfds; i++) {
		if (r->pidfd[i] < 0) {
			if (target_alive(r->o.pids[i]))
				return true;
			continue;
		}
		pfd[n++] = (struct pollfd){ .fd = r->pidfd[i], .events = POLLIN };
	}
	/* a pidfd is readable once its process has exited */
	if (n && poll(pfd, n, 0) >= 0)
		for (size_t i = 0; i < n; i++)
			if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL)))
				return true;
	return false;
}

static void progress(const struct record *r, double secs, bool tty)
{
	struct sampler_stats st;
	if (!tty)
		return;
	sampler_read_stats(r->sampler, &st);
	if (!r->o.bpf_on)
		fprintf(stderr, "\r\033[Kjflame: recording %.1f s, %" PRIu64 " samples, %" PRIu64 " dropped", secs,
			r->ring_samples, agent_samples_stats(r->agents)->dropped);
	else
		fprintf(stderr, "\r\033[Kjflame: recording %.1f s, %" PRIu64 " samples, %" PRIu64 " lost", secs,
			st.samples + r->ring_samples, st.dropped + agent_samples_stats(r->agents)->dropped);
}

/* ---- launch mode ------------------------------------------------------------------ */

static bool is_java(const char *cmd)
{
	const char *base = strrchr(cmd, '/');
	return strcmp(base ? base + 1 : cmd, "java") == 0;
}

/* Forks the command, stopped until sampling has started (launch_go). A java
 * command gets the agent and the flags on its command line; anything else (a
 * wrapper script) gets them in JAVA_TOOL_OPTIONS. */
static int launch(struct record *r, char *err, size_t errlen)
{
	static const char *const flags[] = { "-XX:+PreserveFramePointer", "-XX:+UnlockDiagnosticVMOptions",
					     "-XX:+DebugNonSafepoints" };
	char agentpath[4400];
	int go[2], status[2];
	snprintf(agentpath, sizeof(agentpath), "-agentpath:%s%s%s", r->agent, r->o.agent_options[0] ? "=" : "",
		 r->o.agent_options);
	if (pipe2(go, O_CLOEXEC) != 0 || pipe2(status, O_CLOEXEC) != 0) {
		snprintf(err, errlen, "jflame: pipe: %s", strerror(errno));
		return -1;
	}
	fflush(NULL);
	r->child = fork();
	if (r->child < 0) {
		snprintf(err, errlen, "jflame: fork: %s", strerror(errno));
		return -1;
	}
	if (r->child == 0) {
		char c, **argv = calloc((size_t)r->o.ncommand + 6, sizeof(*argv));
		int n = 0, e;
		close(go[1]);
		close(status[0]);
		if (read(go[0], &c, 1) != 1) /* jflame went away before sampling began */
			_exit(127);
		if (!argv)
			_exit(127);
		argv[n++] = r->o.command[0];
		if (is_java(r->o.command[0])) {
			argv[n++] = agentpath;
			for (size_t i = 0; i < 3; i++)
				argv[n++] = (char *)flags[i];
		} else {
			const char *old = getenv("JAVA_TOOL_OPTIONS");
			char *tool = NULL;
			if (asprintf(&tool, "%s%s%s %s %s %s", old ? old : "", old ? " " : "", agentpath, flags[0],
				     flags[1], flags[2]) < 0 || setenv("JAVA_TOOL_OPTIONS", tool, 1) != 0)
				_exit(127);
		}
		for (int i = 1; i < r->o.ncommand; i++)
			argv[n++] = r->o.command[i];
		execvp(argv[0], argv);
		e = errno;
		if (write(status[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(status[1]);
	r->go_fd = go[1];
	launched = r->child;
	/* the status pipe closes on a successful exec, or carries errno */
	r->launch_status_fd = status[0];
	return 0;
}

static int launch_go(struct record *r, char *err, size_t errlen)
{
	int e = 0;
	if (write(r->go_fd, "g", 1) != 1) {
		snprintf(err, errlen, "jflame: failed to start %s: %s", r->o.command[0], strerror(errno));
		return -1;
	}
	close(r->go_fd);
	r->go_fd = -1;
	ssize_t got = read(r->launch_status_fd, &e, sizeof(e));
	close(r->launch_status_fd);
	r->launch_status_fd = -1;
	if (got == (ssize_t)sizeof(e)) {
		snprintf(err, errlen, "jflame: cannot run '%s': %s", r->o.command[0], strerror(e));
		return -1;
	}
	return 0;
}

static void reap_child(struct record *r, bool block)
{
	int st;
	if (r->child <= 0 || r->child_exited)
		return;
	pid_t w;
	do
		w = waitpid(r->child, &st, block ? 0 : WNOHANG);
	while (w < 0 && errno == EINTR);
	if (w == r->child) {
		r->child_exited = true;
		r->child_status = st;
		launched = 0;
	}
}

/* Attaches still under way when the recording ends. After -d or the targets'
 * exit each finishes (attach_agent's bound: 4 x --attach-timeout). After a
 * stop signal they get ATTACH_GRACE_NS, are then told to stop (their waits
 * end within 100 ms) and after ATTACH_STOP_NS more killed and reaped; a second
 * signal kills them at once. Their JVMs' samples are written either way. */
static void finish_attaches(struct record *r)
{
	uint64_t stop_at = 0;
	bool told = false;
	while (attach_queue_npending(r->aq) > 0 && stop_requested < 2) {
		uint64_t now = mono_ns();
		if (stop_requested && !stop_at)
			stop_at = now;
		if (stop_at && !told && now - stop_at >= ATTACH_GRACE_NS) {
			attach_queue_stop(r->aq);
			told = true;
		}
		if (stop_at && now - stop_at >= ATTACH_GRACE_NS + ATTACH_STOP_NS)
			break;
		attach_queue_poll(r->aq, 50);
	}
	attach_queue_free(r->aq); /* reports each one killed as failed: its samples are released */
	r->aq = NULL;
}

static int record_run(struct record *r, char *err, size_t errlen)
{
	struct sigaction sa = { 0 };
	bool tty = isatty(STDERR_FILENO);
	uint64_t start, last_refresh = 0, last_progress = 0;

	sa.sa_handler = on_signal;
	hup_closes_window = r->o.window_ns != 0;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT); /* counted one at a time */
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaddset(&sa.sa_mask, SIGHUP);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	r->tty_progress = tty;
	if (r->o.command && !r->o.all) {
		r->o.pids[0] = r->child;
		r->o.npids = 1;
	}
	struct sampler_opts so = {
		/* -e alloc/lock alone: the sampler only finds processes, slowly */
		.freq = !r->o.bpf_on && !r->o.freq_set && r->o.freq > 19 ? 19 : r->o.freq,
		.pids = r->o.all ? NULL : r->o.pids,
		.npids = r->o.npids,
		.follow_children = r->o.command != NULL,
		.include_idle = r->o.include_idle,
		.event = r->o.event,
		.no_cpu = r->o.mode == MODE_OFFCPU,
		.offcpu = r->o.mode != MODE_CPU,
		.min_block_ns = r->o.min_block_ns,
		.verbose = r->o.verbose,
	};
	r->sampler = sampler_open(&so, on_sample, r, err, errlen);
	if (!r->sampler)
		return cli_err_prefix(err, errlen);
	symbolizer_kernel_names(r->sy, sampler_kernel_names, r->sampler);
	sample_pipeline_set_depth(r->pipe, sampler_max_user_frames(r->sampler), sampler_max_kernel_frames(r->sampler));
	if (r->o.command && launch_go(r, err, errlen) != 0)
		return -1;
	if (r->o.bpf_on)
		r->walkers_pending = start_walkers(r); /* a launched command has run exec by now */
	if (r->aq && !r->o.all)
		attach_targets(r);
	struct agent_samples_opts ao = {
		.sy = r->sy,
		.alloc = r->o.alloc,
		.lock = r->o.lock,
		.alloc_interval = r->o.alloc_interval,
		.lock_min_ns = r->o.lock_min_ns,
		.pids = r->o.pids,
		.npids = r->o.npids,
		.every_jvm = r->o.all || r->o.command,
		.no_attach = r->o.no_attach,
		.tty = tty,
		.sink = on_agent_sample,
		.ctx = r,
	};
	r->agents = agent_samples_new(&ao);
	if (!r->agents) {
		snprintf(err, errlen, "jflame: out of memory");
		return -1;
	}
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (r->epfd < 0 || loop_watch(r, sampler_fd(r->sampler)) != 0) {
		snprintf(err, errlen, "jflame: failed to wait for samples (epoll): %s", strerror(errno));
		return -1;
	}
	targets_watch(r);
	start = mono_ns();
	agent_samples_poll(r->agents, mono_ns(), false);
	while (!stop_requested) {
		uint64_t now = mono_ns();
		double secs = (double)(now - start) / 1e9;
		if (r->o.duration > 0 && secs >= r->o.duration)
			break;
		attach_queue_poll(r->aq, 0);
		if (now - last_progress >= 250000000ULL) {
			progress(r, secs, tty);
			last_progress = now;
		}
		/* the samples since the last wake-up are read after the targets
		 * were looked at (agents' logs, class unloading): names they get
		 * are the ones their code had when they were taken */
		struct epoll_event ev[8];
		int got = epoll_wait(r->epfd, ev, 8, loop_wait_ms(r, now, start));
		bool exited = false;
		got = got < 0 ? -errno : got;
		for (int i = 0; i < got; i++)
			if (ev[i].data.fd != sampler_fd(r->sampler)) { /* a pidfd: its process has exited */
				epoll_ctl(r->epfd, EPOLL_CTL_DEL, ev[i].data.fd, NULL);
				exited = true;
			}
		now = mono_ns();
		if (got >= 0 && (exited || now - last_refresh >= TICK_BUSY_NS)) {
			symbolizer_refresh(r->sy);
			if (r->o.bpf_on)
				r->walkers_pending = start_walkers(r);
			sample_pipeline_release_late(r->pipe, mono_ns());
			agent_samples_poll(r->agents, mono_ns(), false);
			last_refresh = now;
			reap_child(r, false);
			if (r->o.command ? r->child_exited : !r->o.all && !targets_alive(r))
				break;
		}
		if (got >= 0)
			got = sampler_poll(r->sampler, 0);
		if (got < 0 && got != -EINTR) {
			snprintf(err, errlen, "jflame: failed to read samples: %s", strerror(-got));
			return -1;
		}
		if (r->o.window_ns) {
			struct window *w = &r->win[r->cur];
			now = mono_ns();
			if (hup_requested && !r->win[!r->cur].open) {
				hup_requested = 0;
				if (w->end_ns > now)
					w->end_ns = now;
			}
			if (now >= w->end_ns + WINDOW_GRACE_NS)
				window_next(r);
		}
	}
	double secs = (double)(mono_ns() - start) / 1e9;
	sampler_stop(r->sampler);
	symbolizer_refresh(r->sy);
	while (sampler_poll(r->sampler, 0) > 0)
		;
	finish_attaches(r);
	release_deferred(r, 0);
	if (sample_pipeline_nlate(r->pipe) && stop_requested < 2) {
		/* the agents write what they gathered every 100 ms; bound: 150 ms */
		struct timespec pause = { 0, 150000000L };
		nanosleep(&pause, NULL);
		symbolizer_refresh(r->sy);
	}
	sample_pipeline_release_late(r->pipe, 0);
	agent_samples_poll(r->agents, mono_ns(), true); /* the rest of every ring; the agents are asked for no more */
	if (tty)
		fprintf(stderr, "\r\033[K");
	if (!r->o.window_ns) {
		describe(r, &r->win[0], r->o.duration > 0 && secs > r->o.duration ? r->o.duration : secs);
		return 0;
	}
	/* the last window, cut short, and the next if samples reached it */
	uint64_t stop = start + (uint64_t)((r->o.duration > 0 && secs > r->o.duration ? r->o.duration : secs) * 1e9);
	int rc = 0;
	for (int k = 0; k < 2; k++) {
		struct window *w = &r->win[(r->cur + k) % 2];
		if (w->open && window_close(r, w, k == 0 && w->end_ns < stop ? w->end_ns : stop) != 0)
			rc = -1;
	}
	if (rc != 0)
		snprintf(err, errlen, "jflame: the last window's outputs were not all written (see the warning above)");
	return rc;
}

/* The pushes still queued get up to 10 s; then what was sent is said. */
static void finish_push(struct record *r)
{
	struct push_stats st;
	if (!r->pusher)
		return;
	push_stop(r->pusher, 10000, &st);
	r->pusher = NULL;
	fprintf(stderr, "jflame: pushed %" PRIu64 " of %" PRIu64 " profiles to %s (%" PRIu64 " failed, %" PRIu64
		" dropped, %" PRIu64 " retries)\n", st.sent, r->pushed_profiles, "Pyroscope", st.failed, st.dropped,
		st.retries);
}

int cmd_record(int argc, char **argv)
{
	struct record r = { 0 };
	char err[ERR_LEN] = "";
	int rc = 1;
	uint64_t cache_mismatches = 0;

	r.go_fd = r.launch_status_fd = r.child_pidfd = r.epfd = -1;
	int p = parse_options(&r.o, argc, argv);
	if (p != 0)
		return p > 0 ? 0 : 2;
	if (caps_check_record(r.o.pids, r.o.npids, r.o.all, err, sizeof(err)) != 0) {
		cli_err_prefix(err, sizeof(err));
		goto out;
	}
	if (r.o.load_agent || r.o.command) {
		if (r.o.agent)
			snprintf(r.agent, sizeof(r.agent), "%s", r.o.agent);
		else if (attach_find_agent(r.agent, sizeof(r.agent), err, sizeof(err)) != 0) {
			cli_err_prefix(err, sizeof(err));
			goto out;
		}
		r.attach = (struct attach_opts){ .agent = r.agent, .options = r.o.agent_options,
						 .timeout_ms = r.o.attach_timeout_ms };
	}
	r.si = str_intern_new();
	r.want_lines = r.o.push != NULL; /* pushed profiles carry source lines */
	for (size_t i = 0; i < r.o.noutputs; i++) {
		r.want_lines |= r.o.formats[i] == OUT_PPROF || r.o.formats[i] == OUT_SPEEDSCOPE;
		r.want_heatmap |= r.o.formats[i] == OUT_HEATMAP;
		r.want_stacks |= r.o.formats[i] == OUT_STACKS;
	}
	if (!r.si) {
		snprintf(err, sizeof(err), "jflame: out of memory");
		goto out;
	}
	r.sy = symbolizer_new(r.si, err, sizeof(err));
	if (!r.sy) {
		cli_err_prefix(err, sizeof(err));
		goto out;
	}
	struct sample_pipeline_opts po = {
		.sy = r.sy,
		.lines = r.want_lines,
		.no_inline = r.o.no_inline,
		.weigh_time = r.o.mode != MODE_CPU,
		.period_ns = r.o.freq > 0 ? 1000000000ULL / (uint64_t)r.o.freq : 0,
		.cache = !r.want_stacks, /* .stacks files take each sample's frames */
		.sink = on_folded,
		.ctx = &r,
	};
	r.pipe = sample_pipeline_new(&po);
	if (!r.pipe) {
		snprintf(err, sizeof(err), "jflame: out of memory");
		goto out;
	}
	if (r.o.load_agent && (r.o.all || r.o.npids)) {
		r.aq = attach_queue_new(&r.attach, on_attached, &r);
		r.considered = calloc(PID_LIMIT / 8, 1);
		if (!r.aq || !r.considered) {
			snprintf(err, sizeof(err), "jflame: out of memory");
			goto out;
		}
	}
	/* the first window: its .stacks file is created now, so a bad path is
	 * said before recording starts */
	struct timespec real, mono;
	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	r.real_minus_mono_ns = ((int64_t)real.tv_sec - (int64_t)mono.tv_sec) * 1000000000LL +
			       ((int64_t)real.tv_nsec - (int64_t)mono.tv_nsec);
	if (window_open_err(&r, &r.win[0], mono_ns(), 1, err, sizeof(err)) != 0)
		goto out;
	if (r.o.push) {
		struct push_opts po = { .url = r.o.push, .token = r.o.push_token, .basic_auth = r.o.push_basic_auth,
					.tenant = r.o.push_tenant, .ca = r.o.push_ca, .verbose = r.o.verbose,
					.timeout_ms = r.o.push_timeout_ms };
		if (!(r.pusher = push_start(&po, err, sizeof(err)))) {
			cli_err_prefix(err, sizeof(err));
			goto out;
		}
	}
	if (r.o.baseline && !(r.regress = window_regress_new(&r.o.regress, err, sizeof(err))))
		goto out;
	if (r.o.baseline && r.o.push) /* the issue asked for them there when the API allows: say why not */
		fprintf(stderr, "jflame: regressions are not pushed: Pyroscope's API takes profiles and labels only, "
			"no annotations; they are said here (--on-regression can post them to Grafana's "
			"/api/annotations)\n");
	if (r.o.command && launch(&r, err, sizeof(err)) != 0)
		goto out;
	if (record_run(&r, err, sizeof(err)) != 0)
		goto out;
	struct sample_pipeline_cache_stats cs;
	if (sample_pipeline_cache_stats(r.pipe, &cs)) {
		if (r.o.verbose)
			fprintf(stderr, "jflame: stack cache: %" PRIu64 " hits, %" PRIu64 " misses, %" PRIu64 " flushes\n",
				cs.hits, cs.misses, cs.flushes);
		cache_mismatches = cs.mismatches;
	}
	const struct sample_pipeline_check *chk = sample_pipeline_check_stats(r.pipe);
	if (chk) /* JFLAME_AGENTLESS_CHECK=1: the tests' comparison of agentless names with the agent's */
		fprintf(stderr, "jflame: agentless check: %" PRIu64 " of %" PRIu64 " samples of JVMs with the agent "
			"named alike from their memory (%.1f%%)\n", chk->samples - chk->different, chk->samples,
			chk->samples ? 100.0 * (double)(chk->samples - chk->different) / (double)chk->samples : 0.0);
	if (r.o.window_ns) {
		fprintf(stderr, "jflame: %" PRIu64 " window%s, %" PRIu64 " samples (%" PRIu64 " lost)\n", r.closed,
			r.closed == 1 ? "" : "s", r.total_samples, r.total_lost);
		rc = 0;
		finish_push(&r);
		goto out;
	}
	struct window *w = &r.win[0];
	if (w->oom || r.no_window) {
		snprintf(err, sizeof(err), "jflame: out of memory while recording (%" PRIu64 " samples not kept)",
			 w->oom + r.no_window);
		goto out;
	}
	/* each event's outputs; an event without samples writes nothing and
	 * makes the exit code nonzero, after the others are written */
	bool empty = false, failed = false;
	char wrote[8192];
	if (r.o.bpf_on && w->rec.total == 0) {
		empty = true;
		if (r.o.mode == MODE_CPU)
			fprintf(stderr, "jflame: no samples in %.1f s: the target%s used no CPU; nothing written%s\n",
				w->rec.seconds, r.o.all ? "s" : "", r.o.alloc || r.o.lock ? " for cpu" : "");
		else
			fprintf(stderr, "jflame: no samples in %.1f s: no thread of the target%s blocked for %.3f ms or "
				"more (%" PRIu64 " shorter blocks); nothing written%s; lower --min-block\n", w->rec.seconds,
				r.o.all ? "s" : "", (double)r.o.min_block_ns / 1e6, w->rec.short_blocks,
				r.o.alloc || r.o.lock ? " for it" : "");
	} else if (r.o.bpf_on) {
		if (write_outputs(&r, w, EV_BPF, wrote, sizeof(wrote), err, sizeof(err)) != 0) {
			fprintf(stderr, "%s\n", err);
			failed = true;
		}
		if (r.pusher) {
			push_window(&r, w);
			finish_push(&r);
		}
		fprintf(stderr, "jflame: %s%s%" PRIu64 " samples (%" PRIu64 " lost, %" PRIu64 " truncated, %" PRIu64
			" unwind failed, %" PRIu64 " failed stack reads) in %.1f s; wrote%s\n",
			r.o.alloc || r.o.lock ? r.o.bpf_word : "", r.o.alloc || r.o.lock ? ": " : "", w->rec.samples, w->rec.lost, w->rec.truncated,
			w->rec.unwind_failed, w->rec.stack_errors, w->rec.seconds, wrote[0] ? wrote : " nothing");
		if (recording_timed(&w->rec))
			fprintf(stderr, "jflame: %s: %.1f ms recorded; %" PRIu64 " blocks under %.3f ms (%.1f ms) counted, "
				"not recorded\n", recording_title(&w->rec), (double)w->rec.total_weight / 1e6,
				w->rec.short_blocks, (double)w->rec.min_block_ns / 1e6, (double)w->rec.short_ns / 1e6);
		if (w->rec.fp_warning && r.fp_warnings == 0)
			fprintf(stderr, "jflame: %s\n", w->rec.frame_pointers + 8);
	}
	for (int ev = EV_ALLOC; ev <= EV_LOCK; ev++) {
		const struct recording *j = &w->jrec[ev == EV_ALLOC ? J_ALLOC : J_LOCK];
		char total[32], every[32];
		if (!ev_on(&r.o, (enum rec_event)ev))
			continue;
		if (j->total == 0) {
			empty = true;
			human_bytes(every, sizeof(every), (double)r.o.alloc_interval);
			if (ev == EV_ALLOC)
				fprintf(stderr, "jflame: no allocation samples in %.1f s (%" PRIu64 " dropped): the target JVMs "
					"allocated less than %s, or have no jflame agent (see above); nothing written for "
					"alloc\n", j->seconds, j->lost, every);
			else
				fprintf(stderr, "jflame: no lock samples in %.1f s (%" PRIu64 " dropped): no thread waited %.3f "
					"ms or more for a contended monitor or lock (%" PRIu64 " shorter waits); nothing written for "
					"lock; lower --lock-min\n", j->seconds, j->lost, (double)r.o.lock_min_ns / 1e6,
					j->short_blocks);
			continue;
		}
		if (write_outputs(&r, w, (enum rec_event)ev, wrote, sizeof(wrote), err, sizeof(err)) != 0) {
			fprintf(stderr, "%s\n", err);
			failed = true;
		}
		if (ev == EV_ALLOC)
			human_bytes(total, sizeof(total), (double)j->total_weight);
		else
			snprintf(total, sizeof(total), "%.1f ms blocked", (double)j->total_weight / 1e6);
		fprintf(stderr, "jflame: %s: %" PRIu64 " samples, %s (%" PRIu64 " dropped, %" PRIu64 " truncated%s) in "
			"%.1f s; wrote%s\n", ev_word(&r.o, (enum rec_event)ev), j->samples, total, j->lost, j->truncated,
			ev == EV_LOCK ? "" : "", j->seconds, wrote[0] ? wrote : " nothing");
		if (ev == EV_LOCK && j->short_blocks)
			fprintf(stderr, "jflame: lock: %" PRIu64 " waits under %.3f ms counted, not recorded\n",
				j->short_blocks, (double)r.o.lock_min_ns / 1e6);
		if (j->lost)
			fprintf(stderr, "jflame: warning: %s: %" PRIu64 " samples dropped by the agents (jflame read their "
				"rings too slowly)\n", ev_word(&r.o, (enum rec_event)ev), j->lost);
	}
	err[0] = '\0';
	rc = empty || failed ? 1 : 0;
out:
	if (rc != 0 && err[0])
		fprintf(stderr, "%s\n", err);
	if (cache_mismatches) { /* JFLAME_STACK_CACHE=verify: the tests' check that the cache changes nothing */
		fprintf(stderr, "jflame: stack cache: %" PRIu64 " kept stacks folded differently when named again\n",
			cache_mismatches);
		if (rc == 0)
			rc = 1;
	}
	if (r.child > 0) {
		if (r.go_fd >= 0) { /* never started: it exits at once */
			close(r.go_fd);
			r.go_fd = -1;
		} else if (!r.child_exited && rc == 0) {
			fprintf(stderr, "jflame: recording done; waiting for %s (pid %d) to exit\n", r.o.command[0],
				(int)r.child);
		}
		if (r.launch_status_fd >= 0)
			close(r.launch_status_fd);
		reap_child(&r, true);
		/* the command's own exit code, once jflame's outputs are written */
		if (rc == 0 && WIFEXITED(r.child_status))
			rc = WEXITSTATUS(r.child_status);
		else if (rc == 0 && WIFSIGNALED(r.child_status))
			rc = 128 + WTERMSIG(r.child_status);
	}
	push_stop(r.pusher, 0, NULL); /* an error before the pushes were finished */
	window_regress_free(r.regress);
	targets_unwatch(&r);
	agent_samples_free(r.agents);
	attach_queue_free(r.aq);
	free(r.considered);
	sample_queue_free(&r.deferred);
	for (int k = 0; k < 2; k++)
		if (r.win[k].open)
			window_free(&r, &r.win[k]);
	sampler_close(r.sampler);
	symbolizer_free(r.sy);
	sample_pipeline_free(r.pipe);
	str_intern_free(r.si);
	return rc;
}
