/* record_windows.h - a recording's windows: the folded samples of the sampler and of the
 * agents go into the window of their time, with its .stacks file and heat map; opened, freed. */
#ifndef JFLAME_RECORD_WINDOWS_H
#define JFLAME_RECORD_WINDOWS_H

#include "record_session.h"

/* The pipeline's sink (ctx: the struct record): into its window, .stacks and heat map. */
void record_windows_add_folded(void *ctx, const struct folded_sample *fs);
/* The agents' sink (ctx: the struct record): into its window's alloc or lock recording. */
void record_windows_add_agent(void *ctx, const struct agent_sample *as);
/* Opens window seq from start_ns (its .stacks file created): 0, or -1 with one line in err. */
int record_window_open_err(struct record *r, struct window *w, uint64_t start_ns, uint64_t seq, char *err,
			   size_t errlen);
/* The same, a failure said in a warning. */
int record_window_open(struct record *r, struct window *w, uint64_t start_ns, uint64_t seq);
void record_window_free(struct window *w);

#endif
