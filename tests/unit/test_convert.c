/* test_convert.c - unit tests for convert's formats: folded -> pprof -> folded and
 * folded -> speedscope -> folded round trips, pprof's ids and string table, the
 * speedscope reader on hand-written files, per-thread timelines, and malformed input. */
#include "check.h"
#include "folded.h"
#include "jfr_write.h"
#include "pprof.h"
#include "profile.pb-c.h"
#include "format_table.h"
#include "speedscope.h"
#include "stack_table.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static const char *data_dir(void)
{
	const char *d = getenv("JFLAME_TEST_DATA");
	return d ? d : "tests/data";
}

static char *slurp(const char *rel, size_t *len)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", data_dir(), rel);
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n = 0;
	if (!f) {
		CHECK_MSG(0, "cannot open %s", path);
		return NULL;
	}
	for (;;) {
		if (n + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
		}
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		if (got == 0)
			break;
		n += got;
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* The table as folded text, sorted (what `jflame convert -o x.folded` writes). */
static char *folded_text(const struct stack_table *t)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	uint32_t *order = stack_table_sorted(t);
	for (size_t i = 0; i < t->stacks.n; i++)
		fprintf(f, "%s %llu\n", t->stacks.strs[order[i]], (unsigned long long)t->counts[order[i]]);
	free(order);
	fclose(f);
	return out;
}

static int load_folded(struct stack_table *t, const char *rel)
{
	size_t len = 0;
	char *text = slurp(rel, &len), err[256];
	struct folded f;
	if (!text)
		return -1;
	CHECK(folded_parse(&f, t, text, len, "test", 0, err, sizeof(err)) == 0);
	free(text);
	return 0;
}

static const char *const roundtrip_files[] = {
	"convert/jvm.folded",	       "collapse/java.all.folded",   "collapse/rules.all.folded",
	"collapse/sys-pid.tid.folded", "collapse/sys.kernel.folded",
};

/* pprof's ids and string table, as a pprof reader sees them. */
static void check_pprof_structure(const uint8_t *buf, size_t len, const struct stack_table *t, const char *what)
{
	Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, len, buf);
	CHECK_MSG(p != NULL, "%s: protobuf-c cannot unpack what we packed", what);
	if (!p)
		return;
	CHECK_EQ_INT(p->n_string_table > 0, 1);
	CHECK_EQ_STR(p->string_table[0], "");
	for (size_t i = 1; i < p->n_string_table; i++)
		for (size_t j = 0; j < i; j++)
			CHECK_MSG(strcmp(p->string_table[i], p->string_table[j]) != 0, "%s: string %zu twice", what, i);
	CHECK_EQ_INT(p->n_sample_type, 1);
	CHECK_EQ_STR(p->string_table[p->sample_type[0]->type], "samples");
	CHECK_EQ_STR(p->string_table[p->sample_type[0]->unit], "count");
	CHECK_EQ_INT(p->n_sample, t->stacks.n);
	CHECK_EQ_INT(p->n_function, p->n_location);
	for (size_t i = 0; i < p->n_function; i++) {
		const Perftools__Profiles__Function *f = p->function[i];
		const Perftools__Profiles__Location *l = p->location[i];
		CHECK_EQ_U64(f->id, i + 1);
		CHECK_EQ_U64(l->id, i + 1);
		CHECK_EQ_INT(l->n_line, 1);
		CHECK_EQ_U64(l->line[0]->function_id, f->id);
		CHECK(f->name > 0 && (size_t)f->name < p->n_string_table);
		CHECK(f->system_name > 0 && (size_t)f->system_name < p->n_string_table);
		const char *name = p->string_table[f->name], *sys = p->string_table[f->system_name];
		size_t nn = strlen(name), sn = strlen(sys);
		/* the plain name, or the name plus an annotation */
		CHECK_MSG(strcmp(name, sys) == 0 ||
				  (sn == nn + 4 && strncmp(sys, name, nn) == 0 && sys[nn] == '_' && sys[nn + 1] == '['),
			  "%s: name '%s' system_name '%s'", what, name, sys);
	}
	uint64_t total = 0;
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		CHECK_EQ_INT(s->n_value, 1);
		total += (uint64_t)s->value[0];
		for (size_t k = 0; k < s->n_location_id; k++)
			CHECK(s->location_id[k] >= 1 && s->location_id[k] <= p->n_location);
	}
	CHECK_EQ_U64(total, t->total_count);
	perftools__profiles__profile__free_unpacked(p, NULL);
}

static void test_pprof_roundtrip(void)
{
	for (size_t i = 0; i < sizeof(roundtrip_files) / sizeof(roundtrip_files[0]); i++) {
		struct stack_table a, b;
		struct pprof_stats st;
		char err[1024] = "";
		uint8_t *buf = NULL;
		size_t len = 0;
		stack_table_init(&a);
		stack_table_init(&b);
		load_folded(&a, roundtrip_files[i]);
		CHECK_MSG(a.stacks.n > 0, "%s: no stacks", roundtrip_files[i]);
		CHECK_MSG(pprof_encode(&a, &buf, &len, err, sizeof(err)) == 0, "%s", err);
		check_pprof_structure(buf, len, &a, roundtrip_files[i]);
		CHECK_MSG(pprof_read(&b, buf, len, "t.pb", NULL, &st, err, sizeof(err)) == 0, "%s", err);
		CHECK_EQ_U64(st.samples, a.stacks.n);
		CHECK_EQ_U64(st.bad_refs + st.no_frames + st.negative + st.too_long, 0);
		char *x = folded_text(&a), *y = folded_text(&b);
		CHECK_MSG(strcmp(x, y) == 0, "%s: folded -> pprof -> folded differs:\n%s---\n%s", roundtrip_files[i], x,
			  y);
		free(x);
		free(y);
		free(buf);
		stack_table_free(&a);
		stack_table_free(&b);
	}
}

