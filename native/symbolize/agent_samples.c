/* agent_samples.c - the agents' allocation and lock samples (-e alloc, -e lock): each target
 * JVM's sample ring found, asked for the events and read, each sample folded for a sink. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_files.h"
#include "agent_samples.h"
#include "frame_mark.h"
#include "grow.h"
#include "proc_info.h"
#include "sample_pipeline.h"
#include "sample_ring.h"
#include "target_file.h"
#include "text_escape.h"
#include "msg.h"

#define MAX_RINGS	1024	      /* JVMs whose sample rings are read at once */
#define RING_RETRY_NS	500000000ULL  /* a JVM without a ring (yet) is looked at again this often */
#define RING_MISSING_NS 5000000000ULL /* ... and said to have none after this long */
#define AGENT_ON_WAIT_NS \
	15000000000ULL /* an open ring's agent turns the events on within this (its
					     * JVMTI calls and park hook take seconds in a slow JVM) */

/* A JVM's sample ring, read every turn of the main loop. */
struct ring_src {
	pid_t pid, nspid;
	uint64_t start_ticks; /* the process's start: the ring must be its own */
	uint64_t first_ns, tried_ns, opened_ns;
	bool open, gone, failed, told_missing, on; /* on: the agent has the events asked on */
	struct sample_ring_reader rd;
	uint64_t dropped, lock_short, bad; /* the ring's counters when last read */
	char agent_error[256];		   /* the last agent_error said */
};

struct agent_samples {
	struct agent_samples_opts o;
	struct ring_src *rings;
	size_t nrings, rings_cap;
	struct agent_samples_stats st;
	struct fold_buf fold;
};

struct ring_ctx {
	struct agent_samples *a;
	struct ring_src *src;
};

struct agent_samples *agent_samples_new(const struct agent_samples_opts *o)
{
	struct agent_samples *a = calloc(1, sizeof(*a));
	if (a)
		a->o = *o;
	return a;
}

const struct agent_samples_stats *agent_samples_stats(const struct agent_samples *a)
{
	static const struct agent_samples_stats none;
	return a ? &a->st : &none;
}

/* One allocation or lock sample: rooted as the CPU samples of its thread are
 * ([Pod], [Con], [pid] process, thread), its Java frames root first, then the
 * class as leaf (_[a] allocated, _[l] the monitor's). */
static int on_ring_sample(void *ctx, const struct sample_view *v)
{
	struct ring_ctx *c = ctx;
	struct agent_samples *a = c->a;
	pid_t pid = c->src->pid;
	int k = v->kind == SAMPLE_ALLOC ? AGENT_ALLOC : v->kind == SAMPLE_LOCK ? AGENT_LOCK : -1;
	char leaf[1100];
	struct agent_sample as = { .kind = k, .ts_ns = v->ts_ns, .weight = v->weight };
	if (k < 0 || !(k == AGENT_ALLOC ? a->o.alloc : a->o.lock))
		return 0;
	symbolizer_sample(a->o.sy, pid);
	sample_roots_fold(&a->fold, a->o.sy, pid, symbolizer_thread_name_ns(a->o.sy, pid, (pid_t)v->tid));
	if (v->flags & SAMPLE_TRUNCATED) { /* its outermost frames are lost */
		as.truncated = true;
		fold_add(&a->fold, "[truncated]");
	}
	/* frames and class as the ring holds them: the target's text */
	for (size_t i = v->nframes; i > 0; i--)
		fold_add_text(&a->fold, v->frames[i - 1]);
	snprintf(leaf, sizeof(leaf), "%.1000s%s", v->cls && *v->cls ? v->cls : "[unknown class]",
		 k == AGENT_ALLOC ? FRAME_MARK_ALLOC : FRAME_MARK_LOCK);
	fold_add_text(&a->fold, leaf);
	as.stack = a->fold.p;
	as.len = a->fold.len;
	as.oom = a->fold.oom;
	a->o.sink(a->o.ctx, &as);
	return 0;
}

