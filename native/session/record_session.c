/* record_session.c - one `jflame record` session: set up from its options, started, stepped
 * by the command's loop (reading, naming, windows rotated), ended, its outputs written, freed. */
#include "record_session.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent_samples.h"
#include "attach.h"
#include "attach_queue.h"
#include "proc_info.h"
#include "push.h"
#include "record_launch.h"
#include "record_outputs.h"
#include "record_windows.h"
#include "sample_gate.h"
#include "sampler.h"
#include "str_intern.h"
#include "symbolize.h"
#include "msg.h"

/* The walker's rows for unwinding out of pid's stubs (those without a frame
 * size: crypto, checksums, copies), into hp; without them (no room, a JVM
 * whose stubs cannot be read) its heuristics, said with -v. */
static void walker_stub_rows(struct record *r, pid_t pid, struct hotspot_proc *hp)
{
	struct stub_row *rows = NULL;
	size_t n = 0;
	char err[256];
	int e = 0;
	hp->stub_first = hp->stub_count = 0;
	if (symbolizer_stub_rows(r->sy, pid, &rows, &n, err, sizeof(err)) == 0 && n == 0)
		snprintf(err, sizeof(err), "no stub of it could be read");
	if (n == 0 || (e = sampler_stub_rows(r->sampler, pid, rows, n, &hp->stub_first)) != 0) {
		if (e)
			snprintf(err, sizeof(err), "%s",
				 e == -ENOSPC ? "no room left in the walker's map" : strerror(-e));
		if (r->o.verbose)
			msg_say("pid %d: its stubs are unwound by the walker's heuristics: %s\n", (int)pid, err);
	} else {
		hp->stub_count = (__u32)n;
	}
	free(rows);
}

/* JVMs' stacks go to the HotSpot walker once their layout can be read (a
 * starting JVM's code cache after a moment): the targets of -p and launch
 * mode, and with -a every JVM seen so far. */
static size_t walkers_start(struct record *r)
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
		walker_stub_rows(r, pids[i], &hp);
		int e = sampler_walk_hotspot(r->sampler, pids[i], &hp);
		if (e != 0)
			msg_warn("pid %d is walked by frame pointers: the BPF map of JVMs "
				 "failed: %s\n",
				 (int)pids[i], strerror(-e));
	}
	return pending;
}

/* -a: the JVMs running at the start are made known before the first sample,
 * so that their walker entries are in place for it (else a JVM's first
 * samples, which bring it to the symbolizer, are walked by frame pointers). */
static void jvms_running(struct record *r)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t self = getpid();
	if (!d)
		return;
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0 || pid == self || pid >= PID_LIMIT)
			continue;
		if (proc_info_is_hotspot((pid_t)pid) == 1)
			symbolizer_is_jvm(r->sy, (pid_t)pid); /* known to it from now on */
	}
	closedir(d);
}

/* The targets' JVMs as they are now (walked, frame pointers), kept for the
 * graph's subtitle after they exit (record_window_describe): -p's and a
 * launched command's (its children too), not every JVM of -a. */
static void jvm_facts_note(struct record *r)
{
	static pid_t seen[8192];
	size_t n = r->o.command ? symbolizer_processes(r->sy, seen, 8192) : r->o.npids;
	const pid_t *pids = r->o.command ? seen : r->o.pids;
	if (r->o.all)
		return;
	for (size_t i = 0; i < n; i++) {
		if (!symbolizer_is_jvm(r->sy, pids[i]))
			continue;
		size_t k = 0;
		while (k < r->njvm_facts && r->jvm_facts[k].pid != pids[i])
			k++;
		if (k == r->njvm_facts) {
			if (k == sizeof(r->jvm_facts) / sizeof(r->jvm_facts[0]))
				continue;
			r->njvm_facts++;
			r->jvm_facts[k] = (struct jvm_fact){ .pid = pids[i], .fp = -1 };
		}
		r->jvm_facts[k].walked |= symbolizer_walks_hotspot(r->sy, pids[i]);
		int fp = symbolizer_frame_pointers(r->sy, pids[i]);
		if (fp >= 0)
			r->jvm_facts[k].fp = fp;
	}
}

