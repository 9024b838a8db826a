/* pprof.h - pprof profiles (profile.proto, gzip-compressed) from and to convert's
 * stack table: one Function and one Location per distinct frame, frames leaf first. */
#ifndef JFLAME_PPROF_H
#define JFLAME_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stack_table.h"

/* Encodes the table as a Profile message (not compressed) into a malloc'd
 * buffer. What goes in:
 * - sample_type [count_type/count_unit] (samples/count), then
 *   [weight_type/weight_unit] (cpu/nanoseconds) when the table has weights;
 *   one Sample per stack with those values;
 * - period_type and period: the weight's type and meta.period when known, else
 *   samples/count with period 1; time_nanos, duration_nanos when known;
 *   comment: meta.comment's lines and the exporter ("jflame 0.1.0");
 * - a Function per distinct frame: system_name the frame exactly as in the
 *   folded stack, name without jflame's kind annotation ("_[j]" JIT, "_[i]"
 *   inlined, "_[0]" interpreted, "_[k]" kernel), so pprof shows plain names and
 *   pprof_read gives back the annotated frame; filename the source file of
 *   a frame with a line (tables with meta.lines); a Location per distinct frame
 *   (one Line: its Function and source line, no address or mapping), so a
 *   function's lines are Locations of one Function; Sample.location_id leaf
 *   first.
 * - the string table starts with "" and holds each string once.
 * 0, or -1 with one line in err. */
int pprof_encode(const struct stack_table *t, uint8_t **buf, size_t *len, char *err, size_t errlen);
/* pprof_encode, then gzip (as pprof tools expect) unless raw; written to out. */
int pprof_write(FILE *out, const struct stack_table *t, bool raw, char *err, size_t errlen);

struct pprof_stats {
	uint64_t samples;   /* Sample messages in the profile */
	uint64_t bad_refs;  /* skipped: a location, function or string that does not exist */
	uint64_t no_frames; /* skipped: no location */
	uint64_t negative;  /* skipped: a negative value */
	uint64_t too_long;  /* skipped: the folded stack would exceed FOLDED_MAX_LINE */
};

/* Reads a profile (gzip-compressed or raw protobuf) in buf[0..len) into the
 * (empty) table: one folded stack per sample, frames root first (a
 * location's inlined lines caller first); counts are the values of sample
 * type sample_index (NULL: the first; a number from 0, or a type name such as
 * "cpu"), weights those of the first other type. Frames are a function's
 * name (its system_name when that is the name plus a jflame annotation), ';'
 * and line breaks in names become ':' and ' ', a location without lines is
 * its address "0x…". Samples that cannot be read are skipped and counted in
 * st. name is for messages. 0, or -1 with one line in err: not a protocol
 * buffer, not a profile (no sample types, string table not starting with
 * ""), no such sample type, out of memory. */
int pprof_read(struct stack_table *t, const void *buf, size_t len, const char *name, const char *sample_index,
	       struct pprof_stats *st, char *err, size_t errlen);

#endif
