/* speedscope.c - the speedscope writer (streamed; json-c escapes every string)
 * and reader (json-c's tokener, then sampled and evented profiles to stacks). */
#include "speedscope.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "folded_char.h"
#include "grow.h"
#include "id_list.h"
#include "str_index.h"
#include "utf8.h"

#ifndef JFLAME_VERSION
#define JFLAME_VERSION "dev"
#endif

/* Folded text the reader builds in all, at most (see pprof.c). */
#define SPEEDSCOPE_MAX_EXPANSION ((uint64_t)8 << 30)
#define SPEEDSCOPE_MAX_DEPTH	 64 /* JSON nesting; the format needs 5 */

/* speedscope's ValueUnit for a pprof-style unit name; "none" for the rest. */
static const char *speedscope_unit(const char *unit)
{
	static const char *const units[] = { "bytes", "microseconds", "milliseconds", "nanoseconds", "seconds" };
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(unit, units[i]) == 0)
			return units[i];
	return "none";
}

/* ---- writing ---------------------------------------------------------------------- */

struct ss_writer {
	FILE *out;
	struct str_index frames;
	struct id_list ids; /* frame indices of every stack, root first, back to back */
	size_t *starts;	    /* stack i's frames are ids[starts[i] .. starts[i + 1]) */
	char *text;	    /* scratch: a string made valid UTF-8 */
	size_t text_cap;
	bool oom;
};

/* The length of the valid UTF-8 sequence at s[0..n), 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	uint32_t cp;
	return utf8_decode(s, n, &cp);
}

/* Writes s[0..n) as a JSON string: invalid UTF-8 bytes as U+FFFD, json-c escaping. */
static void put_string(struct ss_writer *w, const char *s, size_t n)
{
	size_t need = n * 3 + 1;
	if (ARRAY_GROW(w->text, w->text_cap, need) != 0) {
		w->oom = true;
		return;
	}
	size_t k = 0;
	for (size_t i = 0; i < n;) {
		size_t l = utf8_seq((const unsigned char *)s + i, n - i);
		if (l == 0) {
			memcpy(w->text + k, "\xef\xbf\xbd", 3);
			k += 3;
			i++;
		} else {
			memcpy(w->text + k, s + i, l);
			k += l;
			i += l;
		}
	}
	if (k > INT_MAX)
		k = INT_MAX;
	json_object *o = json_object_new_string_len(w->text, (int)k);
	const char *js =
		o ? json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE) : NULL;
	if (js)
		fputs(js, w->out);
	else
		w->oom = true;
	json_object_put(o);
}

static int add_frame(void *ctx, const char *frame, size_t n)
{
	struct ss_writer *w = ctx;
	long f = str_index_add(&w->frames, frame, n);
	if (f < 0)
		goto oom;
	if (id_list_push(&w->ids, (uint64_t)f) != 0)
		goto oom;
	return 0;
oom:
	w->oom = true;
	return -1;
}

static void put_stack(struct ss_writer *w, uint32_t s)
{
	fputc('[', w->out);
	for (size_t i = w->starts[s]; i < w->starts[s + 1]; i++)
		fprintf(w->out, i > w->starts[s] ? ",%" PRIu64 : "%" PRIu64, w->ids.v[i]);
	fputc(']', w->out);
}

static void put_profile_head(struct ss_writer *w, const char *name, const char *unit, uint64_t total)
{
	fputs("{\"type\":\"sampled\",\"name\":", w->out);
	put_string(w, name, strlen(name));
	fprintf(w->out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%" PRIu64 ",\"samples\":[", unit, total);
}

