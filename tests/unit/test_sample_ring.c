/* test_sample_ring.c - unit tests for the agent's sample ring: records in and
 * out in order across wraps, drops when full, truncation, the reader's checks. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "check.h"
#include "sample_ring.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct seen {
	size_t n;
	uint64_t last_value;
	int in_order;
	char cls[64], frames[256];
};

static int on_sample(void *ctx, const struct sample_view *s)
{
	struct seen *seen = ctx;
	if (seen->n && s->value != seen->last_value + 1)
		seen->in_order = 0;
	seen->last_value = s->value;
	seen->n++;
	snprintf(seen->cls, sizeof(seen->cls), "%s", s->cls);
	seen->frames[0] = '\0';
	for (size_t i = 0; i < s->nframes; i++) {
		size_t len = strlen(seen->frames);
		snprintf(seen->frames + len, sizeof(seen->frames) - len, "%s%s", i ? ";" : "", s->frames[i]);
	}
	return 0;
}

int main(void)
{
	char dir[] = "/tmp/jflame-ring-XXXXXX", path[128], err[512];
	struct sample_ring_writer w;
	struct sample_ring_reader r;
	struct seen seen = { .in_order = 1 };
	const char *frames[] = { "app/Work.alloc", "app/Work.run", "java/lang/Thread.run" };
	uint32_t interval;
	uint64_t min_ns;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/jflame-7.samples", dir);

	CHECK(sample_ring_create(&w, path, 1000, 7, 42, err, sizeof(err)) == -1); /* not a power of two */
	CHECK_EQ_INT(sample_ring_open(&r, path, 42, err, sizeof(err)), 1);	  /* none yet */
	{
		/* a file that is not a ring is refused and never written to (the
		 * close used to clear `want` in it: 4 bytes at offset 360) */
		char foreign[8192], back[8192];
		memset(foreign, 'A', sizeof(foreign));
		FILE *f = fopen(path, "we");
		CHECK(f && fwrite(foreign, 1, sizeof(foreign), f) == sizeof(foreign));
		if (f)
			fclose(f);
		CHECK_EQ_INT(sample_ring_open(&r, path, 42, err, sizeof(err)), -1);
		CHECK(strstr(err, "is not an agent's sample ring") != NULL);
		sample_ring_close(&r);
		f = fopen(path, "re");
		CHECK(f && fread(back, 1, sizeof(back), f) == sizeof(back) && memcmp(foreign, back, sizeof(back)) == 0);
		if (f)
			fclose(f);
		unlink(path);
	}
	CHECK_EQ_INT(sample_ring_create(&w, path, 131072, 7, 42, err, sizeof(err)), 0);
	struct stat st;
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);

	/* nobody reading: nothing wanted */
	CHECK_EQ_INT(sample_ring_wanted(&w, 1000, &interval, &min_ns), 0);
	CHECK_EQ_INT(interval, SAMPLE_RING_DEFAULT_ALLOC_INTERVAL);

	/* written before the reader came: not read */
	CHECK_EQ_INT(sample_ring_put(&w, SAMPLE_ALLOC, 11, 5, 0, 0, 0, "byte[]", frames, 3), 0);
	CHECK_EQ_INT(sample_ring_open(&r, path, 43, err, sizeof(err)), 1); /* another process's */
	CHECK_EQ_INT(sample_ring_open(&r, path, 42, err, sizeof(err)), 0);
	CHECK_EQ_INT(sample_ring_read(&r, on_sample, &seen), 0);

	/* asked for, with a fresh beat; stale after SAMPLE_RING_BEAT_NS */
	CHECK_EQ_INT(sample_ring_ask(&r, SAMPLE_WANT_ALLOC | SAMPLE_WANT_LOCK, 4096, 1000, 10), 0);
	CHECK_EQ_INT(sample_ring_wanted(&w, 20, &interval, &min_ns), SAMPLE_WANT_ALLOC | SAMPLE_WANT_LOCK);
	CHECK_EQ_INT(interval, 4096);
	CHECK_EQ_U64(min_ns, 1000);
	CHECK_EQ_INT(sample_ring_wanted(&w, 10 + SAMPLE_RING_BEAT_NS + 1, &interval, &min_ns), 0);

	/* many records through a small ring, read as they come: in order across wraps */
	uint64_t v = 1, puts = 0;
	for (int round = 0; round < 200; round++) {
		for (int i = 0; i < 50; i++, v++, puts++)
			CHECK_EQ_INT(sample_ring_put(&w, SAMPLE_ALLOC, 11, v, v, 512 * 1024, 0, "java/lang/String",
						     frames, 3),
				     0);
		CHECK_EQ_INT(sample_ring_read(&r, on_sample, &seen), 50);
	}
	CHECK_EQ_U64(seen.n, puts);
	CHECK(seen.in_order);
	CHECK_EQ_STR(seen.cls, "java/lang/String");
	CHECK_EQ_STR(seen.frames, "app/Work.alloc;app/Work.run;java/lang/Thread.run");

	/* the reader falls behind: the ring fills, the rest is dropped and counted */
	size_t ok = 0, dropped = 0;
	for (int i = 0; i < 5000; i++)
		if (sample_ring_put(&w, SAMPLE_LOCK, 12, 1, 1, 1, 0, "app/Ledger", frames, 3) == 0)
			ok++;
		else
			dropped++;
	CHECK(ok > 100 && dropped > 0);
	struct sample_ring_stats stats;
	CHECK_EQ_INT(sample_ring_stats(&r, &stats), 0);
	CHECK_EQ_U64(stats.dropped, dropped);
	CHECK_EQ_U64(stats.written[SAMPLE_ALLOC], puts + 1);
	CHECK_EQ_U64(stats.written[SAMPLE_LOCK], ok);
	seen.n = 0;
	seen.in_order = 0;
	CHECK_EQ_INT(sample_ring_read(&r, on_sample, &seen), (int)ok);
	CHECK_EQ_STR(seen.cls, "app/Ledger");
	CHECK_EQ_U64(r.bad, 0);

	/* a stack too long for one record: cut towards the root, marked */
	static char big[3000];
	memset(big, 'x', sizeof(big) - 1);
	const char *deep[64];
	for (int i = 0; i < 64; i++)
		deep[i] = big;
	CHECK_EQ_INT(sample_ring_put(&w, SAMPLE_ALLOC, 11, 1, 1, 1, 0, "byte[]", deep, 64), 0);
	seen.n = 0;
	CHECK_EQ_INT(sample_ring_read(&r, on_sample, &seen), 1);

	/* the unbiased weight: about the interval for small objects, the size for huge ones */
	CHECK(sample_ring_alloc_weight(24, 524288) >= 524288 && sample_ring_alloc_weight(24, 524288) <= 524301);
	CHECK(sample_ring_alloc_weight(100u << 20, 524288) == (100u << 20));
	CHECK_EQ_U64(sample_ring_alloc_weight(0, 4096), 4096);

	/* malformed records: refused */
	struct sample_view *view = malloc(sizeof(*view));
	unsigned char bytes[128] = { 0 };
	struct sample_record rec = { .size = 48, .kind = SAMPLE_ALLOC, .nframes = 1 };
	memcpy(bytes, &rec, sizeof(rec));
	memcpy(bytes + sizeof(rec), "C\0f\0", 4);
	CHECK_EQ_INT(sample_record_parse(bytes, 48, view), 0);
	CHECK_EQ_STR(view->frames[0], "f");
	rec.nframes = 40; /* frames past the end */
	memcpy(bytes, &rec, sizeof(rec));
	CHECK_EQ_INT(sample_record_parse(bytes, 48, view), -1);
	rec.kind = 9;
	memcpy(bytes, &rec, sizeof(rec));
	CHECK_EQ_INT(sample_record_parse(bytes, 48, view), -1);
	free(view);

	/* a reader that closes asks for nothing */
	sample_ring_close(&r);
	CHECK_EQ_INT(sample_ring_wanted(&w, 20, &interval, &min_ns), 0);
	sample_ring_destroy(&w);

	/* a symlink in the ring's place is replaced, not followed */
	char target[160];
	snprintf(target, sizeof(target), "%s/target", dir);
	FILE *f = fopen(target, "w");
	if (f)
		fclose(f);
	unlink(path);
	CHECK(symlink(target, path) == 0);
	CHECK_EQ_INT(sample_ring_create(&w, path, 131072, 7, 42, err, sizeof(err)), 0);
	CHECK(stat(target, &st) == 0 && st.st_size == 0);
	sample_ring_destroy(&w);
	unlink(path);
	unlink(target);
	rmdir(dir);
	return check_report("sample_ring");
}
