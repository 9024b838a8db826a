/* symbolize.c - the per-process state behind symbolization: mappings, the
 * JVM agent's files, thread names; and the lookups that name each address. */
#include "symbolize.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent_files.h"
#include "cgroup_id.h"
#include "elf_syms.h"
#include "grow.h"
#include "hotspot_vm.h"
#include "jit_syms.h"
#include "kallsyms.h"
#include "jvm_app.h"
#include "proc_info.h"
#include "proc_maps.h"
#include "text_escape.h"
#include "u64_map.h"

#define MAPS_RELOAD_NS	   100000000ULL		  /* re-read /proc/PID/maps at most every 100 ms ... */
#define MAPS_RELOAD_MAX_NS 1600000000ULL	  /* ... twice as long after each re-read that found nothing new */
#define MAPS_LOW	   0x10000ULL		  /* vm.mmap_min_addr's default: nothing is mapped below */
#define AGENT_CHECK_NS	   1000000000ULL	  /* look for a JVM agent's files every second */
#define AGENT_CHECK_JVM_NS 100000000ULL		  /* in a process with libjvm.so: every 100 ms ... */
#define AGENT_SETTLE_NS	   10000000000ULL	  /* ... for its first 10 s, then every second */
#define EXEC_CHECK_NS	   1000000000ULL	  /* notice an exec (a new /proc/PID/exe) within a second */
#define NEW_THREAD_EXEC_NS 10000000ULL		  /* ... at once when a new thread is sampled, within 10 ms */
#define IDLE_REFRESH_NS	   10000000000ULL	  /* a process without samples is looked at again after 10 s */
#define SAMPLED_REFRESH_NS 150000000ULL		  /* ... and at its first sample when not looked at for this long */
#define NO_SYMS		   ((struct elf_syms *)1) /* a mapping whose file has no symbols we can read */

struct tid_map {
	pid_t tid, nstid;
};

/* A thread's Java name read from the JVM's memory, for the comm it had then
 * (a rename reads it again); name NULL: none (not a Java thread), asked again
 * after retry_ns. */
struct thread_name {
	pid_t tid;
	const char *comm, *name;
	uint64_t retry_ns;
};
#define THREAD_NAMES_MAX     65536 /* kept per process at most (then started over) */
#define THREAD_NAME_RETRY_NS 250000000ULL

struct proc {
	pid_t pid, nspid;
	const char *comm;
	const char *root_frame; /* "[pid] comm" */
	char root[32];
	struct proc_maps maps;
	struct elf_syms **map_syms;	/* per mapping: its symbols, NO_SYMS, or NULL not looked up yet */
	const char **map_paths;		/* per mapping: its path interned (frames outlive a maps reload), or NULL yet */
	uint64_t maps_ns, maps_wait_ns; /* last read; how long until the next may be */
	uint64_t maps_top;		/* the end of the highest user-space mapping */
	uint64_t seen_ns;		/* first seen (an exec starts it again) */
	pid_t top_tid;			/* the highest thread id sampled: a higher one is a new thread */
	bool maps_gone, is_jvm;
	bool anon_frames; /* a frame outside every file: a perf map may name it */
	struct jit_syms *jit;
	uint64_t agent_checked_ns;
	uint64_t start_ticks; /* when the process started (an exec keeps it) */
	bool exited;	      /* seen gone by one forget pass: forgotten by the next */
	double start_epoch;
	uint64_t exe_dev, exe_ino, exe_checked_ns;
	int pfp;
	const char *pod, *con; /* "[Pod]<uid>", "[Con]<id>" or NULL */
	bool status_seen;      /* the agent's status file names this process */
	struct tid_map *tids;
	size_t ntids, tidcap;
	struct thread_name *tnames; /* in the order first named; tname_ids: tid -> index */
	size_t ntnames, tncap;
	struct u64_map tname_ids;
	struct hotspot_vm *hs; /* the JVM's layout and names, read from its memory */
	int hs_state;	       /* 0 not looked at, 1 open, 2 handed to the walker, -1 not a readable JVM */
	int hs_tries;	       /* a starting JVM's tables may not be there yet */
	bool hs_stale;	       /* the walker's layout is of a program this process no longer runs */
	const char *app;       /* its application name (interned), NULL not looked up yet */
	uint64_t hs_checked_ns;
	int debug_non_safepoints; /* -XX:+DebugNonSafepoints: 1 on, 0 off, -1 unknown */
	uint64_t gen, gen_ns;	  /* names generation (see symbolizer_names_gen) and when it began */
	uint64_t jit_changes;	  /* jit_syms_changes when last looked at */
	uint64_t refreshed_ns;	  /* when last looked at by refresh_proc (0: never, a new one) */
	bool sampled;		  /* a sample since then */
	bool kthread;		  /* a kernel thread: no /proc/PID/exe, no mappings */
};