/* Processes that have exited are forgotten: their names (a JVM's names from
 * its memory with them), maps and walker entries. */
static void forget_exited(struct record *r)
{
	jvm_facts_note(r);
	static pid_t gone[4096];
	size_t n = symbolizer_forget_exited(r->sy, gone, sizeof(gone) / sizeof(gone[0]));
	for (size_t i = 0; i < n; i++) {
		if (!r->o.no_walker)
			sampler_walk_hotspot(r->sampler, gone[i], NULL);
		if (r->considered && gone[i] > 0 && gone[i] < PID_LIMIT)
			r->considered[gone[i] / 8] &= (uint8_t) ~(1u << (gone[i] % 8));
	}
	r->last_forget = record_mono_ns();
}

/* The current window's time is over (and its late samples' grace too): it is
 * written, the next one becomes current, and processes that have exited are
 * forgotten (their names, maps and walker entries). */
static void window_next(struct record *r)
{
	struct window *w = &r->win[r->cur], *next = &r->win[!r->cur];
	uint64_t end = w->end_ns, seq = w->seq;
	sample_gate_release_before(r, end);
	if (w->open)
		record_window_close(r, w, end);
	r->cur = !r->cur;
	if (!next->open)
		record_window_open(r, next, end, seq + 1); /* when it fails, the next sample tries again */
	forget_exited(r);
}

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
	       ev_on(&r->o, EV_ALLOC) || ev_on(&r->o, EV_LOCK) || r->deferred.n || sample_pipeline_nlate(r->pipe) ||
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
	if (!ev_on(&r->o, EV_BPF))
		fprintf(stderr, "\r\033[Kjflame: recording %.1f s, %" PRIu64 " samples, %" PRIu64 " dropped", secs,
			r->ring_samples, agent_samples_stats(r->agents)->dropped);
	else
		fprintf(stderr, "\r\033[Kjflame: recording %.1f s, %" PRIu64 " samples, %" PRIu64 " lost", secs,
			st.samples + r->ring_samples, st.dropped + agent_samples_stats(r->agents)->dropped);
}

/* The pushes still queued get up to 10 s; then what was sent is said. */
static void finish_push(struct record *r)
{
	struct push_stats st;
	if (!r->pusher)
		return;
	push_stop(r->pusher, 10000, &st);
	r->pusher = NULL;
	msg_say("pushed %" PRIu64 " of %" PRIu64 " profiles to %s (%" PRIu64 " failed, %" PRIu64 " dropped, %" PRIu64
		" retries)\n",
		st.sent, r->pushed_profiles, "Pyroscope", st.failed, st.dropped, st.retries);
}

/* ---- the session --------------------------------------------------------------- */

