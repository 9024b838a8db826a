/* speedscope.h - speedscope's file format (https://www.speedscope.app/file-format-schema.json)
 * from and to convert's stack table, with json-c. */
#ifndef JFLAME_SPEEDSCOPE_H
#define JFLAME_SPEEDSCOPE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stack_table.h"

#define SPEEDSCOPE_SCHEMA "https://www.speedscope.app/file-format-schema.json"

/* Writes the table as one speedscope file: "$schema", "exporter" ("jflame
 * 0.1.0"), "name" (meta.name, else "jflame"), "activeProfileIndex" 0,
 * shared.frames (one {"name"} per distinct frame; names valid UTF-8, invalid
 * bytes become U+FFFD), and "sampled" profiles whose samples list frame
 * indices root first:
 * - a table with a timeline (perf script input) gets one profile per thread,
 *   named as speedscope's own perf import names them ("comm pid: 1 tid: 2"),
 *   one sample per recorded sample in time order;
 * - any other table one profile with one sample per distinct stack (in the
 *   order of their text).
 * Weights are nanoseconds (unit "nanoseconds") when the table's weights are
 * cpu nanoseconds, else the counts (unit "none", or the count's unit when
 * it is a time or bytes); startValue 0, endValue the profile's total.
 * 0, or -1 with one line in err (out of memory, a write error). */
int speedscope_write(FILE *out, const struct stack_table *t, char *err, size_t errlen);

struct speedscope_stats {
	uint64_t profiles, samples, events;
	uint64_t too_long; /* samples skipped: the folded stack would exceed FOLDED_MAX_LINE */
};

/* Reads a speedscope file in buf[0..len) into the (empty) table, every
 * profile into one set of folded stacks: "sampled" profiles sample by sample
 * (stacks root first, weights), "evented" ones by the time each stack spent
 * on top between open ("O") and close ("C") events. Counts are the weights
 * in nanoseconds for time units (seconds x 1e9, ...), else as they are
 * (bytes, none), rounded. ';' and line breaks in frame names become ':' and
 * ' ', an empty name "[unknown]". name is for messages. 0, or -1 with one
 * line in err: not JSON (with the line and byte), JSON but not speedscope's
 * format, a frame index out of range, a close event that does not match the
 * open frame, events out of order, a negative or missing weight, profiles
 * with different kinds of units. */
int speedscope_read(struct stack_table *t, const char *buf, size_t len, const char *name, struct speedscope_stats *st,
		    char *err, size_t errlen);

#endif
