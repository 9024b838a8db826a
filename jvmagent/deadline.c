/* deadline.c - CLOCK_MONOTONIC deadlines for pthread_cond_timedwait on condition
 * variables set to that clock (pthread_condattr_setclock). */
#include "deadline.h"

struct timespec deadline_after_ms(long ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}