int record_session_open(struct record *r, char *err, size_t errlen)
{
	r->go_fd = r->launch_status_fd = r->child_pidfd = r->epfd = -1;
	/* a kernel too old: one line (record_session_start says what an older one costs) */
	if (kernel_features_probe(&r->kf, err, errlen) != 0)
		return RECORD_KERNEL_UNSUPPORTED;
	if (r->o.load_agent || r->o.command) {
		if (r->o.agent)
			snprintf(r->agent, sizeof(r->agent), "%s", r->o.agent);
		else if (attach_find_agent(r->agent, sizeof(r->agent), err, errlen) != 0)
			return -1;
		r->attach = (struct attach_opts){ .agent = r->agent,
						  .options = r->o.agent_options,
						  .timeout_ms = r->o.attach_timeout_ms };
	}
	r->si = str_intern_new();
	r->want_lines = r->o.push != NULL; /* pushed profiles carry source lines */
	for (size_t i = 0; i < r->o.noutputs; i++) {
		unsigned needs = r->o.formats[i]->needs;
		r->want_lines |= (needs & PF_NEEDS_LINES) != 0;
		r->want_heatmap |= (needs & PF_NEEDS_HEATMAP) != 0;
		r->want_times |= (needs & PF_NEEDS_TIMES) != 0;
		r->want_stacks |= (needs & PF_NEEDS_SAMPLE_LOG) != 0;
	}
	if (!r->si) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	r->sy = symbolizer_new(r->si, err, errlen);
	if (!r->sy)
		return -1;
	struct sample_pipeline_opts po = {
		.sy = r->sy,
		.lines = r->want_lines,
		.no_inline = r->o.no_inline,
		/* the sampler's row: what a sample weighs (none: CPU samples) */
		.weigh = ev_on(&r->o, EV_BPF) && r->o.ev[EV_BPF]->weigh != EVENT_WEIGH_NONE,
		.sample_weight = ev_on(&r->o, EV_BPF) ? event_sample_weight(r->o.ev[EV_BPF], r->o.freq) : 0,
		.cache = !r->want_stacks, /* .stacks files take each sample's frames */
		.sink = record_windows_add_folded,
		.ctx = r,
	};
	r->pipe = sample_pipeline_new(&po);
	if (!r->pipe) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (r->o.load_agent && (r->o.all || r->o.npids)) {
		r->aq = attach_queue_new(&r->attach, sample_gate_attached, r);
		r->considered = calloc(PID_LIMIT / 8, 1);
		if (!r->aq || !r->considered) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
	}
	/* the first window: its .stacks file is created now, so a bad path is
	 * said before recording starts */
	struct timespec real, mono;
	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	r->real_minus_mono_ns = ((int64_t)real.tv_sec - (int64_t)mono.tv_sec) * 1000000000LL +
				((int64_t)real.tv_nsec - (int64_t)mono.tv_nsec);
	if (record_window_open_err(r, &r->win[0], record_mono_ns(), 1, err, errlen) != 0)
		return -1;
	if (r->o.push) {
		struct push_opts po = { .url = r->o.push,
					.token = r->o.push_token,
					.basic_auth = r->o.push_basic_auth,
					.tenant = r->o.push_tenant,
					.ca = r->o.push_ca,
					.verbose = r->o.verbose,
					.timeout_ms = r->o.push_timeout_ms };
		if (!(r->pusher = push_start(&po, err, errlen)))
			return -1;
	}
	return 0;
}