struct symbolizer {
	struct str_intern *si;
	struct kallsyms *ks;
	struct elf_cache *elf;
	struct proc **procs; /* open addressing by pid */
	size_t cap, count;
	const char *kernel_dso, *unknown, *interpreted_dso, *vdso_dso;
	/* the kernel's vDSO: jflame's own, read once (vdso_syms) */
	struct elf_syms *vdso;
	uint64_t vdso_size;
	bool vdso_tried;
	uint64_t gens;	      /* generations given out, over every process */
	uint64_t samples;     /* symbolizer_sample calls: each sample's number */
	uint64_t jvm_seen_ns; /* when a process was last found to be a JVM (mono ns) */
	/* kernel names from the kernel (symbolizer_kernel_names), kept by address */
	kernel_names_fn kname;
	void *kname_ctx;
	struct u64_map ksym_ids; /* address -> ksym_names index */
	const char **ksym_names; /* NULL: no symbol */
	size_t nksym_names, ksym_names_cap;
	/* compiled frames' inline chains from the JVMs' debug info */
	bool lines;
	struct symbolizer_inline inl;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

struct symbolizer *symbolizer_new(struct str_intern *si, char *err, size_t errlen)
{
	struct symbolizer *sy = calloc(1, sizeof(*sy));
	if (!sy) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	sy->si = si;
	sy->ks = kallsyms_load("/proc/kallsyms", err, errlen);
	sy->elf = elf_cache_new();
	sy->cap = 256;
	sy->procs = calloc(sy->cap, sizeof(*sy->procs));
	sy->kernel_dso = str_intern(si, "[kernel.kallsyms]");
	sy->unknown = str_intern(si, "[unknown]");
	sy->interpreted_dso = str_intern(si, "[interpreted]");
	sy->vdso_dso = str_intern(si, "[vdso]");
	if (!sy->ks || !sy->elf || !sy->procs || !sy->kernel_dso || !sy->unknown || !sy->interpreted_dso ||
	    !sy->vdso_dso) {
		if (sy->ks && !err[0])
			snprintf(err, errlen, "out of memory");
		symbolizer_free(sy);
		return NULL;
	}
	return sy;
}

static void proc_free(struct proc *p)
{
	if (!p)
		return;
	proc_maps_free(&p->maps);
	free(p->map_syms);
	free(p->map_paths);
	jit_syms_free(p->jit);
	hotspot_vm_free(p->hs);
	free(p->tids);
	free(p->tnames);
	u64_map_free(&p->tname_ids);
	free(p);
}

void symbolizer_free(struct symbolizer *sy)
{
	if (!sy)
		return;
	for (size_t i = 0; i < sy->cap && sy->procs; i++)
		proc_free(sy->procs[i]);
	free(sy->procs);
	kallsyms_free(sy->ks);
	u64_map_free(&sy->ksym_ids);
	free(sy->ksym_names);
	elf_cache_free(sy->elf);
	elf_syms_free(sy->vdso);
	free(sy);
}

/* ---- processes ----------------------------------------------------------- */

size_t symbolizer_forget_exited(struct symbolizer *sy, pid_t *out, size_t max)
{
	size_t n = 0, keep = 0;
	struct proc **live = calloc(sy->cap, sizeof(*live));
	if (!live)
		return 0;
	for (size_t i = 0; i < sy->cap; i++) {
		struct proc *p = sy->procs[i];
		if (!p)
			continue;
		/* gone, or its pid is another process's now. A process that has
		 * exited is kept until the next pass: the samples it left in the
		 * ring (seconds of them behind a slow reader) are named after its
		 * exit, and by then its memory is gone but what was read is not */
		uint64_t start = proc_info_start_time(p->pid);
		bool reused = start && p->start_ticks && start != p->start_ticks;
		bool alive = p->start_ticks && start == p->start_ticks && proc_info_alive(p->pid);
		if (alive || (!reused && !p->exited)) {
			p->exited = !alive;
			size_t k = (size_t)p->pid & (sy->cap - 1);
			while (live[k])
				k = (k + 1) & (sy->cap - 1);
			live[k] = p;
			keep++;
			continue;
		}
		if (n < max)
			out[n] = p->pid;
		n++;
		proc_free(p);
	}
	free(sy->procs);
	sy->procs = live;
	sy->count = keep;
	return n < max ? n : max;
}

/* What names p's raw stacks get may differ from now on. */
static void names_changed(struct symbolizer *sy, struct proc *p)
{
	p->gen = ++sy->gens;
	p->gen_ns = mono_ns();
}

static void load_maps(struct symbolizer *sy, struct proc *p)
{
	char path[64], err[256];
	struct proc_maps pm;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)p->pid);
	p->maps_ns = mono_ns();
	if (proc_maps_load(&pm, path, err, sizeof(err)) != 0) {
		p->maps_gone = true; /* exited: keep what we had */
		return;
	}
	bool same = pm.n == p->maps.n;
	for (size_t i = 0; same && i < pm.n; i++) {
		const struct proc_map *a = &pm.maps[i], *b = &p->maps.maps[i];
		same = a->start == b->start && a->end == b->end && a->offset == b->offset && a->inode == b->inode &&
		       a->dev_major == b->dev_major && a->dev_minor == b->dev_minor && strcmp(a->path, b->path) == 0;
	}
	p->maps_wait_ns = same && p->map_syms ? (p->maps_wait_ns * 2 < MAPS_RELOAD_MAX_NS ? p->maps_wait_ns * 2 :
											    MAPS_RELOAD_MAX_NS) :
						MAPS_RELOAD_NS;
	if (same && p->map_syms) {
		/* nothing moved: the symbols found so far stay (files without are
		 * looked at again, as after any reload; what was unknown is not kept
		 * by the stack cache, so nothing kept changes) */
		for (size_t i = 0; i < p->maps.n; i++)
			if (p->map_syms[i] == NO_SYMS)
				p->map_syms[i] = NULL;
		proc_maps_free(&pm);
		return;
	}
	proc_maps_free(&p->maps);
	free(p->map_syms);
	free(p->map_paths);
	p->maps = pm;
	p->maps_top = 0;
	for (size_t i = 0; i < pm.n; i++) /* not [vsyscall], in the kernel's half */
		if (pm.maps[i].start < 0xffff800000000000ULL && pm.maps[i].end > p->maps_top)
			p->maps_top = pm.maps[i].end;
	p->map_syms = calloc(pm.n ? pm.n : 1, sizeof(*p->map_syms));
	p->map_paths = calloc(pm.n ? pm.n : 1, sizeof(*p->map_paths));
	for (size_t i = 0; i < pm.n; i++) {
		const char *slash = strrchr(pm.maps[i].path, '/');
		if (slash && strcmp(slash, "/libjvm.so") == 0 && !p->is_jvm) {
			p->is_jvm = true;
			sy->jvm_seen_ns = p->maps_ns;
		}
	}
	names_changed(sy, p);
}

/* The agent's files: used when its status names this very process, or when
 * there is only a perf map (perf-map-agent, node --perf-basic-prof, ...). */
