/* cgroup_id.h - which Kubernetes pod and container a process runs in, found in
 * the text of /proc/PID/cgroup, for the [Pod] and [Con] root frames. */
#ifndef JFLAME_CGROUP_ID_H
#define JFLAME_CGROUP_ID_H

#include <stddef.h>

struct cgroup_id {
	char pod[64]; /* Kubernetes pod UID, dashed form (8-4-4-4-12; a static pod's 32 hex), "" when not in a pod */
	char container[80]; /* full container id as the runtime wrote it (usually 64 hex), "" when none */
	char runtime[16];   /* "docker", "containerd", "cri-o", "podman", "kubepods" (pod known, runtime not), or "" */
};

/* Parses the text of /proc/PID/cgroup (cgroup v1 lines "N:controllers:/path", v2 line "0::/path").
 * Returns 1 when a pod or container was found, 0 when none, never fails on bad input.
 *
 * Reads exactly len bytes (text need not end in a NUL). Only whole lines count:
 * a last line without its '\n' is taken as cut off, and lines holding a NUL
 * byte or longer than 64 KiB are skipped. Of several lines (cgroup v1, or a
 * hybrid v1 + v2 file) the first naming the most wins: pod and container,
 * then container alone, then pod alone. Within a path the deepest container
 * wins (docker in docker), and a pod below a container drops that container
 * (a kind node's pods). Ids are strict: containers 64 lowercase hex, pod UIDs
 * 36-character UUIDs with '-' or '_', or the 32 hex of a static pod. */
int cgroup_id_parse(const char *text, size_t len, struct cgroup_id *out);

/* Reads /proc/<pid>/cgroup (pid 0: the calling process) and parses it; 0 also when unreadable. */
int cgroup_id_read(int pid, struct cgroup_id *out);

/* The short container id for frames: first 12 characters of a hex id (as docker ps shows), else the id itself.
 * Written to buf (cut to len - 1 characters); "" when there is no container. Returns buf ("" when len is 0). */
const char *cgroup_id_short(const struct cgroup_id *id, char *buf, size_t len);

#endif
