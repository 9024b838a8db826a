/* sample_reader.c - reads an agent's sample ring for the integration tests:
 * asks for allocation and/or lock samples, beats every 100 ms for N seconds,
 * prints one line per record and the ring's counters at the end.
 *
 *   jflame_sample_reader PATH SECONDS [alloc] [lock] [interval=BYTES] [min-ns=NS]
 *
 * A record: "sample KIND TID TS_NS VALUE WEIGHT FLAGS CLASS FRAMES" (frames root
 * first, joined by ';'); "active BITS at_ms MS" when the agent first has
 * events on; at the end "stats key=value ...". */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sample_ring.h"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int print_sample(void *ctx, const struct sample_view *s)
{
	(void)ctx;
	printf("sample %s %d %" PRIu64 " %" PRIu64 " %" PRIu64 " %u %s ", s->kind == SAMPLE_ALLOC ? "alloc" : "lock",
	       (int)s->tid, s->ts_ns, s->value, s->weight, s->flags, s->cls);
	for (size_t i = s->nframes; i-- > 0;)
		printf("%s%s", s->frames[i], i ? ";" : "");
	printf("\n");
	return 0;
}

int main(int argc, char **argv)
{
	struct sample_ring_reader r;
	struct sample_ring_stats st;
	char err[512];
	uint32_t want = 0, interval = 0;
	uint64_t min_ns = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: %s PATH SECONDS [alloc] [lock] [interval=BYTES] [min-ns=NS]\n", argv[0]);
		return 2;
	}
	double seconds = atof(argv[2]);
	for (int i = 3; i < argc; i++) {
		if (strcmp(argv[i], "alloc") == 0)
			want |= SAMPLE_WANT_ALLOC;
		else if (strcmp(argv[i], "lock") == 0)
			want |= SAMPLE_WANT_LOCK;
		else if (strncmp(argv[i], "interval=", 9) == 0)
			interval = (uint32_t)strtoul(argv[i] + 9, NULL, 10);
		else if (strncmp(argv[i], "min-ns=", 7) == 0)
			min_ns = strtoull(argv[i] + 7, NULL, 10);
		else {
			fprintf(stderr, "unknown argument '%s'\n", argv[i]);
			return 2;
		}
	}
	int rc = sample_ring_open(&r, argv[1], 0, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "%s\n", rc > 0 ? "no such ring" : err);
		return 1;
	}
	uint64_t start = now_ns(), end = start + (uint64_t)(seconds * 1e9), reads = 0;
	uint32_t seen_active = 0;
	for (;;) {
		uint64_t t = now_ns();
		if (sample_ring_ask(&r, want, interval, min_ns, t) != 0 ||
		    sample_ring_read(&r, print_sample, NULL) < 0) {
			fprintf(stderr, "failed to read %s\n", argv[1]);
			return 1;
		}
		if (sample_ring_stats(&r, &st) == 0) {
			seen_active |= st.active;
			if (st.active && !reads)
				printf("active %u at_ms %" PRIu64 "\n", st.active, (t - start) / 1000000);
			reads += st.active != 0;
		}
		if (t >= end)
			break;
		struct timespec d = { 0, 100000000L };
		nanosleep(&d, NULL);
	}
	/* stop asking; the agent turns the events off within its next 100 ms round */
	sample_ring_ask(&r, 0, interval, min_ns, now_ns());
	struct timespec d = { 0, 300000000L };
	nanosleep(&d, NULL);
	sample_ring_read(&r, print_sample, NULL);
	sample_ring_stats(&r, &st);
	printf("stats active=%u seen_active=%u alloc_interval_active=%u written_alloc=%" PRIu64 " written_lock=%" PRIu64
	       " dropped=%" PRIu64 " lock_short=%" PRIu64 " bad=%" PRIu64 " agent_error=%s\n",
	       st.active, seen_active, st.alloc_interval_active, st.written[SAMPLE_ALLOC], st.written[SAMPLE_LOCK],
	       st.dropped, st.lock_short, r.bad, st.agent_error);
	sample_ring_close(&r);
	return 0;
}