static int cmp_timed(const void *a, const void *b, void *ctx)
{
	const struct timed_sample *tl = ctx;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	if (tl[i].thread != tl[j].thread)
		return tl[i].thread < tl[j].thread ? -1 : 1;
	if (tl[i].time != tl[j].time)
		return tl[i].time < tl[j].time ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* One profile per thread of the timeline, samples in time order. */
static int put_timeline(struct ss_writer *w, const struct stack_table *t, bool use_weight, const char *unit)
{
	size_t n = t->ntimeline, *order = malloc((n ? n : 1) * sizeof(*order));
	if (!order)
		return -1;
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, n, sizeof(*order), cmp_timed, t->timeline);
	for (size_t a = 0; a < n;) {
		uint32_t th = t->timeline[order[a]].thread;
		size_t b = a;
		uint64_t total = 0;
		for (; b < n && t->timeline[order[b]].thread == th; b++)
			total += use_weight ? t->timeline[order[b]].weight : 1;
		if (a)
			fputc(',', w->out);
		put_profile_head(w, t->threads.strs[th], unit, total);
		for (size_t i = a; i < b; i++) {
			if (i > a)
				fputc(',', w->out);
			put_stack(w, t->timeline[order[i]].stack);
		}
		fputs("],\"weights\":[", w->out);
		for (size_t i = a; i < b; i++)
			fprintf(w->out, i > a ? ",%" PRIu64 : "%" PRIu64,
				use_weight ? t->timeline[order[i]].weight : 1);
		fputs("]}", w->out);
		a = b;
	}
	free(order);
	return 0;
}

int speedscope_write(FILE *out, const struct stack_table *t, char *err, size_t errlen)
{
	const struct stack_meta *m = &t->meta;
	struct ss_writer w = { .out = out };
	size_t n = t->stacks.n;
	uint32_t *order = NULL;
	int rc = -1;

	str_index_init(&w.frames);
	w.starts = malloc((n + 1) * sizeof(*w.starts));
	if (!w.starts)
		goto oom;
	for (size_t s = 0; s < n; s++) {
		w.starts[s] = w.ids.n;
		if (stack_table_frames(t->stacks.strs[s], add_frame, &w) != 0)
			goto oom;
	}
	w.starts[n] = w.ids.n;

	/* weights: cpu time (or bytes) where the table has it, else the counts */
	bool use_weight = m->has_weight && strcmp(speedscope_unit(m->weight_unit), "none") != 0;
	const char *unit = speedscope_unit(use_weight ? m->weight_unit : m->count_unit);
	const char *name = m->name[0] ? m->name : "jflame";

	fputs("{\"$schema\":\"" SPEEDSCOPE_SCHEMA "\",\"exporter\":\"jflame " JFLAME_VERSION "\",\"name\":", out);
	put_string(&w, name, strlen(name));
	fputs(",\"activeProfileIndex\":0,\"shared\":{\"frames\":[", out);
	for (size_t f = 0; f < w.frames.n; f++) {
		const char *file;
		size_t file_len;
		int64_t line;
		size_t name_len = w.frames.lens[f];
		file = NULL, file_len = 0, line = 0;
		if (t->meta.lines)
			name_len = stack_frame_line(w.frames.strs[f], name_len, &file, &file_len, &line);
		fputs(f ? ",{\"name\":" : "{\"name\":", out);
		put_string(&w, w.frames.strs[f], name_len);
		if (file) { /* a source line: speedscope's frame file and line (when known) */
			fputs(",\"file\":", out);
			put_string(&w, file, file_len);
			if (line > 0)
				fprintf(out, ",\"line\":%" PRId64, line);
		}
		fputc('}', out);
	}
	fputs("]},\"profiles\":[", out);
	if (t->ntimeline) {
		if (put_timeline(&w, t, use_weight, unit) != 0)
			goto oom;
	} else {
		order = stack_table_sorted(t);
		if (!order)
			goto oom;
		const uint64_t *vals = use_weight ? t->weights : t->counts;
		put_profile_head(&w, name, unit, use_weight ? t->total_weight : t->total_count);
		for (size_t i = 0; i < n; i++) {
			if (i)
				fputc(',', out);
			put_stack(&w, order[i]);
		}
		fputs("],\"weights\":[", out);
		for (size_t i = 0; i < n; i++)
			fprintf(out, i ? ",%" PRIu64 : "%" PRIu64, vals[order[i]]);
		fputs("]}", out);
	}
	fputs("]}\n", out);
	if (w.oom)
		goto oom;
	if (ferror(out)) {
		snprintf(err, errlen, "failed to write the speedscope file: %s", strerror(errno ? errno : EIO));
		goto out;
	}
	rc = 0;
	goto out;
oom:
	snprintf(err, errlen, "out of memory writing the speedscope file");
out:
	free(order);
	free(w.starts);
	id_list_free(&w.ids);
	free(w.text);
	str_index_free(&w.frames);
	return rc;
}

