/* caps.h - the capabilities jflame needs (as root they are all there; in a
 * sidecar container they must be granted), checked up front with libcap. */
#ifndef JFLAME_CAPS_H
#define JFLAME_CAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Recording: CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN) to load the sampler,
 * CAP_SYS_PTRACE to read other users' processes (-a, or a pid of another user).
 * 0, or -1 with one line naming what is missing and how to grant it. */
int caps_check_record(const pid_t *pids, size_t npids, bool all, char *err, size_t errlen);

/* Attaching to pid: when it runs as another user, CAP_SETUID and CAP_SETGID
 * (to speak to it as its user), CAP_KILL (SIGQUIT) and CAP_SYS_PTRACE (its /tmp). */
int caps_check_attach(pid_t pid, char *err, size_t errlen);

#endif
