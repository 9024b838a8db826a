/* proc_info.h - what /proc says about a process that jflame needs before it
 * touches it: pid in its own namespace, owner, start time, signals, JVM or not. */
#ifndef JFLAME_PROC_INFO_H
#define JFLAME_PROC_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_info {
	pid_t pid, nspid; /* nspid: the pid as the process sees itself (last NSpid field) */
	uid_t euid;
	gid_t egid;
	uint64_t start_time; /* field 22 of /proc/PID/stat, clock ticks after boot */
	uint64_t sig_caught; /* SigCgt: bit n-1 set when signal n has a handler */
	char state;	     /* R, S, D, T, Z, ... */
	char comm[64];	     /* its name escaped (text_escape): 15 bytes may take 60 */
};

/* Reads /proc/PID/status and /proc/PID/stat. -1 with errno (ENOENT: no such process). */
int proc_info_read(pid_t pid, struct proc_info *out);
/* The last NSpid field of a /proc/.../status file; fallback when it has none. */
pid_t proc_info_nspid(const char *status_path, pid_t fallback);
/* jflame's own pid namespace: the nsfs device and inode of /proc/self/ns/pid.
 * 0 when it is the initial namespace (the host's), 1 when another one (a
 * sidecar sharing a pod's, --pid=container:APP), -1 with errno when it cannot
 * be told. (Not NSpid's fields: a /proc mounted in that namespace shows one.) */
int proc_info_self_pidns(uint64_t *dev, uint64_t *ino);
/* Field 22 of /proc/PID/stat; 0 when unreadable. */
uint64_t proc_info_start_time(pid_t pid);
/* How long ago a process started (its start time, field 22), in ms by
 * CLOCK_BOOTTIME; 0 when unknown or in the future. */
uint64_t proc_info_age_ms(uint64_t start_ticks);
/* A start time (field 22, ticks after boot) in seconds since the epoch
 * (btime + ticks); 0 when unknown. */
double proc_info_ticks_to_epoch(uint64_t ticks);
/* 1 when libjvm.so (HotSpot) is mapped into pid, 0 when not, -1 with errno when
 * its maps cannot be read. */
int proc_info_is_hotspot(pid_t pid);
/* true while pid exists and is not a zombie. */
bool proc_info_alive(pid_t pid);

#endif