/* ---- reading ---------------------------------------------------------------------- */

struct ss_reader {
	struct stack_table *t;
	const char *name;
	char *err;
	size_t errlen;
	char **frames; /* frame names as folded frames (';' and line breaks replaced) */
	size_t *frame_lens;
	size_t nframes;
	double *acc; /* per stack of t: weight, in the profile units x scale */
	size_t acc_cap;
	struct folded_line line; /* the stack being built */
	uint64_t expanded;
	struct speedscope_stats *st;
};

static int fail(struct ss_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(struct ss_reader *r, const char *fmt, ...)
{
	char what[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(r->err, r->errlen, "%s: %s", r->name, what);
	return -1;
}

static int oom(struct ss_reader *r)
{
	snprintf(r->err, r->errlen, "out of memory reading %s", r->name);
	return -1;
}

/* obj[key] when it has the type, else NULL. */
static json_object *member(json_object *obj, const char *key, json_type type)
{
	json_object *v;
	if (!json_object_object_get_ex(obj, key, &v) || !json_object_is_type(v, type))
		return NULL;
	return v;
}

static bool is_number(json_object *o)
{
	return json_object_is_type(o, json_type_int) || json_object_is_type(o, json_type_double);
}

/* A frame index: an integral number in [0, nframes). -1 otherwise. */
static long frame_index(const struct ss_reader *r, json_object *o)
{
	if (!is_number(o))
		return -1;
	double d = json_object_get_double(o);
	if (!(d >= 0) || d >= (double)r->nframes || d != floor(d))
		return -1;
	return (long)d;
}

static int load_frames(struct ss_reader *r, json_object *frames)
{
	size_t n = json_object_array_length(frames);
	r->frames = calloc(n ? n : 1, sizeof(*r->frames));
	r->frame_lens = calloc(n ? n : 1, sizeof(*r->frame_lens));
	if (!r->frames || !r->frame_lens)
		return oom(r);
	r->nframes = n;
	for (size_t i = 0; i < n; i++) {
		json_object *f = json_object_array_get_idx(frames, i);
		json_object *nm = json_object_is_type(f, json_type_object) ? member(f, "name", json_type_string) : NULL;
		if (!nm)
			return fail(r, "shared.frames[%zu] has no \"name\" string; is it a speedscope file?", i);
		const char *s = json_object_get_string(nm);
		size_t len = (size_t)json_object_get_string_len(nm);
		if (len == 0)
			s = "[unknown]", len = 9;
		r->frames[i] = malloc(len + 1);
		if (!r->frames[i])
			return oom(r);
		for (size_t k = 0; k < len; k++)
			r->frames[i][k] = folded_char(s[k]);
		r->frames[i][len] = '\0';
		r->frame_lens[i] = len;
	}
	return 0;
}

enum { PUSH_OK = FOLDED_PUSH_OK, PUSH_LONG = FOLDED_PUSH_LONG, PUSH_OOM = FOLDED_PUSH_OOM };

static int push_frame(struct ss_reader *r, long f)
{
	return folded_line_push(&r->line, r->frames[f], r->frame_lens[f], false);
}

/* Adds w (already scaled) to the stack in r->line. */
static int add_weight(struct ss_reader *r, double w)
{
	r->expanded += r->line.len;
	if (r->expanded > SPEEDSCOPE_MAX_EXPANSION)
		return fail(r, "expands to more than %" PRIu64 " GiB of stacks; is it a real profile?",
			    SPEEDSCOPE_MAX_EXPANSION >> 30);
	long s = stack_table_add(r->t, r->line.buf, r->line.len, 0, 0);
	if (s < 0)
		return oom(r);
	if (ARRAY_GROW_ZEROED(r->acc, r->acc_cap, (size_t)s + 1) != 0)
		return oom(r);
	r->acc[s] += w;
	return 0;
}

static int read_sampled(struct ss_reader *r, json_object *p, size_t pi, double scale)
{
	json_object *samples = member(p, "samples", json_type_array), *weights = member(p, "weights", json_type_array);
	if (!samples || !weights)
		return fail(r, "profiles[%zu] is \"sampled\" but lacks a \"samples\" or \"weights\" array", pi);
	size_t n = json_object_array_length(samples);
	if (json_object_array_length(weights) != n)
		return fail(r, "profiles[%zu] has %zu samples but %zu weights", pi, n,
			    json_object_array_length(weights));
	for (size_t i = 0; i < n; i++) {
		json_object *stack = json_object_array_get_idx(samples, i), *wo = json_object_array_get_idx(weights, i);
		if (!json_object_is_type(stack, json_type_array))
			return fail(r, "profiles[%zu].samples[%zu] is not an array of frame indices", pi, i);
		double w = is_number(wo) ? json_object_get_double(wo) : -1;
		if (!(w >= 0) || !isfinite(w))
			return fail(r, "profiles[%zu].weights[%zu] is not a weight (a number >= 0)", pi, i);
		r->st->samples++;
		if (w == 0)
			continue; /* speedscope skips these too */
		size_t depth = json_object_array_length(stack);
		bool too_long = false;
		r->line.len = 0;
		for (size_t k = 0; k < depth && !too_long; k++) {
			long f = frame_index(r, json_object_array_get_idx(stack, k));
			if (f < 0)
				return fail(
					r,
					"profiles[%zu].samples[%zu][%zu] is not a frame index (there are %zu frames)",
					pi, i, k, r->nframes);
			int pr = push_frame(r, f);
			if (pr == PUSH_OOM)
				return oom(r);
			too_long = pr == PUSH_LONG;
		}
		if (too_long) {
			r->st->too_long++;
			continue;
		}
		if (r->line.len == 0)
			continue; /* an empty stack: no frame to charge */
		if (add_weight(r, w * scale) != 0)
			return -1;
	}
	return 0;
}

static int read_evented(struct ss_reader *r, json_object *p, size_t pi, double scale)
{
	json_object *events = member(p, "events", json_type_array), *end = NULL;
	size_t n = events ? json_object_array_length(events) : 0, depth = 0, open_cap = 0, lens_cap = 0;
	long *open = NULL;   /* the open frames, root first */
	size_t *lens = NULL; /* r->line.len before each was pushed */
	double prev = 0;
	int rc = -1;

	if (!events)
		return fail(r, "profiles[%zu] is \"evented\" but lacks an \"events\" array", pi);
	r->line.len = 0;
	for (size_t i = 0; i < n; i++) {
		json_object *e = json_object_array_get_idx(events, i);
		json_object *ty = json_object_is_type(e, json_type_object) ? member(e, "type", json_type_string) : NULL;
		json_object *at, *fo;
		if (!ty || !json_object_object_get_ex(e, "at", &at) || !is_number(at) ||
		    !json_object_object_get_ex(e, "frame", &fo)) {
			fail(r, "profiles[%zu].events[%zu] is not an event ({\"type\", \"at\", \"frame\"})", pi, i);
			goto out;
		}
		const char *type = json_object_get_string(ty);
		double t = json_object_get_double(at);
		long f = frame_index(r, fo);
		if (f < 0) {
			fail(r,
			     "profiles[%zu].events[%zu] opens or closes frame %s, not a frame index (there are %zu frames)",
			     pi, i, json_object_to_json_string(fo), r->nframes);
			goto out;
		}
		if (!isfinite(t) || (i > 0 && t < prev)) {
			fail(r, "profiles[%zu].events[%zu] is at %g, before the event ahead of it (%g)", pi, i, t,
			     prev);
			goto out;
		}
		if (depth > 0 && t > prev && add_weight(r, (t - prev) * scale) != 0)
			goto out;
		prev = t;
		r->st->events++;
		if (strcmp(type, "O") == 0) {
			if (ARRAY_GROW(open, open_cap, depth + 1) != 0 || ARRAY_GROW(lens, lens_cap, depth + 1) != 0) {
				oom(r);
				goto out;
			}
			lens[depth] = r->line.len;
			open[depth++] = f;
			int pr = push_frame(r, f);
			if (pr == PUSH_OOM) {
				oom(r);
				goto out;
			}
			if (pr == PUSH_LONG) {
				fail(r, "profiles[%zu].events[%zu] makes a stack longer than %u MiB of text", pi, i,
				     FOLDED_MAX_LINE >> 20);
				goto out;
			}
		} else if (strcmp(type, "C") == 0) {
			if (depth == 0 || open[depth - 1] != f) {
				fail(r, "profiles[%zu].events[%zu] closes frame %ld (%s) but %s", pi, i, f,
				     r->frames[f], depth ? "another frame is open on top" : "no frame is open");
				goto out;
			}
			r->line.len = lens[--depth];
		} else {
			fail(r, "profiles[%zu].events[%zu] has type \"%s\"; events are \"O\" (open) or \"C\" (close)",
			     pi, i, type);
			goto out;
		}
	}
	/* frames still open run to the profile's end */
	end = member(p, "endValue", json_type_double) ? member(p, "endValue", json_type_double) :
							member(p, "endValue", json_type_int);
	if (depth > 0 && end && json_object_get_double(end) > prev && isfinite(json_object_get_double(end)) &&
	    add_weight(r, (json_object_get_double(end) - prev) * scale) != 0)
		goto out;
	rc = 0;
out:
	free(open);
	free(lens);
	return rc;
}

/* How many nanoseconds a unit is (1 for bytes and none); its kind in *kind. */
static double unit_scale(const char *unit, int *kind)
{
	static const struct {
		const char *name;
		double scale;
		int kind;
	} units[] = {
		{ "nanoseconds", 1, 1 }, { "microseconds", 1e3, 1 }, { "milliseconds", 1e6, 1 },
		{ "seconds", 1e9, 1 },	 { "bytes", 1, 2 },	     { "none", 1, 0 },
	};
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (strcmp(unit, units[i].name) == 0) {
			*kind = units[i].kind;
			return units[i].scale;
		}
	*kind = -1;
	return 0;
}

/* Parses buf with json-c (in chunks: its length is an int); NULL with err. */
static json_object *parse_json(struct ss_reader *r, const char *buf, size_t len)
{
	json_tokener *tok = json_tokener_new_ex(SPEEDSCOPE_MAX_DEPTH);
	json_object *root = NULL;
	enum json_tokener_error jerr = json_tokener_continue;
	size_t off = 0, chunk = 0;
	if (!tok) {
		oom(r);
		return NULL;
	}
	while (off < len) {
		chunk = len - off > (1u << 30) ? (1u << 30) : len - off;
		root = json_tokener_parse_ex(tok, buf + off, (int)chunk);
		jerr = json_tokener_get_error(tok);
		if (jerr != json_tokener_continue)
			break;
		off += chunk;
	}
	if (jerr == json_tokener_success) {
		size_t end = off + json_tokener_get_parse_end(tok);
		while (end < len && (buf[end] == ' ' || buf[end] == '\t' || buf[end] == '\n' || buf[end] == '\r'))
			end++;
		if (end < len) {
			json_object_put(root);
			root = NULL;
			off = end;
			jerr = json_tokener_error_parse_unexpected;
		}
	} else if (jerr != json_tokener_continue) {
		off += json_tokener_get_parse_end(tok);
	}
	if (!root) {
		size_t line = 1;
		for (const char *p = buf; (p = memchr(p, '\n', (size_t)(buf + off - p))); p++)
			line++;
		if (jerr == json_tokener_continue || len == 0)
			fail(r, "is not valid JSON (it ends early, at byte %zu); is the file complete?", len);
		else
			fail(r, "is not valid JSON (%s at line %zu, byte %zu)", json_tokener_error_desc(jerr), line,
			     off);
	}
	json_tokener_free(tok);
	return root;
}

int speedscope_read(struct stack_table *t, const char *buf, size_t len, const char *name, struct speedscope_stats *st,
		    char *err, size_t errlen)
{
	struct ss_reader r = { .t = t, .name = name, .err = err, .errlen = errlen, .st = st };
	json_object *root, *shared, *frames, *profiles;
	int rc = -1, kind0 = -2;

	memset(st, 0, sizeof(*st));
	root = parse_json(&r, buf, len);
	if (!root)
		return -1;
	shared = json_object_is_type(root, json_type_object) ? member(root, "shared", json_type_object) : NULL;
	frames = shared ? member(shared, "frames", json_type_array) : NULL;
	profiles = frames ? member(root, "profiles", json_type_array) : NULL;
	if (!profiles) {
		fail(&r, "is JSON but not a speedscope file (it has no shared.frames and profiles); export it from "
			 "speedscope, or give the format's schema " SPEEDSCOPE_SCHEMA);
		goto out;
	}
	if (load_frames(&r, frames) != 0)
		goto out;
	json_object *nm = member(root, "name", json_type_string);
	if (nm)
		snprintf(t->meta.name, sizeof(t->meta.name), "%s", json_object_get_string(nm));
	size_t np = json_object_array_length(profiles);
	for (size_t i = 0; i < np; i++) {
		json_object *p = json_object_array_get_idx(profiles, i);
		json_object *ty = json_object_is_type(p, json_type_object) ? member(p, "type", json_type_string) : NULL;
		json_object *un = ty ? member(p, "unit", json_type_string) : NULL;
		int kind;
		if (!ty || !un) {
			fail(&r, "profiles[%zu] has no \"type\" or \"unit\"", i);
			goto out;
		}
		const char *unit = json_object_get_string(un);
		double scale = unit_scale(unit, &kind);
		if (kind < 0) {
			fail(&r,
			     "profiles[%zu] has unit \"%s\"; speedscope's units are nanoseconds, microseconds, "
			     "milliseconds, seconds, bytes and none",
			     i, unit);
			goto out;
		}
		if (kind0 != -2 && kind != kind0) {
			fail(&r, "profiles[%zu] counts %s but an earlier profile counts %s; convert one kind at a time",
			     i, unit,
			     kind0 == 1 ? "time" :
			     kind0 == 2 ? "bytes" :
					  "none");
			goto out;
		}
		kind0 = kind;
		const char *type = json_object_get_string(ty);
		st->profiles++;
		if (strcmp(type, "sampled") == 0) {
			if (read_sampled(&r, p, i, scale) != 0)
				goto out;
		} else if (strcmp(type, "evented") == 0) {
			if (read_evented(&r, p, i, scale) != 0)
				goto out;
		} else {
			fail(&r, "profiles[%zu] has type \"%s\"; speedscope's types are \"sampled\" and \"evented\"", i,
			     type);
			goto out;
		}
	}
	/* the weights, rounded, are the counts */
	t->total_count = 0;
	for (size_t s = 0; s < t->stacks.n; s++) {
		double v = r.acc[s];
		t->counts[s] = v >= 18446744073709549568.0 ? UINT64_MAX : (uint64_t)llround(v);
		t->total_count = t->total_count + t->counts[s] < t->total_count ? UINT64_MAX :
										  t->total_count + t->counts[s];
	}
	if (kind0 == 1) {
		snprintf(t->meta.count_type, sizeof(t->meta.count_type), "time");
		snprintf(t->meta.count_unit, sizeof(t->meta.count_unit), "nanoseconds");
	} else if (kind0 == 2) {
		snprintf(t->meta.count_type, sizeof(t->meta.count_type), "space");
		snprintf(t->meta.count_unit, sizeof(t->meta.count_unit), "bytes");
	}
	rc = 0;
out:
	for (size_t i = 0; i < r.nframes; i++)
		free(r.frames ? r.frames[i] : NULL);
	free(r.frames);
	free(r.frame_lens);
	free(r.acc);
	folded_line_free(&r.line);
	json_object_put(root);
	return rc;
}