int record_session_start(struct record *r, bool tty, char *err, size_t errlen)
{
	r->tty_progress = tty;
	if (r->o.command && !r->o.all) {
		r->o.pids[0] = r->child;
		r->o.npids = 1;
	}
	struct sampler_opts so = {
		/* -e alloc/lock alone: the sampler only finds processes, slowly */
		.freq = !ev_on(&r->o, EV_BPF) && !r->o.freq_set && r->o.freq > 19 ? 19 : r->o.freq,
		.pids = r->o.all ? NULL : r->o.pids,
		.npids = r->o.npids,
		.follow_children = r->o.command != NULL,
		.include_idle = r->o.include_idle,
		.event = r->o.ev[EV_BPF],
		.period = r->o.period,
		.min_block_ns = r->o.min_block_ns,
		.verbose = r->o.verbose,
		.legacy = r->kf.legacy,
		.pids_only = !ev_on(&r->o, EV_BPF),
	};
	r->sampler = sampler_open(&so, sample_gate_add, r, err, errlen);
	if (!r->sampler)
		return -1;
	/* what an older kernel costs, said once (and in the graph's subtitle); the
	 * agents' stacks (-e alloc/lock alone) are not the walker's: no note (the
	 * probe left it empty) */
	if (ev_on(&r->o, EV_BPF))
		kernel_features_note(&r->kf,
				     ev_bpf_has(&r->o, EVENT_PERF) ? sampler_walker_frames(r->sampler, false) : -1,
				     ev_bpf_has(&r->o, EVENT_BLOCKS) ? sampler_walker_frames(r->sampler, true) : -1);
	if (r->kf.note[0])
		msg_say("%s\n", r->kf.note);
	symbolizer_kernel_names(r->sy, sampler_kernel_names, r->sampler);
	sample_pipeline_set_depth(r->pipe, sampler_max_user_frames(r->sampler), sampler_max_kernel_frames(r->sampler));
	if (r->o.command && record_launch_go(r, err, errlen) != 0)
		return -1;
	/* the JVMs' walker entries before the first sample (a launched command
	 * has run exec by now) */
	if (ev_on(&r->o, EV_BPF) && r->o.all && !r->o.no_walker)
		jvms_running(r);
	if (ev_on(&r->o, EV_BPF))
		r->walkers_pending = walkers_start(r);
	if (sampler_start(r->sampler, err, errlen) != 0)
		return -1;
	if (r->aq && !r->o.all)
		sample_gate_attach_targets(r);
	struct agent_samples_opts ao = {
		.sy = r->sy,
		.alloc = ev_on(&r->o, EV_ALLOC),
		.lock = ev_on(&r->o, EV_LOCK),
		.alloc_interval = r->o.alloc_interval,
		.lock_min_ns = r->o.lock_min_ns,
		.pids = r->o.pids,
		.npids = r->o.npids,
		.every_jvm = r->o.all || r->o.command,
		.no_attach = r->o.no_attach,
		.tty = tty,
		.sink = record_windows_add_agent,
		.ctx = r,
	};
	r->agents = agent_samples_new(&ao);
	if (!r->agents) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	r->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (r->epfd < 0 || loop_watch(r, sampler_fd(r->sampler)) != 0) {
		snprintf(err, errlen, "failed to wait for samples (epoll): %s", strerror(errno));
		return -1;
	}
	targets_watch(r);
	r->start_ns = r->last_forget = record_mono_ns();
	r->stop_ns = r->o.duration > 0 ? r->start_ns + (uint64_t)(r->o.duration * 1e9) : UINT64_MAX;
	/* the first window, opened before the sampler loaded (seconds on a slow
	 * machine), starts with the recording: else its windows ran empty before
	 * it and -d's time held more windows than it spans (no sample is in it yet) */
	record_window_free(&r->win[0]);
	if (record_window_open_err(r, &r->win[0], r->start_ns, 1, err, errlen) != 0)
		return -1;
	/* the agents' events alone, of given JVMs: -d counts from when the agents
	 * have them on (an attach takes seconds in a slow JVM), as async-profiler's */
	r->await_agents = !ev_on(&r->o, EV_BPF) && (ev_on(&r->o, EV_ALLOC) || ev_on(&r->o, EV_LOCK)) && !r->o.all &&
			  !r->o.command && !r->o.window_ns && r->o.npids > 0;
	agent_samples_poll(r->agents, record_mono_ns(), false);
	return 0;
}

