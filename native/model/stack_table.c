/* stack_table.c - the stack store: stacks numbered by str_index, their counts and
 * weights, sorted by their text, the timeline of timestamped inputs, the metadata. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include "stack_table.h"

#include <endian.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "key_sort.h"
#include "recording.h"
#include "swar.h"

void stack_table_init(struct stack_table *t)
{
	memset(t, 0, sizeof(*t));
	str_index_init(&t->stacks);
	str_index_init(&t->threads);
	snprintf(t->meta.count_type, sizeof(t->meta.count_type), "samples");
	snprintf(t->meta.count_unit, sizeof(t->meta.count_unit), "count");
}

void stack_table_free(struct stack_table *t)
{
	str_index_free(&t->stacks);
	str_index_free(&t->threads);
	free(t->counts);
	free(t->weights);
	free(t->befores);
	free(t->steps);
	free(t->timeline);
	memset(t, 0, sizeof(*t));
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

long stack_table_add(struct stack_table *t, const char *frames, size_t len, uint64_t count, uint64_t weight)
{
	long i = str_index_add(&t->stacks, frames, len);
	if (i < 0)
		return -1;
	size_t need = (size_t)i + 1, ccap = t->cap, wcap = t->cap, bcap = t->cap; /* one cap: set when all grew */
	if (ARRAY_GROW_ZEROED(t->counts, ccap, need) != 0 || ARRAY_GROW_ZEROED(t->weights, wcap, need) != 0 ||
	    (t->befores && ARRAY_GROW_ZEROED(t->befores, bcap, need) != 0))
		return -1;
	t->cap = ccap;
	t->counts[i] = add_sat(t->counts[i], count);
	t->weights[i] = add_sat(t->weights[i], weight);
	t->total_count = add_sat(t->total_count, count);
	t->total_weight = add_sat(t->total_weight, weight);
	return i;
}

long stack_table_add_diff(struct stack_table *t, const char *frames, size_t len, uint64_t before, uint64_t count)
{
	if (!t->befores && t->cap && !(t->befores = calloc(t->cap, sizeof(*t->befores))))
		return -1;
	long i = stack_table_add(t, frames, len, count, 0);
	if (i < 0)
		return -1;
	if (!t->befores && !(t->befores = calloc(t->cap, sizeof(*t->befores))))
		return -1;
	t->befores[i] = add_sat(t->befores[i], before);
	t->total_before = add_sat(t->total_before, before);
	return i;
}

int stack_table_add_step(struct stack_table *t, uint32_t stack, uint64_t count, uint64_t before)
{
	if (ARRAY_GROW(t->steps, t->steps_cap, t->nsteps + 1) != 0)
		return -1;
	t->steps[t->nsteps++] = (struct stack_step){ stack, count, before };
	return 0;
}

int stack_table_add_timed(struct stack_table *t, uint32_t stack, const char *thread, size_t len, double time,
			  uint64_t weight)
{
	long th = str_index_add(&t->threads, thread, len);
	if (th < 0)
		return -1;
	if (ARRAY_GROW(t->timeline, t->timeline_cap, t->ntimeline + 1) != 0)
		return -1;
	t->timeline[t->ntimeline++] = (struct timed_sample){ time, weight, stack, (uint32_t)th };
	return 0;
}

size_t stack_strip_lines(const char *in, size_t n, char *out)
{
	size_t len = 0;
	for (size_t i = 0; i < n; i++) {
		if (in[i] != STACK_LINE_MARK) {
			out[len++] = in[i];
			continue;
		}
		while (i + 1 < n && in[i + 1] != ';')
			i++;
	}
	return len;
}

const char *stack_plain(const char *text, size_t *len, bool lines, char **buf, size_t *cap)
{
	if (!lines)
		return text;
	if (ARRAY_GROW(*buf, *cap, *len + 1) != 0)
		return NULL;
	*len = stack_strip_lines(text, *len, *buf);
	return *buf;
}

size_t stack_frame_line(const char *frame, size_t n, const char **file, size_t *file_len, int64_t *line)
{
	const char *mark = memchr(frame, STACK_LINE_MARK, n);
	*file = NULL;
	*file_len = 0;
	*line = 0;
	if (!mark)
		return n;
	size_t name_len = (size_t)(mark - frame);
	const char *f = mark + 1, *end = frame + n, *colon = NULL;
	for (const char *p = f; p < end; p++)
		if (*p == ':')
			colon = p;
	int64_t v = 0;
	if (!colon || colon + 1 == end)
		return name_len;
	for (const char *p = colon + 1; p < end; p++) {
		if (*p < '0' || *p > '9' || v > 100000000)
			return name_len;
		v = v * 10 + (*p - '0');
	}
	*file = f;
	*file_len = (size_t)(colon - f);
	*line = v;
	return name_len;
}