static void test_pprof_gzip_and_weights(void)
{
	struct stack_table a, b;
	struct pprof_stats st;
	char err[1024] = "", *out = NULL;
	size_t len = 0;
	stack_table_init(&a);
	stack_table_init(&b);
	CHECK(stack_table_add(&a, "main;work_[j]", 13, 3, 30000000) >= 0);
	CHECK(stack_table_add(&a, "main;idle", 9, 1, 10000000) >= 0);
	a.meta.has_weight = true;
	snprintf(a.meta.weight_type, sizeof(a.meta.weight_type), "cpu");
	snprintf(a.meta.weight_unit, sizeof(a.meta.weight_unit), "nanoseconds");
	a.meta.period = 10000000;
	a.meta.duration_ns = 4000000000;
	a.meta.time_ns = 1700000000000000000;
	snprintf(a.meta.comment, sizeof(a.meta.comment), "target: pid 1 (java)\nframe pointers: on");
	FILE *f = open_memstream(&out, &len);
	CHECK_MSG(pprof_write(f, &a, false, err, sizeof(err)) == 0, "%s", err);
	fclose(f);
	CHECK(len > 2 && (uint8_t)out[0] == 0x1f && (uint8_t)out[1] == 0x8b); /* gzip */
	CHECK_MSG(pprof_read(&b, out, len, "t.pb.gz", NULL, &st, err, sizeof(err)) == 0, "%s", err);
	CHECK_EQ_STR(b.meta.count_type, "samples");
	CHECK(b.meta.has_weight);
	CHECK_EQ_STR(b.meta.weight_type, "cpu");
	CHECK_EQ_STR(b.meta.weight_unit, "nanoseconds");
	CHECK_EQ_U64(b.meta.period, 10000000);
	CHECK_EQ_U64(b.meta.duration_ns, 4000000000);
	CHECK_EQ_U64(b.meta.time_ns, 1700000000000000000);
	CHECK_EQ_STR(b.meta.comment, "target: pid 1 (java)\nframe pointers: on");
	CHECK_EQ_U64(b.total_count, 4);
	CHECK_EQ_U64(b.total_weight, 40000000);
	stack_table_free(&b);

	/* --sample-index: by name and by number; the other value becomes the weight */
	stack_table_init(&b);
	CHECK_MSG(pprof_read(&b, out, len, "t.pb.gz", "cpu", &st, err, sizeof(err)) == 0, "%s", err);
	char *x = folded_text(&b);
	CHECK_EQ_STR(x, "main;idle 10000000\nmain;work_[j] 30000000\n");
	CHECK_EQ_STR(b.meta.count_type, "cpu");
	CHECK_EQ_STR(b.meta.weight_type, "samples");
	free(x);
	stack_table_free(&b);
	stack_table_init(&b);
	CHECK(pprof_read(&b, out, len, "t.pb.gz", "1", &st, err, sizeof(err)) == 0);
	CHECK_EQ_U64(b.total_count, 40000000);
	stack_table_free(&b);
	stack_table_init(&b);
	CHECK(pprof_read(&b, out, len, "t.pb.gz", "alloc_space", &st, err, sizeof(err)) == -1);
	CHECK_HAS_STR(err, "no sample type 'alloc_space'; it has 0 (samples), 1 (cpu)");
	stack_table_free(&b);
	stack_table_init(&b);
	CHECK(pprof_read(&b, out, len, "t.pb.gz", "2", &st, err, sizeof(err)) == -1);
	stack_table_free(&b);

	/* truncated gzip: a clear error */
	stack_table_init(&b);
	err[0] = '\0';
	CHECK(pprof_read(&b, out, len / 2, "t.pb.gz", NULL, &st, err, sizeof(err)) == -1);
	CHECK_HAS_STR(err, "t.pb.gz ends in the middle of its gzip data");
	stack_table_free(&b);
	free(out);
	stack_table_free(&a);
}

static int64_t str_ix(Perftools__Profiles__Profile *p, const char *s)
{
	for (size_t i = 0; i < p->n_string_table; i++)
		if (strcmp(p->string_table[i], s) == 0)
			return (int64_t)i;
	p->string_table = realloc(p->string_table, (p->n_string_table + 1) * sizeof(char *));
	p->string_table[p->n_string_table] = strdup(s);
	return (int64_t)p->n_string_table++;
}

