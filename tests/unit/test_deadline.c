/* test_deadline.c - deadline_after_ms: CLOCK_MONOTONIC now plus the milliseconds, its
 * nanoseconds always below a second (pthread_cond_timedwait refuses others: EINVAL). */
#include <time.h>

#include "check.h"
#include "deadline.h"

static long long ns_of(struct timespec ts)
{
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(void)
{
	static const long ms[] = { 0, 1, 100, 999, 1000, 1500, 60001 };
	for (size_t i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
		struct timespec before, after, d;
		clock_gettime(CLOCK_MONOTONIC, &before);
		d = deadline_after_ms(ms[i]);
		clock_gettime(CLOCK_MONOTONIC, &after);
		CHECK_MSG(d.tv_nsec >= 0 && d.tv_nsec < 1000000000L, "%ld ms: tv_nsec %ld", ms[i], d.tv_nsec);
		CHECK_MSG(ns_of(d) >= ns_of(before) + ms[i] * 1000000LL, "%ld ms: too early", ms[i]);
		CHECK_MSG(ns_of(d) <= ns_of(after) + ms[i] * 1000000LL, "%ld ms: too late", ms[i]);
	}
	return check_report("deadline");
}
