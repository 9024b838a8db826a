/* sample_gate.c - the sampler's samples on their way to the pipeline: those of a JVM being
 * attached to are held until its attach ends (its JIT names come from the map the attach makes). */
#include "sample_gate.h"

#include <stdio.h>
#include <stdlib.h>

#include "proc_info.h"
#include "sample_pipeline.h"
#include "symbolize.h"
#include "msg.h"

/* Hands the kept samples of pid (all of them when pid is 0) on, in order. */
void sample_gate_release(struct record *r, pid_t pid)
{
	size_t keep = 0;
	for (size_t i = 0; i < r->deferred.n; i++) {
		if (pid == 0 || (pid_t)r->deferred.v[i]->pid == pid) {
			sample_pipeline_add(r->pipe, r->deferred.v[i], pid ? record_mono_ns() : 0);
			free(r->deferred.v[i]);
		} else {
			r->deferred.v[keep++] = r->deferred.v[i];
		}
	}
	r->deferred.n = keep;
}

/* Hands on, as they are, the held samples (deferred or late) taken before
 * end: a window that closes takes every sample of its time. */
void sample_gate_release_before(struct record *r, uint64_t end)
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

void sample_gate_add(void *ctx, const struct profile_sample *s, size_t size)
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
		if (ev_on(&r->o, EV_BPF) && attach_queue_pending(r->aq, pid) &&
		    sample_queue_push(&r->deferred, MAX_DEFERRED, s))
			return;
	}
	if (!ev_on(&r->o, EV_BPF)) {
		/* -e alloc/lock alone: the sampler only finds the processes (-a, a
		 * launched command's children), whose rings are then looked for */
		if (pid > 0)
			(void)symbolizer_is_jvm(r->sy, pid);
		return;
	}
	sample_pipeline_add(r->pipe, s, record_mono_ns());
}

/* ---- attaching ------------------------------------------------------------------ */

/* Frame pointers matter only to a JVM the HotSpot walker cannot walk. */
static void warn_frame_pointers(struct record *r, pid_t pid)
{
	if (!ev_on(&r->o, EV_BPF)) /* the agents' stacks do not need them */
		return;
	if (symbolizer_frame_pointers(r->sy, pid) != 0 || (!r->o.no_walker && symbolizer_can_walk(r->sy, pid)))
		return;
	r->fp_warnings++;
	msg_say("pid %d runs without -XX:+PreserveFramePointer: stacks through JIT-compiled code lose "
		"their callers (the graph is marked); restart it with -XX:+PreserveFramePointer\n",
		(int)pid);
}

static void report_attach(struct record *r, pid_t pid, enum attach_outcome outcome, const struct attach_info *info,
			  const char *msg)
{
	if (outcome == ATTACH_FAILED) {
		if (!r->o.no_walker && symbolizer_can_walk(r->sy, pid))
			msg_warn("no agent in pid %d, so compiled Java frames are named from the "
				 "JVM's memory, inlined callees from its debug info: %s\n",
				 (int)pid, msg);
		else
			msg_warn("Java frames of pid %d stay unnamed: %s\n", (int)pid, msg);
		return;
	}
	symbolizer_recheck_agent(r->sy, pid);
	if (outcome == ATTACH_LOADED)
		msg_say("loaded the agent into pid %d (%s) in %.2f s\n", (int)pid, symbolizer_process_name(r->sy, pid),
			info->seconds);
	warn_frame_pointers(r, pid);
}

void sample_gate_attached(void *ctx, pid_t pid, enum attach_outcome outcome, const struct attach_info *info,
			  const char *msg)
{
	struct record *r = ctx;
	if (r->tty_progress)
		fprintf(stderr, "\r\033[K");
	report_attach(r, pid, outcome, info, msg);
	sample_gate_release(r, pid);
}

/* -p: JVMs without an agent (and without any perf map) get it, each in an
 * attach child while the sampler runs (a JVM that does not answer holds up
 * nobody); their samples wait for it (deferred) to be named by its map. */
void sample_gate_attach_targets(struct record *r)
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

/* Attaches still under way when the recording ends. After -d or the targets'
 * exit each finishes (attach_agent's bound: 4 x --attach-timeout). After a
 * stop signal they get ATTACH_GRACE_NS, are then told to stop (their waits
 * end within 100 ms) and after ATTACH_STOP_NS more killed and reaped; a second
 * signal kills them at once. Their JVMs' samples are written either way. */
void sample_gate_finish(struct record *r)
{
	uint64_t stop_at = 0;
	bool told = false;
	while (attach_queue_npending(r->aq) > 0 && *r->stop < 2) {
		uint64_t now = record_mono_ns();
		if (*r->stop && !stop_at)
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
