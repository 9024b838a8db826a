/* pprof.c - the pprof writer and reader: profile.proto through protobuf-c's
 * generated code (profile.pb-c.h), gzip through zlib. */
#include "pprof.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "folded.h"
#include "frame_mark.h"
#include "grow.h"
#include "id_list.h"
#include "input_file.h"
#include "profile.pb-c.h"
#include "str_index.h"

#ifndef JFLAME_VERSION
#define JFLAME_VERSION "dev"
#endif

/* Folded text the reader builds in all, at most: a small profile whose
 * samples repeat long names could otherwise expand without bound. */
#define PPROF_MAX_EXPANSION ((uint64_t)8 << 30)

/* The length of frame[0..n) without a trailing jflame annotation. */
static size_t plain_len(const char *frame, size_t n)
{
	return n > FRAME_MARK_LEN && frame_mark_kind(frame, n) ? n - FRAME_MARK_LEN : n;
}

/* ---- writing ---------------------------------------------------------------------- */

struct pp_writer {
	const struct stack_table *t;
	struct str_index strings; /* the string table */
	struct str_index frames;  /* distinct frames: location i has id i + 1 */
	int64_t *loc_fun;	  /* per frame: its function's id */
	int64_t *loc_line;	  /* per frame: its source line, 0 unknown */
	size_t frames_cap;
	struct str_index funs;		   /* distinct functions (a frame without its line): id i + 1 */
	int64_t *names, *sysnames, *files; /* per function: string table indices */
	size_t funs_cap;
	struct id_list ids; /* location ids of every sample, leaf first, back to back */
	size_t depth0;	    /* where the current stack's ids start */
	bool oom;
};

static int64_t string_of(struct pp_writer *w, const char *s, size_t n)
{
	long i = str_index_add(&w->strings, s, n);
	if (i < 0)
		w->oom = true;
	return i < 0 ? 0 : i;
}

/* Grows the per-item arrays a, b and c (when not NULL) to hold item i: one
 * capacity, set when all grew. */
static int grow_arrays(size_t i, size_t *cap, int64_t **a, int64_t **b, int64_t **c)
{
	int64_t **arrs[3] = { a, b, c };
	size_t grown = *cap;
	for (int k = 0; k < 3 && arrs[k]; k++) {
		grown = *cap;
		if (ARRAY_GROW(*arrs[k], grown, i + 1) != 0)
			return -1;
	}
	*cap = grown;
	return 0;
}

/* A new location (frame f): its function, new when its name and file are,
 * and its line. */
static int new_location(struct pp_writer *w, size_t f, const char *frame, size_t n)
{
	const char *file;
	size_t file_len, fun_len;
	int64_t line;
	size_t name_len = n;
	file = NULL, file_len = 0, line = 0;
	if (w->t->meta.lines)
		name_len = stack_frame_line(frame, n, &file, &file_len, &line);
	if (grow_arrays(f, &w->frames_cap, &w->loc_fun, &w->loc_line, NULL) != 0)
		return -1;
	/* a function is its frame up to the line's ':' (name, mark, file) */
	fun_len = file ? (size_t)(file + file_len - frame) : name_len;
	size_t had = w->funs.n;
	long fn = str_index_add(&w->funs, frame, fun_len);
	if (fn < 0)
		return -1;
	if ((size_t)fn == had) {
		if (grow_arrays((size_t)fn, &w->funs_cap, &w->names, &w->sysnames, &w->files) != 0)
			return -1;
		w->names[fn] = string_of(w, frame, plain_len(frame, name_len));
		w->sysnames[fn] = string_of(w, frame, name_len);
		w->files[fn] = file ? string_of(w, file, file_len) : 0;
	}
	w->loc_fun[f] = fn + 1;
	w->loc_line[f] = line;
	return w->oom ? -1 : 0;
}

