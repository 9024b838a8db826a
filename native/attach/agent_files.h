/* agent_files.h - the files a JVM's jflame agent keeps in the JVM's own /tmp,
 * seen from outside (through /proc/PID/root, named by the namespace pid). */
#ifndef JFLAME_AGENT_FILES_H
#define JFLAME_AGENT_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct agent_status {
	char state[16]; /* starting, running, exited, stood_down */
	char mode[16];	/* onload, attach */
	char options[256];
	char version[32];
	char error[256];
	int frame_pointers; /* 1 on, 0 off, -1 unknown */
	uint64_t map_lines, process_start;
	int pid; /* as the JVM sees itself */
};

/* "/proc/PID/root/tmp/<prefix><nspid><suffix>" into out. */
void agent_file_path(char *out, size_t len, pid_t pid, pid_t nspid, const char *prefix, const char *suffix);

/* No status file is larger: the agent writes about 1 KiB. */
#define AGENT_STATUS_MAX (64 * 1024)

/* Reads the agent's status file of process pid (through target_file: a file
 * of the process's own user, not a link, FIFO or foreign file). 1 when it
 * names this very process (its pid and start time), 0 when it was left by an
 * earlier process with the same pid, -1 when there is none (or it was refused). */
int agent_status_read(pid_t pid, pid_t nspid, uint64_t start_time, struct agent_status *st);

/* Parses status text (key=value lines, values escaped); for tests and fuzzing. */
void agent_status_parse(const char *text, size_t len, struct agent_status *st);

/* True while the agent runs in the process (state starting or running). */
bool agent_status_live(const struct agent_status *st);

#endif
