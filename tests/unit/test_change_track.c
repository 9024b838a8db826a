/* test_change_track.c - lasting changes as windows accumulate (native/model/change_track.c):
 * windows drawn from a fixed mix (seeded multinomial, 250 samples) with a change added from a
 * window on: a new frame of 2 and 5 points found within 10 and 3 windows against each
 * reference, its start said, said once, then "still" every 10 windows, "gone" when it goes;
 * a one-window burst and an unchanged mix never found; a frame the judge named not found again. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "change_track.h"
#include "check.h"
#include "recording.h"

#define SAMPLES 250

struct mix {
	const char *stack;
	double share;
};

static const struct mix steady[] = {
	{ "java;main;serve;parse", 0.30 }, { "java;main;serve;write", 0.25 }, { "java;main;serve", 0.05 },
	{ "java;gc;mark", 0.10 },	   { "java;main;serve;hash", 0.20 },  { "java;compiler;c2", 0.10 },
};
#define NSTEADY (sizeof(steady) / sizeof(steady[0]))

static uint64_t rng_state;

static double uniform(void)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* One window: SAMPLES draws from the steady mix, extra_share of them moved to extra. */
static void draw(struct recording *r, const char *extra, double extra_share)
{
	uint64_t counts[NSTEADY + 1] = { 0 };
	for (int i = 0; i < SAMPLES; i++) {
		double u = uniform();
		if (extra && u < extra_share) {
			counts[NSTEADY]++;
			continue;
		}
		u = uniform();
		size_t k = 0;
		for (double acc = steady[0].share; k + 1 < NSTEADY && u >= acc; acc += steady[++k].share)
			;
		counts[k]++;
	}
	CHECK_EQ_INT(recording_init(r), 0);
	for (size_t k = 0; k < NSTEADY; k++)
		if (counts[k])
			CHECK_EQ_INT(recording_add(r, steady[k].stack, strlen(steady[k].stack), counts[k]), 0);
	if (extra && counts[NSTEADY])
		CHECK_EQ_INT(recording_add(r, extra, strlen(extra), counts[NSTEADY]), 0);
}

struct run {
	int found_at, found_since, stills, gone_at, others;
};

/* nwin windows, the change (extra at share) in windows [from, to); what was said about its leaf. */
static struct run replay(enum change_ref ref, size_t previous, const char *extra, double share, int from, int to,
			 int nwin, uint64_t seed)
{
	struct change_track_opts o = { ref, previous, 0.01, 2 };
	struct change_track *c = change_track_new(&o);
	struct run r = { -1, -1, 0, -1, 0 };
	rng_state = seed;
	CHECK(c != NULL);
	if (!c)
		return r;
	if (ref == CHANGE_REF_FILE) /* a saved profile: ten windows' worth of the mix */
		for (int w = 0; w < 10; w++) {
			struct recording rec;
			draw(&rec, NULL, 0);
			for (size_t i = 0; i < rec.stacks.stacks.n; i++)
				CHECK_EQ_INT(change_track_add_ref_stack(c, rec.stacks.stacks.strs[i],
									rec.stacks.stacks.lens[i],
									rec.stacks.counts[i]),
					     0);
			recording_free(&rec);
		}
	const char *leaf = extra ? strrchr(extra, ';') + 1 : "";
	for (int w = 1; w <= nwin; w++) {
		struct recording rec;
		const struct change_event *ev;
		size_t nev;
		draw(&rec, w >= from && w < to ? extra : NULL, share);
		CHECK_EQ_INT(change_track_window(c, &rec, (uint64_t)w, &ev, &nev), 0);
		for (size_t i = 0; i < nev; i++) {
			bool mine = strcmp(ev[i].frame, leaf) == 0;
			if (!mine) {
				if (ev[i].what == CHANGE_FOUND) {
					r.others++;
					fprintf(stderr, "window %d: %s found %.4f -> %.4f since %llu (p %.3g)\n", w,
						ev[i].frame, ev[i].before, ev[i].after, (unsigned long long)ev[i].since,
						ev[i].p);
				}
				continue;
			}
			if (ev[i].what == CHANGE_FOUND) {
				CHECK_MSG(r.found_at < 0, "found twice: windows %d and %d", r.found_at, w);
				r.found_at = w;
				r.found_since = (int)ev[i].since;
				CHECK(ev[i].after > ev[i].before);
			} else if (ev[i].what == CHANGE_STILL) {
				r.stills++;
			} else {
				r.gone_at = w;
			}
		}
		recording_free(&rec);
	}
	change_track_free(c);
	return r;
}

