/* heatmap.c - timestamped samples binned as FlameScope's subsecond-offset heat
 * map (columns: seconds; rows: offset in the second), and its JSON for the page. */
#include "heatmap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frame_mark.h"
#include "grow.h"
#include "json_out.h"

int heatmap_init(struct heatmap *h)
{
	memset(h, 0, sizeof(*h));
	h->tree = call_tree_new();
	return h->tree ? 0 : -1;
}

void heatmap_free(struct heatmap *h)
{
	call_tree_free(h->tree);
	free(h->samples);
	memset(h, 0, sizeof(*h));
}

int heatmap_add(struct heatmap *h, double t_seconds, const char *folded_stack, size_t len, uint64_t weight)
{
	if (weight == 0)
		return 0;
	if (!isfinite(t_seconds) || t_seconds < 0 || t_seconds >= 1e11) {
		h->bad_time++;
		return 0;
	}
	int64_t tick = llround(t_seconds * (double)HEATMAP_TICKS_PER_SEC);
	long node = call_tree_node(h->tree, folded_stack, len);
	if (node < 0)
		return -1;
	if (h->n == 0 || tick < h->min_tick)
		h->min_tick = tick;
	if (h->n == 0 || tick > h->max_tick)
		h->max_tick = tick;
	h->total += weight;
	while (weight) {
		uint32_t w = weight > UINT32_MAX ? UINT32_MAX : (uint32_t)weight;
		if (ARRAY_GROW(h->samples, h->cap, h->n + 1) != 0)
			return -1;
		h->samples[h->n++] = (struct heatmap_sample){ tick, (uint32_t)node, w };
		weight -= w;
	}
	return 0;
}

struct heatmap_cell heatmap_cell_of(int64_t tick, int64_t t0_sec, int rows)
{
	struct heatmap_cell c;
	int64_t sec = tick / HEATMAP_TICKS_PER_SEC, off = tick % HEATMAP_TICKS_PER_SEC;
	if (off < 0) {
		off += HEATMAP_TICKS_PER_SEC;
		sec--;
	}
	c.col = sec - t0_sec;
	c.row = (int)(off * rows / HEATMAP_TICKS_PER_SEC);
	return c;
}

int64_t heatmap_t0(const struct heatmap *h)
{
	return h->n ? h->min_tick / HEATMAP_TICKS_PER_SEC : 0;
}

int64_t heatmap_columns(const struct heatmap *h)
{
	return h->n ? h->max_tick / HEATMAP_TICKS_PER_SEC - heatmap_t0(h) + 1 : 0;
}

struct keyed {
	uint64_t key; /* bin << 32 | node */
	uint64_t weight;
};

static int cmp_keyed(const void *a, const void *b)
{
	uint64_t x = ((const struct keyed *)a)->key, y = ((const struct keyed *)b)->key;
	return x < y ? -1 : x > y;
}

int heatmap_check(const struct heatmap *h, const struct heatmap_options *o, char *err, size_t errlen)
{
	int rows = o->rows ? o->rows : HEATMAP_DEFAULT_ROWS;
	int64_t cols = heatmap_columns(h);
	if (rows < 1 || rows > HEATMAP_MAX_ROWS) {
		snprintf(err, errlen, "heat map rows must be 1 to %d, not %d", HEATMAP_MAX_ROWS, rows);
		return -1;
	}
	if (h->n == 0) {
		snprintf(err, errlen, "no samples for the heat map");
		return -1;
	}
	if (cols > HEATMAP_MAX_SECONDS) {
		snprintf(err, errlen,
			 "the samples span %lld s; the heat map shows at most %d s (cut the input "
			 "first, e.g. with perf script --time)",
			 (long long)cols, HEATMAP_MAX_SECONDS);
		return -1;
	}
	return 0;
}

static void str_member(FILE *out, const char *name, const char *s)
{
	fprintf(out, "\"%s\":", name);
	if (s)
		json_out_str(out, s, strlen(s));
	else
		fputs("null", out);
	fputs(",\n", out);
}

