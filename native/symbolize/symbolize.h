/* symbolize.h - names every frame of a sample: kernel frames from kallsyms, JIT
 * frames from the JVM's agent files, native frames from ELF files, per process. */
#ifndef JFLAME_SYMBOLIZE_H
#define JFLAME_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>

#include "profile.h"
#include "str_intern.h"

enum frame_kind {
	FRAME_KERNEL,	   /* kernel text */
	FRAME_JAVA,	   /* JIT-compiled Java: name is the agent's, maybe an A->B inline chain */
	FRAME_JAVA_INTERP, /* interpreted Java: "Lpkg/Class;::method", read from the JVM's memory */
	FRAME_VMCODE,	   /* code the JVM generated: Interpreter, stubs, adapters */
	FRAME_NATIVE,	   /* a symbol in an ELF file */
	FRAME_UNKNOWN,	   /* nothing names it: name is "[unknown]" or "[libfoo.so]" */
};

struct frame {
	uint64_t addr;
	const char *name; /* interned; as perf would print it */
	const char *dso;  /* interned; "[kernel.kallsyms]", "/tmp/perf-1.map", the file path, "[unknown]" */
	enum frame_kind kind;
	int line;	  /* source line (interpreted Java), 0 when not known */
	const char *file; /* its source file (interpreted Java, even with no line), NULL when not known */
	/* FRAME_JAVA named from the JVM's debug info, with lines wanted: each
	 * inline chain member's "File.java:LINE" (line 0: not known), one per
	 * line, interned; NULL otherwise */
	const char *inline_lines;
};

struct symbolizer;

/* Loads kallsyms. NULL with one line in err. */
struct symbolizer *symbolizer_new(struct str_intern *si, char *err, size_t errlen);
void symbolizer_free(struct symbolizer *sy);

struct frame symbolize_kernel(struct symbolizer *sy, uint64_t addr);
/* Where kernel frames get their names: fn (sampler_kernel_names' contract), or
 * /proc/kallsyms while fn is NULL or once it returns -1. */
typedef int (*kernel_names_fn)(void *ctx, const uint64_t *addr, size_t n, char (*out)[PROFILE_KSYM_LEN]);
void symbolizer_kernel_names(struct symbolizer *sy, kernel_names_fn fn, void *ctx);
/* Names the kernel addresses among pcs[0..n) not named yet, in batches (a
 * stack's new kernel frames cost one call of fn rather than one each). */
void symbolizer_kernel_prefetch(struct symbolizer *sy, const uint64_t *pcs, size_t n);
/* A user-space address of process pid at time t_ns (CLOCK_MONOTONIC). A
 * caller's address is a return address: native code is looked up at addr - 1
 * so a call that ends a function is not taken for the next one (JIT code is
 * looked up as is: the agent's inline ranges already include return addresses). */
struct frame symbolize_user(struct symbolizer *sy, pid_t pid, uint64_t addr, uint64_t t_ns, bool caller);

/* A frame of the HotSpot walker (see profile.h): interpreted methods are
 * named from the JVM's memory; compiled code by the agent's log (at the
 * sample's time), else from the JVM's memory (no inlining); native code as
 * symbolize_user. With wait, compiled code the agent has not logged yet is
 * left unnamed, for the sample to wait for the agent (symbolizer_names_later). */
struct frame symbolize_hotspot(struct symbolizer *sy, pid_t pid, const struct profile_frame *pf, uint64_t t_ns,
			       bool caller, bool wait);

/* The HotSpot walker's layout of JVM pid, handed out once: 1 when it became
 * ready (fills out), 0 not (yet), -1 never (not a JVM, or not readable), 2
 * once when the layout handed out before no longer holds (the process ran
 * exec, or its pid is another process's now): stop walking it. */
int symbolizer_walker_info(struct symbolizer *sy, pid_t pid, struct hotspot_proc *out);
/* The unwinding rows of JVM pid's stubs (hotspot_vm_stub_rows), once its
 * layout was handed out: 0, or -1 with a line in err. */
int symbolizer_stub_rows(struct symbolizer *sy, pid_t pid, struct stub_row **rows, size_t *n, char *err, size_t errlen);
/* Whether pid is a JVM whose layout can be read (the walker can walk it). */
bool symbolizer_can_walk(struct symbolizer *sy, pid_t pid);
/* Whether pid's stacks are walked by the HotSpot walker (its layout was handed out). */
bool symbolizer_walks_hotspot(struct symbolizer *sy, pid_t pid);

/* "java" for pid, from /proc/PID/comm when first seen (kept after it exits). */
const char *symbolizer_process_name(struct symbolizer *sy, pid_t pid);
/* The process's root frame: "[pid] name" (interned); NULL when out of memory. */
const char *symbolizer_process_root(struct symbolizer *sy, pid_t pid);
/* The full Java thread name of a thread (comm: the kernel's name for it):
 * the JVM's agent's, else read from the JVM's memory (its java.lang.Thread;
 * once per thread and again when comm changes), else comm. */