static int add_frame(void *ctx, const char *frame, size_t n)
{
	struct pp_writer *w = ctx;
	size_t had = w->frames.n;
	long f = str_index_add(&w->frames, frame, n);
	if (f < 0)
		goto oom;
	if ((size_t)f == had && new_location(w, (size_t)f, frame, n) != 0)
		goto oom;
	if (id_list_push(&w->ids, (uint64_t)f + 1) != 0)
		goto oom;
	return w->oom ? -1 : 0;
oom:
	w->oom = true;
	return -1;
}

static int64_t clamp64(uint64_t v)
{
	return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

int pprof_encode(const struct stack_table *t, uint8_t **buf, size_t *len, char *err, size_t errlen)
{
	const struct stack_meta *m = &t->meta;
	struct pp_writer w = { .t = t };
	Perftools__Profiles__Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType types[2], *typep[2], period_type;
	size_t n = t->stacks.n, nvalues = m->has_weight ? 2 : 1, *starts = NULL, nfun = 0, nloc = 0, ncomments = 0;
	Perftools__Profiles__Sample *samples = NULL, **samplep = NULL;
	Perftools__Profiles__Location *locs = NULL, **locp = NULL;
	Perftools__Profiles__Line *lines = NULL, **linep = NULL;
	Perftools__Profiles__Function *funs = NULL, **funp = NULL;
	int64_t *values = NULL, comments[32];
	uint32_t *order = NULL;
	uint8_t *out = NULL;
	int rc = -1;

	str_index_init(&w.strings);
	str_index_init(&w.frames);
	str_index_init(&w.funs);
	string_of(&w, "", 0);
	for (size_t i = 0; i < nvalues; i++) {
		perftools__profiles__value_type__init(&types[i]);
		const char *ty = i ? m->weight_type : m->count_type, *un = i ? m->weight_unit : m->count_unit;
		types[i].type = string_of(&w, ty, strlen(ty));
		types[i].unit = string_of(&w, un, strlen(un));
		typep[i] = &types[i];
	}
	perftools__profiles__value_type__init(&period_type);
	period_type = types[nvalues - 1];
	p.n_sample_type = nvalues;
	p.sample_type = typep;
	p.period_type = &period_type;
	p.period = m->has_weight ? clamp64(m->period) : 1;
	if (m->has_weight && !m->period)
		p.period_type = NULL;
	p.time_nanos = m->time_ns;
	p.duration_nanos = m->duration_ns;

	/* samples, in the order of their text: the same input gives the same bytes */
	order = stack_table_sorted(t);
	starts = malloc((n + 1) * sizeof(*starts));
	samples = calloc(n ? n : 1, sizeof(*samples));
	samplep = malloc((n ? n : 1) * sizeof(*samplep));
	values = malloc((n ? n : 1) * nvalues * sizeof(*values));
	if (!order || !starts || !samples || !samplep || !values)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		uint32_t s = order[i];
		starts[i] = w.ids.n;
		if (stack_table_frames(t->stacks.strs[s], add_frame, &w) != 0)
			goto oom;
		/* pprof wants the leaf first */
		for (size_t a = starts[i], b = w.ids.n; a + 1 < b; a++, b--) {
			uint64_t x = w.ids.v[a];
			w.ids.v[a] = w.ids.v[b - 1];
			w.ids.v[b - 1] = x;
		}
		perftools__profiles__sample__init(&samples[i]);
		values[i * nvalues] = clamp64(t->counts[s]);
		if (nvalues > 1)
			values[i * nvalues + 1] = clamp64(t->weights[s]);
		samples[i].n_value = nvalues;
		samples[i].value = &values[i * nvalues];
		samplep[i] = &samples[i];
	}
	starts[n] = w.ids.n;
	for (size_t i = 0; i < n; i++) { /* w.ids moved while it grew */
		samples[i].n_location_id = starts[i + 1] - starts[i];
		samples[i].location_id = w.ids.v + starts[i];
	}
	p.n_sample = n;
	p.sample = samplep;

	/* a function per distinct name and file; a location with one line per
	 * distinct frame (a function's source lines are locations of their own) */
	nfun = w.funs.n;
	nloc = w.frames.n;
	funs = calloc(nfun ? nfun : 1, sizeof(*funs));
	funp = malloc((nfun ? nfun : 1) * sizeof(*funp));
	locs = calloc(nloc ? nloc : 1, sizeof(*locs));
	locp = malloc((nloc ? nloc : 1) * sizeof(*locp));
	lines = calloc(nloc ? nloc : 1, sizeof(*lines));
	linep = malloc((nloc ? nloc : 1) * sizeof(*linep));
	if (!funs || !funp || !locs || !locp || !lines || !linep)
		goto oom;
	for (size_t f = 0; f < nfun; f++) {
		perftools__profiles__function__init(&funs[f]);
		funs[f].id = f + 1;
		funs[f].name = w.names[f];
		funs[f].system_name = w.sysnames[f];
		funs[f].filename = w.files[f];
		funp[f] = &funs[f];
	}
	for (size_t l = 0; l < nloc; l++) {
		perftools__profiles__line__init(&lines[l]);
		lines[l].function_id = (uint64_t)w.loc_fun[l];
		lines[l].line = w.loc_line[l];
		linep[l] = &lines[l];
		perftools__profiles__location__init(&locs[l]);
		locs[l].id = l + 1;
		locs[l].n_line = 1;
		locs[l].line = &linep[l];
		locp[l] = &locs[l];
	}
	p.n_function = nfun;
	p.function = funp;
	p.n_location = nloc;
	p.location = locp;

	/* notes: meta.comment's lines, then who wrote it */
	for (const char *c = m->comment; *c && ncomments + 1 < sizeof(comments) / sizeof(comments[0]);) {
		const char *nl = strchr(c, '\n');
		size_t cn = nl ? (size_t)(nl - c) : strlen(c);
		if (cn)
			comments[ncomments++] = string_of(&w, c, cn);
		c += cn + (nl ? 1 : 0);
	}
	comments[ncomments++] = string_of(&w, "jflame " JFLAME_VERSION, strlen("jflame " JFLAME_VERSION));
	p.n_comment = ncomments;
	p.comment = comments;
	if (w.oom)
		goto oom;
	p.n_string_table = w.strings.n;
	p.string_table = w.strings.strs;

	size_t size = perftools__profiles__profile__get_packed_size(&p);
	out = malloc(size ? size : 1);
	if (!out)
		goto oom;
	if (perftools__profiles__profile__pack(&p, out) != size) {
		snprintf(err, errlen, "protobuf-c packed a different size than it announced");
		goto out;
	}
	*buf = out;
	*len = size;
	out = NULL;
	rc = 0;
	goto out;
oom:
	snprintf(err, errlen, "out of memory writing the pprof profile");
out:
	free(out);
	free(order);
	free(starts);
	free(samples);
	free(samplep);
	free(values);
	free(funs);
	free(funp);
	free(locs);
	free(locp);
	free(lines);
	free(linep);
	free(w.names);
	free(w.sysnames);
	free(w.files);
	free(w.loc_fun);
	free(w.loc_line);
	id_list_free(&w.ids);
	str_index_free(&w.strings);
	str_index_free(&w.frames);
	str_index_free(&w.funs);
	return rc;
}

