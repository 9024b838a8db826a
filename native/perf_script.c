/* perf_script.c - parses `perf script` text as stackcollapse-perf.pl reads it:
 * "comm pid/tid [cpu] time: period event:" headers, "pc sym (dso)" frames, blank ends. */
#include "perf_script.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define CHUNK (4u << 20)
#define PS_MAX_SAMPLE (256u << 20)

struct parser {
	ps_sample_fn fn;
	void *ctx;
	struct ps_stats *st;
	struct ps_sample cur;
	bool in_sample;
	const char *sample_line; /* where the sample under way starts */
	struct ps_frame *frames;
	size_t nframes, cap;
	bool stop, oom;
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_word(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static long parse_num(const char *p, const char *end, const char **out)
{
	long v = 0;
	while (p < end && is_digit(*p) && v < 100000000000L)
		v = v * 10 + (*p++ - '0');
	*out = p;
	return v;
}

static void bad_line(struct parser *ps, const char *p, size_t n)
{
	if (ps->st->bad_lines++ == 0) {
		size_t k = n < sizeof(ps->st->first_bad) - 1 ? n : sizeof(ps->st->first_bad) - 1;
		for (size_t i = 0; i < k; i++)
			ps->st->first_bad[i] = (p[i] >= 32 && p[i] < 127) ? p[i] : p[i] == '\t' ? ' ' : '?';
		ps->st->first_bad[k] = '\0';
	}
}

/* The rest of a header after "comm pid[/tid]": [cpu] time: [period] event: */
static void parse_header_tail(struct ps_sample *s, const char *p, const char *end)
{
	const char *tok[16];
	size_t len[16], n = 0;
	while (end > p && is_space(end[-1]))
		end--;
	while (p < end && n < 16) {
		while (p < end && is_space(*p))
			p++;
		if (p == end)
			break;
		tok[n] = p;
		while (p < end && !is_space(*p))
			p++;
		len[n] = (size_t)(p - tok[n]);
		n++;
	}
	/* the event: the last token, ending in ':' */
	if (n > 0 && len[n - 1] > 1 && tok[n - 1][len[n - 1] - 1] == ':' && !is_digit(tok[n - 1][0])) {
		s->event = (struct ps_str){ tok[n - 1], len[n - 1] - 1 };
		n--;
		/* a period: digits just before it */
		if (n > 0 && tok[n - 1][len[n - 1] - 1] != ':') {
			const char *q;
			long v = parse_num(tok[n - 1], tok[n - 1] + len[n - 1], &q);
			if (q == tok[n - 1] + len[n - 1]) {
				s->period = (uint64_t)v;
				s->has_period = true;
				n--;
			}
		}
	}
	/* the time: "123.456789:" */
	for (size_t i = 0; i < n; i++) {
		if (len[i] > 1 && tok[i][len[i] - 1] == ':' && is_digit(tok[i][0])) {
			char buf[48], *e;
			size_t k = len[i] - 1 < sizeof(buf) - 1 ? len[i] - 1 : sizeof(buf) - 1;
			memcpy(buf, tok[i], k);
			buf[k] = '\0';
			double t = strtod(buf, &e);
			if (*e == '\0') {
				s->time = t;
				s->has_time = true;
			}
			break;
		}
	}
}

/* "comm pid/tid ...": comm is the shortest run starting with a non-space that
 * is followed by blanks, a number (optionally /number) and a blank. */
static bool parse_header(struct parser *ps, const char *p, const char *end)
{
	struct ps_sample *s = &ps->cur;
	for (const char *q = p + 1; q < end; q++) {
		if (!is_space(*q))
			continue;
		const char *c_end = q, *r = q;
		while (r < end && is_space(*r))
			r++;
		if (r == end || !is_digit(*r))
			continue;
		const char *after;
		long a = parse_num(r, end, &after), b = -1;
		if (after < end && *after == '/' && after + 1 < end && is_digit(after[1]))
			b = parse_num(after + 1, end, &after);
		if (after < end && !is_space(*after))
			continue;
		memset(s, 0, sizeof(*s));
		s->comm = (struct ps_str){ p, (size_t)(c_end - p) };
		s->pid = b >= 0 ? a : -1;
		s->tid = b >= 0 ? b : a;
		parse_header_tail(s, after, end);
		return true;
	}
	return false;
}

/* "\t  7f1234 sym+0x10 (/path/dso)" */
static bool parse_frame(struct parser *ps, const char *p, const char *end)
{
	struct ps_frame f;
	while (p < end && is_space(*p))
		p++;
	const char *pc = p;
	while (p < end && is_word(*p))
		p++;
	if (p == pc)
		return false;
	f.pc = (struct ps_str){ pc, (size_t)(p - pc) };
	while (end > p && is_space(end[-1]))
		end--;
	while (p < end && is_space(*p))
		p++;
	/* the dso: the last "(...)" without blanks, after a blank */
	if (end - p < 4 || end[-1] != ')')
		return false;
	const char *open = memrchr(p, '(', (size_t)(end - 1 - p));
	if (!open || memchr(open, ' ', (size_t)(end - open)) || memchr(open, '\t', (size_t)(end - open)) ||
	    open - 1 <= p || open[-1] != ' ')
		return false;
	f.dso = (struct ps_str){ open + 1, (size_t)(end - 1 - (open + 1)) };
	f.sym = (struct ps_str){ p, (size_t)(open - 1 - p) };
	if (ps->nframes == ps->cap) {
		size_t cap = ps->cap ? ps->cap * 2 : 256;
		struct ps_frame *nf = realloc(ps->frames, cap * sizeof(*nf));
		if (!nf) {
			ps->oom = true;
			return true;
		}
		ps->frames = nf;
		ps->cap = cap;
	}
	ps->frames[ps->nframes++] = f;
	return true;
}

static void end_sample(struct parser *ps)
{
	if (!ps->in_sample)
		return;
	ps->cur.frames = ps->frames;
	ps->cur.nframes = ps->nframes;
	ps->st->samples++;
	if (ps->fn(ps->ctx, &ps->cur) != 0)
		ps->stop = true;
	ps->in_sample = false;
	ps->nframes = 0;
}

static void parse_line(struct parser *ps, const char *p, size_t n)
{
	const char *end = p + n;
	ps->st->lines++;
	if (n > 0 && end[-1] == '\r')
		end--, n--;
	if (n == 0) {
		end_sample(ps);
		return;
	}
	if (*p == '#')
		return;
	if (!is_space(*p)) {
		/* a header starts a sample (one without a blank line before it ends the last) */
		end_sample(ps);
		if (parse_header(ps, p, end)) {
			ps->in_sample = true;
			ps->sample_line = p;
		}
		else
			bad_line(ps, p, n);
		return;
	}
	if (!ps->in_sample)
		return; /* frames of a sample whose header was not understood */
	if (!parse_frame(ps, p, end)) {
		const char *q = p;
		while (q < end && is_space(*q))
			q++;
		if (q < end)
			bad_line(ps, p, n);
	}
}

/* Lines of buf[0..len); returns how much was consumed (whole lines). */
static size_t parse_lines(struct parser *ps, const char *buf, size_t len, bool last)
{
	size_t off = 0;
	while (off < len && !ps->stop) {
		const char *nl = memchr(buf + off, '\n', len - off);
		if (!nl) {
			if (!last)
				break;
			parse_line(ps, buf + off, len - off);
			off = len;
			break;
		}
		size_t n = (size_t)(nl - (buf + off));
		if (n > PS_MAX_LINE)
			ps->st->long_lines++;
		else
			parse_line(ps, buf + off, n);
		off += n + 1;
	}
	return off;
}

int perf_script_parse_buffer(const char *buf, size_t len, ps_sample_fn fn, void *ctx, struct ps_stats *st)
{
	struct parser ps = { .fn = fn, .ctx = ctx, .st = st };
	memset(st, 0, sizeof(*st));
	parse_lines(&ps, buf, len, true);
	if (!ps.stop)
		end_sample(&ps);
	free(ps.frames);
	return ps.oom ? -1 : 0;
}

/* Moves every pointer of the sample under way from old to new (same offsets). */
static void rebase(struct parser *ps, const char *old, char *new)
{
#define REBASE(x) ((x) = new + ((x) - old))
	for (size_t i = 0; i < ps->nframes; i++) {
		REBASE(ps->frames[i].pc.p);
		REBASE(ps->frames[i].sym.p);
		REBASE(ps->frames[i].dso.p);
	}
	if (ps->in_sample) {
		REBASE(ps->cur.comm.p);
		if (ps->cur.event.p)
			REBASE(ps->cur.event.p);
		REBASE(ps->sample_line);
	}
#undef REBASE
}

/* Frames point into the buffer, so the sample under way stays in it: what
 * is kept between reads starts at its header line. */
int perf_script_parse_file(const char *path, ps_sample_fn fn, void *ctx, struct ps_stats *st, char *err,
			   size_t errlen)
{
	struct parser ps = { .fn = fn, .ctx = ctx, .st = st };
	size_t cap = CHUNK, have = 0, pos = 0;
	bool skipping = false; /* inside a line too long to keep */
	char *buf = malloc(cap);
	int rc = -1;
	bool stdin_in = strcmp(path, "-") == 0;
	const char *name = stdin_in ? "standard input" : path;
	gzFile in = NULL;

	memset(st, 0, sizeof(*st));
	errno = 0;
	in = stdin_in ? gzdopen(0, "rb") : gzopen(path, "rb");
	if (!in || !buf) {
		snprintf(err, errlen, "jflame: failed to open %s: %s", name,
			 !buf ? "out of memory" : strerror(errno ? errno : ENOMEM));
		goto out;
	}
	gzbuffer(in, 1u << 18);
	for (;;) {
		int got = gzread(in, buf + have, (unsigned)(cap - have));
		if (got < 0) {
			int zerr;
			const char *msg = gzerror(in, &zerr);
			snprintf(err, errlen, "jflame: failed to read %s: %s%s", name, zerr == Z_ERRNO ? strerror(errno) : msg,
				 zerr == Z_BUF_ERROR || zerr == Z_DATA_ERROR ? " (a truncated or damaged gzip file?)" : "");
			goto out;
		}
		if (got == 0) {
			/* zlib's word for "the gzip stream stopped in the middle" */
			int zerr;
			gzerror(in, &zerr);
			if (zerr == Z_BUF_ERROR) {
				snprintf(err, errlen, "jflame: %s ends in the middle of its gzip data (truncated?)", name);
				goto out;
			}
		}
		have += (size_t)got;
		bool eof = got == 0;
		if (skipping) {
			char *nl = memchr(buf + pos, '\n', have - pos);
			if (nl) {
				pos = (size_t)(nl - buf) + 1;
				skipping = false;
			} else {
				pos = have;
			}
		}
		if (!skipping)
			pos += parse_lines(&ps, buf + pos, have - pos, eof);
		if (ps.stop || eof)
			break;
		size_t keep = ps.in_sample ? (size_t)(ps.sample_line - buf) : pos;
		if (keep == 0 && have == cap) {
			if (pos == 0 || cap >= PS_MAX_SAMPLE) {
				/* one line fills the buffer, or a sample is absurdly long: drop it */
				st->long_lines++;
				ps.in_sample = false;
				ps.nframes = 0;
				skipping = pos == 0;
				keep = skipping ? have : pos;
				pos = keep;
			} else {
				char *bigger = malloc(cap * 2);
				if (!bigger) {
					ps.oom = true;
					break;
				}
				memcpy(bigger, buf, have);
				rebase(&ps, buf, bigger);
				free(buf);
				buf = bigger;
				cap *= 2;
				continue;
			}
		}
		memmove(buf, buf + keep, have - keep);
		rebase(&ps, buf + keep, buf);
		have -= keep;
		pos -= keep;
	}
	if (!ps.stop && !ps.oom)
		end_sample(&ps);
	if (ps.oom) {
		snprintf(err, errlen, "jflame: out of memory reading %s", name);
		goto out;
	}
	rc = 0;
out:
	if (in)
		gzclose(in);
	free(buf);
	free(ps.frames);
	return rc;
}
