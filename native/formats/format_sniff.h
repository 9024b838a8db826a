/* format_sniff.h - what a profile's first bytes say it is, one test per format:
 * the format table (render/format_table.c) asks its rows' tests in its order. */
#ifndef JFLAME_FORMAT_SNIFF_H
#define JFLAME_FORMAT_SNIFF_H

#include <stdbool.h>
#include <stddef.h>

/* Each looks at buf[0..len) (already gunzipped), reads nothing past it, and
 * stands alone (the table's order decides between two that both say yes). */

/* A JDK Flight Recorder recording: its magic "FLR\0" first. */
bool format_sniff_jfr(const char *buf, size_t len);
/* speedscope's JSON: '{' first, after blanks and a UTF-8 BOM. */
bool format_sniff_speedscope(const char *buf, size_t len);
/* pprof: binary (a control byte other than blanks in the first 4 KiB) starting
 * with a protobuf tag of field 1-15, wire type 0 or 2. */
bool format_sniff_pprof(const char *buf, size_t len);
/* perf script text: a frame line (blanks, a hex address, a blank) among the
 * first two lines that are not blank or '#' comments. */
bool format_sniff_stacks(const char *buf, size_t len);
/* Folded stacks: text whose first content line ends in a blank and a count,
 * and not perf script text (its second line would be a frame line). */
bool format_sniff_folded(const char *buf, size_t len);

#endif