int pprof_write(FILE *out, const struct stack_table *t, bool raw, char *err, size_t errlen)
{
	uint8_t *buf = NULL, chunk[1 << 16];
	size_t len = 0;
	z_stream z;
	bool zinit = false;
	int rc = -1;

	if (pprof_encode(t, &buf, &len, err, errlen) != 0)
		return -1;
	if (raw) {
		if (fwrite(buf, 1, len, out) != len)
			goto werr;
		rc = 0;
		goto out;
	}
	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) { /* 16: a gzip wrapper */
		snprintf(err, errlen, "out of memory compressing the pprof profile");
		goto out;
	}
	zinit = true;
	z.next_in = buf;
	size_t left = len;
	int zr;
	do {
		if (z.avail_in == 0 && left) {
			z.avail_in = left > (1u << 30) ? (1u << 30) : (unsigned)left;
			left -= z.avail_in;
		}
		z.next_out = chunk;
		z.avail_out = sizeof(chunk);
		zr = deflate(&z, left || z.avail_in ? Z_NO_FLUSH : Z_FINISH);
		if (zr == Z_STREAM_ERROR) {
			snprintf(err, errlen, "zlib failed to compress the pprof profile");
			goto out;
		}
		size_t have = sizeof(chunk) - z.avail_out;
		if (have && fwrite(chunk, 1, have, out) != have)
			goto werr;
	} while (zr != Z_STREAM_END);
	rc = 0;
	goto out;
