/* perf_script.h - a streaming reader of `perf script` text (and jflame's own
 * .stacks): one callback per sample with its header fields and frames, leaf first. */
#ifndef JFLAME_PERF_SCRIPT_H
#define JFLAME_PERF_SCRIPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ps_str {
	const char *p; /* not NUL-terminated; valid during the callback only */
	size_t n;
};

struct ps_frame {
	struct ps_str pc, sym, dso; /* "7f12..", "name+0x1a", "/lib/x.so" as printed */
};

struct ps_sample {
	struct ps_str comm; /* may hold spaces */
	long pid, tid;	    /* pid -1 when perf printed only the tid */
	double time;	    /* seconds; has_time false when not printed */
	bool has_time, has_period;
	uint64_t period;
	struct ps_str event;	       /* "cycles", "cpu-clock:ppp"; empty when not printed */
	const struct ps_frame *frames; /* leaf first */
	size_t nframes;
	uint64_t line; /* the header's line number in the input */
};

struct ps_stats {
	uint64_t samples, lines;
	uint64_t real;	     /* samples with a frame, a time or an event: perf
				script's, not a line of other text that happens
				to read as "name 123 ..." (a header alone) */
	uint64_t bad_lines;  /* neither a header, a frame, a comment nor blank */
	uint64_t long_lines; /* longer than PS_MAX_LINE: skipped */
	char first_bad[80];  /* the first bad line, for the warning */
};

#define PS_MAX_LINE (1u << 20)

/* Called per sample; return nonzero to stop. */
typedef int (*ps_sample_fn)(void *ctx, const struct ps_sample *s);

/* Parses buf[0..len) (whole lines; a last line without '\n' counts). */
int perf_script_parse_buffer(const char *buf, size_t len, ps_sample_fn fn, void *ctx, struct ps_stats *st);

/* Reads path ("-" for stdin), plain text or gzip (zlib), in chunks. 0, or -1
 * with one line in err (unreadable, truncated gzip, ...). */
int perf_script_parse_file(const char *path, ps_sample_fn fn, void *ctx, struct ps_stats *st, char *err, size_t errlen);

#endif