static void test_found_within(void)
{
	static const enum change_ref refs[] = { CHANGE_REF_FIRST, CHANGE_REF_PREVIOUS, CHANGE_REF_FILE };
	for (size_t k = 0; k < 3; k++)
		for (uint64_t seed = 1; seed <= 3; seed++) {
			struct run r5 = replay(refs[k], 5, "java;slow", 0.05, 40, 1000, 80, seed);
			CHECK_MSG(r5.found_at >= 41 && r5.found_at <= 42, "ref %zu seed %llu: 5 pts found in window %d",
				  k, (unsigned long long)seed, r5.found_at);
			CHECK_MSG(r5.found_since >= 38 && r5.found_since <= 41, "ref %zu: since %d", k, r5.found_since);
			/* said once, then still every 10 windows while it lasts, never gone */
			CHECK_MSG(r5.stills >= 3 && r5.stills <= 4, "ref %zu: %d still lines", k, r5.stills);
			CHECK_EQ_INT(r5.gone_at, -1);
			CHECK_MSG(r5.others == 0, "ref %zu seed %llu: %d other frames found", k,
				  (unsigned long long)seed, r5.others);
			struct run r2 = replay(refs[k], 5, "java;slow", 0.02, 40, 1000, 80, seed + 10);
			CHECK_MSG(r2.found_at >= 41 && r2.found_at <= 49, "ref %zu seed %llu: 2 pts found in window %d",
				  k, (unsigned long long)seed, r2.found_at);
		}
}

static void test_gone(void)
{
	struct run r = replay(CHANGE_REF_FIRST, 0, "java;slow", 0.10, 30, 45, 70, 5);
	CHECK_MSG(r.found_at >= 31 && r.found_at <= 32, "found in window %d", r.found_at);
	CHECK_MSG(r.gone_at >= 47 && r.gone_at <= 48, "gone in window %d", r.gone_at);
	CHECK_EQ_INT(r.stills, 1);
}

static void test_nothing_without_a_change(void)
{
	for (uint64_t seed = 1; seed <= 5; seed++) {
		/* a one-window burst of 15% is not a lasting change (--confirm 2) */
		struct run r = replay(CHANGE_REF_FIRST, 0, "java;burst", 0.15, 30, 31, 60, seed);
		CHECK_MSG(r.found_at < 0 && r.others == 0, "seed %llu: burst found in %d, %d others",
			  (unsigned long long)seed, r.found_at, r.others);
		r = replay(CHANGE_REF_PREVIOUS, 5, NULL, 0, 0, 0, 100, seed);
		CHECK_MSG(r.others == 0, "seed %llu: %d found in an unchanged mix", (unsigned long long)seed, r.others);
	}
}

/* A frame the judge named: not found again, said still as the others. */
static void test_noted(void)
{
	struct change_track_opts o = { CHANGE_REF_FIRST, 0, 0.01, 2 };
	struct change_track *c = change_track_new(&o);
	int found = 0, still = 0;
	rng_state = 9;
	for (int w = 1; w <= 40; w++) {
		struct recording rec;
		const struct change_event *ev;
		size_t nev;
		draw(&rec, w >= 20 ? "java;slow" : NULL, 0.2);
		if (w == 21)
			CHECK_EQ_INT(change_track_note(c, "slow", 20, 21, 0.0), 0);
		CHECK_EQ_INT(change_track_window(c, &rec, (uint64_t)w, &ev, &nev), 0);
		for (size_t i = 0; i < nev; i++)
			if (strcmp(ev[i].frame, "slow") == 0) {
				found += ev[i].what == CHANGE_FOUND;
				still += ev[i].what == CHANGE_STILL;
				if (ev[i].what == CHANGE_STILL)
					CHECK(ev[i].since == 20 && ev[i].after > 0.15);
			}
		recording_free(&rec);
	}
	CHECK_EQ_INT(found, 0);
	CHECK_EQ_INT(still, 1); /* window 31 */
	change_track_free(c);
}

int main(void)
{
	test_found_within();
	test_gone();
	test_nothing_without_a_change();
	test_noted();
	return check_report("change_track");
}