static void check_agent(struct symbolizer *sy, struct proc *p)
{
	char events[96], map[96];
	uint64_t now = mono_ns();
	/* a JVM's agent may write its files any moment: look more often there;
	 * a JVM whose map came before its agent's status (a starting agent) is
	 * looked at until the status is there, and says whether it keeps frame
	 * pointers (an agent loaded at start knows that once the VM is up) */
	if ((p->jit && ((p->status_seen && p->pfp >= 0) || !p->is_jvm)) ||
	    now - p->agent_checked_ns <
		    (p->is_jvm && now - p->seen_ns < AGENT_SETTLE_NS ? AGENT_CHECK_JVM_NS : AGENT_CHECK_NS))
		return;
	p->agent_checked_ns = now;
	agent_file_path(events, sizeof(events), p->pid, p->nspid, "jflame-", ".events");
	agent_file_path(map, sizeof(map), p->pid, p->nspid, "perf-", ".map");
	struct agent_status st;
	int have = agent_status_read(p->pid, p->nspid, p->start_ticks, &st);
	if (have == 1) {
		bool first = !p->status_seen || !p->is_jvm;
		p->pfp = st.frame_pointers;
		if (!p->is_jvm)
			sy->jvm_seen_ns = now;
		p->is_jvm = true;
		p->status_seen = true;
		if (first)
			names_changed(sy, p);
	} else if (have == 0) {
		return; /* left by an earlier process with this pid */
	}
	if (p->jit)
		return;
	p->jit = jit_syms_open(events, map, sy->si);
	/* without a status, a map older than the process was left by an earlier
	 * process with this pid (perf-map-agent, a killed JVM) */
	if (p->jit && !p->status_seen && p->start_epoch > 0 && (double)jit_syms_mtime(p->jit) + 1.0 < p->start_epoch) {
		jit_syms_free(p->jit);
		p->jit = NULL;
	}
	if (p->jit) {
		jit_syms_update(p->jit);
		p->jit_changes = jit_syms_changes(p->jit);
		names_changed(sy, p);
	}
}

static void read_comm(struct symbolizer *sy, struct proc *p)
{
	char path[64], comm[64] = "";
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)p->pid);
	FILE *f = fopen(path, "re");
	if (f) {
		/* the whole name: a newline in it is the target's text, only the last ends it */
		size_t n = fread(comm, 1, sizeof(comm) - 1, f);
		comm[n && comm[n - 1] == '\n' ? n - 1 : n] = '\0';
		fclose(f);
	}
	if (comm[0] || !p->comm) {
		char root[128];
		p->comm = comm[0] ? text_intern(sy->si, comm, strlen(comm)) : str_intern(sy->si, "?");
		snprintf(root, sizeof(root), "[%d] %s", (int)p->pid, p->comm);
		p->root_frame = str_intern(sy->si, root);
	}
}

/* The identity of the running program: exec replaces it. 0 when unknown. */
static int read_exe(const struct proc *p, uint64_t *dev, uint64_t *ino)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)p->pid);
	if (stat(path, &st) != 0)
		return -1;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

/* After an exec the process has a new program, mappings, name and runtime. */
static void check_exec(struct symbolizer *sy, struct proc *p)
{
	uint64_t dev, ino, now = mono_ns();
	if (p->maps_gone || now - p->exe_checked_ns < EXEC_CHECK_NS)
		return;
	p->exe_checked_ns = now;
	if (read_exe(p, &dev, &ino) != 0 || (dev == p->exe_dev && ino == p->exe_ino))
		return;
	p->exe_dev = dev;
	p->exe_ino = ino;
	p->is_jvm = false; /* until its new mappings (libjvm.so) or agent say so */
	p->anon_frames = false;
	p->seen_ns = now;
	read_comm(sy, p);
	load_maps(sy, p);
	jit_syms_free(p->jit);
	p->jit = NULL;
	hotspot_vm_free(p->hs); /* its names with it: what was kept of them is of an older generation now */
	p->hs = NULL;
	names_changed(sy, p);
	free(p->tnames); /* another program's threads */
	p->tnames = NULL;
	p->ntnames = p->tncap = 0;
	u64_map_free(&p->tname_ids);
	p->hs_stale = p->hs_stale || p->hs_state == 2; /* the walker still has the old program's layout */
	p->hs_state = 0;
	p->hs_tries = 0;
	p->agent_checked_ns = 0;
	p->status_seen = false;
	p->pfp = -1;
	check_agent(sy, p);
}

/* Container identity from /proc/PID/cgroup: root frames [Pod]<uid> and [Con]<id>. */
static void read_container(struct symbolizer *sy, struct proc *p)
{
	struct cgroup_id id;
	char frame[128], shortid[80];
	if (cgroup_id_read((int)p->pid, &id) != 1)
		return;
	if (id.pod[0]) {
		snprintf(frame, sizeof(frame), "[Pod]%s", id.pod);
		p->pod = text_intern(sy->si, frame, strlen(frame));
	}
	if (id.container[0]) {
		snprintf(frame, sizeof(frame), "[Con]%s", cgroup_id_short(&id, shortid, sizeof(shortid)));
		p->con = text_intern(sy->si, frame, strlen(frame));
	}
}

