/* folded.c - the folded-stack reader behind every command that reads folded
 * stacks: a line is a stack, blanks, a count (a second count makes it differential). */
#include "folded.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>
#include <inttypes.h>

#include "folded_char.h"
#include "grow.h"
#include "input_file.h"
#include "msg.h"

/* The number ending s[0..*n): integer or decimal (flamegraph.pl takes
 * "12.5", rounded); *n is cut to what precedes it, blanks included. *v is
 * FOLDED_MAX_COUNT for a number of 2^63 or more (integers exactly: no double). */
static bool last_number(const char *s, size_t *n, uint64_t *v)
{
	size_t end = *n, i = end;
	bool digits = false, dot = false;
	while (i > 0 && ((s[i - 1] >= '0' && s[i - 1] <= '9') || (s[i - 1] == '.' && !dot))) {
		if (s[i - 1] == '.')
			dot = true;
		else
			digits = true;
		i--;
	}
	if (!digits || i == 0 || i == end || (s[i - 1] != ' ' && s[i - 1] != '\t'))
		return false;
	if (!dot) {
		uint64_t x = 0;
		for (size_t k = i; k < end && x < FOLDED_MAX_COUNT; k++)
			x = x > (FOLDED_MAX_COUNT - 1) / 10 ? FOLDED_MAX_COUNT : x * 10 + (uint64_t)(s[k] - '0');
		*v = x < FOLDED_MAX_COUNT ? x : FOLDED_MAX_COUNT;
	} else {
		double x = 0, scale = 0;
		for (size_t k = i; k < end; k++) {
			if (s[k] == '.') {
				scale = 1;
				continue;
			}
			x = x * 10 + (s[k] - '0');
			if (scale)
				scale *= 10;
		}
		x = scale ? x / scale : x;
		*v = x < (double)FOLDED_MAX_COUNT ? (uint64_t)llround(x) : FOLDED_MAX_COUNT;
	}
	while (i > 0 && (s[i - 1] == ' ' || s[i - 1] == '\t'))
		i--;
	*n = i;
	return true;
}

static void bad(struct folded *f, const char *p, size_t n)
{
	if (f->bad_lines++ == 0) {
		size_t k = n < sizeof(f->first_bad) - 1 ? n : sizeof(f->first_bad) - 1;
		for (size_t i = 0; i < k; i++)
			f->first_bad[i] = (p[i] >= 32 && p[i] < 127) ? p[i] : '?';
		f->first_bad[k] = '\0';
	}
}

/* The count of line lineno (its text t[0..n)), or the sum, is 2^63 or more. */
static int too_big(const char *name, uint64_t lineno, const char *t, size_t n, bool sum, char *err, size_t errlen)
{
	if (sum)
		snprintf(err, errlen,
			 "%s:%" PRIu64 ": the counts add up to 2^63 or more; jflame takes totals "
			 "below 9223372036854775808 (scale the counts down)",
			 name, lineno);
	else
		snprintf(err, errlen,
			 "%s:%" PRIu64 ": count '%.*s%s' is 2^63 or more; jflame takes counts below "
			 "9223372036854775808",
			 name, lineno, (int)(n < 40 ? n : 40), t, n > 40 ? "..." : "");
	return -1;
}

/* Parses the whole lines text[0..len) (a line may end at len without '\n'),
 * numbering them from *lineno on. */
static int parse_lines(struct folded *f, struct stack_table *t, const char *text, size_t len, const char *name,
		       unsigned flags, uint64_t *line_count, char *err, size_t errlen)
{
	uint64_t lineno = *line_count;
	for (size_t off = 0; off < len;) {
		const char *line = text + off, *nl = memchr(line, '\n', len - off);
		size_t n = nl ? (size_t)(nl - line) : len - off;
		off += n + 1;
		lineno++;
		if (n > 0 && line[n - 1] == '\r')
			n--;
		if (n == 0 || line[0] == '#')
			continue; /* blank, or a comment */
		if (n > FOLDED_MAX_LINE) {
			if (f->long_lines++ == 0)
				f->first_long = lineno;
			continue;
		}
		if (memchr(line, '\0', n)) {
			bad(f, line, n);
			continue;
		}
		uint64_t after, before = 0;
		size_t k = n;
		if (!last_number(line, &k, &after) || k == 0) {
			bad(f, line, n);
			continue;
		}
		size_t k2 = k;
		if (last_number(line, &k2, &before) && k2 > 0) {
			/* differential: "stack before after" */
			f->differential = true;
		} else {
			before = 0;
			k2 = k;
		}
		if (after >= FOLDED_MAX_COUNT || before >= FOLDED_MAX_COUNT) {
			/* the number itself: [k, n) holds AFTER, [k2, k) BEFORE */
			const char *t = line + (after >= FOLDED_MAX_COUNT ? k : k2),
				   *e = line + (after >= FOLDED_MAX_COUNT ? n : k);
			while (*t == ' ' || *t == '\t')
				t++;
			return too_big(name, lineno, t, (size_t)(e - t), false, err, errlen);
		}
		if (after >= FOLDED_MAX_COUNT - f->total || before >= FOLDED_MAX_COUNT - f->total_before)
			return too_big(name, lineno, NULL, 0, true, err, errlen);
		long id = f->differential ? stack_table_add_diff(t, line, k2, before, after) :
					    stack_table_add(t, line, k2, after, 0);
		if (id < 0 ||
		    ((flags & FOLDED_KEEP_ORDER) && stack_table_add_step(t, (uint32_t)id, after, before) != 0)) {
			snprintf(err, errlen, "out of memory reading %s", name);
			return -1;
		}
		f->n++;
		f->total += after;
		f->total_before += before;
	}
	*line_count = lineno;
	return 0;
}

