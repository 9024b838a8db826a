/* profile_writer.c - the one table of the profile formats jflame writes, and
 * the writers of its rows; in render/ because the SVG row draws a flame graph. */
#include "profile_writer.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "jfr_write.h"
#include "pprof.h"
#include "speedscope.h"

/* "stack count\n" lines, stacks in byte order, without printf's parsing (a
 * few % of collapse's whole run). */
static int write_folded(FILE *out, const struct stack_table *t, const struct profile_write_opts *o, char *err,
			size_t errlen)
{
	uint32_t *order = stack_table_sorted(t);
	(void)o;
	if (!order) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < t->stacks.n; i++) {
		char num[24];
		size_t k = sizeof(num);
		uint64_t v = t->counts[order[i]];
		num[--k] = '\n';
		do
			num[--k] = (char)('0' + v % 10);
		while ((v /= 10) != 0);
		num[--k] = ' ';
		fputs_unlocked(t->stacks.strs[order[i]], out);
		fwrite_unlocked(num + k, 1, sizeof(num) - k, out);
	}
	free(order);
	return 0;
}

static int write_pprof(FILE *out, const struct stack_table *t, const struct profile_write_opts *o, char *err,
		       size_t errlen)
{
	return pprof_write(out, t, o->raw, err, errlen);
}

static int write_speedscope(FILE *out, const struct stack_table *t, const struct profile_write_opts *o, char *err,
			    size_t errlen)
{
	(void)o;
	return speedscope_write(out, t, err, errlen);
}

static int write_jfr(FILE *out, const struct stack_table *t, const struct profile_write_opts *o, char *err,
		     size_t errlen)
{
	(void)o;
	return jfr_write(out, t, 0, err, errlen);
}

/* The flame graph of the counts (the graph sorts them itself). */
static int write_svg(FILE *out, const struct stack_table *t, const struct profile_write_opts *o, char *err,
		     size_t errlen)
{
	const struct stack_meta *m = &t->meta;
	struct fg_options g = {
		.title = o->title   ? o->title :
			 m->name[0] ? m->name :
				      NULL,
		.countname = strcmp(m->count_unit, "count") == 0 ? m->count_type : m->count_unit,
		.colors = "java",
		.legend = true,
		.hash = true,
	};
	return flamegraph_write(out, t, o->graph ? o->graph : &g, err, errlen);
}

const struct profile_writer profile_writers[] = {
	{ PFMT_FOLDED,
	  "folded",
	  "collapsed",
	  ".folded",
	  { ".folded", ".collapsed", ".txt" },
	  { ".folded", ".collapsed" },
	  PW_RECORD | PW_CONVERT | PW_COLLAPSE,
	  write_folded },
	{ PFMT_STACKS, "stacks", "perf", ".stacks", { ".stacks", ".perf", ".script" }, { ".stacks" }, PW_RECORD, NULL },
	{ PFMT_PPROF, "pprof", "pb", ".pb.gz", { ".pb", ".pprof" }, { ".pb.gz" }, PW_RECORD | PW_CONVERT, write_pprof },
	{ PFMT_SPEEDSCOPE,
	  "speedscope",
	  "json",
	  ".json",
	  { ".json" },
	  { ".json" },
	  PW_RECORD | PW_CONVERT,
	  write_speedscope },
	{ PFMT_JFR, "jfr", NULL, ".jfr", { ".jfr" }, { ".jfr" }, PW_RECORD | PW_CONVERT, write_jfr },
	{ PFMT_SVG, "svg", NULL, ".svg", { ".svg" }, { ".svg" }, PW_RECORD | PW_CONVERT | PW_SVG, write_svg },
	{ PFMT_HTML, "html", NULL, ".html", { NULL }, { ".html" }, PW_RECORD, NULL },
};
const size_t profile_writers_n = sizeof(profile_writers) / sizeof(profile_writers[0]);

const struct profile_writer *profile_writer_of(enum profile_format f)
{
	for (size_t i = 0; i < profile_writers_n; i++)
		if (profile_writers[i].format == f)
			return &profile_writers[i];
	return NULL;
}

const struct profile_writer *profile_writer_named(const char *name)
{
	for (size_t i = 0; i < profile_writers_n; i++) {
		const struct profile_writer *w = &profile_writers[i];
		if (strcmp(name, w->name) == 0 || (w->alias && strcmp(name, w->alias) == 0))
			return w;
	}
	return NULL;
}

static bool ends_with(const char *s, size_t n, const char *suffix, bool ignore_case)
{
	size_t k = strlen(suffix);
	return n >= k && (ignore_case ? strncasecmp(s + n - k, suffix, k) : strncmp(s + n - k, suffix, k)) == 0;
}

const struct profile_writer *profile_writer_of_name(const char *path, bool *raw)
{
	size_t n = strlen(path);
	bool gz = ends_with(path, n, ".gz", true);
	if (gz)
		n -= 3;
	*raw = !gz && ends_with(path, n, ".pb", true);
	for (size_t i = 0; i < profile_writers_n; i++)
		for (const char *const *e = profile_writers[i].exts; e < profile_writers[i].exts + 4 && *e; e++)
			if (ends_with(path, n, *e, true))
				return &profile_writers[i];
	return NULL;
}

const struct profile_writer *profile_writer_for_record(const char *path)
{
	size_t n = strlen(path);
	if (strcmp(path, "-") == 0)
		return profile_writer_of(PFMT_SVG);
	for (size_t i = 0; i < profile_writers_n; i++)
		for (const char *const *e = profile_writers[i].record_exts;
		     e < profile_writers[i].record_exts + 3 && *e; e++)
			if (ends_with(path, n, *e, false))
				return &profile_writers[i];
	return NULL;
}

void profile_writer_list(char *buf, size_t len, unsigned cmd, bool ext)
{
	size_t count = 0, k = 0, pos = 0;
	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < profile_writers_n; i++)
		count += (profile_writers[i].cmds & cmd) != 0;
	for (size_t i = 0; i < profile_writers_n && pos < len; i++) {
		const struct profile_writer *w = &profile_writers[i];
		if (!(w->cmds & cmd))
			continue;
		k++;
		pos += (size_t)snprintf(buf + pos, len - pos, "%s%s",
					k == 1	   ? "" :
					k == count ? " or " :
						     ", ",
					ext ? w->ext : w->name);
	}
}

int profile_writer_write(const struct profile_writer *w, FILE *out, const struct stack_table *t,
			 const struct profile_write_opts *o, char *err, size_t errlen)
{
	static const struct profile_write_opts none;
	if (!w->write) {
		snprintf(err, errlen, "cannot write %s from a profile's stacks", w->name);
		return -1;
	}
	return w->write(out, t, o ? o : &none, err, errlen);
}