static struct proc *get_proc(struct symbolizer *sy, pid_t pid)
{
	size_t i = (size_t)pid & (sy->cap - 1);
	for (; sy->procs[i]; i = (i + 1) & (sy->cap - 1))
		if (sy->procs[i]->pid == pid)
			return sy->procs[i];
	if ((sy->count + 1) * 2 > sy->cap) {
		size_t cap = sy->cap * 2;
		struct proc **procs = calloc(cap, sizeof(*procs));
		if (!procs)
			return NULL;
		for (size_t j = 0; j < sy->cap; j++) {
			if (!sy->procs[j])
				continue;
			size_t k = (size_t)sy->procs[j]->pid & (cap - 1);
			while (procs[k])
				k = (k + 1) & (cap - 1);
			procs[k] = sy->procs[j];
		}
		free(sy->procs);
		sy->procs = procs;
		sy->cap = cap;
		i = (size_t)pid & (cap - 1);
		while (sy->procs[i])
			i = (i + 1) & (cap - 1);
	}
	struct proc *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	char path[64];
	p->pid = pid;
	p->pfp = -1;
	snprintf(p->root, sizeof(p->root), "/proc/%d/root", (int)pid);
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	p->nspid = proc_info_nspid(path, pid);
	read_comm(sy, p);
	read_container(sy, p);
	int exe = read_exe(p, &p->exe_dev, &p->exe_ino);
	p->exe_checked_ns = p->seen_ns = mono_ns();
	p->start_ticks = proc_info_start_time(pid);
	p->start_epoch = proc_info_ticks_to_epoch(p->start_ticks);
	load_maps(sy, p);
	p->kthread = pid > 0 && exe != 0 && !p->maps_gone && p->maps.n == 0;
	if (!p->kthread)
		check_agent(sy, p);
	sy->procs[i] = p;
	sy->count++;
	return p;
}

/* What may have changed in p since it was last looked at: an exec, its
 * agent's files, class unloading, its agent's log. */
static void refresh_proc(struct symbolizer *sy, struct proc *p, uint64_t now)
{
	p->refreshed_ns = now;
	p->sampled = false;
	if (p->kthread)
		return; /* a kernel thread has no program, files or agent */
	check_exec(sy, p);
	/* a process other than a JVM is looked at for a perf map once it has
	 * frames no file names (code made at run time) */
	if (!p->maps_gone && (p->is_jvm || p->anon_frames))
		check_agent(sy, p);
	if (p->hs && hotspot_vm_refresh(p->hs))
		names_changed(sy, p);
	if (p->jit) {
		/* the agent's timed events log came after its map: switch to it */
		if (p->status_seen && !jit_syms_has_times(p->jit)) {
			char events[96];
			agent_file_path(events, sizeof(events), p->pid, p->nspid, "jflame-", ".events");
			struct jit_syms *timed = jit_syms_open(events, NULL, sy->si);
			if (timed) {
				jit_syms_free(p->jit);
				p->jit = timed;
				p->jit_changes = jit_syms_changes(timed) - 1; /* a new table: changed */
			}
		}
		jit_syms_update(p->jit);
		if (jit_syms_changes(p->jit) != p->jit_changes) {
			p->jit_changes = jit_syms_changes(p->jit);
			names_changed(sy, p);
		}
	}
}

void symbolizer_refresh(struct symbolizer *sy)
{
	uint64_t now = mono_ns();
	for (size_t i = 0; i < sy->cap; i++) {
		struct proc *p = sy->procs[i];
		/* a process without samples since the last call is looked at once a
		 * second (its first sample looks at it at once: symbolizer_sample) */
		if (p && (p->sampled || now - p->refreshed_ns >= IDLE_REFRESH_NS))
			refresh_proc(sy, p, now);
	}
}

void symbolizer_sample(struct symbolizer *sy, pid_t pid)
{
	struct proc *p = get_proc(sy, pid);
	if (!p)
		return;
	p->sampled = true;
	if (p->hs) /* a new sample: a new budget of reads of its memory */
		hotspot_vm_sample(p->hs, ++sy->samples);
	if (p->refreshed_ns) {
		uint64_t now = mono_ns();
		if (now - p->refreshed_ns >= SAMPLED_REFRESH_NS)
			refresh_proc(sy, p, now);
	}
}

void symbolizer_sample_thread(struct symbolizer *sy, pid_t pid, pid_t tid)
{
	struct proc *p = get_proc(sy, pid);
	/* a thread not sampled before (ids grow until they wrap): threads start
	 * after an exec (a wrapper script's exec of java, then the JVM's threads),
	 * so the process is looked at for one now, not within the second, and its
	 * new threads' samples go under its new name and mappings */
	if (p && tid > p->top_tid) {
		bool first = !p->top_tid;
		p->top_tid = tid;
		/* at most every NEW_THREAD_EXEC_NS: a process starting threads by the thousand costs no more */
		if (!first && p->exe_checked_ns + NEW_THREAD_EXEC_NS <= mono_ns()) {
			p->exe_checked_ns = 0;
			check_exec(sy, p);
		}
	}
	symbolizer_sample(sy, pid);
}

uint64_t symbolizer_jvm_seen(const struct symbolizer *sy)
{
	return sy->jvm_seen_ns;
}

const char *symbolizer_process_root(struct symbolizer *sy, pid_t pid)
{
	struct proc *p = get_proc(sy, pid);
	return p ? p->root_frame : NULL;
}

const char *symbolizer_process_name(struct symbolizer *sy, pid_t pid)
{
	struct proc *p = get_proc(sy, pid);
	return p ? p->comm : "?";
}

static pid_t ns_tid(struct proc *p, pid_t tid)
{
	char path[96];
	if (p->nspid == p->pid)
		return tid;
	for (size_t i = 0; i < p->ntids; i++)
		if (p->tids[i].tid == tid)
			return p->tids[i].nstid;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)p->pid, (int)tid);
	pid_t ns = proc_info_nspid(path, -1);
	if (ns <= 0)
		return tid;
	if (ARRAY_GROW(p->tids, p->tidcap, p->ntids + 1) != 0)
		return ns;
	p->tids[p->ntids++] = (struct tid_map){ tid, ns };
	return ns;
}

static struct hotspot_vm *proc_hotspot(struct symbolizer *sy, struct proc *p);

/* The entry of tid in p's thread names (added, or all started over when
 * full); NULL when out of memory. */
