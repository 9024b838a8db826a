/* deadline.h - CLOCK_MONOTONIC deadlines for pthread_cond_timedwait on condition
 * variables set to that clock (pthread_condattr_setclock). */
#ifndef JFLAME_DEADLINE_H
#define JFLAME_DEADLINE_H

#include <time.h>

/* The time ms milliseconds (ms >= 0) from now, on CLOCK_MONOTONIC. */
struct timespec deadline_after_ms(long ms);

#endif