void stack_table_meta_from_recording(struct stack_table *t, const struct recording *rec, int64_t now_ns)
{
	const struct event_kind *e = rec->ev;
	uint64_t clock = rec->freq > 0 ? 1000000000ULL / (uint64_t)rec->freq : 0;
	struct stack_meta *m = &t->meta;
	/* pprof's names, as Go's heap and mutex profiles and async-profiler's */
	snprintf(m->count_type, sizeof(m->count_type), "%s", e->count_type);
	snprintf(m->count_unit, sizeof(m->count_unit), "%s", e->count_unit);
	m->has_weight = e->weigh != EVENT_WEIGH_NONE || clock; /* CPU samples weigh 1e9/Hz ns */
	if (m->has_weight) {
		snprintf(m->weight_type, sizeof(m->weight_type), "%s", e->weight_type);
		snprintf(m->weight_unit, sizeof(m->weight_unit), "%s", e->weight_unit);
	}
	/* the weight of a sample where it has one: off-CPU blocks and lock waits have none */
	m->period = e->flags & EVENT_INTERVAL				    ? rec->interval :
		    e->weigh == EVENT_WEIGH_PERIOD			    ? e->period :
		    e->weigh == EVENT_WEIGH_NONE || (e->flags & EVENT_PERF) ? clock :
									      0;
	m->duration_ns = (int64_t)(rec->seconds * 1e9);
	if (now_ns > m->duration_ns)
		m->time_ns = now_ns - m->duration_ns;
	snprintf(m->event, sizeof(m->event), "%s", rec->event);
	snprintf(m->name, sizeof(m->name), "%s: %.*s", e->title, (int)sizeof(m->name) - 24, rec->target);
	size_t len;
	if (e->source == EVENT_AGENT) {
		snprintf(m->comment, sizeof(m->comment),
			 "target: %s\n%.1f s (%s)\n%" PRIu64 " samples, %" PRIu64 " dropped by the agent, %" PRIu64
			 " truncated\n%s",
			 rec->target, rec->seconds, rec->event, rec->samples, rec->lost, rec->truncated,
			 rec->note[0] ? rec->note : "no agent errors");
	} else {
		snprintf(m->comment, sizeof(m->comment),
			 "target: %s\n%.1f s at %d Hz (%s)\n%" PRIu64 " samples, %" PRIu64 " lost, %" PRIu64
			 " truncated, %" PRIu64 " unwind failed, %" PRIu64 " failed stack reads\n%s",
			 rec->target, rec->seconds, rec->freq, rec->event, rec->samples, rec->lost, rec->truncated,
			 rec->unwind_failed, rec->stack_errors, rec->frame_pointers);
	}
	len = strlen(m->comment);
	if ((e->flags & EVENT_MIN_BLOCK) && e->source == EVENT_AGENT)
		snprintf(m->comment + len, sizeof(m->comment) - len,
			 "\n%s: waits of %" PRIu64 " us or more; %" PRIu64 " shorter waits not recorded", e->word,
			 rec->min_block_ns / 1000, rec->short_blocks);
	else if (e->flags & EVENT_MIN_BLOCK)
		snprintf(m->comment + len, sizeof(m->comment) - len,
			 "\n%s: blocks of %" PRIu64 " us or more; %" PRIu64 " shorter blocks (%.3f ms) not recorded",
			 e->weight_type, rec->min_block_ns / 1000, rec->short_blocks, (double)rec->short_ns / 1e6);
}

int stack_table_from_recording(struct stack_table *t, const struct recording *rec, int64_t now_ns)
{
	size_t n;
	int rc = -1;
	struct stack_count *s = recording_sorted(rec, &n);
	if (!s)
		return -1;
	uint64_t period = rec->freq > 0 ? 1000000000ULL / (uint64_t)rec->freq : 0;
	for (size_t i = 0; i < n; i++)
		if (stack_table_add(t, s[i].stack, strlen(s[i].stack), s[i].count,
				    recording_weighted(rec) ? s[i].weight : s[i].count * period) < 0)
			goto out;
	stack_table_meta_from_recording(t, rec, now_ns);
	t->meta.lines = rec->stacks.meta.lines;
	rc = 0;
out:
	free(s);
	return rc;
}