static struct thread_name *thread_slot(struct proc *p, pid_t tid)
{
	uint32_t i;
	if (p->ntnames >= THREAD_NAMES_MAX) {
		p->ntnames = 0;
		u64_map_clear(&p->tname_ids);
	}
	if (ARRAY_GROW(p->tnames, p->tncap, p->ntnames + 1) != 0 ||
	    (i = u64_map_add(&p->tname_ids, (uint32_t)tid, (uint32_t)p->ntnames)) == U64_MAP_NONE)
		return NULL;
	if (i == p->ntnames)
		p->tnames[p->ntnames++] = (struct thread_name){ .tid = tid };
	return &p->tnames[i];
}

/* A JVM thread's Java name from the JVM's memory, read once per thread (and
 * again when its comm changes); NULL when it has none. */
static const char *memory_thread_name(struct symbolizer *sy, struct proc *p, pid_t tid, const char *comm)
{
	char name[4 * 256 + 1];
	struct hotspot_vm *vm = p->is_jvm ? proc_hotspot(sy, p) : NULL;
	struct thread_name *t;
	uint64_t now;
	if (!vm || !(t = thread_slot(p, tid)))
		return NULL;
	if (t->comm == comm && t->name) /* the common case: named before, not renamed since */
		return t->name;
	now = mono_ns();
	if (t->comm == comm && now < t->retry_ns)
		return NULL;
	int n = hotspot_vm_thread_name(vm, ns_tid(p, tid), name, sizeof(name));
	t->comm = comm;
	t->name = n > 0 ? text_intern(sy->si, name, (size_t)n) : NULL;
	t->retry_ns = now + THREAD_NAME_RETRY_NS;
	return t->name;
}

const char *symbolizer_thread_name(struct symbolizer *sy, pid_t pid, pid_t tid, const char *comm)
{
	struct proc *p = get_proc(sy, pid);
	const char *c = text_intern(sy->si, comm, strlen(comm));
	const char *name = p && p->jit ? jit_syms_thread_name(p->jit, ns_tid(p, tid)) : NULL;
	if (name && *name)
		return name;
	name = p ? memory_thread_name(sy, p, tid, c) : NULL;
	return name ? name : c;
}

const char *symbolizer_thread_name_memory(struct symbolizer *sy, pid_t pid, pid_t tid, const char *comm)
{
	struct proc *p = get_proc(sy, pid);
	const char *c = text_intern(sy->si, comm, strlen(comm));
	const char *name = p ? memory_thread_name(sy, p, tid, c) : NULL;
	return name ? name : c;
}

/* The host's tid of a thread known by its id in the process's namespace: the
 * tids seen so far, else /proc/PID/task looked through. 0 when not found. */
static pid_t host_tid(struct proc *p, pid_t nstid)
{
	char path[96];
	if (p->nspid == p->pid)
		return nstid;
	for (size_t i = 0; i < p->ntids; i++)
		if (p->tids[i].nstid == nstid)
			return p->tids[i].tid;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)p->pid);
	DIR *d = opendir(path);
	pid_t found = 0;
	for (struct dirent *e; d && !found && (e = readdir(d));) {
		long tid = strtol(e->d_name, NULL, 10);
		if (tid > 0 && ns_tid(p, (pid_t)tid) == nstid)
			found = (pid_t)tid;
	}
	if (d)
		closedir(d);
	return found;
}

const char *symbolizer_thread_name_ns(struct symbolizer *sy, pid_t pid, pid_t nstid)
{
	struct proc *p = get_proc(sy, pid);
	char path[96], comm[64];
	const char *name = p && p->jit ? jit_syms_thread_name(p->jit, nstid) : NULL;
	if (name && *name)
		return name;
	pid_t tid = p ? host_tid(p, nstid) : 0;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	FILE *f = tid ? fopen(path, "re") : NULL;
	size_t n = f ? fread(comm, 1, sizeof(comm) - 1, f) : 0;
	if (f)
		fclose(f);
	while (n && (comm[n - 1] == '\n' || comm[n - 1] == '\0'))
		n--;
	if (!n)
		n = (size_t)snprintf(comm, sizeof(comm), "[tid %d]", (int)nstid);
	return text_intern(sy->si, comm, n);
}

int symbolizer_frame_pointers(struct symbolizer *sy, pid_t pid)
{
	struct proc *p = get_proc(sy, pid);
	return p ? p->pfp : -1;
}

bool symbolizer_is_jvm(struct symbolizer *sy, pid_t pid)
{
	struct proc *p = get_proc(sy, pid);
	return p && p->is_jvm;
}

/* The first max bytes of a /proc file (NUL-separated lists); its length. */
static size_t read_proc_file(pid_t pid, const char *what, char *buf, size_t max)
{
	char path[64];
	size_t n = 0;
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, what);
	FILE *f = fopen(path, "re");
	if (f) {
		n = fread(buf, 1, max, f);
		fclose(f);
	}
	return n;
}

const char *symbolizer_app_name(struct symbolizer *sy, pid_t pid)
{
	struct proc *p = get_proc(sy, pid);
	if (!p)
		return "?";
	if (!p->app) {
		static char cmdline[65536], environ[65536];
		char name[256];
		size_t cl = read_proc_file(pid, "cmdline", cmdline, sizeof(cmdline));
		size_t el = read_proc_file(pid, "environ", environ, sizeof(environ));
		bool jvm = symbolizer_is_jvm(sy, pid);
		size_t nl = jvm ? jvm_app_name(cmdline, cl, environ, el, name, sizeof(name)) : 0;
		p->app = nl ? text_intern(sy->si, name, nl) : p->comm;
	}
	return p->app;
}

size_t symbolizer_processes(const struct symbolizer *sy, pid_t *out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < sy->cap; i++)
		if (sy->procs[i] && n < max)
			out[n++] = sy->procs[i]->pid;
	return n;
}

/* ---- frames ---------------------------------------------------------------- */

void symbolizer_kernel_names(struct symbolizer *sy, kernel_names_fn fn, void *ctx)
{
	sy->kname = fn;
	sy->kname_ctx = ctx;
}