static struct ring_src *ring_find(struct agent_samples *a, pid_t pid)
{
	for (size_t i = 0; i < a->nrings; i++)
		if (a->rings[i].pid == pid && !a->rings[i].gone)
			return &a->rings[i];
	return NULL;
}

static void ring_add(struct agent_samples *a, pid_t pid, uint64_t now)
{
	char path[64];
	if (a->nrings == MAX_RINGS)
		return;
	if (ARRAY_GROW(a->rings, a->rings_cap, a->nrings + 1) != 0)
		return;
	struct ring_src *src = &a->rings[a->nrings];
	memset(src, 0, sizeof(*src));
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	src->pid = pid;
	src->nspid = proc_info_nspid(path, pid);
	src->start_ticks = proc_info_start_time(pid);
	src->first_ns = now;
	src->rd.fd = -1;
	if (!src->start_ticks)
		return; /* gone already */
	a->nrings++;
}

/* Reads what the ring holds, and its counters: drops and the agent's error. */
static void ring_drain(struct agent_samples *a, struct ring_src *src)
{
	struct ring_ctx c = { a, src };
	struct sample_ring_stats st;
	if (sample_ring_read(&src->rd, on_ring_sample, &c) < 0)
		return;
	if (src->rd.bad > src->bad) { /* records that failed validation: lost too */
		a->st.dropped += src->rd.bad - src->bad;
		src->bad = src->rd.bad;
	}
	if (sample_ring_stats(&src->rd, &st) != 0)
		return;
	uint32_t want = (a->o.alloc ? SAMPLE_WANT_ALLOC : 0) | (a->o.lock ? SAMPLE_WANT_LOCK : 0);
	if ((st.active & want) == want || st.agent_error[0])
		src->on = true; /* on, or said why not */
	if (st.dropped > src->dropped)
		a->st.dropped += st.dropped - src->dropped;
	src->dropped = st.dropped;
	if (st.lock_short > src->lock_short)
		a->st.lock_short += st.lock_short - src->lock_short;
	src->lock_short = st.lock_short;
	st.agent_error[sizeof(st.agent_error) - 1] = '\0';
	if (st.agent_error[0] && strcmp(st.agent_error, src->agent_error) != 0) {
		char shown[4 * sizeof(st.agent_error)], cut[201]; /* the target's text */
		size_t n = strlen(st.agent_error);
		snprintf(src->agent_error, sizeof(src->agent_error), "%s", st.agent_error);
		text_escape(shown, sizeof(shown), st.agent_error, n);
		text_escape(cut, sizeof(cut), st.agent_error, n);
		snprintf(a->st.agent_error, sizeof(a->st.agent_error), "pid %d: %s", (int)src->pid, cut);
		if (a->o.tty)
			fprintf(stderr, "\r\033[K");
		msg_warn("the agent in pid %d: %s\n", (int)src->pid, shown);
	}
}

