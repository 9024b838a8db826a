/* change_track.h - lasting changes found as windows accumulate: each frame's share over the
 * windows since a candidate change point, pooled, tested against a reference before it. */
#ifndef JFLAME_CHANGE_TRACK_H
#define JFLAME_CHANGE_TRACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recording.h"

/* Where a change is measured from: the windows before it (all kept: first),
 * the N before it (previous), or a saved profile (file). */
enum change_ref { CHANGE_REF_FIRST, CHANGE_REF_PREVIOUS, CHANGE_REF_FILE };

struct change_track_opts {
	enum change_ref ref;
	size_t previous;  /* CHANGE_REF_PREVIOUS: N */
	double alpha;	  /* false alarms: family-wise over frames and change points, per window */
	unsigned confirm; /* a change spans at least this many windows (0 taken as 1) */
};

enum change_what {
	CHANGE_FOUND, /* a frame grew, from window since on, and stays */
	CHANGE_STILL, /* ... it still is (said every 10 windows) */
	CHANGE_GONE,  /* ... it went back */
};

struct change_event {
	enum change_what what;
	const char *frame;    /* valid until the tracker is freed */
	uint64_t since;	      /* the window it began in (the caller's numbers) */
	double before, after; /* the reference's share; the share since it began (GONE: the last windows') */
	double p;	      /* CHANGE_FOUND: its p-value, before the correction */
	bool named_by_judge;  /* the window judge named it in this window too */
};

struct change_track;

struct change_track *change_track_new(const struct change_track_opts *o);
void change_track_free(struct change_track *c);

/* CHANGE_REF_FILE: the saved profile's stacks (names as compared). 0, or -1
 * when out of memory. */
int change_track_add_ref_stack(struct change_track *c, const char *stack, size_t len, uint64_t count);

/* Takes window number seq (its stacks, names as compared; at least one
 * sample) and tests every frame in it over each candidate change point:
 * the windows since it pooled against the reference before it, Bonferroni
 * over the frames and the change points at alpha. *ev (valid until the
 * next call) gets what changed: found, still, gone. 0, or -1 when out of
 * memory. */
int change_track_window(struct change_track *c, const struct recording *w, uint64_t seq, const struct change_event **ev,
			size_t *nev);

/* Marks frame as changed since window since (the window judge named it in
 * window seq, before change_track_window takes seq): not found again, said
 * still and gone as the others. 0, or -1 when out of memory. */
int change_track_note(struct change_track *c, const char *frame, uint64_t since, uint64_t seq, double before);

/* Whether frame is a change found (or noted) and not gone. */
bool change_track_active(const struct change_track *c, const char *frame);

#endif