/* Keeps name as the kernel's for addr: false when out of memory. */
static bool ksym_keep(struct symbolizer *sy, uint64_t addr, const char *name)
{
	uint32_t i;
	if (ARRAY_GROW(sy->ksym_names, sy->ksym_names_cap, sy->nksym_names + 1) != 0 ||
	    (i = u64_map_add(&sy->ksym_ids, addr, (uint32_t)sy->nksym_names)) == U64_MAP_NONE)
		return false;
	if (i == sy->nksym_names)
		sy->ksym_names[sy->nksym_names++] = name;
	return true;
}

/* Asks the kernel for the names of addr[0..n) (none known yet, distinct) and
 * keeps them. false: it cannot say (/proc/kallsyms from now on). */
static bool ksym_ask(struct symbolizer *sy, const uint64_t *addr, size_t n)
{
	char out[PROFILE_KSYM_BATCH][PROFILE_KSYM_LEN];
	if (sy->kname(sy->kname_ctx, addr, n, out) != 0) {
		sy->kname = NULL;
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		if (u64_map_find(&sy->ksym_ids, addr[i]) != U64_MAP_NONE)
			continue;
		if (!ksym_keep(sy, addr[i], out[i][0] ? text_intern(sy->si, out[i], strlen(out[i])) : NULL))
			break;
	}
	return true;
}

void symbolizer_kernel_prefetch(struct symbolizer *sy, const uint64_t *pcs, size_t n)
{
	uint64_t want[PROFILE_KSYM_BATCH];
	size_t m = 0;
	if (!sy->kname)
		return;
	for (size_t i = 0; i < n && sy->kname; i++) {
		bool dup = !pcs[i] || u64_map_find(&sy->ksym_ids, pcs[i]) != U64_MAP_NONE;
		for (size_t j = 0; j < m && !dup; j++)
			dup = want[j] == pcs[i];
		if (!dup)
			want[m++] = pcs[i];
		if (m == PROFILE_KSYM_BATCH || (i + 1 == n && m)) { /* a full batch, or the last */
			if (!ksym_ask(sy, want, m))
				return;
			m = 0;
		}
	}
}

/* The kernel's name for addr, asked once per address. false: ask /proc/kallsyms. */
static bool kernel_name(struct symbolizer *sy, uint64_t addr, const char **name)
{
	/* a first stack with a single kernel frame is not prefetched */
	if (!sy->kname || !addr)
		return false;
	uint32_t i = u64_map_find(&sy->ksym_ids, addr);
	if (i == U64_MAP_NONE && ksym_ask(sy, &addr, 1))
		i = u64_map_find(&sy->ksym_ids, addr);
	if (i == U64_MAP_NONE) /* the kernel cannot say, or no memory to keep it */
		return false;
	*name = sy->ksym_names[i];
	return true;
}

struct frame symbolize_kernel(struct symbolizer *sy, uint64_t addr)
{
	uint64_t off;
	const char *module = NULL, *name;
	if (!kernel_name(sy, addr, &name))
		name = kallsyms_lookup(sy->ks, addr, &off, &module);
	/* kallsyms names live as long as the symbolizer */
	struct frame f = { addr, name ? name : sy->unknown, sy->kernel_dso, FRAME_KERNEL, 0, NULL, NULL };
	return f;
}

static const char *bracketed_basename(struct symbolizer *sy, const char *path)
{
	char buf[300];
	const char *base = strrchr(path, '/');
	snprintf(buf, sizeof(buf), "[%s]", base ? base + 1 : path);
	return text_intern(sy->si, buf, strlen(buf));
}

/* The kernel's vDSO, one image for every process of jflame's ABI: jflame's
 * own (getauxval, its size from /proc/self/maps), read once. NULL: none. */
static struct elf_syms *vdso_syms(struct symbolizer *sy)
{
	struct proc_maps pm;
	char err[256];
	uint64_t base = getauxval(AT_SYSINFO_EHDR);
	if (sy->vdso_tried)
		return sy->vdso;
	sy->vdso_tried = true;
	if (!base || proc_maps_load(&pm, "/proc/self/maps", err, sizeof(err)) != 0)
		return NULL;
	const struct proc_map *m = proc_maps_find(&pm, base);
	if (m && m->start == base && strcmp(m->path, "[vdso]") == 0) {
		sy->vdso_size = m->end - m->start;
		sy->vdso = elf_syms_load_vdso((const void *)(uintptr_t)base, (size_t)sy->vdso_size, err, sizeof(err));
	}
	proc_maps_free(&pm);
	return sy->vdso;
}

/* A frame in a process's [vdso] mapping m named as perf names it
 * ("__vdso_clock_gettime", dso "[vdso]"), from jflame's own vDSO when m is
 * as large (not another ABI's vDSO: a 32-bit process's). Code no exported
 * symbol covers (a local function: with kvm-clock the vDSO reads the pvclock
 * in one) is "[vdso]", as a file's is "[libc.so.6]" (perf: [unknown] in
 * [vdso]). false: not a vDSO jflame can read. */
static bool vdso_frame(struct symbolizer *sy, const struct proc_map *m, uint64_t at, struct frame *f)
{
	uint64_t off;
	struct elf_syms *es = vdso_syms(sy);
	if (!es || m->end - m->start != sy->vdso_size)
		return false;
	const char *name = elf_syms_lookup(es, at - m->start, &off);
	f->name = name ? name : sy->vdso_dso; /* kept until symbolizer_free */
	f->dso = sy->vdso_dso;
	f->kind = name ? FRAME_NATIVE : FRAME_UNKNOWN;
	return true;
}

