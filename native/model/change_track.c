/* change_track.c - lasting changes found as windows accumulate: each frame's share over the
 * windows since a candidate change point, pooled, tested against a reference before it. */
#include "change_track.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "regress.h"
#include "str_index.h"

#define KEEP	    64 /* windows kept: the longest change point looked back to, and first's reference */
#define REF_MIN	    3  /* reference windows a change point needs (first, previous) */
#define SPREAD_MAX  20 /* windows before a change point whose spread is its noise (a file's reference) */
#define STILL_EVERY 10 /* windows between "still" lines */
#define GONE_WINS   3  /* windows back near the reference that end a change */
#define FEW_SAMPLES 5.0
/* the tracker's share of --alpha (false alarms per window): a tenth, so that it and the
 * window judge together stay near alpha; each tests every window */
#define ALPHA_SHARE 0.1
#define BLOCKS_MIN  3 /* a lag's noise is measured over this many lags' worth of windows at least */

/* the change points tried: windows since it, the newest one included */
static const unsigned lags[] = { 1, 2, 3, 4, 6, 8, 11, 16, 23, 32, 45, 63 };
#define NLAGS (sizeof(lags) / sizeof(lags[0]))

struct ct_window {
	uint32_t *ids, *counts; /* frames (ids ascending) and their samples (a frame once per sample) */
	size_t n;
	uint64_t samples, seq;
};

struct ct_active {
	uint32_t id;
	uint64_t since, said;
	double before, found; /* the reference's share; the change when found */
	uint64_t x, n;	      /* samples since, of n */
	uint64_t rx[GONE_WINS], rn[GONE_WINS];
	unsigned nrecent;
};

struct change_track {
	struct change_track_opts o;
	struct str_index frames;
	struct ct_window ring[KEEP]; /* ring[(head + i) % KEEP], i = 0 the oldest */
	size_t nring, head;
	struct ct_window file;
	uint64_t *file_dense; /* the file's counts by frame id (file_cap of them) */
	size_t file_cap;
	struct ct_active *act;
	size_t nact, act_cap;
	struct change_event *ev;
	size_t nev, ev_cap;
	/* scratch */
	uint64_t *acc;
	uint32_t *stamp, *touched;
	size_t scratch_cap, ntouched;
	uint32_t stack_no;
};

struct change_track *change_track_new(const struct change_track_opts *o)
{
	struct change_track *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->o = *o;
	if (!c->o.confirm)
		c->o.confirm = 1;
	str_index_init(&c->frames);
	return c;
}

static void window_free(struct ct_window *w)
{
	free(w->ids);
	free(w->counts);
	memset(w, 0, sizeof(*w));
}

void change_track_free(struct change_track *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < KEEP; i++)
		window_free(&c->ring[i]);
	window_free(&c->file);
	free(c->file_dense);
	free(c->act);
	free(c->ev);
	free(c->acc);
	free(c->stamp);
	free(c->touched);
	str_index_free(&c->frames);
	free(c);
}

/* Room for every frame id in the scratch arrays (acc and stamp zeroed): one
 * capacity, set when all grew. */
static int scratch_fit(struct change_track *c)
{
	size_t need = c->frames.n, acc_cap = c->scratch_cap, stamp_cap = c->scratch_cap, touched_cap = c->scratch_cap;
	if (ARRAY_GROW_ZEROED(c->acc, acc_cap, need) != 0 || ARRAY_GROW_ZEROED(c->stamp, stamp_cap, need) != 0 ||
	    ARRAY_GROW(c->touched, touched_cap, need) != 0)
		return -1;
	c->scratch_cap = acc_cap;
	return 0;
}