/* A profile written by hand (as another tool might): inlined lines, bad ids. */
static void test_pprof_foreign(void)
{
	Perftools__Profiles__Profile p = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType vt = PERFTOOLS__PROFILES__VALUE_TYPE__INIT, *vtp = &vt;
	Perftools__Profiles__Function fn[4], *fnp[4];
	Perftools__Profiles__Location loc[4], *locp[4];
	Perftools__Profiles__Line line[5], *linep[5];
	Perftools__Profiles__Sample smp[7], *smpp[7];
	uint64_t ids[7][3] = { { 1, 2 }, { 7 }, { 0 }, { 1 }, { 3 }, { 4 }, { 2 } };
	size_t nids[7] = { 2, 1, 0, 1, 1, 1, 1 };
	int64_t vals[7] = { 5, 1, 2, -3, 4, 6, 8 };
	struct stack_table t;
	struct pprof_stats st;
	char err[1024] = "";

	str_ix(&p, "");
	vt.type = str_ix(&p, "alloc_objects");
	vt.unit = str_ix(&p, "count");
	p.n_sample_type = 1;
	p.sample_type = &vtp;
	const char *names[4] = { "main", "inner", "outer", "" };
	for (int i = 0; i < 4; i++) {
		perftools__profiles__function__init(&fn[i]);
		fn[i].id = (uint64_t)(10 + i); /* ids need not be 1..n */
		fn[i].name = str_ix(&p, names[i]);
		fn[i].system_name = i == 1 ? str_ix(&p, "_Z5innerv") : fn[i].name;
		fnp[i] = &fn[i];
	}
	fn[3].name = 99; /* a string that does not exist */
	for (int i = 0; i < 5; i++) {
		perftools__profiles__line__init(&line[i]);
		linep[i] = &line[i];
	}
	line[0].function_id = 10; /* location 1: main */
	line[1].function_id = 11; /* location 2: inner inlined into outer */
	line[2].function_id = 12;
	line[3].function_id = 13; /* location 3: a bad name */
	line[4].function_id = 42; /* location 4: no such function */
	Perftools__Profiles__Line **lines_of[4] = { &linep[0], &linep[1], &linep[3], &linep[4] };
	size_t nlines[4] = { 1, 2, 1, 1 };
	for (int i = 0; i < 4; i++) {
		perftools__profiles__location__init(&loc[i]);
		loc[i].id = (uint64_t)(i + 1);
		loc[i].n_line = nlines[i];
		loc[i].line = lines_of[i];
		locp[i] = &loc[i];
	}
	for (int i = 0; i < 7; i++) {
		perftools__profiles__sample__init(&smp[i]);
		smp[i].n_location_id = nids[i];
		smp[i].location_id = ids[i];
		smp[i].n_value = 1;
		smp[i].value = &vals[i];
		smpp[i] = &smp[i];
	}
	p.n_function = 4;
	p.function = fnp;
	p.n_location = 4;
	p.location = locp;
	p.n_sample = 7;
	p.sample = smpp;
	size_t len = perftools__profiles__profile__get_packed_size(&p);
	uint8_t *buf = malloc(len);
	perftools__profiles__profile__pack(&p, buf);

	stack_table_init(&t);
	CHECK_MSG(pprof_read(&t, buf, len, "foreign.pb", NULL, &st, err, sizeof(err)) == 0, "%s", err);
	char *x = folded_text(&t);
	/* location_id is leaf first: sample 0 ran main, called from location 2,
	 * where inner is inlined into outer (a location's last line is the caller) */
	CHECK_EQ_STR(x, "outer;inner 8\nouter;inner;main 5\n");
	free(x);
	CHECK_EQ_U64(st.samples, 7);
	CHECK_EQ_U64(st.bad_refs, 3); /* location 7, function 42, string 99 */
	CHECK_EQ_U64(st.no_frames, 1);
	CHECK_EQ_U64(st.negative, 1);
	CHECK_EQ_STR(t.meta.count_type, "alloc_objects");
	CHECK(!t.meta.has_weight);
	stack_table_free(&t);

	free(buf);
	for (size_t i = 0; i < p.n_string_table; i++)
		free(p.string_table[i]);
	free(p.string_table);
}

static void test_pprof_malformed(void)
{
	static const struct {
		const char *what;
		const char *bytes;
		size_t len;
		const char *needle;
	} cases[] = {
		{ "empty", "", 0, "no sample types" },
		{ "garbage", "\xff\xfe\xfd\xfc\x01\x02\x03", 7, "protobuf-c cannot decode it" },
		{ "wrong wire type for sample_type", "\x08\x96\x01", 3, "protobuf-c cannot decode it" },
		{ "a length past the end", "\x0a\x50\x08\x01", 4, "protobuf-c cannot decode it" },
		{ "another message: unknown fields only",
		  "\xa2\x06\x03"
		  "abc\xa8\x06\x01",
		  9, "no sample types" },
		{ "no \"\" first in the string table", "\x0a\x04\x08\x01\x10\x02\x32\x01x\x32\x01y", 12,
		  "string table does not start with" },
		{ "truncated gzip", "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03", 10,
		  "ends in the middle of its gzip data" },
		{ "gzip of garbage", "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xff\xff\xff\xff", 14, "not valid gzip" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct stack_table t;
		struct pprof_stats st;
		char err[1024] = "";
		stack_table_init(&t);
		CHECK_MSG(pprof_read(&t, cases[i].bytes, cases[i].len, "x.pb", NULL, &st, err, sizeof(err)) == -1,
			  "%s: accepted", cases[i].what);
		CHECK_MSG(strstr(err, cases[i].needle) && strncmp(err, "jflame: ", 8) != 0 && !strchr(err, '\n'),
			  "%s: '%s'", cases[i].what, err);
		stack_table_free(&t);
	}
}

static char *speedscope_text(const struct stack_table *t)
{
	char *out = NULL, err[1024] = "";
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	CHECK_MSG(speedscope_write(f, t, err, sizeof(err)) == 0, "%s", err);
	fclose(f);
	return out;
}

static void test_speedscope_roundtrip(void)
{
	for (size_t i = 0; i < sizeof(roundtrip_files) / sizeof(roundtrip_files[0]); i++) {
		struct stack_table a, b;
		struct speedscope_stats st;
		char err[1024] = "";
		stack_table_init(&a);
		stack_table_init(&b);
		load_folded(&a, roundtrip_files[i]);
		char *json = speedscope_text(&a);
		CHECK_MSG(speedscope_read(&b, json, strlen(json), "t.json", &st, err, sizeof(err)) == 0, "%s", err);
		CHECK_EQ_U64(st.profiles, 1);
		CHECK_EQ_U64(st.samples, a.stacks.n);
		char *x = folded_text(&a), *y = folded_text(&b);
		CHECK_MSG(strcmp(x, y) == 0, "%s: folded -> speedscope -> folded differs:\n%s---\n%s",
			  roundtrip_files[i], x, y);
		free(x);
		free(y);
		free(json);
		stack_table_free(&a);
		stack_table_free(&b);
	}
}

static void test_speedscope_golden(void)
{
	static const char *const cases[] = { "convert/sampled", "convert/evented" };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char rel[256];
		size_t jl = 0, fl = 0;
		snprintf(rel, sizeof(rel), "%s.json", cases[i]);
		char *json = slurp(rel, &jl);
		snprintf(rel, sizeof(rel), "%s.folded", cases[i]);
		char *want = slurp(rel, &fl);
		struct stack_table t;
		struct speedscope_stats st;
		char err[1024] = "";
		stack_table_init(&t);
		CHECK_MSG(json && speedscope_read(&t, json, jl, rel, &st, err, sizeof(err)) == 0, "%s", err);
		char *got = folded_text(&t);
		CHECK_MSG(want && strcmp(got, want) == 0, "%s:\n%s---\n%s", cases[i], got, want ? want : "");
		CHECK_EQ_U64(st.profiles, 2);
		free(got);
		free(json);
		free(want);
		stack_table_free(&t);
	}
}