struct frame symbolize_user(struct symbolizer *sy, pid_t pid, uint64_t addr, uint64_t t_ns, bool caller)
{
	struct frame f = { addr, sy->unknown, sy->unknown, FRAME_UNKNOWN, 0, NULL, NULL };
	struct proc *p = get_proc(sy, pid);
	uint64_t off;
	if (!p)
		return f;
	if (p->jit) {
		const char *name = jit_syms_lookup(p->jit, addr, t_ns, &off);
		if (name) {
			char dso[64];
			snprintf(dso, sizeof(dso), "/tmp/perf-%d.map", (int)p->nspid);
			f.name = name;
			f.dso = str_intern(sy->si, dso);
			f.kind = strncmp(name, "L", 1) == 0 && strstr(name, ";::") ? FRAME_JAVA : FRAME_VMCODE;
			return f;
		}
	}
	uint64_t at = caller && addr > 0 ? addr - 1 : addr;
	const struct proc_map *m = proc_maps_find(&p->maps, at);
	/* new mappings come below the highest (the stack's): what lies above,
	 * or below the lowest possible, is not code (a frame-pointer walk's
	 * garbage), and maps found unchanged are read less often */
	if (!m && !p->maps_gone && at >= MAPS_LOW && (at < p->maps_top || !p->maps_top) &&
	    mono_ns() - p->maps_ns > p->maps_wait_ns) {
		load_maps(sy, p);
		m = proc_maps_find(&p->maps, at);
	}
	if (m && strcmp(m->path, "[vdso]") == 0 && vdso_frame(sy, m, at, &f))
		return f;
	if (!m || m->path[0] != '/') {
		p->anon_frames = true;
		return f;
	}
	/* each mapping's symbols are looked up once (the cache behind is shared
	 * by every process mapping the same file) */
	size_t mi = (size_t)(m - p->maps.maps);
	struct elf_syms *es = p->map_syms ? p->map_syms[mi] : NULL;
	if (!es) {
		char path[4200];
		snprintf(path, sizeof(path), "%s%s", p->root, m->path);
		es = elf_cache_get(sy->elf, path, p->root, m->inode); /* the very file mapped */
		if (!es) {
			snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, m->start,
				 m->end);
			es = elf_cache_get(sy->elf, path, p->root, 0);
		}
		if (!es)
			es = NO_SYMS;
		if (p->map_syms)
			p->map_syms[mi] = es;
	}
	if (es == NO_SYMS)
		es = NULL;
	/* interned: a later frame of the same sample may reload the maps */
	if (p->map_paths && !p->map_paths[mi])
		p->map_paths[mi] = text_intern(sy->si, m->path, strlen(m->path));
	f.dso = p->map_paths ? p->map_paths[mi] : NULL;
	const char *name = es ? elf_syms_lookup(es, at - m->start + m->offset, &off) : NULL;
	if (name) {
		f.name = name; /* stable: the cache keeps every file's symbols until the end */
		f.kind = FRAME_NATIVE;
	} else {
		f.name = bracketed_basename(sy, m->path);
	}
	if (!f.name || !f.dso) {
		f.name = f.dso = sy->unknown;
		f.kind = FRAME_UNKNOWN;
	}
	return f;
}

/* ---- the HotSpot walker ---------------------------------------------------------- */

#define HS_RETRY_NS 100000000ULL /* a starting JVM's code cache is looked at again after 100 ms */
#define HS_TRIES    50		 /* ... for at most 5 s */

static struct hotspot_vm *proc_hotspot(struct symbolizer *sy, struct proc *p)
{
	char err[256];
	if (p->hs_state != 0 || !p->is_jvm || p->maps_gone)
		return p->hs;
	p->hs = hotspot_vm_open(p->pid, err, sizeof(err));
	if (p->hs) {
		p->hs_state = 1;
		p->debug_non_safepoints = hotspot_vm_flag_bool(p->hs, "DebugNonSafepoints");
		names_changed(sy, p);
	} else if (++p->hs_tries >= HS_TRIES)
		p->hs_state = -1;
	return p->hs;
}

bool symbolizer_can_walk(struct symbolizer *sy, pid_t pid)
{
	struct proc *p = get_proc(sy, pid);
	return p && proc_hotspot(sy, p) != NULL;
}

int symbolizer_walker_info(struct symbolizer *sy, pid_t pid, struct hotspot_proc *out)
{
	struct proc *p = get_proc(sy, pid);
	uint64_t now = mono_ns();
	if (p && p->hs_stale && p->hs_state != 2) {
		p->hs_stale = false;
		return 2;
	}
	if (!p || p->hs_state < 0)
		return -1;
	if (p->hs_state == 2 || now - p->hs_checked_ns < HS_RETRY_NS)
		return 0;
	p->hs_checked_ns = now;
	if (!proc_hotspot(sy, p))
		return p->hs_state < 0 ? -1 : 0;
	int rc = hotspot_vm_walker_info(p->hs, out);
	if (rc < 0 || (rc == 0 && ++p->hs_tries >= HS_TRIES))
		p->hs_state = -1;
	else if (rc > 0)
		p->hs_state = 2;
	return p->hs_state < 0 ? -1 : rc;
}

int symbolizer_stub_rows(struct symbolizer *sy, pid_t pid, struct stub_row **rows, size_t *n, char *err, size_t errlen)
{
	struct proc *p = get_proc(sy, pid);
	*rows = NULL;
	*n = 0;
	if (!p || p->hs_state != 2 || !p->hs) {
		snprintf(err, errlen, "pid %d is not walked", (int)pid);
		return -1;
	}
#if !defined(__x86_64__)
	/* stub_cfa.c reads x86-64 code, and the JVMs here run this machine's:
	 * arm64's stubs keep x29/x30 frame records the walker's heuristics follow */
	snprintf(err, errlen, "stubs' machine code is analysed on x86-64 only");
	return -1;
#else
	return hotspot_vm_stub_rows(p->hs, rows, n, err, errlen);
#endif
}

bool symbolizer_walks_hotspot(struct symbolizer *sy, pid_t pid)
{
	struct proc *p = get_proc(sy, pid);
	return p && p->hs_state == 2;
}

