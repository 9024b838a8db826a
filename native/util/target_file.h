/* target_file.h - the one way jflame opens a file that a profiled process
 * controls: no blocking, no links, not outside its root, owner and size checked. */
#ifndef JFLAME_TARGET_FILE_H
#define JFLAME_TARGET_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
 * Paths name the target by their form:
 *  - "/proc/PID/root/REST": REST is resolved beneath the process's root
 *    (openat2 RESOLVE_IN_ROOT: an absolute link inside stays inside), and PID's
 *    user owns the file;
 *  - "/proc/PID/map_files/A-B": the very file PID mapped there (a kernel link);
 *  - "/proc/self/fd/N": a file jflame holds open already;
 *  - any other absolute path: a file of jflame's own user (tests, -p of one's
 *    own process): owned by jflame's user or root, as Linux perf asks of maps.
 *
 * What is checked, always: opened with O_PATH first (a FIFO, device or socket
 * is never opened for reading), a regular file, not on FUSE (a read could
 * wait forever), not over max_size bytes.
 *  TARGET_FILE_OWNED (default): written by the target for jflame (agent files,
 *    perf maps, hsperfdata): no symbolic link anywhere on the path, owned by one
 *    of the target's uids (root only when the target is root), one hard link,
 *    not writable by every user.
 *  TARGET_FILE_READABLE: a file the target reads (its ELF files, debug files):
 *    symbolic links allowed inside its root, and it must be one the target's
 *    user may read: owned by it, or readable by every user.
 */
#define TARGET_FILE_READABLE 0x1u
#define TARGET_FILE_WRITE    0x2u /* opened read-write (the sample ring); OWNED only */
#define TARGET_FILE_DIR	     0x4u /* a directory, returned as an O_PATH|O_DIRECTORY fd */
#define TARGET_FILE_QUIET    0x8u /* no warning line when refused */

/* No ELF or debug file larger than this is read (the max_size of a target's
 * ELF files: elf_syms.c, elf_lookup.c, hotspot_vm.c's libjvm.so). */
#define ELF_MAX_FILE (4ULL << 30)

/* Opens path as flags say. Returns an fd (O_CLOEXEC, blocking) with *st filled
 * (st may be NULL); -1 with errno when it is simply not there or unreadable
 * (no message); -2 when it is there but refused: why (may be NULL) says why,
 * and unless TARGET_FILE_QUIET one line `jflame: ignored PATH: WHY` goes to
 * stderr, once per path. */
int target_file_open(const char *path, unsigned flags, uint64_t max_size, struct stat *st, char *why, size_t whylen);
/* The same as a FILE * ("re", or "r+e" with TARGET_FILE_WRITE); NULL when not
 * opened (*refused set when it was refused, if refused is not NULL). */
FILE *target_file_fopen(const char *path, unsigned flags, uint64_t max_size, struct stat *st, bool *refused);
/* Whether an open file still passes the size cap and is the same regular
 * file (for files read as they grow). 0 or -2 with why. */
int target_file_recheck(int fd, uint64_t max_size, char *why, size_t whylen);

/* Prints `jflame: ignored PATH: WHY` once per path (target text escaped). */
void target_file_warn(const char *path, const char *why);
/* Resolve without openat2, as on kernels before 5.6 (set by the first
 * ENOSYS too: qemu-user lacks it; tests set it); and a test hook that
 * forgets the paths warned about. */
extern bool target_file_no_openat2;
void target_file_reset_warnings(void);

#endif