int stack_table_timeline_from(struct stack_table *t, const struct stack_table *src)
{
	for (size_t i = 0; i < src->ntimeline; i++) {
		const struct timed_sample *x = &src->timeline[i];
		long id = str_index_find(&t->stacks, src->stacks.strs[x->stack], src->stacks.lens[x->stack]);
		if (id >= 0 && stack_table_add_timed(t, (uint32_t)id, src->threads.strs[x->thread],
						     src->threads.lens[x->thread], x->time, x->weight) != 0)
			return -1;
	}
	return 0;
}

/* Sorting (stack_table_sorted): the stacks share long prefixes (the same root frames), so instead
 * of strcmp over them again and again they are sorted by eight bytes at a
 * time (big-endian, so numeric order is byte order), and runs that share those
 * eight bytes by the next eight. A stack has no NUL byte and ends with zero
 * padding, so a shorter stack sorts before one it is a prefix of, as strcmp. */
struct sort_item {
	const char *s;
	size_t len;
};

static uint64_t key_at(const struct sort_item *it, size_t depth)
{
	uint64_t k = 0;
	if (depth + 8 <= it->len) {
		memcpy(&k, it->s + depth, 8);
		return be64toh(k);
	}
	for (size_t i = 0; i < 8; i++) {
		unsigned char c = depth + i < it->len ? (unsigned char)it->s[depth + i] : 0;
		k = k << 8 | c;
	}
	return k;
}

static int str_cmp(const void *a, const void *b, void *ctx)
{
	const struct sort_item *base = ctx;
	return strcmp(base[((const struct key_item *)a)->idx].s, base[((const struct key_item *)b)->idx].s);
}

static void sort_items(struct sort_item *base, struct key_item *v, size_t n, size_t depth)
{
	while (n > 1) {
		if (depth >= 4096) {
			/* a long shared prefix: no deeper recursion */
			qsort_r(v, n, sizeof(*v), str_cmp, (void *)base);
			return;
		}
		bool same = true, longer = false;
		for (size_t i = 0; i < n; i++) {
			const struct sort_item *it = &base[v[i].idx];
			if (i + 8 < n) /* the stacks are all over memory: ask for them ahead */
				__builtin_prefetch(base[v[i + 8].idx].s + depth);
			v[i].key = key_at(it, depth);
			same = same && v[i].key == v[0].key;
			longer = longer || it->len > depth;
		}
		if (!longer)
			return; /* all end here: equal stacks */
		if (same) {
			/* they share these bytes: skip to where the first two part */
			const struct sort_item *first = &base[v[0].idx];
			size_t lcp = first->len;
			for (size_t i = 1; i < n && lcp > depth; i++) {
				const struct sort_item *it = &base[v[i].idx];
				size_t m = it->len < lcp ? it->len : lcp, j = depth;
				while (j + 8 <= m && swar_load(it->s + j) == swar_load(first->s + j))
					j += 8;
				while (j < m && it->s[j] == first->s[j])
					j++;
				lcp = j;
			}
			depth = lcp > depth ? lcp : depth + 1;
			continue;
		}
		key_sort(v, n);
		size_t start = 0;
		for (size_t i = 1; i < n; i++) {
			if (v[i].key != v[start].key) {
				if (i - start > 1)
					sort_items(base, v + start, i - start, depth + 8);
				start = i;
			}
		}
		/* the last run of one key: on to the next eight bytes here */
		v += start;
		n -= start;
		depth += 8;
	}
}

uint32_t *stack_table_sorted(const struct stack_table *t)
{
	size_t n = t->stacks.n, cnt = n ? n : 1;
	uint32_t *ix = malloc(cnt * sizeof(*ix));
	struct sort_item *base = malloc(cnt * sizeof(*base));
	struct key_item *v = malloc(cnt * sizeof(*v));
	if (ix && base && v) {
		for (size_t i = 0; i < n; i++) {
			base[i] = (struct sort_item){ t->stacks.strs[i], strlen(t->stacks.strs[i]) };
			v[i] = (struct key_item){ 0, i };
		}
		sort_items(base, v, n, 0);
		for (size_t i = 0; i < n; i++)
			ix[i] = (uint32_t)v[i].idx;
	} else {
		free(ix);
		ix = NULL;
	}
	free(base);
	free(v);
	return ix;
}

int stack_table_frames(const char *stack, int (*fn)(void *ctx, const char *frame, size_t len), void *ctx)
{
	for (const char *p = stack;;) {
		const char *semi = strchr(p, ';');
		size_t n = semi ? (size_t)(semi - p) : strlen(p);
		if (n > 0) {
			int rc = fn(ctx, p, n);
			if (rc)
				return rc;
		}
		if (!semi)
			return 0;
		p = semi + 1;
	}
}
