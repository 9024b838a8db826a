/* jfr_read.h - JDK Flight Recorder recordings (format 2.x, as the JDK and async-profiler
 * write them) read into convert's stack table: one folded stack per sample event. */
#ifndef JFLAME_JFR_READ_H
#define JFLAME_JFR_READ_H

#include <stddef.h>
#include <stdint.h>

#include "stack_table.h"

/* The events jfr_read takes, by jflame record's -e names. */
#define JFR_EVENT_NAMES "cpu, wall, alloc, lock or native"

struct jfr_stats {
	uint64_t chunks;     /* chunks read */
	uint64_t events;     /* events of the kind asked for */
	uint64_t bad_refs;   /* skipped: a thread, stack trace, method, class or string not in the pools */
	uint64_t bad_events; /* skipped: the event's bytes do not hold what its type describes */
	uint64_t no_frames;  /* skipped: no stack trace, or one without frames */
	uint64_t too_long;   /* skipped: the folded stack would exceed FOLDED_MAX_LINE */
	uint64_t truncated;  /* kept: stacks the recorder cut at its depth ("[truncated]" after the thread) */
};

/* Reads the recording in buf[0..len) (every chunk; the whole file, already
 * gunzipped) into the (empty) table. events picks what is read (NULL "cpu"):
 * - cpu: jdk.ExecutionSample, one sample each;
 * - native: jdk.NativeMethodSample, one sample each;
 * - wall: async-profiler's profiler.WallClockSample, its "samples" each;
 * - alloc: jdk.ObjectAllocationSample weighted by "weight" bytes, or, in a
 *   chunk without them, jdk.ObjectAllocationInNewTLAB / OutsideTLAB by
 *   "allocationSize"; the allocated class is the leaf ("Class_[a]");
 * - lock: jdk.JavaMonitorEnter weighted by its duration in nanoseconds, the
 *   monitor's class as the leaf ("Class_[l]").
 * Stacks are rooted "[pid] java" (when the chunk has jdk.JVMInformation's
 * pid), then the thread (its Java name, else its OS name); Java frames read
 * pkg/Class.method with jflame's mark by the frame type (JIT compiled, C1
 * compiled "_[j]", Inlined "_[i]", Interpreted "_[0]", Kernel "_[k]"; Native
 * and C++ none), a frame without a class its method name alone. Each sample
 * also goes into the timeline (its time in seconds since the epoch, its
 * thread). meta: counts and weights named as jflame record's views, the
 * chunks' start and duration. Events that cannot be read are skipped and
 * counted in st. name is for messages. 0, or -1 with one line in err (no
 * "jflame: " prefix): not JFR, an unsupported version, a truncated chunk,
 * metadata or constant pools that do not parse, an unknown events name, out
 * of memory. */
int jfr_read(struct stack_table *t, const void *buf, size_t len, const char *name, const char *events,
	     struct jfr_stats *st, char *err, size_t errlen);

#endif