werr:
	snprintf(err, errlen, "failed to write the pprof profile: %s", strerror(errno ? errno : EIO));
out:
	if (zinit)
		deflateEnd(&z);
	free(buf);
	return rc;
}

/* ---- reading ---------------------------------------------------------------------- */

struct pp_reader {
	const Perftools__Profiles__Profile *p;
	Perftools__Profiles__Location **locs; /* sorted by id */
	Perftools__Profiles__Function **funs; /* sorted by id */
	struct folded_line line;	      /* the sample's stack being built */
	uint64_t expanded;
};

static int cmp_loc(const void *a, const void *b)
{
	uint64_t x = (*(Perftools__Profiles__Location *const *)a)->id,
		 y = (*(Perftools__Profiles__Location *const *)b)->id;
	return x < y ? -1 : x > y;
}

static int cmp_fun(const void *a, const void *b)
{
	uint64_t x = (*(Perftools__Profiles__Function *const *)a)->id,
		 y = (*(Perftools__Profiles__Function *const *)b)->id;
	return x < y ? -1 : x > y;
}

static Perftools__Profiles__Location *find_loc(const struct pp_reader *r, uint64_t id)
{
	size_t lo = 0, hi = r->p->n_location;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->locs[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->p->n_location && r->locs[lo]->id == id ? r->locs[lo] : NULL;
}

static Perftools__Profiles__Function *find_fun(const struct pp_reader *r, uint64_t id)
{
	size_t lo = 0, hi = r->p->n_function;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->funs[mid]->id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->p->n_function && r->funs[lo]->id == id ? r->funs[lo] : NULL;
}

static const char *string_at(const Perftools__Profiles__Profile *p, int64_t i)
{
	return i >= 0 && (uint64_t)i < p->n_string_table && p->string_table[i] ? p->string_table[i] : NULL;
}

enum { APPEND_OK = FOLDED_PUSH_OK, APPEND_LONG = FOLDED_PUSH_LONG, APPEND_OOM = FOLDED_PUSH_OOM, APPEND_HUGE };

/* Appends one frame (with its ';'), its forbidden characters replaced. */
static int append_frame(struct pp_reader *r, const char *s, size_t n)
{
	if (r->line.len + n + 2 > FOLDED_MAX_LINE)
		return APPEND_LONG;
	r->expanded += n + 1;
	if (r->expanded > PPROF_MAX_EXPANSION)
		return APPEND_HUGE;
	return folded_line_push(&r->line, s, n, true);
}

/* The frame name of a function: its name, or its system_name when that is
 * the name with a jflame annotation (or the name is empty). NULL: a bad index. */
static const char *function_frame(const Perftools__Profiles__Profile *p, const Perftools__Profiles__Function *f,
				  size_t *n)
{
	const char *name = string_at(p, f->name), *sys = string_at(p, f->system_name);
	if (!name || (f->system_name && !sys))
		return NULL;
	size_t nn = strlen(name), sn = sys ? strlen(sys) : 0;
	if (sys && (nn == 0 || (sn == nn + 4 && plain_len(sys, sn) == nn && memcmp(sys, name, nn) == 0))) {
		*n = sn;
		return sys;
	}
	*n = nn;
	return name;
}

/* Builds the folded stack of one sample in r->line: APPEND_OK, or why not. */
static int sample_stack(struct pp_reader *r, const Perftools__Profiles__Sample *s, bool *bad_ref)
{
	const Perftools__Profiles__Profile *p = r->p;
	r->line.len = 0;
	for (size_t i = s->n_location_id; i > 0; i--) {
		const Perftools__Profiles__Location *loc = find_loc(r, s->location_id[i - 1]);
		int rc = APPEND_OK;
		if (!loc) {
			*bad_ref = true;
			return APPEND_LONG;
		}
		if (loc->n_line == 0) {
			char addr[24];
			int an = snprintf(addr, sizeof(addr), "0x%" PRIx64, loc->address);
			rc = append_frame(r, addr, (size_t)an);
		}
		for (size_t j = loc->n_line; j > 0 && rc == APPEND_OK; j--) {
			const Perftools__Profiles__Function *f = find_fun(r, loc->line[j - 1]->function_id);
			size_t n = 0;
			const char *name = f ? function_frame(p, f, &n) : NULL;
			if (!name) {
				*bad_ref = true;
				return APPEND_LONG;
			}
			rc = n ? append_frame(r, name, n) : append_frame(r, "[unknown]", 9);
		}
		if (rc != APPEND_OK)
			return rc;
	}
	return APPEND_OK;
}

/* Which sample type: NULL the first, a number, or a type's name. -1 if none. */
static long pick_value(const Perftools__Profiles__Profile *p, const char *want)
{
	if (!want)
		return 0;
	char *end;
	errno = 0;
	long v = strtol(want, &end, 10);
	if (!errno && end != want && !*end)
		return v >= 0 && (size_t)v < p->n_sample_type ? v : -1;
	for (size_t i = 0; i < p->n_sample_type; i++) {
		const char *ty = string_at(p, p->sample_type[i]->type);
		if (ty && strcmp(ty, want) == 0)
			return (long)i;
	}
	return -1;
}

static void type_name(const Perftools__Profiles__Profile *p, const Perftools__Profiles__ValueType *vt, char *type,
		      size_t tn, char *unit, size_t un)
{
	const char *ty = string_at(p, vt->type), *u = string_at(p, vt->unit);
	snprintf(type, tn, "%s", ty && *ty ? ty : "value");
	snprintf(unit, un, "%s", u && *u ? u : "count");
}

int pprof_read(struct stack_table *t, const void *buf, size_t len, const char *name, const char *sample_index,
	       struct pprof_stats *st, char *err, size_t errlen)
{
	char *plain = NULL;
	Perftools__Profiles__Profile *p = NULL;
	struct pp_reader r = { 0 };
	int rc = -1;

	memset(st, 0, sizeof(*st));
	if (input_is_gzip(buf, len)) {
		if (input_gunzip(buf, len, 0, name, &plain, &len, err, errlen) != 0)
			return -1;
		buf = plain;
	}
	p = perftools__profiles__profile__unpack(NULL, len, buf);
	if (!p) {
		snprintf(err, errlen,
			 "%s is not a pprof profile (protobuf-c cannot decode it as profile.proto); "
			 "give a .pb.gz that pprof wrote",
			 name);
		goto out;
	}
	r.p = p;
	if (p->n_sample_type == 0 || p->n_string_table == 0 || !p->string_table[0] || p->string_table[0][0]) {
		snprintf(err, errlen, "%s is not a pprof profile (%s); give a .pb.gz that pprof wrote", name,
			 p->n_sample_type == 0 ? "no sample types" : "its string table does not start with \"\"");
		goto out;
	}
	long vi = pick_value(p, sample_index);
	if (vi < 0) {
		char types[256] = "";
		size_t k = 0;
		for (size_t i = 0; i < p->n_sample_type && k < sizeof(types); i++) {
			const char *ty = string_at(p, p->sample_type[i]->type);
			k += (size_t)snprintf(types + k, sizeof(types) - k, "%s%zu (%s)", i ? ", " : "", i,
					      ty ? ty : "?");
		}
		snprintf(err, errlen, "%s has no sample type '%s'; it has %s", name, sample_index, types);
		goto out;
	}
	long wi = p->n_sample_type > 1 ? (vi == 0 ? 1 : 0) : -1;

	struct stack_meta *m = &t->meta;
	type_name(p, p->sample_type[vi], m->count_type, sizeof(m->count_type), m->count_unit, sizeof(m->count_unit));
	if (wi >= 0) {
		m->has_weight = true;
		type_name(p, p->sample_type[wi], m->weight_type, sizeof(m->weight_type), m->weight_unit,
			  sizeof(m->weight_unit));
		if (p->period_type && p->period > 0) {
			char pt[32], pu[32];
			type_name(p, p->period_type, pt, sizeof(pt), pu, sizeof(pu));
			if (strcmp(pt, m->weight_type) == 0 && strcmp(pu, m->weight_unit) == 0)
				m->period = (uint64_t)p->period;
		}
	}
	m->time_ns = p->time_nanos > 0 ? p->time_nanos : 0;
	m->duration_ns = p->duration_nanos > 0 ? p->duration_nanos : 0;
	for (size_t i = 0, k = 0; i < p->n_comment && k + 1 < sizeof(m->comment); i++) {
		const char *c = string_at(p, p->comment[i]);
		if (c && *c && strncmp(c, "jflame ", 7) != 0)
			k += (size_t)snprintf(m->comment + k, sizeof(m->comment) - k, "%s%s", k ? "\n" : "", c);
	}

	r.locs = malloc((p->n_location ? p->n_location : 1) * sizeof(*r.locs));
	r.funs = malloc((p->n_function ? p->n_function : 1) * sizeof(*r.funs));
	if (!r.locs || !r.funs)
		goto oom;
	if (p->n_location)
		memcpy(r.locs, p->location, p->n_location * sizeof(*r.locs));
	if (p->n_function)
		memcpy(r.funs, p->function, p->n_function * sizeof(*r.funs));
	qsort(r.locs, p->n_location, sizeof(*r.locs), cmp_loc);
	qsort(r.funs, p->n_function, sizeof(*r.funs), cmp_fun);

	st->samples = p->n_sample;
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		bool bad_ref = false;
		if (s->n_value != p->n_sample_type) {
			st->bad_refs++;
			continue;
		}
		if (s->value[vi] < 0 || (wi >= 0 && s->value[wi] < 0)) {
			st->negative++;
			continue;
		}
		if (s->n_location_id == 0) {
			st->no_frames++;
			continue;
		}
		int ar = sample_stack(&r, s, &bad_ref);
		if (ar == APPEND_OOM)
			goto oom;
		if (ar == APPEND_HUGE) {
			snprintf(err, errlen,
				 "%s expands to more than %" PRIu64 " GiB of stacks; is it a real "
				 "profile?",
				 name, PPROF_MAX_EXPANSION >> 30);
			goto out;
		}
		if (ar == APPEND_LONG) {
			if (bad_ref)
				st->bad_refs++;
			else
				st->too_long++;
			continue;
		}
		if (stack_table_add(t, r.line.buf, r.line.len, (uint64_t)s->value[vi],
				    wi >= 0 ? (uint64_t)s->value[wi] : 0) < 0)
			goto oom;
	}
	rc = 0;
	goto out;
oom:
	snprintf(err, errlen, "out of memory reading %s", name);
out:
	folded_line_free(&r.line);
	free(r.locs);
	free(r.funs);
	if (p)
		perftools__profiles__profile__free_unpacked(p, NULL);
	free(plain);
	return rc;
}