const char *symbolizer_thread_name(struct symbolizer *sy, pid_t pid, pid_t tid, const char *comm);
/* The same from the JVM's memory only, as if it had no agent. */
const char *symbolizer_thread_name_memory(struct symbolizer *sy, pid_t pid, pid_t tid, const char *comm);
/* The same for a thread known by its id in the process's pid namespace (the
 * agent's samples): the agent's name, else the comm of the host's thread,
 * else "[tid N]". */
const char *symbolizer_thread_name_ns(struct symbolizer *sy, pid_t pid, pid_t nstid);

/* Reads new lines of every JVM's agent files; looks for agents that appeared.
 * Call it every ~100 ms while recording, and before symbolizing a batch. A
 * process without samples since the last call (symbolizer_sample) is looked
 * at once a second only. */
void symbolizer_refresh(struct symbolizer *sy);
/* A sample of pid is about to be named: its process counts as sampled, and is
 * looked at first when the last look is older than the refresh period (a
 * process waking up from idle gets the names it has now). */
void symbolizer_sample(struct symbolizer *sy, pid_t pid);
/* The same for a sample of thread tid: a thread not sampled before has the
 * process looked at for an exec at once (else within a second). */
void symbolizer_sample_thread(struct symbolizer *sy, pid_t pid, pid_t tid);
/* When a process was last found to be a JVM (CLOCK_MONOTONIC ns, 0 never):
 * its walker and agent are set up in the next moments. */
uint64_t symbolizer_jvm_seen(const struct symbolizer *sy);

/* What the agent of a JVM says about frame pointers: 1 on, 0 off, -1 unknown
 * (no agent status), and whether pid is a JVM (a libjvm.so mapping or agent files). */
int symbolizer_frame_pointers(struct symbolizer *sy, pid_t pid);
bool symbolizer_is_jvm(struct symbolizer *sy, pid_t pid);

/* Root frames for a process in a container: "[Pod]<pod uid>" and "[Con]<short
 * container id>" from /proc/PID/cgroup, each NULL when not known. */
/* A compiled or stub frame of the HotSpot walker named from the JVM's memory
 * only, as if it had no agent ([unknown] when that does not name it). */
struct frame symbolize_hotspot_memory(struct symbolizer *sy, pid_t pid, const struct profile_frame *pf, uint64_t t_ns);

/* Compiled frames named from the JVMs' own debug info (no agent). */
struct symbolizer_inline {
	uint64_t decoded;	  /* named with their inline chain (or none at their pc) */
	uint64_t bad;		  /* debug info that did not decode: the method alone */
	uint64_t unsupported;	  /* a JVM whose debug info this jflame cannot read: the method alone */
	pid_t safepoint_only_pid; /* a JVM without -XX:+DebugNonSafepoints (0 none): its
				      chains are placed at the nearest safepoint */
	pid_t unsupported_pid;
};
const struct symbolizer_inline *symbolizer_inline_stats(const struct symbolizer *sy);
/* Whether frames named from the JVMs' memory carry source lines (inline_lines). */
void symbolizer_lines(struct symbolizer *sy, bool on);

void symbolizer_container(struct symbolizer *sy, pid_t pid, const char **pod, const char **con);

/* Whether pid has JIT symbols (a jflame agent or another perf map). */
bool symbolizer_has_agent(struct symbolizer *sy, pid_t pid);
/* The generation of pid's names for a sample taken at t_ns: while it stays the
 * same, the same raw stack (pcs, and for HotSpot walks methods and cookies) of
 * a sample taken at t_ns or later gets the same names. It changes whenever
 * what names them does (maps, the agent's log, class unloading, an exec);
 * generations are never reused, across processes too. 0: a sample this old
 * (taken before the last change) must be named afresh. */
uint64_t symbolizer_names_gen(struct symbolizer *sy, pid_t pid, uint64_t t_ns);
/* Whether f's name is the one its code keeps: not unknown, and not a JIT
 * frame named from the JVM's memory in a JVM whose agent may yet log it
 * (with its inlined methods). */
bool symbolizer_name_final(struct symbolizer *sy, pid_t pid, const struct frame *f);
/* Looks for the agent's files of pid now (after an attach finished). */
void symbolizer_recheck_agent(struct symbolizer *sy, pid_t pid);
/* Whether f is unnamed code in a JVM whose agent may name it soon (JIT code
 * compiled since the agent's log was last read). */
bool symbolizer_names_later(struct symbolizer *sy, pid_t pid, const struct frame *f);

/* Forgets the processes that have exited (or whose pid another process has
 * now): their maps, symbols and names. One that has exited is forgotten by
 * the pass after the one that first sees it gone (its samples still in the
 * ring are named as it was); one whose pid is another's, at once. Their pids
 * go to out[0..max); the number of them. A long recording calls it as each
 * window closes. */
size_t symbolizer_forget_exited(struct symbolizer *sy, pid_t *out, size_t max);

/* A process's application name for its Pyroscope series: a JVM's
 * (jvm_app_name), else its comm. Looked up once. */
const char *symbolizer_app_name(struct symbolizer *sy, pid_t pid);

/* The processes seen so far (for the summary). */
size_t symbolizer_processes(const struct symbolizer *sy, pid_t *out, size_t max);

#endif
