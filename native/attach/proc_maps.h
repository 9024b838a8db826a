/* proc_maps.h - a process's memory mappings from /proc/PID/maps, for finding
 * which file (and offset in it) a user-space address belongs to. */
#ifndef JFLAME_PROC_MAPS_H
#define JFLAME_PROC_MAPS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_map {
	uint64_t start, end, offset;
	uint64_t inode;
	unsigned dev_major, dev_minor;
	char perms[5];
	const char *path; /* "" for anonymous; "[heap]", "[vdso]", or a file path */
};

struct proc_maps {
	struct proc_map *maps; /* sorted by start */
	size_t n;
	char *strings; /* storage of the paths */
};

/* Parses a maps file (path like /proc/123/maps, or a test file). 0 or -1 with
 * a one-line reason in err. Malformed lines are skipped. */
int proc_maps_load(struct proc_maps *pm, const char *path, char *err, size_t errlen);
/* Parses maps text already in memory (for tests and fuzzing). */
int proc_maps_parse(struct proc_maps *pm, const char *text, size_t len);
void proc_maps_free(struct proc_maps *pm);
/* The mapping containing addr, or NULL. */
const struct proc_map *proc_maps_find(const struct proc_maps *pm, uint64_t addr);

#endif