static void test_speedscope_malformed(void)
{
#define FR "\"shared\":{\"frames\":[{\"name\":\"a\"},{\"name\":\"b\"}]}"
#define SP(s, w)                                                                                         \
	"{" FR ",\"profiles\":[{\"type\":\"sampled\",\"name\":\"p\",\"unit\":\"none\",\"startValue\":0," \
	"\"endValue\":1,\"samples\":" s ",\"weights\":" w "}]}"
#define EV(e)                                                                                            \
	"{" FR ",\"profiles\":[{\"type\":\"evented\",\"name\":\"p\",\"unit\":\"none\",\"startValue\":0," \
	"\"endValue\":9,\"events\":" e "}]}"
	static const struct {
		const char *json, *needle;
	} cases[] = {
		{ "", "ends early" },
		{ "{\"shared\": {\"frames\": [", "ends early" },
		{ "{\"a\" 1}", "is not valid JSON" },
		{ "\n\n  {]", "line 3" },
		{ "{} trailing", "is not valid JSON" },
		{ "[1, 2, 3]", "not a speedscope file" },
		{ "{\"traceEvents\": []}", "not a speedscope file" },
		{ "{" FR ",\"profiles\":[{\"type\":\"heap\",\"unit\":\"none\"}]}", "\"sampled\" and \"evented\"" },
		{ "{" FR ",\"profiles\":[{\"type\":\"sampled\",\"unit\":\"parsecs\"}]}", "unit \"parsecs\"" },
		{ "{" FR ",\"profiles\":[{\"type\":\"sampled\"}]}", "no \"type\" or \"unit\"" },
		{ "{\"shared\":{\"frames\":[{\"nom\":\"a\"}]},\"profiles\":[]}", "shared.frames[0] has no \"name\"" },
		{ SP("[[0,2]]", "[1]"), "samples[0][1] is not a frame index (there are 2 frames)" },
		{ SP("[[0,-1]]", "[1]"), "not a frame index" },
		{ SP("[[0,0.5]]", "[1]"), "not a frame index" },
		{ SP("[[\"0\"]]", "[1]"), "not a frame index" },
		{ SP("[[0],[1]]", "[1]"), "2 samples but 1 weights" },
		{ SP("[[0]]", "[-1]"), "weights[0] is not a weight" },
		{ SP("[[0]]", "[\"1\"]"), "weights[0] is not a weight" },
		{ SP("[0]", "[1]"), "samples[0] is not an array" },
		{ EV("[{\"type\":\"O\",\"frame\":0,\"at\":0},{\"type\":\"C\",\"frame\":1,\"at\":1}]"),
		  "closes frame 1 (b)" },
		{ EV("[{\"type\":\"C\",\"frame\":0,\"at\":0}]"), "no frame is open" },
		{ EV("[{\"type\":\"O\",\"frame\":0,\"at\":5},{\"type\":\"C\",\"frame\":0,\"at\":4}]"),
		  "before the event" },
		{ EV("[{\"type\":\"O\",\"frame\":9,\"at\":0}]"), "frame 9, not a frame index" },
		{ EV("[{\"type\":\"X\",\"frame\":0,\"at\":0}]"), "type \"X\"" },
		{ EV("[{\"type\":\"O\",\"frame\":0}]"), "is not an event" },
		{ "{" FR ",\"profiles\":[{\"type\":\"evented\",\"unit\":\"none\"}]}", "lacks an \"events\" array" },
		{ "{" FR ",\"profiles\":[{\"type\":\"sampled\",\"unit\":\"bytes\",\"samples\":[],\"weights\":[]},"
		  "{\"type\":\"sampled\",\"unit\":\"seconds\",\"samples\":[],\"weights\":[]}]}",
		  "counts seconds but an earlier" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct stack_table t;
		struct speedscope_stats st;
		char err[1024] = "";
		stack_table_init(&t);
		CHECK_MSG(speedscope_read(&t, cases[i].json, strlen(cases[i].json), "x.json", &st, err, sizeof(err)) ==
				  -1,
			  "case %zu accepted: %s", i, cases[i].json);
		CHECK_MSG(strstr(err, cases[i].needle) && strncmp(err, "x.json", 6) == 0 && !strchr(err, '\n'),
			  "case %zu: '%s' lacks '%s'", i, err, cases[i].needle);
		stack_table_free(&t);
	}
	/* deep nesting stops at json-c's depth limit, not the stack */
	char *deep = malloc(200001);
	memset(deep, '[', 200000);
	deep[200000] = '\0';
	struct stack_table t;
	struct speedscope_stats st;
	char err[1024] = "";
	stack_table_init(&t);
	CHECK(speedscope_read(&t, deep, 200000, "deep.json", &st, err, sizeof(err)) == -1);
	CHECK_HAS_STR(err, "is not valid JSON");
	stack_table_free(&t);
	free(deep);
}

/* A timeline (perf script input): one profile per thread, samples in time order. */
static void test_speedscope_timeline(void)
{
	struct stack_table t;
	stack_table_init(&t);
	long a = stack_table_add(&t, "sh;main", 7, 1, 100), b = stack_table_add(&t, "sh;main;work", 12, 2, 200);
	long c = stack_table_add(&t, "dd;read_[k]", 11, 1, 100);
	CHECK(a >= 0 && b >= 0 && c >= 0);
	t.meta.has_weight = true;
	snprintf(t.meta.weight_unit, sizeof(t.meta.weight_unit), "nanoseconds");
	/* out of time order, two threads interleaved */
	CHECK(stack_table_add_timed(&t, (uint32_t)b, "sh pid: 1 tid: 1", 16, 10.3, 100) == 0);
	CHECK(stack_table_add_timed(&t, (uint32_t)c, "dd pid: 2 tid: 2", 16, 10.1, 100) == 0);
	CHECK(stack_table_add_timed(&t, (uint32_t)a, "sh pid: 1 tid: 1", 16, 10.2, 100) == 0);
	CHECK(stack_table_add_timed(&t, (uint32_t)b, "sh pid: 1 tid: 1", 16, 10.4, 100) == 0);
	char *json = speedscope_text(&t);
	json_object *root = json_tokener_parse(json), *profiles = NULL, *frames = NULL, *shared = NULL;
	CHECK(root && json_object_object_get_ex(root, "profiles", &profiles) &&
	      json_object_object_get_ex(root, "shared", &shared) &&
	      json_object_object_get_ex(shared, "frames", &frames));
	CHECK_EQ_INT(json_object_array_length(profiles), 2);
	json_object *p0 = json_object_array_get_idx(profiles, 0), *v;
	CHECK(json_object_object_get_ex(p0, "name", &v));
	CHECK_EQ_STR(json_object_get_string(v), "sh pid: 1 tid: 1");
	CHECK(json_object_object_get_ex(p0, "unit", &v));
	CHECK_EQ_STR(json_object_get_string(v), "nanoseconds");
	CHECK(json_object_object_get_ex(p0, "endValue", &v));
	CHECK_EQ_INT(json_object_get_int64(v), 300);
	CHECK(json_object_object_get_ex(p0, "samples", &v));
	CHECK_EQ_INT(json_object_array_length(v), 3);
	/* in time order: main (10.2), then work (10.3, 10.4) */
	size_t depths[3] = { 2, 3, 3 };
	for (size_t i = 0; i < 3; i++)
		CHECK_EQ_INT(json_object_array_length(json_object_array_get_idx(v, i)), depths[i]);
	json_object *leaf = json_object_array_get_idx(json_object_array_get_idx(v, 0), 1);
	json_object *fr = json_object_array_get_idx(frames, (size_t)json_object_get_int(leaf)), *nm;
	CHECK(json_object_object_get_ex(fr, "name", &nm));
	CHECK_EQ_STR(json_object_get_string(nm), "main");
	json_object_put(root);
	free(json);
	stack_table_free(&t);
}

/* Frame names are valid UTF-8 in the JSON, whatever the input held. */
static void test_speedscope_utf8(void)
{
	struct stack_table t, b;
	struct speedscope_stats st;
	char err[1024] = "";
	stack_table_init(&t);
	stack_table_init(&b);
	const char *stack = "caf\xc3\xa9;bad\xff\xfe;\xe2\x82\xac;half\xe2\x82;over\xc0\xaf;\"q\" \\ \x01";
	CHECK(stack_table_add(&t, stack, strlen(stack), 2, 0) >= 0);
	char *json = speedscope_text(&t);
	CHECK_HAS_STR(json, "\"caf\xc3\xa9\"");
	CHECK_HAS_STR(json, "\"bad\xef\xbf\xbd\xef\xbf\xbd\"");
	CHECK_HAS_STR(json, "\"\xe2\x82\xac\"");
	CHECK_HAS_STR(json, "\"half\xef\xbf\xbd\xef\xbf\xbd\"");
	CHECK_HAS_STR(json, "\"over\xef\xbf\xbd\xef\xbf\xbd\"");
	CHECK_HAS_STR(json, "\"\\\"q\\\" \\\\ \\u0001\"");
	CHECK_MSG(speedscope_read(&b, json, strlen(json), "u.json", &st, err, sizeof(err)) == 0, "%s", err);
	CHECK_EQ_U64(b.total_count, 2);
	free(json);
	stack_table_free(&t);
	stack_table_free(&b);
}

/* The row's name, or "-" for none. */
static const char *row_name(const struct profile_format *f)
{
	return f ? f->name : "-";
}

/* What a file's name and first bytes say its format is (format_table.c's
 * rows and format_sniff.c's tests). */
static void test_profile_format(void)
{
	static const struct {
		const char *name;
		const char *f; /* the row, "-": none */
		bool raw, text;
	} names[] = {
		{ "cpu.folded", "folded", false, false },
		{ "x.collapsed.gz", "folded", false, false },
		{ "run.stacks", "stacks", false, false },
		{ "perf.script.gz", "stacks", false, false },
		{ "a/b.perf", "stacks", false, false },
		{ "cpu.pb.gz", "pprof", false, false },
		{ "cpu.pb", "pprof", true, false },
		{ "CPU.PPROF", "pprof", false, false },
		{ "x.json", "speedscope", false, false },
		{ "x.svg", "svg", false, false },
		{ "x.txt", "folded", false, true },
		{ "profile", "-", false, false },
		{ "x.gz", "-", false, false },
		{ "", "-", false, false },
		{ "x.html", "-", false, false },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		bool raw = !names[i].raw, text = !names[i].text;
		CHECK_EQ_STR(row_name(profile_format_of_name(names[i].name, &raw, &text)), names[i].f);
		CHECK_MSG(raw == names[i].raw, "%s", names[i].name);
		CHECK_MSG(text == names[i].text, "%s", names[i].name);
	}
#define T(s) s, sizeof(s) - 1
	static const struct {
		const char *text;
		size_t len;
		const char *f;
	} contents[] = {
		{ T("a;b 1\n"), "folded" },
		{ T("\xef\xbb\xbf# comment\n\nmain;x_[j] 12\r\n"), "folded" },
		{ T("java 1/2 [000] 1.5: 10 cpu-clock:\n\t    7f00 main+0x1 (/bin/x)\n"), "stacks" },
		{ T("java 1/2 1.5: 10101\n\t7f00 main (/bin/x)\n"), "stacks" }, /* a header ending in a number */
		{ T("\n  {\"shared\": {}}"), "speedscope" },
		{ T("\x0a\x04\x08\x01\x10\x02"), "pprof" },
		{ T("FLR\0\0\2\0\0"), "jfr" },
		{ T("\x7f"
		    "ELF\x02\x01"),
		  "-" },
		{ T("just words\nmore words\n"), "-" },
		{ T(""), "-" },
	};
#undef T
	for (size_t i = 0; i < sizeof(contents) / sizeof(contents[0]); i++)
		CHECK_EQ_STR(row_name(profile_format_sniff(contents[i].text, contents[i].len, 0)), contents[i].f);
	/* among the text rows only (a name that says .txt), among the timed ones (heatmap) */
	CHECK(profile_format_sniff("{\"shared\": {}}", 14, PF_TEXT) == NULL);
	CHECK_EQ_STR(row_name(profile_format_sniff("a;b 1\n", 6, PF_TEXT)), "folded");
	CHECK_EQ_STR(row_name(profile_format_sniff("FLR\0", 4, PF_TIMED)), "jfr");
	CHECK(profile_format_sniff("a;b 1\n", 6, PF_TIMED) == NULL);
	CHECK_EQ_STR(row_name(profile_format_named("speedscope")), "speedscope");
	CHECK(profile_format_named("yaml") == NULL);
	/* every row that reads is told by its content; the others are not, and say why */
	for (size_t i = 0; i < profile_formats_n; i++) {
		const struct profile_format *f = &profile_formats[i];
		CHECK_MSG(!f->read == !f->sniff, "%s", f->name);
		CHECK_MSG(!f->read == !(f->cmds & PF_READ), "%s", f->name);
		CHECK_MSG(f->read || f->why_unread, "%s", f->name);
	}
}

/* The table's rows for writing: which row a file name or -t name picks, for
 * convert (case ignored, .gz) and for record (case kept, .pb.gz only), the
 * lists the messages give, and the rows' writers. */
static void test_profile_writer(void)
{
	static const struct {
		const char *name;
		const char *convert, *record; /* "-": no row */
		bool raw;
	} names[] = {
		{ "cpu.folded", "folded", "folded", false },
		{ "x.collapsed.gz", "folded", "-", false },
		{ "X.FOLDED", "folded", "-", false },
		{ "x.txt", "folded", "-", false },
		{ "run.stacks", "stacks", "stacks", false },
		{ "perf.script", "stacks", "-", false },
		{ "cpu.pb.gz", "pprof", "pprof", false },
		{ "cpu.PB.GZ", "pprof", "-", false },
		{ "cpu.pb", "pprof", "-", true },
		{ "cpu.pprof", "pprof", "-", false },
		{ "x.json", "speedscope", "speedscope", false },
		{ "x.svg", "svg", "svg", false },
		{ "x.html", "-", "html", false },
		{ "-", "-", "svg", false },
		{ "out.svg/cpu", "-", "-", false },
		{ "x.gz", "-", "-", false },
		{ "/tmp/cpu-%t.pb.gz", "pprof", "pprof", false },
		{ "cpu.jfr", "jfr", "jfr", false },
		{ "CPU.JFR", "jfr", "-", false },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		bool raw = !names[i].raw;
		const struct profile_format *c = profile_format_of_name(names[i].name, &raw, NULL);
		const struct profile_format *r = profile_format_for_record(names[i].name);
		CHECK_MSG(strcmp(row_name(c), names[i].convert) == 0, "convert %s", names[i].name);
		CHECK_MSG(raw == names[i].raw, "%s", names[i].name);
		CHECK_MSG(strcmp(row_name(r), names[i].record) == 0, "record %s", names[i].name);
		CHECK_MSG(!r || (r->cmds & PF_RECORD), "record %s", names[i].name);
	}
	CHECK(profile_format_named("collapsed") == profile_format_named("folded"));
	CHECK(profile_format_named("pb") == profile_format_named("pprof"));
	CHECK(profile_format_named("json") == profile_format_named("speedscope"));
	CHECK(profile_format_named("perf") == profile_format_named("stacks"));
	CHECK(profile_format_named("SVG") == NULL);
	CHECK(!(profile_format_named("stacks")->cmds & PF_CONVERT));
	CHECK(!(profile_format_named("html")->cmds & PF_CONVERT));
	CHECK(profile_format_named("text") == NULL);

	char list[128];
	profile_format_list(list, sizeof(list), PF_CONVERT, false);
	CHECK_EQ_STR(list, "folded, pprof, speedscope, jfr or svg");
	profile_format_list(list, sizeof(list), PF_CONVERT, true);
	CHECK_EQ_STR(list, ".folded, .pb.gz, .json, .jfr or .svg");
	profile_format_list(list, sizeof(list), PF_SVG, true);
	CHECK_EQ_STR(list, ".svg");
	profile_format_list(list, sizeof(list), PF_READ, false);
	CHECK_EQ_STR(list, "folded, stacks, pprof, speedscope or jfr");
	profile_format_labels(list, sizeof(list), PF_READ);
	CHECK_EQ_STR(list, "folded stacks, perf script text, pprof, speedscope JSON or JFR");
	profile_format_list(list, 8, PF_RECORD, true); /* cut, terminated */
	CHECK_EQ_STR(list, ".folded");

	/* the rows' writers: folded in byte order, the SVG titled, no writer for .stacks */
	struct stack_table t;
	char *buf = NULL, err[256] = "";
	size_t len = 0;
	stack_table_init(&t);
	CHECK(stack_table_add(&t, "m;b", 3, 2, 0) >= 0);
	CHECK(stack_table_add(&t, "m;a", 3, 5, 0) >= 0);
	FILE *f = open_memstream(&buf, &len);
	CHECK(profile_format_write(profile_format_named("folded"), f, &t, NULL, err, sizeof(err)) == 0);
	fclose(f);
	CHECK_EQ_STR(buf, "m;a 5\nm;b 2\n");
	free(buf);
	f = open_memstream(&buf, &len);
	struct profile_write_opts o = { .title = "T<itle>" };
	CHECK_MSG(profile_format_write(profile_format_named("svg"), f, &t, &o, err, sizeof(err)) == 0, "%s", err);
	fclose(f);
	CHECK_HAS_STR(buf, ">T&lt;itle&gt;</text>");
	CHECK_HAS_STR(buf, "<title>a (5 samples, 71.43%)</title>");
	free(buf);
	/* record's graph (its title, subtitle and warning, units) drawn as flamegraph_write draws it,
	   from a table of the same stacks in another order (the graph sorts them) */
	struct fg_options g = { .title = "cpu: java",
				.subtitle = "frame pointers: off",
				.subtitle_warning = true,
				.colors = "java",
				.legend = true,
				.hash = true,
				.countname = "ms",
				.count_scale = 1000 };
	struct stack_table other;
	stack_table_init(&other);
	CHECK(stack_table_add(&other, "m;b", 3, 2, 0) >= 0 && stack_table_add(&other, "m;a", 3, 5, 0) >= 0);
	char *direct = NULL;
	size_t direct_len = 0;
	f = open_memstream(&direct, &direct_len);
	CHECK(flamegraph_write(f, &other, &g, err, sizeof(err)) == 0);
	fclose(f);
	stack_table_free(&other);
	f = open_memstream(&buf, &len);
	o.graph = &g;
	CHECK_MSG(profile_format_write(profile_format_for_record("-"), f, &t, &o, err, sizeof(err)) == 0, "%s", err);
	fclose(f);
	CHECK_HAS_STR(buf, "class=\"warning\"");
	CHECK_MSG(len == direct_len && memcmp(buf, direct, len) == 0,
		  "the table's SVG differs from flamegraph_write's");
	free(direct);
	free(buf);
	f = open_memstream(&buf, &len);
	CHECK(profile_format_write(profile_format_named("stacks"), f, &t, NULL, err, sizeof(err)) == -1);
	fclose(f);
	CHECK_EQ_STR(err, "cannot write stacks from a profile's stacks");
	CHECK_EQ_U64(len, 0);
	free(buf);
	stack_table_free(&t);
}

/* stack_frame_line splits a frame at its line mark. */
static void test_frame_line(void)
{
	static const struct {
		const char *frame;
		size_t name_len;
		const char *file;
		int64_t line;
	} cases[] = {
		{ "p/W.spin_[0]\x1fW.java:41", 12, "W.java", 41 },
		{ "p/W.spin_[0]\x1fW.java:0", 12, "W.java", 0 },
		{ "p/W.spin_[0]\x1f"
		  "a:b.java:7",
		  12, "a:b.java", 7 }, /* the last ':' */
		{ "p/W.spin_[0]", 12, NULL, 0 },
		{ "p/W.spin_[0]\x1fW.java", 12, NULL, 0 }, /* no line: the name alone */
		{ "p/W.spin_[0]\x1fW.java:", 12, NULL, 0 },
		{ "p/W.spin_[0]\x1fW.java:4x", 12, NULL, 0 },
		{ "p/W.spin_[0]\x1fW.java:99999999999", 12, NULL, 0 },
		{ "\x1f:1", 0, "", 1 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *file;
		size_t file_len;
		int64_t line;
		size_t n = stack_frame_line(cases[i].frame, strlen(cases[i].frame), &file, &file_len, &line);
		CHECK_MSG(n == cases[i].name_len, "case %zu: name length %zu", i, n);
		CHECK_MSG(line == cases[i].line, "case %zu: line %lld", i, (long long)line);
		if (cases[i].file)
			CHECK_MSG(file && file_len == strlen(cases[i].file) &&
					  memcmp(file, cases[i].file, file_len) == 0,
				  "case %zu: file", i);
		else
			CHECK_MSG(!file && !file_len, "case %zu: a file where there is none", i);
	}
}

/* Frames with source lines (record's pprof table): one Function per method
 * and file, a Location per line with Line.line, plain names read back. */
static void test_pprof_lines(void)
{
	struct stack_table t, back;
	struct pprof_stats st;
	char err[1024] = "";
	uint8_t *buf = NULL;
	size_t len = 0;
	stack_table_init(&t);
	stack_table_init(&back);
	t.meta.lines = true;
	const char *a = "main\x1fM.java:3;spin_[0]\x1fW.java:40", *b = "main\x1fM.java:3;spin_[0]\x1fW.java:41",
		   *c = "main\x1fM.java:3;spin_[0]\x1fW.java:0;read_[k]";
	CHECK(stack_table_add(&t, a, strlen(a), 2, 0) >= 0);
	CHECK(stack_table_add(&t, b, strlen(b), 5, 0) >= 0);
	CHECK(stack_table_add(&t, c, strlen(c), 1, 0) >= 0);
	CHECK_MSG(pprof_encode(&t, &buf, &len, err, sizeof(err)) == 0, "%s", err);
	Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, len, buf);
	CHECK(p != NULL);
	if (p) {
		CHECK_EQ_U64(p->n_function, 3); /* main, spin, read_[k] */
		CHECK_EQ_U64(p->n_location, 5); /* main:3, spin:40, spin:41, spin:0, read */
		uint64_t spin = 0;
		for (size_t i = 0; i < p->n_function; i++) {
			const char *name = p->string_table[p->function[i]->name];
			const char *file = p->string_table[p->function[i]->filename];
			if (strcmp(name, "spin") == 0) {
				spin = p->function[i]->id;
				CHECK_EQ_STR(p->string_table[p->function[i]->system_name], "spin_[0]");
				CHECK_EQ_STR(file, "W.java");
			} else if (strcmp(name, "main") == 0) {
				CHECK_EQ_STR(file, "M.java");
			} else {
				CHECK_EQ_STR(name, "read");
				CHECK_EQ_STR(file, "");
			}
		}
		int64_t seen = 0;
		for (size_t i = 0; i < p->n_location; i++) {
			CHECK_EQ_U64(p->location[i]->n_line, 1);
			if (p->location[i]->line[0]->function_id == spin)
				seen |= (int64_t)1 << (p->location[i]->line[0]->line % 63);
		}
		CHECK_EQ_U64((uint64_t)seen, ((uint64_t)1 << 40) | ((uint64_t)1 << 41) | 1);
		/* samples: each leaf's location carries its line */
		for (size_t i = 0; i < p->n_sample; i++) {
			const Perftools__Profiles__Sample *s = p->sample[i];
			CHECK(s->n_location_id >= 2);
		}
		perftools__profiles__profile__free_unpacked(p, NULL);
	}
	CHECK_MSG(pprof_read(&back, buf, len, "t.pb", NULL, &st, err, sizeof(err)) == 0, "%s", err);
	char *got = folded_text(&back);
	CHECK_EQ_STR(got, "main;spin_[0] 7\nmain;spin_[0];read_[k] 1\n");
	free(got);
	free(buf);
	stack_table_free(&t);
	stack_table_free(&back);
}

/* Speedscope frames with a source line carry file and line (line only when known). */
static void test_speedscope_lines(void)
{
	struct stack_table t;
	stack_table_init(&t);
	const char *a = "main;spin_[0]\x1fW.java:41", *b = "main;spin_[0]\x1fW.java:0";
	CHECK(stack_table_add(&t, a, strlen(a), 2, 0) >= 0);
	CHECK(stack_table_add(&t, b, strlen(b), 1, 0) >= 0);
	/* a table read from a file: the byte is part of the name */
	char *json = speedscope_text(&t);
	CHECK_MSG(json && strstr(json, "{\"name\":\"spin_[0]\\u001fW.java:41\"}"), "%s", json);
	free(json);
	t.meta.lines = true;
	json = speedscope_text(&t);
	CHECK_MSG(json && strstr(json, "{\"name\":\"spin_[0]\",\"file\":\"W.java\",\"line\":41}"), "%s", json);
	CHECK_MSG(json && strstr(json, "{\"name\":\"spin_[0]\",\"file\":\"W.java\"}"), "%s", json);
	CHECK_MSG(json && !strchr(json, '\x1f'), "a line mark in the JSON");
	free(json);
	stack_table_free(&t);
}

/* The JFR writer's chunk header and its errors (what the events hold is
 * refereed by the JDK's jfr tool: test_jfr_cli.py). */
static uint64_t be64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static void test_jfr_write(void)
{
	struct stack_table t;
	char *buf = NULL, err[256] = "";
	size_t len = 0;
	stack_table_init(&t);
	/* an empty table: a valid chunk without events (record's empty window) */
	FILE *f = open_memstream(&buf, &len);
	CHECK(jfr_write(f, &t, 5000000000, err, sizeof(err)) == 0);
	fclose(f);
	const unsigned char *u = (const unsigned char *)buf;
	CHECK(len > 68 && memcmp(buf, "FLR\0\0\2\0\0", 8) == 0);
	CHECK(be64(u + 8) == len);			/* chunk size */
	CHECK(be64(u + 24) == 68);			/* the metadata right after the header */
	CHECK(be64(u + 16) > 68 && be64(u + 16) < len); /* the checkpoint */
	CHECK(be64(u + 32) == 5000000000 - 10000000);	/* no samples: one 10 ms step back from now */
	CHECK(be64(u + 56) == 1000000000);		/* ticks are nanoseconds */
	free(buf);

	/* times: meta's start and duration when known */
	CHECK(stack_table_add(&t, "[1] p;main;a/B.c_[j]", 20, 3, 0) >= 0);
	t.meta.time_ns = 1700000000000000000;
	t.meta.duration_ns = 2000000000;
	buf = NULL;
	f = open_memstream(&buf, &len);
	CHECK(jfr_write(f, &t, 0, err, sizeof(err)) == 0);
	fclose(f);
	u = (const unsigned char *)buf;
	CHECK(be64(u + 8) == len && be64(u + 32) == 1700000000000000000 && be64(u + 40) == 2000000000);
	free(buf);

	/* a write error */
	f = fopen("/dev/full", "w");
	if (f) {
		err[0] = '\0';
		CHECK(jfr_write(f, &t, 0, err, sizeof(err)) == -1);
		CHECK_MSG(strstr(err, "cannot write") && !strchr(err, '\n'), "%s", err);
		fclose(f);
	}
	/* more samples than events a file holds */
	CHECK(stack_table_add(&t, "x", 1, JFR_MAX_EVENTS, 0) >= 0);
	f = fopen("/dev/null", "w");
	CHECK(f != NULL);
	err[0] = '\0';
	CHECK(jfr_write(f, &t, 0, err, sizeof(err)) == -1);
	CHECK_MSG(strstr(err, "too many"), "%s", err);
	fclose(f);
	stack_table_free(&t);
}

int main(void)
{
	test_frame_line();
	test_pprof_lines();
	test_speedscope_lines();
	test_profile_format();
	test_profile_writer();
	test_pprof_roundtrip();
	test_pprof_gzip_and_weights();
	test_pprof_foreign();
	test_pprof_malformed();
	test_speedscope_roundtrip();
	test_speedscope_golden();
	test_speedscope_malformed();
	test_speedscope_timeline();
	test_speedscope_utf8();
	test_jfr_write();
	return check_report("convert");
}