int record_session_step(struct record *r, uint64_t now, char *err, size_t errlen)
{
	double secs = (double)(now - r->start_ns) / 1e9;
	attach_queue_poll(r->aq, 0);
	if (now - r->last_progress >= 250000000ULL) {
		progress(r, secs, r->tty_progress);
		r->last_progress = now;
	}
	/* the samples since the last wake-up are read after the targets
	 * were looked at (agents' logs, class unloading): names they get
	 * are the ones their code had when they were taken */
	struct epoll_event ev[8];
	int got = epoll_wait(r->epfd, ev, 8, r->drain_more ? 0 : loop_wait_ms(r, now, r->start_ns));
	bool exited = false;
	got = got < 0 ? -errno : got;
	for (int i = 0; i < got; i++)
		if (ev[i].data.fd != sampler_fd(r->sampler)) { /* a pidfd: its process has exited */
			epoll_ctl(r->epfd, EPOLL_CTL_DEL, ev[i].data.fd, NULL);
			exited = true;
		}
	now = record_mono_ns();
	if (got >= 0 && (exited || now - r->last_refresh >= TICK_BUSY_NS)) {
		symbolizer_refresh(r->sy);
		if (ev_on(&r->o, EV_BPF))
			r->walkers_pending = walkers_start(r);
		jvm_facts_note(r);
		sample_pipeline_release_late(r->pipe, record_mono_ns());
		agent_samples_poll(r->agents, record_mono_ns(), false);
		if (r->await_agents && agent_samples_targets_on(r->agents, record_mono_ns())) {
			uint64_t on = record_mono_ns();
			r->await_agents = false;
			if (r->o.verbose)
				msg_say("the agents' events on after %.1f s: the recording's time counts from there\n",
					(double)(on - r->start_ns) / 1e9);
			r->start_ns = on;
			if (r->stop_ns != UINT64_MAX)
				r->stop_ns = on + (uint64_t)(r->o.duration * 1e9);
		}
		r->last_refresh = now;
		/* without windows, every FORGET_NS (with them, at each window's end) */
		if (!r->o.window_ns && now - r->last_forget >= FORGET_NS)
			forget_exited(r);
		record_launch_reap(r, false);
		if (r->o.command ? r->child_exited : !r->o.all && !targets_alive(r))
			return 1;
	}
	/* within the drain's budget: the rest waits for the next step, after
	 * the deadline, the signals and the window clock were looked at */
	if (got >= 0)
		got = sampler_drain(r->sampler, SAMPLER_DRAIN_RECORDS, SAMPLER_DRAIN_NS, &r->drain_more);
	if (got < 0 && got != -EINTR) {
		snprintf(err, errlen, "failed to read samples: %s", strerror(-got));
		return -1;
	}
	if (r->o.window_ns) {
		struct window *w = &r->win[r->cur];
		now = record_mono_ns();
		if (*r->hup && !r->win[!r->cur].open) {
			*r->hup = 0;
			if (w->end_ns > now)
				w->end_ns = now;
		}
		if (now >= w->end_ns + WINDOW_GRACE_NS)
			window_next(r);
	}
	return 0;
}

/* What the ring still holds when sampling stops is read for at most
 * END_DRAIN_NS (none after a second signal); the rest is counted as lost and
 * said, so that no target can hold the end of a recording. */
static void end_drain(struct record *r)
{
	uint64_t until = record_mono_ns() + END_DRAIN_NS, now;
	bool more = true;
	while (more && *r->stop < 2 && (now = record_mono_ns()) < until)
		if (sampler_drain(r->sampler, SAMPLER_DRAIN_RECORDS, until - now, &more) < 0)
			break;
	uint64_t left = sampler_discard(r->sampler);
	if (left)
		msg_warn("%" PRIu64 " samples were left unread when the recording ended (naming them took longer "
			 "than %.1f s): counted as dropped\n",
			 left, (double)END_DRAIN_NS / 1e9);
}

int record_session_end(struct record *r, char *err, size_t errlen)
{
	uint64_t end_ns = record_mono_ns();
	double secs = (double)(end_ns - r->start_ns) / 1e9;
	sampler_stop(r->sampler);
	if (end_ns < r->stop_ns)
		r->stop_ns = end_ns;
	if (r->o.verbose) { /* to line a recording up with the target's own clock (System.nanoTime) */
		if (r->o.duration > 0 && secs > r->o.duration)
			end_ns = r->start_ns + (uint64_t)(r->o.duration * 1e9);
		msg_say("recorded from %.6f to %.6f s of CLOCK_MONOTONIC\n", (double)r->start_ns / 1e9,
			(double)end_ns / 1e9);
	}
	symbolizer_refresh(r->sy);
	end_drain(r);
	sample_gate_finish(r);
	sample_gate_release(r, 0);
	if (sample_pipeline_nlate(r->pipe) && *r->stop < 2) {
		/* the agents write what they gathered every 100 ms; bound: 150 ms */
		struct timespec pause = { 0, 150000000L };
		nanosleep(&pause, NULL);
		symbolizer_refresh(r->sy);
	}
	sample_pipeline_release_late(r->pipe, 0);
	agent_samples_poll(r->agents, record_mono_ns(),
			   true); /* the rest of every ring; the agents are asked for no more */
	if (r->tty_progress)
		fprintf(stderr, "\r\033[K");
	if (!r->o.window_ns) {
		record_window_describe(r, &r->win[0], r->o.duration > 0 && secs > r->o.duration ? r->o.duration : secs);
		return 0;
	}
	/* the last window, cut short, and the next if samples reached it */
	uint64_t stop =
		r->start_ns + (uint64_t)((r->o.duration > 0 && secs > r->o.duration ? r->o.duration : secs) * 1e9);
	int rc = 0;
	for (int k = 0; k < 2; k++) {
		struct window *w = &r->win[(r->cur + k) % 2];
		if (w->open && record_window_close(r, w, k == 0 && w->end_ns < stop ? w->end_ns : stop) != 0)
			rc = -1;
	}
	if (rc != 0)
		snprintf(err, errlen, "the last window's outputs were not all written (see the warning above)");
	return rc;
}

