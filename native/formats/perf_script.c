/* perf_script.c - parses `perf script` text as stackcollapse-perf.pl reads it:
 * "comm pid/tid [cpu] time: period event:" headers, "pc sym (dso)" frames, blank ends. */
#include "perf_script.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "grow.h"
#include "swar.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

#define CHUNK	      (4u << 20)
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

/* [0-9A-Za-z_], by table: a frame's address is scanned a byte at a time */
static const unsigned char word_chars[256] = {
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1, ['8'] = 1,
	['9'] = 1, ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1,
	['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1,
	['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1, ['y'] = 1, ['z'] = 1,
	['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1, ['I'] = 1,
	['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1,
	['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1, ['Y'] = 1, ['Z'] = 1, ['_'] = 1,
};

static bool is_word(char c)
{
	return word_chars[(unsigned char)c];
}

/* "123.456789" as strtod reads it, without its set-up: up to 15 digits make an
 * exact integer, and one division by an exact power of ten rounds as strtod
 * does (Clinger's fast path). Anything else goes to strtod. */
static bool parse_time(const char *p, size_t n, double *out)
{
	static const double pow10[] = { 1e0, 1e1, 1e2,	1e3,  1e4,  1e5,  1e6,	1e7,
					1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15 };
	uint64_t m = 0;
	size_t digits = 0, frac = 0, i = 0;
	bool dot = false;
	for (; i < n; i++) {
		char c = p[i];
		if (is_digit(c)) {
			m = m * 10 + (uint64_t)(c - '0');
			digits++;
			frac += dot;
		} else if (c == '.' && !dot) {
			dot = true;
		} else {
			break;
		}
	}
	if (i == n && digits > 0 && digits <= 15 && (!dot || frac > 0)) {
		*out = (double)m / pow10[frac];
		return true;
	}
	char buf[48], *e;
	size_t k = n < sizeof(buf) - 1 ? n : sizeof(buf) - 1;
	memcpy(buf, p, k);
	buf[k] = '\0';
	double t = strtod(buf, &e);
	if (*e != '\0')
		return false;
	*out = t;
	return true;
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
	/* the event: the last token, ending in ':', printable (an event name) */
	bool printable = n > 0;
	for (size_t i = 0; printable && i < len[n - 1]; i++)
		printable = tok[n - 1][i] > ' ' && tok[n - 1][i] < 127;
	if (printable && len[n - 1] > 1 && tok[n - 1][len[n - 1] - 1] == ':' && !is_digit(tok[n - 1][0])) {
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
			double t;
			if (parse_time(tok[i], len[i] - 1, &t)) {
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
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* the indent ("\t" and padding): counted without a loop that mispredicts */
	if (end - p >= 8) {
		uint64_t w = swar_load(p);
		uint64_t blank = swar_eq(w, swar_rep(' ')) | swar_eq(w, swar_rep('\t')) | swar_eq(w, swar_rep('\r'));
		uint64_t other = ~blank & (SWAR_ONES << 7);
		if (other)
			p += __builtin_ctzll(other) >> 3;
	}
#endif
	while (p < end && is_space(*p))
		p++;
	const char *pc = p;
	/* the address: sixteen bytes tested at once, its length without a loop */
	if (end - p >= 16) {
#define W(k) ((unsigned)word_chars[(unsigned char)p[k]] << (k))
		unsigned bits = W(0) | W(1) | W(2) | W(3) | W(4) | W(5) | W(6) | W(7) | W(8) | W(9) | W(10) | W(11) |
				W(12) | W(13) | W(14) | W(15);
#undef W
		p += bits == 0xffff ? 16 : __builtin_ctz(~bits);
	}
	while (p < end && is_word(*p))
		p++;
	if (p == pc)
		return false;
	f.pc = (struct ps_str){ pc, (size_t)(p - pc) };
	while (end > p && is_space(end[-1]))
		end--;
	const char *gap = p; /* the blanks between the address and the symbol */
	while (p < end && is_space(*p))
		p++;
	/* the dso: the last "(...)" without blanks, after a blank; one scan back */
	if (end - p < 4 || end[-1] != ')')
		return false;
	const char *open = NULL, *hi = end - 1;
	/* eight bytes a step over those without '(', ' ' or '\t' */
	while (hi - p >= 8) {
		uint64_t w = swar_load(hi - 8);
		if (swar_eq(w, swar_rep('(')) | swar_eq(w, swar_rep(' ')) | swar_eq(w, swar_rep('\t')))
			break;
		hi -= 8;
	}
	for (const char *q = hi - 1; q >= p; q--) {
		if (*q == '(') {
			open = q;
			break;
		}
		if (*q == ' ' || *q == '\t')
			return false;
	}
	if (!open || open[-1] != ' ')
		return false;
	if (open - 1 > p) {
		f.sym = (struct ps_str){ p, (size_t)(open - 1 - p) };
	} else if (open == p && p - gap >= 2) {
		/* "7f1e2215d058  (/lib/libc.so.6)": no symbol. stackcollapse-perf.pl's
		 * "(\w+)\s*(.+) \(" then takes one blank as the name; so do we */
		f.sym = (struct ps_str){ open - 2, 1 };
	} else {
		return false;
	}
	f.dso = (struct ps_str){ open + 1, (size_t)(end - 1 - (open + 1)) };
	if (ARRAY_GROW(ps->frames, ps->cap, ps->nframes + 1) != 0) {
		ps->oom = true;
		return true;
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
	ps->st->real += ps->nframes > 0 || ps->cur.has_time || ps->cur.event.n > 0;
	if (ps->fn(ps->ctx, &ps->cur) != 0)
		ps->stop = true;
	ps->in_sample = false;
	ps->nframes = 0;
}

/* "  Foo.java:42" (perf script -F+srcline): the line under a frame, "??:0" unknown. */
static bool is_srcline(const char *p, const char *end)
{
	const char *colon = NULL;
	for (const char *q = p; q < end; q++) {
		if (is_space(*q))
			return false;
		if (*q == ':')
			colon = q;
	}
	if (!colon || colon + 1 == end)
		return false;
	for (const char *q = colon + 1; q < end; q++)
		if (!is_digit(*q))
			return false;
	return true;
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
		if (memchr(p, '\0', n)) {
			bad_line(ps, p, n); /* perf script prints no NUL: not its header */
			return;
		}
		/* a header starts a sample (one without a blank line before it ends the
		 * last); older perf scripts print frames without an indent, which
		 * stackcollapse-perf.pl takes as frames when they are no header */
		struct ps_sample prev = ps->cur;
		if (parse_header(ps, p, end)) {
			struct ps_sample next = ps->cur;
			ps->cur = prev;
			end_sample(ps);
			ps->cur = next;
			ps->cur.line = ps->st->lines + ps->st->long_lines;
			ps->in_sample = true;
			ps->sample_line = p;
		} else if (!ps->in_sample || !parse_frame(ps, p, end)) {
			bad_line(ps, p, n); /* warned about; the sample goes on, as the perl's */
		}
		return;
	}
	if (!ps->in_sample)
		return; /* frames of a sample whose header was not understood */
	if (!parse_frame(ps, p, end)) {
		const char *q = p;
		while (q < end && is_space(*q))
			q++;
		if (q < end && !is_srcline(q, end))
			bad_line(ps, p, n);
	}
}

/* The next '\n' in p[0..end), or NULL: lines are short, so sixteen bytes a
 * step inline beats a call. */
static const char *find_newline(const char *p, const char *end)
{
#ifdef __SSE2__
	const __m128i nl = _mm_set1_epi8('\n');
	while (end - p >= 16) {
		int m = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)p), nl));
		if (m)
			return p + __builtin_ctz((unsigned)m);
		p += 16;
	}
#endif
	return memchr(p, '\n', (size_t)(end - p));
}

/* Lines of buf[0..len); returns how much was consumed (whole lines). */
static size_t parse_lines(struct parser *ps, const char *buf, size_t len, bool last)
{
	size_t off = 0;
	while (off < len && !ps->stop) {
		const char *nl = find_newline(buf + off, buf + len);
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
#define REBASE(x) ((x) = new + ((x)-old))
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

#define MAP_WINDOW (8u << 20)

/* A plain regular file smaller than PS_MAX_SAMPLE is mapped and parsed in
 * place, no copy through read(): the same lines as the chunked reader below
 * (which differs only for a sample longer than PS_MAX_SAMPLE, which such a
 * file cannot hold). It goes a window of whole lines at a time, giving back
 * the pages behind the sample under way. Returns the mapping (for the caller
 * to unmap once the last sample is out), or NULL when the file is not for
 * this (gzip, a pipe, empty, too big, unopenable: the reader reports those). */
static char *parse_mapped(const char *path, struct parser *ps, size_t *maplen)
{
	struct stat sb;
	unsigned char magic[2];
	char *map;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || sb.st_size < 2 || (uint64_t)sb.st_size >= PS_MAX_SAMPLE ||
	    pread(fd, magic, 2, 0) != 2 || (magic[0] == 0x1f && magic[1] == 0x8b)) {
		close(fd);
		return NULL;
	}
	size_t len = (size_t)sb.st_size, pos = 0, given = 0;
	long pagesz = sysconf(_SC_PAGESIZE);
	size_t page = pagesz > 0 ? (size_t)pagesz : 4096;
	map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return NULL;
	madvise(map, len, MADV_SEQUENTIAL);
	while (pos < len && !ps->stop) {
		size_t end = len;
		if (len - pos > MAP_WINDOW) {
			const char *nl = memchr(map + pos + MAP_WINDOW, '\n', len - pos - MAP_WINDOW);
			if (nl)
				end = (size_t)(nl - map) + 1;
		}
		pos += parse_lines(ps, map + pos, end - pos, end == len);
		size_t keep = ps->in_sample ? (size_t)(ps->sample_line - map) : pos;
		keep -= keep % page;
		if (keep > given) {
			madvise(map + given, keep - given, MADV_DONTNEED);
			given = keep;
		}
		if (end == len)
			break;
	}
	*maplen = len;
	return map;
}

/* Frames point into the buffer, so the sample under way stays in it: what
 * is kept between reads starts at its header line. */
int perf_script_parse_file(const char *path, ps_sample_fn fn, void *ctx, struct ps_stats *st, char *err, size_t errlen)
{
	struct parser ps = { .fn = fn, .ctx = ctx, .st = st };
	size_t cap = CHUNK, have = 0, pos = 0;
	bool skipping = false; /* inside a line too long to keep */
	char *buf = malloc(cap);
	int rc = -1;
	bool stdin_in = strcmp(path, "-") == 0;
	const char *name = stdin_in ? "standard input" : path;
	gzFile in = NULL;
	char *map = NULL;
	size_t maplen = 0;

	memset(st, 0, sizeof(*st));
	if (!stdin_in && buf && (map = parse_mapped(path, &ps, &maplen)) != NULL)
		goto done;
	errno = 0;
	in = stdin_in ? gzdopen(0, "rb") : gzopen(path, "rb");
	if (!in || !buf) {
		snprintf(err, errlen, "failed to open %s: %s", name,
			 !buf ? "out of memory" : strerror(errno ? errno : ENOMEM));
		goto out;
	}
	gzbuffer(in, 1u << 18);
	for (;;) {
		int got = gzread(in, buf + have, (unsigned)(cap - have));
		if (got < 0) {
			int zerr;
			const char *msg = gzerror(in, &zerr);
			snprintf(err, errlen, "failed to read %s: %s%s", name, zerr == Z_ERRNO ? strerror(errno) : msg,
				 zerr == Z_BUF_ERROR || zerr == Z_DATA_ERROR ? " (a truncated or damaged gzip file?)" :
									       "");
			goto out;
		}
		if (got == 0) {
			/* zlib's word for "the gzip stream stopped in the middle" */
			int zerr;
			gzerror(in, &zerr);
			if (zerr == Z_BUF_ERROR) {
				snprintf(err, errlen, "%s ends in the middle of its gzip data (truncated?)", name);
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
done:
	if (!ps.stop && !ps.oom)
		end_sample(&ps);
	if (ps.oom) {
		snprintf(err, errlen, "out of memory reading %s", name);
		goto out;
	}
	rc = 0;
out:
	if (in)
		gzclose(in);
	if (map)
		munmap(map, maplen);
	free(buf);
	free(ps.frames);
	return rc;
}