/* The target JVMs' rings found, asked and read (see agent_samples.h). */
void agent_samples_poll(struct agent_samples *a, uint64_t now, bool final)
{
	uint32_t want = (a->o.alloc ? SAMPLE_WANT_ALLOC : 0) | (a->o.lock ? SAMPLE_WANT_LOCK : 0);
	if (!want)
		return;
	if (!final) {
		for (size_t i = 0; i < a->o.npids; i++)
			if (!ring_find(a, a->o.pids[i]))
				ring_add(a, a->o.pids[i], now);
		if (a->o.every_jvm) { /* every JVM seen (a launched command's children too) */
			static pid_t seen[8192];
			size_t n = symbolizer_processes(a->o.sy, seen, 8192);
			for (size_t i = 0; i < n; i++)
				if (seen[i] > 0 && !ring_find(a, seen[i]) && symbolizer_is_jvm(a->o.sy, seen[i]))
					ring_add(a, seen[i], now);
		}
	}
	for (size_t i = 0; i < a->nrings; i++) {
		struct ring_src *src = &a->rings[i];
		if (src->gone || src->failed)
			continue;
		bool alive = proc_info_start_time(src->pid) == src->start_ticks && proc_info_alive(src->pid);
		if (!src->open) {
			char path[4200], err[512];
			if (!alive) {
				src->gone = true;
				continue;
			}
			if (final || now - src->tried_ns < RING_RETRY_NS)
				continue;
			src->tried_ns = now;
			agent_file_path(path, sizeof(path), src->pid, src->nspid, "jflame-", ".samples");
			/* the target's file: the one opener (its user's, not a link or FIFO) */
			int fd = target_file_open(path, TARGET_FILE_WRITE, SAMPLE_RING_MAX_FILE, NULL, NULL, 0);
			if (fd == -2) {
				src->failed = true; /* said once by target_file */
				continue;
			}
			int rc = fd < 0 ? 1 :
					  sample_ring_open_fd(&src->rd, fd, path, src->start_ticks, err, sizeof(err));
			if (rc < 0) {
				src->failed = true;
				msg_warn("no alloc or lock samples from pid %d: %s\n", (int)src->pid, err);
				continue;
			}
			if (rc == 0) {
				struct sample_ring_stats st;
				src->open = true;
				src->opened_ns = now;
				if (sample_ring_stats(&src->rd, &st) == 0) { /* what was counted before is not ours */
					src->dropped = st.dropped;
					src->lock_short = st.lock_short;
				}
			} else if (!src->told_missing && now - src->first_ns >= RING_MISSING_NS) {
				src->told_missing = true;
				if (a->o.tty)
					fprintf(stderr, "\r\033[K");
				if (!symbolizer_is_jvm(a->o.sy, src->pid))
					msg_warn("pid %d (%s) is not a JVM: no alloc or lock samples "
						 "from it\n",
						 (int)src->pid, symbolizer_process_name(a->o.sy, src->pid));
				else if (symbolizer_has_agent(a->o.sy, src->pid))
					msg_warn(
						"the jflame agent in pid %d keeps no sample ring "
						"(/tmp/jflame-%d.samples): an agent older than this jflame? alloc and lock "
						"samples need this version's agent\n",
						(int)src->pid, (int)src->nspid);
				else
					msg_warn("pid %d has no jflame agent%s: alloc and lock samples "
						 "need it; %s\n",
						 (int)src->pid, a->o.no_attach ? " (--no-attach)" : "",
						 a->o.no_attach ? "drop --no-attach, or start the JVM with "
								  "-agentpath:/path/to/libjflame-agent.so" :
								  "see the attach warning above");
			}
			if (!src->open)
				continue;
		}
		if (!final && alive)
			sample_ring_ask(&src->rd, want, (uint32_t)a->o.alloc_interval, a->o.lock_min_ns, now);
		ring_drain(a, src);
		if (final || !alive) {
			sample_ring_close(&src->rd); /* also asks for no events */
			src->open = false;
			src->gone = !alive;
			src->failed = final; /* not opened again */
		}
	}
	/* JVMs that exited are forgotten (their pids may come back) */
	size_t keep = 0;
	for (size_t i = 0; i < a->nrings; i++)
		if (!a->rings[i].gone)
			a->rings[keep++] = a->rings[i];
	a->nrings = keep;
}

/* Whether every target of -p has the events on, or never will: its agent
 * said it has them on or why not, or it has exited, failed, was said to have
 * no agent, or had its ring open AGENT_ON_WAIT_NS without either. */
bool agent_samples_targets_on(const struct agent_samples *a, uint64_t now)
{
	for (size_t i = 0; i < a->o.npids; i++) {
		const struct ring_src *src = NULL;
		for (size_t k = 0; k < a->nrings && !src; k++)
			if (a->rings[k].pid == a->o.pids[i])
				src = &a->rings[k];
		if (!src) {
			if (proc_info_alive(a->o.pids[i]))
				return false; /* not looked at yet */
			continue;
		}
		if (src->on || src->gone || src->failed || src->told_missing)
			continue;
		if (!src->open || now - src->opened_ns < AGENT_ON_WAIT_NS)
			return false;
	}
	return true;
}

void agent_samples_free(struct agent_samples *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nrings; i++)
		if (a->rings[i].open)
			sample_ring_close(&a->rings[i].rd);
	free(a->rings);
	fold_free(&a->fold);
	free(a);
}