/* A compiled frame named from the JVM's debug info, counted by what it got. */
static void inline_count(struct symbolizer *sy, const struct proc *p, enum hotspot_inline rc)
{
	switch (rc) {
	case HOTSPOT_INLINE_CHAIN:
	case HOTSPOT_INLINE_NONE:
		sy->inl.decoded++;
		if (p->debug_non_safepoints == 0)
			sy->inl.safepoint_only_pid = p->pid;
		break;
	case HOTSPOT_INLINE_BAD:
		sy->inl.bad++;
		break;
	default:
		break;
	}
}

void symbolizer_lines(struct symbolizer *sy, bool on)
{
	sy->lines = on;
}

const struct symbolizer_inline *symbolizer_inline_stats(const struct symbolizer *sy)
{
	return &sy->inl;
}

/* A compiled or stub frame named from the JVM's memory into f (left as it is
 * when nothing names it there). */
static void memory_frame(struct symbolizer *sy, struct proc *p, struct hotspot_vm *vm, const struct profile_frame *pf,
			 uint64_t t_ns, struct frame *f)
{
	struct hotspot_names *names = hotspot_vm_names(vm);
	const char *name;
	if (pf->kind == PROFILE_FRAME_STUB) {
		name = hotspot_vm_stub_name(vm, pf->pc);
		name = name ? str_intern(sy->si, name) : hotspot_names_blob(names, pf->method);
		if (name)
			f->name = name, f->kind = FRAME_VMCODE;
	} else if (pf->kind == PROFILE_FRAME_JIT && hotspot_names_inline_supported(names)) {
		const char *lines = NULL;
		enum hotspot_inline rc =
			hotspot_names_inline(names, pf->method, pf->cookie, pf->pc, t_ns, sy->lines, &name, &lines);
		if (name)
			f->name = name, f->kind = FRAME_JAVA, f->inline_lines = lines;
		inline_count(sy, p, rc);
	} else {
		name = hotspot_names_nmethod(names, pf->method, pf->cookie, t_ns);
		if (name)
			f->name = name, f->kind = FRAME_JAVA;
		if (name && pf->kind == PROFILE_FRAME_JIT)
			sy->inl.unsupported++, sy->inl.unsupported_pid = p->pid;
	}
}

struct frame symbolize_hotspot_memory(struct symbolizer *sy, pid_t pid, const struct profile_frame *pf, uint64_t t_ns)
{
	struct proc *p = get_proc(sy, pid);
	struct hotspot_vm *vm = p ? proc_hotspot(sy, p) : NULL;
	struct frame f = { pf->pc, sy->unknown, sy->unknown, FRAME_UNKNOWN, 0, NULL, NULL };
	if (vm && (pf->kind == PROFILE_FRAME_JIT || pf->kind == PROFILE_FRAME_NATIVE_WRAPPER ||
		   pf->kind == PROFILE_FRAME_STUB))
		memory_frame(sy, p, vm, pf, t_ns, &f);
	return f;
}

struct frame symbolize_hotspot(struct symbolizer *sy, pid_t pid, const struct profile_frame *pf, uint64_t t_ns,
			       bool caller, bool wait)
{
	struct proc *p = get_proc(sy, pid);
	struct hotspot_vm *vm = p ? proc_hotspot(sy, p) : NULL;
	struct hotspot_names *names = vm ? hotspot_vm_names(vm) : NULL;
	const char *name = NULL;
	struct frame f;
	switch (pf->kind) {
	case PROFILE_FRAME_INTERP:
		name = names ? hotspot_names_method(names, pf->method, pf->cookie, t_ns) : NULL;
		if (!name)
			break;
		f = (struct frame){ pf->pc, name, sy->interpreted_dso, FRAME_JAVA_INTERP, 0, NULL, NULL };
		f.file = hotspot_names_source(names, pf->method, pf->cookie, t_ns);
		if (pf->bci != 0xffff) {
			int line = hotspot_names_line(names, pf->method, pf->cookie, pf->bci);
			f.line = line > 0 ? line : 0;
		}
		return f;
	case PROFILE_FRAME_JIT:
	case PROFILE_FRAME_NATIVE_WRAPPER:
	case PROFILE_FRAME_STUB:
		f = symbolize_user(sy, pid, pf->pc, t_ns, caller);
		if (f.kind != FRAME_UNKNOWN || (wait && p && p->jit) || !vm)
			return f;
		/* no agent, or it has not logged this code: the JVM's own structures */
		memory_frame(sy, p, vm, pf, t_ns, &f);
		return f;
	default:
		break;
	}
	return symbolize_user(sy, pid, pf->pc, t_ns, caller);
}

void symbolizer_container(struct symbolizer *sy, pid_t pid, const char **pod, const char **con)
{
	struct proc *p = get_proc(sy, pid);
	*pod = p ? p->pod : NULL;
	*con = p ? p->con : NULL;
}

bool symbolizer_has_agent(struct symbolizer *sy, pid_t pid)
{
	struct proc *p = get_proc(sy, pid);
	return p && p->jit;
}

bool symbolizer_names_later(struct symbolizer *sy, pid_t pid, const struct frame *f)
{
	if (f->kind != FRAME_UNKNOWN || f->dso != sy->unknown)
		return false;
	struct proc *p = get_proc(sy, pid);
	return p && p->jit;
}

bool symbolizer_name_final(struct symbolizer *sy, pid_t pid, const struct frame *f)
{
	if (f->kind == FRAME_UNKNOWN)
		return false;
	if (f->dso != sy->unknown)
		return true;
	struct proc *p = get_proc(sy, pid); /* named from the JVM's memory: its agent may name it in full */
	return p && !p->jit;
}

uint64_t symbolizer_names_gen(struct symbolizer *sy, pid_t pid, uint64_t t_ns)
{
	struct proc *p = get_proc(sy, pid);
	return p && t_ns >= p->gen_ns ? p->gen : 0;
}

void symbolizer_recheck_agent(struct symbolizer *sy, pid_t pid)
{
	struct proc *p = get_proc(sy, pid);
	if (!p || p->jit)
		return;
	p->agent_checked_ns = 0;
	check_agent(sy, p);
}