int folded_parse(struct folded *f, struct stack_table *t, const char *text, size_t len, const char *name,
		 unsigned flags, char *err, size_t errlen)
{
	uint64_t lineno = 0;
	memset(f, 0, sizeof(*f));
	return parse_lines(f, t, text, len, name, flags, &lineno, err, errlen);
}

/* A plain file is mapped, not read: its pages come from the page cache
 * instead of being zeroed and copied into fresh memory, and leave this
 * process's memory block by block once parsed (the store has copied what it
 * keeps). 1 when done, 0 when the file is not for this (gzip, a pipe, empty),
 * -1 on error. */
static int map_plain(struct folded *f, struct stack_table *t, const char *path, unsigned flags, char *err,
		     size_t errlen)
{
	struct stat st;
	unsigned char magic[2];
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;
	if (fd < 0) {
		snprintf(err, errlen, "failed to open %s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 2 || pread(fd, magic, 2, 0) != 2 ||
	    (magic[0] == 0x1f && magic[1] == 0x8b))
		goto out;
	char *text = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (text == MAP_FAILED)
		goto out;
	madvise(text, (size_t)st.st_size, MADV_SEQUENTIAL);
	const size_t block = (size_t)64 << 20, size = (size_t)st.st_size;
	uint64_t lineno = 0;
	rc = 1;
	for (size_t off = 0; off < size && rc == 1;) {
		/* whole lines, about a block of them */
		size_t end = size - off > block ? off + block : size;
		const char *nl = end < size ? memchr(text + end, '\n', size - end) : NULL;
		end = nl ? (size_t)(nl - text) + 1 : size;
		if (parse_lines(f, t, text + off, end - off, path, flags, &lineno, err, errlen) != 0)
			rc = -1;
		size_t page = (size_t)sysconf(_SC_PAGESIZE), done = end / page * page, from = off / page * page;
		if (done > from)
			madvise(text + from, done - from, MADV_DONTNEED);
		off = end;
	}
	munmap(text, size);
out:
	close(fd);
	return rc;
}

int folded_read(struct folded *f, struct stack_table *t, const char *path, size_t max, unsigned flags, char *err,
		size_t errlen)
{
	bool stdin_in = strcmp(path, "-") == 0;
	char *buf = NULL;
	size_t len = 0;
	memset(f, 0, sizeof(*f));
	if (!stdin_in) {
		int m = map_plain(f, t, path, flags, err, errlen);
		if (m != 0)
			return m > 0 ? 0 : -1;
	}
	/* gzip, or a pipe: in memory, as much as input_file_read allows */
	if (input_file_read(path, max, &buf, &len, err, errlen) != 0)
		return -1;
	int rc = folded_parse(f, t, buf, len, stdin_in ? "standard input" : path, flags, err, errlen);
	free(buf);
	return rc;
}

int folded_line_push(struct folded_line *l, const char *s, size_t n, bool clean)
{
	size_t need = l->len + n + 2;
	if (need > FOLDED_MAX_LINE)
		return FOLDED_PUSH_LONG;
	if (ARRAY_GROW(l->buf, l->cap, need) != 0)
		return FOLDED_PUSH_OOM;
	if (l->len)
		l->buf[l->len++] = ';';
	if (!clean) {
		memcpy(l->buf + l->len, s, n);
		l->len += n;
		return FOLDED_PUSH_OK;
	}
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		l->buf[l->len++] = folded_char(c);
	}
	return FOLDED_PUSH_OK;
}

void folded_line_free(struct folded_line *l)
{
	free(l->buf);
	memset(l, 0, sizeof(*l));
}

void folded_warn(const struct folded *f, const char *in_name)
{
	if (f->bad_lines) {
		if (in_name)
			msg_warn("skipped %" PRIu64 " lines without a count in %s (first: '%s')\n", f->bad_lines,
				 in_name, f->first_bad);
		else
			msg_warn("skipped %" PRIu64 " lines without a count (first: '%s')\n", f->bad_lines,
				 f->first_bad);
	}
	if (f->long_lines)
		msg_warn("skipped %" PRIu64 " lines longer than the %u MiB line limit%s%s "
			 "(first: line %" PRIu64 ")\n",
			 f->long_lines, FOLDED_MAX_LINE >> 20, in_name ? " in " : "", in_name ? in_name : "",
			 f->first_long);
}

const char *folded_none(const struct folded *f, char *buf, size_t len)
{
	char lim[128] = "";
	if (f->long_lines)
		snprintf(lim, sizeof(lim), "line %" PRIu64 " is longer than the %u MiB line limit", f->first_long,
			 FOLDED_MAX_LINE >> 20);
	snprintf(buf, len, "%s%s%s", f->bad_lines ? "no line ends in a count" : "", f->bad_lines && lim[0] ? "; " : "",
		 lim);
	return buf;
}