int heatmap_write_json(FILE *out, const struct heatmap *h, const struct heatmap_options *o, char *err, size_t errlen)
{
	int rows = o->rows ? o->rows : HEATMAP_DEFAULT_ROWS, rc = -1;
	int64_t t0 = heatmap_t0(h), cols = heatmap_columns(h);
	struct keyed *k = NULL;
	size_t nk = 0;

	if (heatmap_check(h, o, err, errlen) != 0)
		goto out;
	if (!(k = malloc(h->n * sizeof(*k)))) {
		snprintf(err, errlen, "out of memory writing the heat map");
		goto out;
	}
	for (size_t i = 0; i < h->n; i++) {
		struct heatmap_cell c = heatmap_cell_of(h->samples[i].tick, t0, rows);
		uint64_t bin = (uint64_t)c.col * (uint64_t)rows + (uint64_t)c.row;
		k[i] = (struct keyed){ bin << 32 | h->samples[i].node, h->samples[i].weight };
	}
	qsort(k, h->n, sizeof(*k), cmp_keyed);
	for (size_t i = 0; i < h->n; i++) {
		if (nk && k[nk - 1].key == k[i].key)
			k[nk - 1].weight += k[i].weight;
		else
			k[nk++] = k[i];
	}
	fputs("{", out);
	str_member(out, "title", o->title ? o->title : "CPU heat map");
	str_member(out, "subtitle", o->subtitle);
	fprintf(out, "\"rows\":%d,\"cols\":%lld,\"t0\":%lld,\"total\":%llu,\"idle\":%llu,\n", rows, (long long)cols,
		(long long)t0, (unsigned long long)h->total, (unsigned long long)o->idle);
	if (call_tree_write_json(h->tree, out) != 0)
		goto write_err;
	fputs(",\n\"samples\":[", out);
	uint64_t prev = 0;
	for (size_t i = 0; i < nk; i++) {
		uint64_t bin = k[i].key >> 32;
		fprintf(out, "%s%llu,%u,%llu", i ? "," : "", (unsigned long long)(bin - prev),
			(unsigned)(k[i].key & UINT32_MAX), (unsigned long long)k[i].weight);
		if (i % 16 == 15)
			putc('\n', out);
		prev = bin;
	}
	fputs("]}", out);
	if (ferror(out))
		goto write_err;
	rc = 0;
	goto out;
write_err:
	snprintf(err, errlen, "failed to write the heat map");
out:
	free(k);
	return rc;
}

/* ---- perf script samples ---------------------------------------------- */

static bool leaf_is_idle(const struct ps_str *sym)
{
	static const char *const idle[] = {
		"cpuidle",   "cpu_idle",  "do_idle",	"default_idle",	     "intel_idle",	    "poll_idle",
		"safe_halt", "acpi_idle", "mwait_idle", "cpu_startup_entry", "cpu_bringup_and_idle"
	};
	for (size_t i = 0; i < sizeof(idle) / sizeof(idle[0]); i++)
		if (memmem(sym->p, sym->n, idle[i], strlen(idle[i])))
			return true;
	return false;
}

bool heatmap_is_idle(const struct ps_sample *s)
{
	if (s->comm.n >= 7 && memcmp(s->comm.p, "swapper", 7) == 0)
		return true;
	if (s->pid == 0 || (s->pid < 0 && s->tid == 0))
		return true;
	return s->nframes > 0 && leaf_is_idle(&s->frames[0].sym);
}

int heatmap_reader_init(struct heatmap_reader *r, struct heatmap *h, const struct collapse_opts *o, bool keep_idle)
{
	memset(r, 0, sizeof(*r));
	r->h = h;
	r->keep_idle = keep_idle;
	collapse_init(&r->c, o, NULL); /* collapse_fold only: no recording */
	return 0;
}

void heatmap_reader_free(struct heatmap_reader *r)
{
	collapse_free(&r->c);
}

/* perf-map-agent's Java names, as collapse leaves them outside processes
 * named "java" ("Lpkg/Class:::method_[j]", the ';' made ':'), read as the
 * brief's Java frames: "pkg/Class.method_[j]"; "Interpreter_[j]" (the perf
 * map's template interpreter) loses the JIT mark, so it colours as interpreted.
 * Only JIT and inlined frames (annotated from a perf map) are touched. The new
 * length. */
static size_t java_tidy(char *s, size_t len)
{
	size_t w = 0;
	for (size_t i = 0; i < len;) {
		char *semi = memchr(s + i, ';', len - i);
		size_t j = semi ? (size_t)(semi - s) : len, n = j - i;
		char *f = s + i, *cut;
		if (n == 15 && memcmp(f, "Interpreter" FRAME_MARK_JIT, 15) == 0) {
			/* the perf map's name for the template interpreter: interpreted */
			memmove(s + w, f, 11);
			w += 11;
		} else if (n > 8 && f[0] == 'L' && (frame_mark_kind(f, n) == 'j' || frame_mark_kind(f, n) == 'i') &&
			   (cut = memmem(f, n, ":::", 3)) && memchr(f, '/', (size_t)(cut - f))) {
			size_t a = (size_t)(cut - f);
			memmove(s + w, f + 1, a - 1);
			w += a - 1;
			s[w++] = '.';
			memmove(s + w, cut + 3, n - a - 3);
			w += n - a - 3;
		} else {
			memmove(s + w, f, n);
			w += n;
		}
		if (semi)
			s[w++] = ';';
		i = j + 1;
	}
	return w;
}

int heatmap_reader_sample(void *ctx, const struct ps_sample *s)
{
	struct heatmap_reader *r = ctx;
	size_t len = 0;
	if (!s->has_time) {
		r->untimed++;
		return 0;
	}
	char *stack = NULL;
	int kept = collapse_fold(&r->c, s, &stack, &len);
	if (kept < 0) {
		r->oom = true;
		return 1;
	}
	if (kept == 0)
		return 0; /* another event: collapse counted it */
	r->c.kept++;
	if (!r->keep_idle && heatmap_is_idle(s))
		r->idle++;
	else if (heatmap_add(r->h, s->time, stack, java_tidy(stack, len), 1) != 0)
		r->oom = true;
	return r->oom ? 1 : 0;
}
