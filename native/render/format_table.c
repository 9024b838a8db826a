/* format_table.c - the one table of profile formats (a row each: names,
 * extensions, content test, reader, writer, what record keeps for it), the
 * writers of its rows, and profile_read(), which picks a row's reader. In
 * render/ because the SVG row draws a flame graph. */
#include "format_table.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "format_sniff.h"
#include "input_file.h"
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

const struct profile_format profile_formats[] = {
	{
		.name = "folded",
		.alias = "collapsed",
		.label = "folded stacks",
		.ext = ".folded",
		.exts = { ".folded", ".collapsed" },
		.text_exts = { ".txt" },
		.record_exts = { ".folded", ".collapsed" },
		.cmds = PF_READ | PF_RECORD | PF_CONVERT | PF_COLLAPSE,
		.traits = PF_STREAMS | PF_FALLBACK | PF_TEXT,
		.sniff = format_sniff_folded,
		.read = profile_read_folded,
		.write = write_folded,
	},
	{
		.name = "stacks",
		.alias = "perf",
		.label = "perf script text",
		.ext = ".stacks",
		.exts = { ".stacks", ".perf", ".script" },
		.record_exts = { ".stacks" },
		.cmds = PF_READ | PF_RECORD,
		.traits = PF_STREAMS | PF_TEXT,
		.needs = PF_NEEDS_SAMPLE_LOG,
		.sniff = format_sniff_stacks,
		.read = profile_read_stacks,
	},
	{
		.name = "pprof",
		.alias = "pb",
		.label = "pprof",
		.ext = ".pb.gz",
		.exts = { ".pb", ".pprof" },
		.record_exts = { ".pb.gz" },
		.cmds = PF_READ | PF_RECORD | PF_CONVERT,
		.traits = PF_SAMPLE_INDEX,
		.needs = PF_NEEDS_LINES,
		.sniff = format_sniff_pprof,
		.read = profile_read_pprof,
		.write = write_pprof,
	},
	{
		.name = "speedscope",
		.alias = "json",
		.label = "speedscope JSON",
		.ext = ".json",
		.exts = { ".json" },
		.record_exts = { ".json" },
		.cmds = PF_READ | PF_RECORD | PF_CONVERT,
		.traits = PF_ONE_VALUE,
		.needs = PF_NEEDS_LINES,
		.sniff = format_sniff_speedscope,
		.read = profile_read_speedscope,
		.write = write_speedscope,
	},
	{
		.name = "jfr",
		.label = "JFR",
		.ext = ".jfr",
		.exts = { ".jfr" },
		.record_exts = { ".jfr" },
		.cmds = PF_READ | PF_RECORD | PF_CONVERT,
		.traits = PF_SAMPLE_INDEX | PF_TIMED,
		.needs = PF_NEEDS_LINES | PF_NEEDS_TIMES,
		.sniff = format_sniff_jfr,
		.read = profile_read_jfr,
		.write = write_jfr,
	},
	{
		.name = "svg",
		.label = "SVG",
		.ext = ".svg",
		.exts = { ".svg" },
		.record_exts = { ".svg" },
		.cmds = PF_RECORD | PF_CONVERT | PF_SVG,
		.needs = PF_NEEDS_GRAPH,
		.write = write_svg,
		.why_unread = "an SVG (the folded stacks behind an SVG are not in it)",
	},
	{
		.name = "html",
		.label = "HTML",
		.ext = ".html",
		.record_exts = { ".html" },
		.cmds = PF_RECORD,
		.needs = PF_NEEDS_HEATMAP,
		.why_unread = "an HTML page",
	},
};
const size_t profile_formats_n = sizeof(profile_formats) / sizeof(profile_formats[0]);

#define EACH_ROW(f) for (const struct profile_format *f = profile_formats; f < profile_formats + profile_formats_n; f++)

const struct profile_format *profile_format_named(const char *name)
{
	EACH_ROW(f)
	if (strcmp(name, f->name) == 0 || (f->alias && strcmp(name, f->alias) == 0))
		return f;
	return NULL;
}

static bool ends_with(const char *s, size_t n, const char *suffix, bool ignore_case)
{
	size_t k = strlen(suffix);
	return n >= k && (ignore_case ? strncasecmp(s + n - k, suffix, k) : strncmp(s + n - k, suffix, k)) == 0;
}

/* Whether path[0..n) ends in one of exts[0..max) (NULL ends the list). */
static bool ends_in(const char *path, size_t n, const char *const *exts, size_t max, bool ignore_case)
{
	for (size_t i = 0; i < max && exts[i]; i++)
		if (ends_with(path, n, exts[i], ignore_case))
			return true;
	return false;
}

const struct profile_format *profile_format_of_name(const char *path, bool *raw, bool *text)
{
	size_t n = strlen(path);
	bool gz = ends_with(path, n, ".gz", true);
	if (gz)
		n -= 3;
	*raw = !gz && ends_with(path, n, ".pb", true);
	if (text)
		*text = false;
	EACH_ROW(f)
	if (ends_in(path, n, f->exts, 4, true))
		return f;
	EACH_ROW(f)
	if (ends_in(path, n, f->text_exts, 2, true)) {
		if (text)
			*text = true;
		return f;
	}
	return NULL;
}

