/* jfr_write.h - a stack table as a JDK Flight Recorder file (one chunk, format 2.0),
 * for JDK Mission Control, IntelliJ, `jfr print` and async-profiler's converter. */
#ifndef JFLAME_JFR_WRITE_H
#define JFLAME_JFR_WRITE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stack_table.h"

/* At most this many events in one file (a stack of count N is N events). */
#define JFR_MAX_EVENTS 10000000ULL

/* Writes t to out as one JFR chunk: the metadata of the types it uses, one
 * event per sample, then one checkpoint with the constant pools (frame types,
 * thread states, threads, stack traces, methods, classes, packages, symbols).
 * The events by the event table's row for the table's meta (event_kind_of_meta()
 * in model/event_table.h: its jfr field):
 * - count_type "alloc_samples": jdk.ObjectAllocationSample, objectClass the
 *   leaf frame's "Type_[a]" (left out of the stack), weight the stack's
 *   bytes split evenly over its samples;
 * - count_type "contentions": jdk.JavaMonitorEnter, monitorClass the leaf's
 *   "Type_[l]", duration the stack's nanoseconds split likewise;
 * - weight_type "off_cpu" or "wall": async-profiler's
 *   profiler.WallClockSample (state STATE_SLEEPING off-CPU, STATE_DEFAULT
 *   wall), timeSpan the nanoseconds split likewise;
 * - else (CPU, a counted perf event): jdk.ExecutionSample, state STATE_RUNNABLE.
 * Frames: "_[j]" JIT compiled, "_[i]" inlined, "_[0]" interpreted (class and
 * method split at the last '.', the mark left out), "_[k]" kernel (the mark
 * left out), other names whole as the method of the class "" (C++ when they
 * hold "::", else native), as async-profiler writes them. Every frame stays a
 * frame: jflame's roots ([Pod]..., [Con]..., "[PID] name", then the thread) too,
 * and the thread's frame also names the event's thread; a stack without them
 * takes the timeline's thread (perf script input), else none.
 * Names become valid UTF-8 (bytes that are not: U+FFFD). Times: the
 * timeline's, else each stack's samples spread evenly over meta.time_ns +
 * duration_ns (unknown: ending now, 10 ms a sample).
 * now_ns: the wall clock for unknown times (0: read it).
 * 0, or -1 with one line in err (out of memory, too many events, a write error). */
int jfr_write(FILE *out, const struct stack_table *t, int64_t now_ns, char *err, size_t errlen);

#endif
