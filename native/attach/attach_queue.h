/* attach_queue.h - attaches to JVMs in the background while a recording runs:
 * each attach in a forked child (it switches uid), results collected by polling. */
#ifndef JFLAME_ATTACH_QUEUE_H
#define JFLAME_ATTACH_QUEUE_H

#include <stdbool.h>
#include <sys/types.h>

#include "attach.h"

struct attach_queue;

/* A finished attach: outcome as attach_agent's, msg the error line (failure) or "". */
typedef void (*attach_done_fn)(void *ctx, pid_t pid, enum attach_outcome outcome, const struct attach_info *info,
			       const char *msg);

/* opts (and the strings it points to) must outlive the queue. */
struct attach_queue *attach_queue_new(const struct attach_opts *opts, attach_done_fn fn, void *ctx);
/* Starts attaching to pid (at most one attach per pid ever). 0, or -1 when
 * the child could not be started (fn is then called with the reason). */
int attach_queue_start(struct attach_queue *q, pid_t pid);
bool attach_queue_pending(const struct attach_queue *q, pid_t pid);
/* Whether pid is one of the queue's own attaching children (the latest 256,
 * also after they exit): jflame's, not to be recorded. */
bool attach_queue_is_child(const struct attach_queue *q, pid_t pid);
size_t attach_queue_npending(const struct attach_queue *q);
/* Reports every attach that has finished; waits up to wait_ms for one. */
void attach_queue_poll(struct attach_queue *q, int wait_ms);
/* Tells every attach under way to stop (SIGTERM: its waits end within 100 ms
 * and it reports "interrupted"); attach_queue_poll collects the reports. */
void attach_queue_stop(struct attach_queue *q);
/* Kills what is still running (SIGKILL, then reaped) and reports it as failed. */
void attach_queue_free(struct attach_queue *q);

#endif
