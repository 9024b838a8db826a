/* profile_format.h - which profile format a file is, from its name or from its
 * first bytes: folded stacks, perf script text, pprof, speedscope JSON, JFR, SVG. */
#ifndef JFLAME_PROFILE_FORMAT_H
#define JFLAME_PROFILE_FORMAT_H

#include <stdbool.h>
#include <stddef.h>

enum profile_format {
	PFMT_UNKNOWN,
	PFMT_FOLDED,	 /* "frame;frame;... count" lines */
	PFMT_STACKS,	 /* perf script text (jflame's .stacks) */
	PFMT_PPROF,	 /* profile.proto, gzip or plain */
	PFMT_SPEEDSCOPE, /* speedscope's JSON */
	PFMT_SVG,	 /* a flame graph (written, never read) */
	PFMT_TEXT,	 /* .txt: folded or perf script, the content tells */
	PFMT_HTML,	 /* record's heat map page (written, never read) */
	PFMT_JFR,	 /* a JDK Flight Recorder recording (chunks starting "FLR\0") */
};

/* The format a file name says (.folded .collapsed .stacks .perf .script .pb
 * .pprof .json .jfr .svg .txt, each also with .gz after it; case ignored).
 * *raw: the name ends in .pb (a plain, not gzipped, protobuf). */
enum profile_format profile_format_of_name(const char *path, bool *raw);
/* The format "folded", "collapsed", "stacks", "perf", "pprof", "pb",
 * "speedscope", "json", "jfr" or "svg" names; PFMT_UNKNOWN for anything else. */
enum profile_format profile_format_named(const char *name);
/* What buf[0..len) (already gunzipped) looks like: JFR's magic "FLR\0"
 * first is JFR; '{' first (after blanks and a BOM) is speedscope JSON; binary data starting with a protobuf tag of
 * field 1-15 (wire type 0 or 2) pprof; text with a perf script frame line
 * (blanks, hex address, blank) perf script; text whose first line ends in a
 * blank and a count folded (unless its second line is a frame line). */
enum profile_format profile_format_sniff(const char *buf, size_t len);
/* "folded stacks", "perf script text", "pprof", "speedscope JSON", "SVG",
 * "HTML", "JFR". */
const char *profile_format_label(enum profile_format f);

#endif