const struct profile_format *profile_format_for_record(const char *path)
{
	size_t n = strlen(path);
	EACH_ROW(f)
	if (strcmp(path, "-") == 0 ? (f->cmds & PF_SVG) != 0 : ends_in(path, n, f->record_exts, 3, false))
		return f;
	return NULL;
}

const struct profile_format *profile_format_sniff(const char *buf, size_t len, unsigned traits)
{
	EACH_ROW(f)
	if (f->sniff && (f->traits & traits) == traits && f->sniff(buf, len))
		return f;
	return NULL;
}

/* The rows with a bit of cmd in cmds (any row for 0) and all of traits, listed
 * as "a, b, c<last>d" of their name, ext or label. */
enum list_field { L_NAME, L_EXT, L_LABEL };
static void list_rows(char *buf, size_t len, unsigned cmd, unsigned traits, enum list_field what, const char *last)
{
	size_t count = 0, k = 0, pos = 0;
#define LISTED(f) ((!cmd || ((f)->cmds & cmd)) && ((f)->traits & traits) == traits)
	if (len)
		buf[0] = '\0';
	EACH_ROW(f)
	count += LISTED(f);
	EACH_ROW(f)
	{
		if (!LISTED(f) || pos >= len)
			continue;
		k++;
		pos += (size_t)snprintf(buf + pos, len - pos, "%s%s",
					k == 1	   ? "" :
					k == count ? last :
						     ", ",
					what == L_EXT	? f->ext :
					what == L_LABEL ? f->label :
							  f->name);
	}
#undef LISTED
}

void profile_format_list(char *buf, size_t len, unsigned cmd, bool ext)
{
	list_rows(buf, len, cmd, 0, ext ? L_EXT : L_NAME, " or ");
}

void profile_format_labels(char *buf, size_t len, unsigned cmd)
{
	list_rows(buf, len, cmd, 0, L_LABEL, " or ");
}

int profile_format_write(const struct profile_format *f, FILE *out, const struct stack_table *t,
			 const struct profile_write_opts *o, char *err, size_t errlen)
{
	static const struct profile_write_opts none;
	if (!f->write) {
		snprintf(err, errlen, "cannot write %s from a profile's stacks", f->name);
		return -1;
	}
	return f->write(out, t, o ? o : &none, err, errlen);
}

int profile_read(struct stack_table *t, const char *path, const struct profile_format *from, const char *sample_index,
		 unsigned flags, const char *cmd, char *err, size_t errlen)
{
	struct profile_source s = {
		.path = path,
		.name = profile_input_name(path),
		.sample_index = sample_index,
		.flags = flags,
		.cmd = cmd,
	};
	bool raw, text = false;
	const struct profile_format *f = from ? from : profile_format_of_name(path, &raw, &text);
	char *buf = NULL, list[256];
	int rc = -1;

	profile_format_labels(list, sizeof(list), PF_READ);
	if (f && !f->read) {
		snprintf(err, errlen, "%s is %s; %s reads %s", s.name, f->why_unread, cmd, list);
		return -1;
	}
	/* a row that streams reads a file named for it itself */
	if (!(f && (f->traits & PF_STREAMS) && !text)) {
		if (input_file_read(path, 0, &buf, &s.len, err, errlen) != 0)
			goto out;
		s.buf = buf;
		const struct profile_format *seen = profile_format_sniff(buf, s.len, text ? PF_TEXT : 0);
		if (text) /* the name says only text: the content picks the text row */
			f = seen ? seen : f;
		else if (!f)
			f = seen;
		EACH_ROW(x)
		if (!f && (flags & PROFILE_READ_FOLDED) && (x->traits & PF_FALLBACK))
			f = x;
	}
	if (!f) {
		char names[128], why[300];
		list_rows(names, sizeof(names), PF_READ, 0, L_NAME, " or ");
		snprintf(why, sizeof(why), "not %s", list);
		snprintf(err, errlen, "cannot tell the format of %s (%s); give -f %s", s.name,
			 s.len == 0 ? "it is empty" : why, names);
		goto out;
	}
	rc = f->read(t, &s, err, errlen);
	if (rc == 0 && sample_index && !(f->traits & PF_SAMPLE_INDEX)) {
		char which[128];
		list_rows(which, sizeof(which), 0, PF_SAMPLE_INDEX, L_LABEL, " and ");
		snprintf(err, errlen, "--sample-index is for %s input; %s is %s", which, s.name, f->label);
		rc = -1;
	}
	if (rc == 0 && t->stacks.n == 0) {
		snprintf(err, errlen, "no stacks in %s; nothing to %s", s.name, cmd);
		rc = -1;
	}
out:
	free(buf);
	return rc;
}
