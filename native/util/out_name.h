/* out_name.h - output paths from templates (%t a window's start in UTC, %p a
 * pid, %h the host, %n the window's number, %e the event, %% a percent sign) and the
 * rotation of the files one template names: the newest kept, the rest removed. */
#ifndef JFLAME_OUT_NAME_H
#define JFLAME_OUT_NAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* What a template's fields stand for. */
struct out_name_vars {
	int64_t time_ns;   /* %t: wall clock (ns since the epoch) as YYYYmmddTHHMMSSZ, UTC */
	pid_t pid;	   /* %p */
	const char *host;  /* %h ('/' becomes '_') */
	uint64_t seq;	   /* %n: 1 for the first window */
	const char *event; /* %e: the recorded event's word (cpu, alloc, ...); NULL: "cpu" */
};

/* 0 when tmpl is a valid template: every '%' starts %t, %p, %h, %n, %e or %%.
 * -1 with one line in err naming the bad field. */
int out_name_check(const char *tmpl, char *err, size_t errlen);
/* Whether tmpl has a field that changes from window to window (%t or %n). */
bool out_name_varies(const char *tmpl);
/* Whether tmpl's directory part (up to its last '/') has no field. */
bool out_name_fixed_dir(const char *tmpl);
/* Expands a checked template into out[0..len). 0, or -1 when it does not fit. */
int out_name_expand(const char *tmpl, const struct out_name_vars *v, char *out, size_t len);
/* Whether a file name (no directory) is one tmpl's file part could have
 * given: %t a timestamp as written, %p and %n digits, %h any characters but
 * '/', %e lower-case letters. */
bool out_name_matches(const char *tmpl_file, const char *name);

/* ---- several events in one recording (-e cpu,alloc) ----------------------
 * The naming rule: an output whose name has %e is written once per event,
 * %e the event's word; else an output whose file part names one event as a
 * word (a run of letters and digits, case ignored: cpu.svg, run-alloc-%t.folded)
 * holds that event; any other output is written once per event with
 * "-<event>" before its extension (out.svg: out-cpu.svg, out-alloc.svg;
 * the extension of x.pb.gz is .pb.gz). */

/* Whether tmpl has a %e field. */
bool out_name_has_event(const char *tmpl);
/* tmpl with every %e replaced by event (other fields kept as they are). 0,
 * or -1 when it does not fit in out[0..len). */
int out_name_for_event(const char *tmpl, const char *event, char *out, size_t len);
/* tmpl with "-<event>" inserted before the extension of its file part
 * (".pb.gz" as a whole; at the end when there is none). 0, or -1 when it does
 * not fit. */
int out_name_insert_event(const char *tmpl, const char *event, char *out, size_t len);
/* Which of words[0..n) tmpl's file part names as a word: its index, -1 when
 * none, -2 when more than one (the fields' letters, %t and the like, are not
 * words; a word may hold '-', as page-faults, and matches whole). */
int out_name_event_word(const char *tmpl, const char *const *words, size_t n);

/* Removes the oldest files tmpl names (in its directory, by modification
 * time, then name) until at most keep remain (0: no limit) and they hold at
 * most keep_bytes (0: no limit); the newest always stays. The number of
 * files removed, or -1 with one line in err (the directory cannot be read). */
long out_name_rotate(const char *tmpl, size_t keep, uint64_t keep_bytes, char *err, size_t errlen);

#endif
