/* jit_syms.h - names for a JVM's JIT-compiled and VM-generated code, read
 * incrementally from the agent's events log (or a plain perf map), time-aware. */
#ifndef JFLAME_JIT_SYMS_H
#define JFLAME_JIT_SYMS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "str_intern.h"

struct jit_syms;

/* No events log or perf map is read past this size, nor a line past this length. */
#define JIT_SYMS_MAX_FILE (512ULL << 20)
#define JIT_SYMS_MAX_LINE 65536

/* Opens the agent's events log (/proc/PID/root/tmp/jflame-NSPID.events) when
 * events_path exists, else a plain perf map (map_path) without times: names
 * from either are read as the file grows. Both are opened by target_file (a
 * file of the target's user; a FIFO, link or foreign file is refused with one
 * warning). NULL when neither file exists or is accepted. */
struct jit_syms *jit_syms_open(const char *events_path, const char *map_path, struct str_intern *si);
/* The file's modification time when it was opened. */
time_t jit_syms_mtime(const struct jit_syms *js);
void jit_syms_free(struct jit_syms *js);

/* Reads what was appended since the last call. Returns the number of new
 * lines, or -1 when the file cannot be read. */
int jit_syms_update(struct jit_syms *js);

/* The name of the code at addr at time t_ns (CLOCK_MONOTONIC): the latest load
 * covering addr at or before t that was not unloaded by t; failing that the
 * first later load (HotSpot reports code shortly after installing it). NULL
 * when nothing covers addr. *off is addr's offset into the entry. */
const char *jit_syms_lookup(struct jit_syms *js, uint64_t addr, uint64_t t_ns, uint64_t *off);

/* The full Java name the agent recorded for a thread (tid as the JVM sees it). */
const char *jit_syms_thread_name(const struct jit_syms *js, pid_t tid);

/* Whether names come with times (the agent's events log) or not (perf map). */
int jit_syms_has_times(const struct jit_syms *js);
/* Counts the updates that may change what an address already named is named
 * at a time already seen: the file rewritten, code unloaded, or (a plain map,
 * without times) any line. A timed log's new loads and thread names do not
 * count: they name code that had no name, or threads. */
uint64_t jit_syms_changes(const struct jit_syms *js);
size_t jit_syms_count(const struct jit_syms *js);
const char *jit_syms_path(const struct jit_syms *js);

#endif