/* One stack's frames into the scratch counts, each frame once. */
static int add_stack(struct change_track *c, const char *s, size_t len, uint64_t count)
{
	c->stack_no++;
	for (size_t at = 0; at <= len;) {
		const char *semi = memchr(s + at, ';', len - at);
		size_t end = semi ? (size_t)(semi - s) : len;
		long id = str_index_add(&c->frames, s + at, end - at);
		if (id < 0 || scratch_fit(c) != 0)
			return -1;
		if (c->stamp[id] != c->stack_no) {
			c->stamp[id] = c->stack_no;
			if (!c->acc[id])
				c->touched[c->ntouched++] = (uint32_t)id;
			c->acc[id] += count;
		}
		at = end + 1;
	}
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* The scratch counts into w (emptied first), the scratch cleared. */
static int take_scratch(struct change_track *c, struct ct_window *w, uint64_t samples, uint64_t seq)
{
	window_free(w);
	qsort(c->touched, c->ntouched, sizeof(*c->touched), cmp_u32);
	w->ids = malloc((c->ntouched + 1) * sizeof(*w->ids));
	w->counts = malloc((c->ntouched + 1) * sizeof(*w->counts));
	if (!w->ids || !w->counts) {
		window_free(w);
		return -1;
	}
	for (size_t i = 0; i < c->ntouched; i++) {
		uint32_t id = c->touched[i];
		w->ids[i] = id;
		w->counts[i] = c->acc[id] > UINT32_MAX ? UINT32_MAX : (uint32_t)c->acc[id];
		c->acc[id] = 0;
	}
	w->n = c->ntouched;
	w->samples = samples;
	w->seq = seq;
	c->ntouched = 0;
	return 0;
}

static uint64_t count_of(const struct ct_window *w, uint32_t id)
{
	size_t lo = 0, hi = w->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (w->ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < w->n && w->ids[lo] == id ? w->counts[lo] : 0;
}

int change_track_add_ref_stack(struct change_track *c, const char *stack, size_t len, uint64_t count)
{
	if (c->o.ref != CHANGE_REF_FILE || add_stack(c, stack, len, count) != 0)
		return -1;
	/* kept dense: a file is read once, before any window */
	if (ARRAY_GROW_ZEROED(c->file_dense, c->file_cap, c->frames.n) != 0)
		return -1;
	for (size_t i = 0; i < c->ntouched; i++) {
		c->file_dense[c->touched[i]] += c->acc[c->touched[i]];
		c->acc[c->touched[i]] = 0;
	}
	c->ntouched = 0;
	c->file.samples += count;
	return 0;
}

static const struct ct_window *ring_at(const struct change_track *c, size_t i)
{
	return &c->ring[(c->head + i) % KEEP];
}

/* Prefix sums of a frame's counts and the windows' samples: px[i], pn[i]
 * over the ring's windows [0, i). */
static void prefix(const struct change_track *c, const uint64_t *x, uint64_t *px, uint64_t *pn)
{
	px[0] = pn[0] = 0;
	for (size_t i = 0; i < c->nring; i++) {
		px[i + 1] = px[i] + x[i];
		pn[i + 1] = pn[i] + ring_at(c, i)->samples;
	}
}

/* How much more a frame's share over lag windows in a row moves than
 * sampling alone would make it: the mean square of its rolling lag-window
 * shares about its mean over the windows [0, s) before a change point, over
 * a block's binomial variance (a program's mix wanders over many windows:
 * windows are not independent draws). 0 when it cannot be told: fewer than
 * two blocks' worth of windows, a frame never or always there. */
static double block_spread(const uint64_t *px, const uint64_t *pn, size_t s, size_t lag)
{
	if (s / lag < 2 || !pn[s] || !px[s] || px[s] == pn[s])
		return 0.0;
	double p = (double)px[s] / (double)pn[s], ms = 0.0, binom = 0.0;
	for (size_t j = 0; j + lag <= s; j++) {
		uint64_t bx = px[j + lag] - px[j], bn = pn[j + lag] - pn[j];
		if (!bn)
			continue;
		double d = (double)bx / (double)bn - p;
		ms += d * d;
		binom += p * (1.0 - p) / (double)bn;
	}
	return binom > 0.0 ? ms / binom : 0.0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int event_add(struct change_track *c, enum change_what what, uint32_t id, uint64_t since, double before,
		     double after, double p)
{
	if (ARRAY_GROW(c->ev, c->ev_cap, c->nev + 1) != 0)
		return -1;
	c->ev[c->nev++] = (struct change_event){ what, c->frames.strs[id], since, before, after, p, false };
	return 0;
}

static struct ct_active *active_find(struct change_track *c, uint32_t id)
{
	for (size_t i = 0; i < c->nact; i++)
		if (c->act[i].id == id)
			return &c->act[i];
	return NULL;
}

static int active_add(struct change_track *c, uint32_t id, uint64_t since, uint64_t seq, double before, double found)
{
	if (ARRAY_GROW(c->act, c->act_cap, c->nact + 1) != 0)
		return -1;
	c->act[c->nact++] =
		(struct ct_active){ .id = id, .since = since, .said = seq, .before = before, .found = found };
	return 0;
}

int change_track_note(struct change_track *c, const char *frame, uint64_t since, uint64_t seq, double before)
{
	long id = str_index_add(&c->frames, frame, strlen(frame));
	if (id < 0 || scratch_fit(c) != 0)
		return -1;
	if (active_find(c, (uint32_t)id))
		return 0;
	return active_add(c, (uint32_t)id, since, seq, before, 0.0);
}

bool change_track_active(const struct change_track *c, const char *frame)
{
	long id = str_index_find(&c->frames, frame, strlen(frame));
	for (size_t i = 0; id >= 0 && i < c->nact; i++)
		if (c->act[i].id == (uint32_t)id)
			return true;
	return false;
}

/* The changes already found: this window counted into each; still, or gone. */
static int update_active(struct change_track *c, const struct ct_window *w)
{
	size_t k = 0;
	for (size_t i = 0; i < c->nact; i++) {
		struct ct_active *a = &c->act[i];
		uint64_t x = count_of(w, a->id), rx = 0, rn = 0;
		a->x += x;
		a->n += w->samples;
		memmove(a->rx + 1, a->rx, (GONE_WINS - 1) * sizeof(a->rx[0]));
		memmove(a->rn + 1, a->rn, (GONE_WINS - 1) * sizeof(a->rn[0]));
		a->rx[0] = x;
		a->rn[0] = w->samples;
		a->nrecent += a->nrecent < GONE_WINS;
		/* gone: its last windows' share back within a quarter of the change;
		 * judging every window on its own (--confirm 1), one window back is gone */
		unsigned gone = c->o.confirm == 1 ? 1 : GONE_WINS;
		for (unsigned j = 0; j < a->nrecent && j < gone; j++)
			rx += a->rx[j], rn += a->rn[j];
		double recent = rn ? (double)rx / (double)rn : 0.0, since = a->n ? (double)a->x / (double)a->n : 0.0;
		double change = a->found > 0 ? a->found : since - a->before;
		if (a->nrecent >= gone && recent <= a->before + 0.25 * change) {
			if (event_add(c, CHANGE_GONE, a->id, a->since, a->before, recent, 1.0) != 0)
				return -1;
			continue;
		}
		if (w->seq >= a->said + STILL_EVERY) {
			a->said = w->seq;
			if (event_add(c, CHANGE_STILL, a->id, a->since, a->before, since, 1.0) != 0)
				return -1;
		}
		c->act[k++] = *a;
	}
	c->nact = k;
	return 0;
}

/* The reference of a change point at ring index s: windows [*from, s) of the
 * ring, or the file. false when it has too few. */
static bool ref_range(const struct change_track *c, size_t s, size_t *from)
{
	if (c->o.ref == CHANGE_REF_FILE) {
		*from = s > SPREAD_MAX ? s - SPREAD_MAX : 0;
		return c->file.samples > 0;
	}
	if (c->o.ref == CHANGE_REF_PREVIOUS) {
		/* the N before it, or (a change over more windows) as many windows as it spans */
		size_t n = c->o.previous < REF_MIN ? REF_MIN : c->o.previous;
		n = n < c->nring - s ? c->nring - s : n;
		*from = s > n ? s - n : 0;
		return s >= REF_MIN;
	}
	*from = 0;
	return s >= REF_MIN;
}

struct best {
	double p, before, after;
	size_t s;
};

/* Tests one frame over every change point (x its counts, px/pn their prefix
 * sums, own[l] and pooled[l] the spreads at lags[l]): the best (smallest p) in *b. */
static void test_frame(const struct change_track *c, uint32_t id, const uint64_t *x, const uint64_t *px,
		       const uint64_t *pn, const double *own, const double *pooled, struct best *b)
{
	size_t T = c->nring;
	*b = (struct best){ 2.0, 0.0, 0.0, 0 };
	for (size_t l = 0; l < NLAGS; l++) {
		size_t lag = lags[l], from;
		if (lag < c->o.confirm || lag >= T)
			continue;
		size_t s = T - lag;
		/* the noise at this lag measured: BLOCKS_MIN blocks' worth of windows before it */
		if (s < BLOCKS_MIN * lag || !ref_range(c, s, &from))
			continue;
		uint64_t ax = px[T] - px[s], an = pn[T] - pn[s], rx, rn;
		if (c->o.ref == CHANGE_REF_FILE) {
			rx = id < c->file_cap ? c->file_dense[id] : 0;
			rn = c->file.samples;
		} else {
			rx = px[s] - px[from];
			rn = pn[s] - pn[from];
		}
		if (!an || !rn)
			continue;
		double before = (double)rx / (double)rn, after = (double)ax / (double)an;
		if (after <= before)
			continue;
		/* it stays: each of the newest confirm windows above the reference */
		bool stays = true;
		for (size_t i = T - c->o.confirm; i < T; i++)
			stays = stays && (double)x[i] > before * (double)ring_at(c, i)->samples;
		if (!stays)
			continue;
		/* a frame never seen in any window before it (nor in the file): its
		 * samples are a new path's, not a share of the mix that wanders */
		double phi = px[s] == 0 && rx == 0 ? 1.0 : pooled[l], df = 0.0;
		if (own[l] > phi) {
			phi = own[l];
			df = (double)(s / lag - 1);
		}
		if (phi < 1.0)
			phi = 1.0;
		double p = regress_p_value(ax, an, rx, rn, phi, df) / 2.0;
		if (p < b->p)
			*b = (struct best){ p, before, after, s };
	}
}

int change_track_window(struct change_track *c, const struct recording *w, uint64_t seq, const struct change_event **ev,
			size_t *nev)
{
	const struct stack_table *t = &w->stacks;
	uint64_t *x = NULL, *px = NULL, *pn = NULL;
	double *own = NULL, *vals = NULL, pooled[NLAGS];
	int rc = -1;
	c->nev = 0;
	*ev = NULL;
	*nev = 0;
	for (size_t i = 0; i < t->stacks.n; i++)
		if (t->counts[i] && add_stack(c, t->stacks.strs[i], t->stacks.lens[i], t->counts[i]) != 0)
			return -1;
	/* into the ring, the oldest out when full */
	struct ct_window *slot;
	if (c->nring < KEEP) {
		slot = &c->ring[(c->head + c->nring) % KEEP];
		c->nring++;
	} else {
		slot = &c->ring[c->head];
		c->head = (c->head + 1) % KEEP;
	}
	if (take_scratch(c, slot, w->total, seq) != 0)
		return -1;
	if (update_active(c, slot) != 0)
		return -1;
	size_t T = c->nring, m = slot->n;
	if (T < 2 || !m)
		goto done;
	x = malloc(T * m * sizeof(*x));
	px = malloc((T + 1) * sizeof(*px));
	pn = malloc((T + 1) * sizeof(*pn));
	own = malloc(m * NLAGS * sizeof(*own));
	vals = malloc(m * sizeof(*vals));
	if (!x || !px || !pn || !own || !vals)
		goto out;
	/* each frame's spread at each lag over the windows before its change
	 * point; pooled: the median over the frames with FEW_SAMPLES a window
	 * (moves every frame makes: a thread mix shifting) */
	for (size_t f = 0; f < m; f++) {
		uint64_t *xf = x + f * T;
		for (size_t i = 0; i < T; i++)
			xf[i] = count_of(ring_at(c, i), slot->ids[f]);
		prefix(c, xf, px, pn);
		for (size_t l = 0; l < NLAGS; l++)
			own[f * NLAGS + l] = lags[l] < T ? block_spread(px, pn, T - lags[l], lags[l]) : 0.0;
	}
	for (size_t l = 0; l < NLAGS; l++) {
		size_t nv = 0, s = lags[l] < T ? T - lags[l] : 0;
		for (size_t f = 0; f < m && s; f++) {
			prefix(c, x + f * T, px, pn);
			if ((double)px[s] >= FEW_SAMPLES * (double)s && own[f * NLAGS + l] > 0.0)
				vals[nv++] = own[f * NLAGS + l];
		}
		pooled[l] = 1.0;
		if (nv) {
			qsort(vals, nv, sizeof(*vals), cmp_double);
			pooled[l] = vals[nv / 2] > 1.0 ? vals[nv / 2] : 1.0;
		}
	}
	/* every frame in this window, each change point: Bonferroni over both */
	double limit = c->o.alpha * ALPHA_SHARE / ((double)m * (double)NLAGS);
	for (size_t f = 0; f < m; f++) {
		uint32_t id = slot->ids[f];
		if (active_find(c, id))
			continue;
		prefix(c, x + f * T, px, pn);
		struct best b;
		test_frame(c, id, x + f * T, px, pn, own + f * NLAGS, pooled, &b);
		if (b.p >= limit)
			continue;
		uint64_t since = ring_at(c, b.s)->seq;
		if (event_add(c, CHANGE_FOUND, id, since, b.before, b.after, b.p) != 0 ||
		    active_add(c, id, since, seq, b.before, b.after - b.before) != 0)
			goto out;
		struct ct_active *a = &c->act[c->nact - 1];
		a->x = px[T] - px[b.s];
		a->n = pn[T] - pn[b.s];
	}
done:
	*ev = c->ev;
	*nev = c->nev;
	rc = 0;
out:
	free(x);
	free(px);
	free(pn);
	free(own);
	free(vals);
	return rc;
}
