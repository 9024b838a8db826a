/* record_outputs.h - a recording's outputs: which each event has (-o and the naming rule), and
 * a window closed: described, each output written in its format, pushed, said in one line. */
#ifndef JFLAME_RECORD_OUTPUTS_H
#define JFLAME_RECORD_OUTPUTS_H

#include "record_session.h"

/* Writes window w's outputs of event ev (the .stacks file was written as samples came) and
 * lists their paths in wrote. A failed output does not stop the others: -1, the first error in err. */
int record_outputs_write(struct record *r, struct window *w, enum rec_event ev, char *wrote, size_t wrote_len,
			 char *err, size_t errlen);
/* What the window's outputs say about it (time, counts, targets, frame pointers). */
void record_window_describe(struct record *r, struct window *w, double seconds);
/* Writes window w (ended at end_ns), says so in one line per event, frees it; -1 when an output failed. */
int record_window_close(struct record *r, struct window *w, uint64_t end_ns);
/* Hands window w to the pusher: one pprof per series. */
void record_outputs_push(struct record *r, struct window *w);
/* The path output i of window w goes to (its template expanded): 0, or -1 with one line in err. */
int record_output_path(const struct record *r, const struct window *w, size_t i, char *out, size_t len, char *err,
		       size_t errlen);
/* The outputs of a recording (o->outputs): jflame.svg when none is given
 * (but with --push), each -o (o->user_outputs) checked and turned into the
 * outputs of the events it holds by the naming rule of several events
 * (out_name.h); same_file tells two names of one file. 0, or -1 said on
 * standard error. */
int record_outputs_plan(struct record_opts *o, bool (*same_file)(const char *a, const char *b));

#endif
