/* agent_status.h - the agent's status file /tmp/jflame-<pid>.status: one
 * `key=value` per line, documented in docs/agent.md, read by jflame and users. */
#ifndef JFLAME_AGENT_STATUS_H
#define JFLAME_AGENT_STATUS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define AGENT_STATUS_FORMAT 1

struct agent_thread {
	pid_t tid;
	char *name; /* full Java thread name, as the JVM holds it */
};

struct agent_status {
	const char *version, *mode, *state, *options, *jvm, *map_path, *events_path;
	const char *samples_path; /* the sample ring, "" when there is none */
	pid_t pid;
	uint64_t process_start;		 /* /proc/self/stat starttime, to tell a reused pid */
	uint64_t started_ns, updated_ns; /* CLOCK_MONOTONIC */
	int preserve_frame_pointer;	 /* 1 on, 0 off, -1 unknown */
	int debug_non_safepoints;	 /* 1 on (inline chains exact between safepoints), 0 off, -1 unknown */
	const char *lock_events;	 /* "on" while a reader has lock samples on, else "off" */
	const char *park_hook;		 /* Unsafe.park bound to jflame's wrapper: "on", "off", "failed" */
	uint64_t prologues_fp, prologues_no_fp, prologues_unknown, prologues_skipped;
	uint64_t compiled_loads, compiled_unloads, dynamic_code, map_lines, map_bytes;
	uint64_t threads_unnamed, write_errors;
	const struct agent_thread *threads;
	size_t nthreads;
	const char *error; /* last error, "" when none */
};

/* Appends s with '\\', newline, and control characters escaped (\\, \n, \xHH)
 * into buf at pos; returns the new pos (kept NUL-terminated, truncated). */
size_t status_escape_append(char *buf, size_t len, size_t pos, const char *s);

/* Renders the whole file. Returns the length needed (as snprintf does). */
size_t agent_status_render(const struct agent_status *st, char *buf, size_t len);

#endif