int record_session_finish(struct record *r, char *err, size_t errlen)
{
	struct sample_pipeline_cache_stats cs;
	if (sample_pipeline_cache_stats(r->pipe, &cs)) {
		if (r->o.verbose)
			msg_say("stack cache: %" PRIu64 " hits, %" PRIu64 " misses, %" PRIu64 " flushes\n", cs.hits,
				cs.misses, cs.flushes);
		r->cache_mismatches = cs.mismatches;
	}
	if (r->o.verbose && r->offcpu_outside)
		msg_say("%" PRIu64 " off-CPU blocks wholly outside the recording's time (begun before it, or sent "
			"after -d's time was up) were left out\n",
			r->offcpu_outside);
	const struct sample_pipeline_check *chk = sample_pipeline_check_stats(r->pipe);
	if (chk) /* JFLAME_AGENTLESS_CHECK=1: the tests' comparison of agentless names with the agent's */
		msg_say("agentless check: %" PRIu64 " of %" PRIu64 " samples of JVMs with the agent "
			"named alike from their memory (%.1f%%)\n",
			chk->samples - chk->different, chk->samples,
			chk->samples ? 100.0 * (double)(chk->samples - chk->different) / (double)chk->samples : 0.0);
	if (r->o.window_ns) {
		msg_say("%" PRIu64 " window%s, %" PRIu64 " samples (%" PRIu64 " lost)\n", r->closed,
			r->closed == 1 ? "" : "s", r->total_samples, r->total_lost);
		finish_push(r);
		return 0;
	}
	struct window *w = &r->win[0];
	if (w->oom || r->no_window) {
		snprintf(err, errlen, "out of memory while recording (%" PRIu64 " samples not kept)",
			 w->oom + r->no_window);
		return -1;
	}
	/* each event's outputs; an event without samples writes nothing and
	 * makes the exit code nonzero, after the others are written */
	bool empty = false, failed = false;
	char wrote[8192];
	if (ev_on(&r->o, EV_BPF) && w->rec.total == 0) {
		empty = true;
		bool several = ev_count(&r->o) > 1;
		if (!ev_bpf_has(&r->o, EVENT_BLOCKS))
			msg_say("no samples in %.1f s: the target%s %s; nothing written%s%s\n", w->rec.seconds,
				r->o.all ? "s" : "", r->o.ev[EV_BPF]->none, several ? " for " : "",
				several ? r->o.ev[EV_BPF]->word : "");
		else
			msg_say("no samples in %.1f s: no thread of the target%s blocked for %.3f ms or "
				"more (%" PRIu64 " shorter blocks); nothing written%s; lower --min-block\n",
				w->rec.seconds, r->o.all ? "s" : "", (double)r->o.min_block_ns / 1e6,
				w->rec.short_blocks, several ? " for it" : "");
	} else if (ev_on(&r->o, EV_BPF)) {
		if (record_outputs_write(r, w, EV_BPF, wrote, sizeof(wrote), err, errlen) != 0) {
			msg_say("%s\n", err);
			failed = true;
		}
		if (r->pusher) {
			record_outputs_push(r, w);
			finish_push(r);
		}
		msg_say("%s%s%" PRIu64 " samples (%" PRIu64 " lost, %" PRIu64 " truncated, %" PRIu64
			" unwind failed, %" PRIu64 " failed stack reads) in %.1f s; wrote%s\n",
			ev_count(&r->o) > 1 ? r->o.ev[EV_BPF]->word : "", ev_count(&r->o) > 1 ? ": " : "",
			w->rec.samples, w->rec.lost, w->rec.truncated, w->rec.unwind_failed, w->rec.stack_errors,
			w->rec.seconds, wrote[0] ? wrote : " nothing");
		if (ev_bpf_has(&r->o, EVENT_BLOCKS))
			msg_say("%s: %.1f ms recorded; %" PRIu64 " blocks under %.3f ms (%.1f ms) counted, "
				"not recorded\n",
				w->rec.ev->title, (double)w->rec.total_weight / 1e6, w->rec.short_blocks,
				(double)w->rec.min_block_ns / 1e6, (double)w->rec.short_ns / 1e6);
		if (w->rec.fp_warning && r->fp_warnings == 0)
			msg_say("%s\n", w->rec.frame_pointers + 8);
	}
	for (int ev = EV_ALLOC; ev <= EV_LOCK; ev++) {
		const struct recording *j = &w->jrec[ev == EV_ALLOC ? J_ALLOC : J_LOCK];
		char total[32], every[32];
		if (!ev_on(&r->o, (enum rec_event)ev))
			continue;
		if (j->total == 0) {
			empty = true;
			event_human_bytes(every, sizeof(every), (double)r->o.alloc_interval);
			if (ev == EV_ALLOC)
				msg_say("no allocation samples in %.1f s (%" PRIu64 " dropped): the target JVMs "
					"allocated less than %s, or have no jflame agent (see above); nothing written for "
					"alloc\n",
					j->seconds, j->lost, every);
			else
				msg_say("no lock samples in %.1f s (%" PRIu64 " dropped): no thread waited %.3f "
					"ms or more for a contended monitor or lock (%" PRIu64
					" shorter waits); nothing written for "
					"lock; lower --lock-min\n",
					j->seconds, j->lost, (double)r->o.lock_min_ns / 1e6, j->short_blocks);
			continue;
		}
		if (record_outputs_write(r, w, (enum rec_event)ev, wrote, sizeof(wrote), err, errlen) != 0) {
			msg_say("%s\n", err);
			failed = true;
		}
		if (ev == EV_ALLOC)
			event_human_bytes(total, sizeof(total), (double)j->total_weight);
		else
			snprintf(total, sizeof(total), "%.1f ms blocked", (double)j->total_weight / 1e6);
		msg_say("%s: %" PRIu64 " samples, %s (%" PRIu64 " dropped, %" PRIu64 " truncated%s) in "
			"%.1f s; wrote%s\n",
			ev_word(&r->o, (enum rec_event)ev), j->samples, total, j->lost, j->truncated,
			ev == EV_LOCK ? "" : "", j->seconds, wrote[0] ? wrote : " nothing");
		if (ev == EV_LOCK && j->short_blocks)
			msg_say("lock: %" PRIu64 " waits under %.3f ms counted, not recorded\n", j->short_blocks,
				(double)r->o.lock_min_ns / 1e6);
		if (j->lost)
			msg_warn("%s: %" PRIu64 " samples dropped by the agents (jflame read their "
				 "rings too slowly)\n",
				 ev_word(&r->o, (enum rec_event)ev), j->lost);
	}
	return empty || failed ? 1 : 0;
}

void record_session_close(struct record *r)
{
	push_stop(r->pusher, 0, NULL); /* an error before the pushes were finished */
	targets_unwatch(r);
	agent_samples_free(r->agents);
	attach_queue_free(r->aq);
	free(r->considered);
	sample_queue_free(&r->deferred);
	for (int k = 0; k < 2; k++)
		if (r->win[k].open)
			record_window_free(&r->win[k]);
	sampler_close(r->sampler);
	symbolizer_free(r->sy);
	sample_pipeline_free(r->pipe);
	str_intern_free(r->si);
}
