/* collapse.c - one perf script sample to one folded line: root frame from
 * comm (and pid/tid), frames root first, names tidied and annotated as stackcollapse-perf.pl. */
#include "collapse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame_mark.h"
#include "grow.h"
#include "swar.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

void collapse_init(struct collapse *c, const struct collapse_opts *o, struct recording *rec)
{
	memset(c, 0, sizeof(*c));
	c->o = *o;
	c->rec = rec;
	if (o->event) {
		snprintf(c->event, sizeof(c->event), "%s", o->event);
		c->have_event = true;
	}
}

void collapse_free(struct collapse *c)
{
	free(c->buf);
	c->buf = NULL;
}

static bool reserve(struct collapse *c, size_t len, size_t more)
{
	return ARRAY_GROW(c->buf, c->cap, len + more + 1) == 0;
}

static bool has_str(const char *p, size_t n, const char *needle)
{
	return memmem(p, n, needle, strlen(needle)) != NULL;
}

/* The next "/<what>" in p[0..n) (a short needle starting with '/'), or NULL;
 * memchr for the slashes beats memmem's set-up on short paths. */
static const char *find_slash(const char *p, size_t n, const char *what, size_t wn)
{
	const char *end = p + n;
	for (const char *q = p; q < end && (q = memchr(q, '/', (size_t)(end - q))); q++)
		if ((size_t)(end - q) >= wn && memcmp(q, what, wn) == 0)
			return q;
	return NULL;
}

/* "/tmp/perf-123.map" */
static bool is_perf_map(const char *p, size_t n)
{
	for (const char *q = p; (q = find_slash(q, n - (size_t)(q - p), "/tmp/perf-", 10)); q++) {
		size_t i = (size_t)(q - p), j = i + 10, d = j;
		while (j < n && p[j] >= '0' && p[j] <= '9')
			j++;
		if (j > d && n - j >= 4 && memcmp(p + j, ".map", 4) == 0)
			return true;
	}
	return false;
}

/* "[interpreted]": a Java method the interpreter ran (jflame record's .stacks) */
static bool is_interpreted(const char *p, size_t n)
{
	return n == 13 && memcmp(p, "[interpreted]", 13) == 0;
}

/* "/jitted-123-4.so" (perf inject --jit) */
static bool is_jitted_so(const char *p, size_t n)
{
	for (const char *q = p; (q = find_slash(q, n - (size_t)(q - p), "/jitted-", 8)); q++) {
		size_t i = (size_t)(q - p), j = i + 8, d = j;
		while (j < n && p[j] >= '0' && p[j] <= '9')
			j++;
		if (j == d || j >= n || p[j] != '-')
			continue;
		size_t e = ++j;
		while (j < n && p[j] >= '0' && p[j] <= '9')
			j++;
		if (j > e && n - j >= 3 && memcmp(p + j, ".so", 3) == 0)
			return true;
	}
	return false;
}

/* Appends one function (a piece of an inline chain) tidied and annotated. */
static bool add_func(struct collapse *c, size_t *len, const char *f, size_t n, const struct ps_frame *fr, bool java,
		     bool inlined)
{
	const char *dso = fr->dso.p;
	size_t dn = fr->dso.n;
	char name[4096];
	size_t k = 0;

	if (n == 9 && memcmp(f, "[unknown]", 9) == 0) {
		/* the module's file name instead, if known */
		const char *m = "unknown";
		size_t mn = 7;
		if (!(dn == 9 && memcmp(dso, "[unknown]", 9) == 0)) {
			m = dso;
			mn = dn;
			for (size_t i = dn; i > 0; i--) {
				if (dso[i - 1] == '/') {
					m = dso + i;
					mn = dn - i;
					break;
				}
			}
		}
		if (c->o.addrs)
			k = (size_t)snprintf(name, sizeof(name), "[%.*s <%.*s>]", (int)mn, m, (int)fr->pc.n, fr->pc.p);
		else
			k = (size_t)snprintf(name, sizeof(name), "[%.*s]", (int)mn, m);
		if (k >= sizeof(name))
			k = sizeof(name) - 1;
	} else {
		/* tidy: ';' would split the frame; from the first '(' on is a
		 * signature (but not a Go method's "pkg.(*T).m", nor "(anonymous
		 * namespace)"); quotes go */
		bool go = false;
		const char *open = memchr(f, '(', n);
		for (const char *q = open; q && !go; q = memchr(q + 1, '(', n - (size_t)(q + 1 - f)))
			go = q > f && q[-1] == '.' && memmem(q + 1, n - (size_t)(q + 1 - f), ").", 2) != NULL;
		size_t cut = n;
		for (const char *q = go ? NULL : open; q; q = memchr(q + 1, '(', n - (size_t)(q + 1 - f))) {
			size_t i = (size_t)(q - f);
			if (!(n - i - 1 >= 20 && memcmp(q + 1, "anonymous namespace)", 20) == 0)) {
				cut = i;
				break;
			}
		}
		/* the common case is a plain copy; the fix-ups are rare. ';' -> ':' is
		 * folded_char.h's rule (a perf script line holds no line break or NUL) */
		k = cut < sizeof(name) - 1 ? cut : sizeof(name) - 1;
		memcpy(name, f, k);
		for (char *q = memchr(name, ';', k); q; q = memchr(q + 1, ';', k - (size_t)(q + 1 - name)))
			*q = ':';
		if (memchr(name, '"', k) || memchr(name, '\'', k)) {
			size_t w = 0;
			for (size_t i = 0; i < k; i++) {
				char ch = name[i];
				if (ch == '"' || ch == '\'')
					continue;
				name[w++] = ch == ';' ? ':' : ch;
			}
			k = w;
		}
		name[k] = '\0';
		/* Java: "Lpkg/Class;::m" -> "pkg/Class::m" ("java" processes only) */
		if (java && k > 0 && name[0] == 'L' && memchr(name, '/', k)) {
			memmove(name, name + 1, k);
			k--;
		}
	}
	const char *ann = NULL;
	if (inlined)
		ann = FRAME_MARK_INLINED;
	else if (c->o.jit && is_interpreted(dso, dn))
		ann = FRAME_MARK_INTERP;
	else if (c->o.kernel && dn > 0 && (dso[0] == '[' || (dn >= 7 && memcmp(dso + dn - 7, "vmlinux", 7) == 0)) &&
		 !has_str(dso, dn, "unknown"))
		ann = FRAME_MARK_KERNEL;
	else if (c->o.jit && (is_perf_map(dso, dn) || is_jitted_so(dso, dn)))
		ann = FRAME_MARK_JIT;
	size_t total = k + (ann ? 4 : 0) + 1;
	if (!reserve(c, *len, total))
		return false;
	c->buf[(*len)++] = ';';
	memcpy(c->buf + *len, name, k);
	*len += k;
	if (ann) {
		memcpy(c->buf + *len, ann, 4);
		*len += 4;
	}
	return true;
}

/* The annotation a frame's dso gives it ("_[k]", "_[j]" or none), as add_func
 * decides; remembered for the last few dsos, since a recording has few. */
static const char *dso_annotation(struct collapse *c, const struct ps_frame *fr)
{
	const char *dso = fr->dso.p, *ann = NULL;
	size_t dn = fr->dso.n;
	if (!c->o.kernel && !c->o.jit)
		return NULL;
	for (unsigned k = 0; k < c->ndsos; k++) {
		/* the last one found first: frames of a module come in runs */
		unsigned i = (c->last_dso + k) % c->ndsos;
		struct collapse_dso *d = &c->dsos[i];
		if (d->len == dn && swar_same(d->name, dso, dn)) {
			c->last_dso = i;
			return d->ann == 'k' ? FRAME_MARK_KERNEL :
			       d->ann == 'j' ? FRAME_MARK_JIT :
			       d->ann == '0' ? FRAME_MARK_INTERP :
					       NULL;
		}
	}
	if (c->o.jit && is_interpreted(dso, dn))
		ann = FRAME_MARK_INTERP;
	else if (c->o.kernel && dn > 0 && (dso[0] == '[' || (dn >= 7 && memcmp(dso + dn - 7, "vmlinux", 7) == 0)) &&
		 !has_str(dso, dn, "unknown"))
		ann = FRAME_MARK_KERNEL;
	else if (c->o.jit && (is_perf_map(dso, dn) || is_jitted_so(dso, dn)))
		ann = FRAME_MARK_JIT;
	if (dn <= sizeof(c->dsos[0].name)) {
		struct collapse_dso *d = &c->dsos[c->next_dso];
		memcpy(d->name, dso, dn);
		d->len = (uint16_t)dn;
		d->ann = ann ? ann[2] : 0;
		c->next_dso = (c->next_dso + 1) % COLLAPSE_DSO_CACHE;
		if (c->ndsos < COLLAPSE_DSO_CACHE)
			c->ndsos++;
	}
	return ann;
}

/* The tidying of a function name a byte at a time without a branch that
 * mispredicts: ';' becomes ':', quotes go; only '-' (an arrow?) and '(' (a
 * signature?) stop the copy. */
static const unsigned char tidy_stop[256] = { ['-'] = 1, ['('] = 1 };

/* add_func for the common piece of f[start..n): one pass that copies, turns ';'
 * into ':', drops quotes and stops at "->". 1 done (*end: where the piece
 * ends), 0 when the piece needs add_func ('(', "[...", overlong: nothing
 * written), -1 out of memory. */
static int add_func_fast(struct collapse *c, size_t *len, const char *f, size_t start, size_t n, bool java,
			 const char *ann, size_t *end)
{
	const unsigned char *p = (const unsigned char *)f + start;
	size_t rem = n - start, i = 0;
	uint64_t slashes = 0;
	if (rem > 0 && p[0] == '[')
		return 0;
	if (!reserve(c, *len, rem + 5))
		return -1;
	char *o = c->buf + *len, *name = o + 1;
	/* "Lpkg/Class;::m" loses its 'L' if it has a '/': left out now, put back if not */
	bool drop_l = java && rem > 0 && p[0] == 'L';
	*o++ = ';';
	i = drop_l;
#ifdef __SSE2__
	/* sixteen bytes a step while they hold no '-', '(' or quote; ';' -> ':' in place */
	while (i + 16 <= rem) {
		__m128i v = _mm_loadu_si128((const __m128i *)(p + i));
		__m128i stop = _mm_or_si128(
			_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('-')), _mm_cmpeq_epi8(v, _mm_set1_epi8('('))),
			_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\''))));
		if (_mm_movemask_epi8(stop))
			break;
		slashes |= (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('/')));
		v = _mm_add_epi8(v, _mm_cmpeq_epi8(v, _mm_set1_epi8(';'))); /* -1 where ';': ':' */
		_mm_storeu_si128((__m128i *)o, v);
		o += 16;
		i += 16;
	}
#endif
	/* eight bytes a step while they hold no '-', '(' or quote; ';' -> ':' in place */
	while (i + 8 <= rem) {
		uint64_t w = swar_load(p + i);
		if (swar_eq(w, swar_rep('-')) | swar_eq(w, swar_rep('(')) | swar_eq(w, swar_rep('"')) |
		    swar_eq(w, swar_rep('\'')))
			break;
		slashes |= swar_eq(w, swar_rep('/'));
		w -= swar_eq(w, swar_rep(';')) >> 7; /* ':' is ';' - 1 */
		memcpy(o, &w, 8);
		o += 8;
		i += 8;
	}
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (i < rem && rem - i < 8 && i >= 8) {
		/* the tail: the last eight bytes, of which the first 8 - tail were
		 * copied as they are already (nothing in them changes), so they
		 * can be written again */
		size_t tail = rem - i;
		uint64_t w = swar_load(p + rem - 8), mine = ~0ULL << (8 * (8 - tail));
		if (!((swar_eq(w, swar_rep('-')) | swar_eq(w, swar_rep('(')) | swar_eq(w, swar_rep('"')) |
		       swar_eq(w, swar_rep('\''))) &
		      mine)) {
			slashes |= swar_eq(w, swar_rep('/')) & mine;
			w -= swar_eq(w, swar_rep(';')) >> 7;
			memcpy(o - (8 - tail), &w, 8);
			o += tail;
			i = rem;
		}
	}
#endif
	for (; i < rem; i++) {
		unsigned char ch = p[i];
		if (tidy_stop[ch]) {
			if (ch == '(')
				return 0;
			if (i + 1 < rem && p[i + 1] == '>')
				break;
		}
		*o = (char)(ch == ';' ? ':' : ch);
		o += ch != '"' && ch != '\'';
		slashes |= ch == '/';
	}
	if (i > 4095)
		return 0;
	if (drop_l && !slashes) {
		memmove(name + 1, name, (size_t)(o - name));
		name[0] = 'L';
		o++;
	} else if (!drop_l && java && o > name && name[0] == 'L' && slashes) {
		memmove(name, name + 1, (size_t)(o - name - 1));
		o--;
	}
	if (ann) {
		memcpy(o, ann, 4);
		o += 4;
	}
	*len = (size_t)(o - c->buf);
	*end = start + i;
	return 1;
}

static const unsigned char lower_hex[256] = {
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
	['8'] = 1, ['9'] = 1, ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1,
};

/* the decimal digits of v at p; returns their count */
static size_t put_long(char *p, long v)
{
	char tmp[24];
	size_t n = 0, k = 0;
	unsigned long u = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;
	do
		tmp[n++] = (char)('0' + u % 10);
	while ((u /= 10) != 0);
	if (v < 0)
		p[k++] = '-';
	while (n)
		p[k++] = tmp[--n];
	return k;
}

int collapse_fold(struct collapse *c, const struct ps_sample *s, char **stack, size_t *stack_len)
{
	size_t len = 0;

	if (s->has_time && !c->have_t0) {
		c->t0 = s->time;
		c->have_t0 = true;
	}
	/* one kind of event: mixing cycles and instructions misleads */
	if (s->event.n) {
		if (!c->have_event) {
			size_t n = s->event.n < sizeof(c->event) - 1 ? s->event.n : sizeof(c->event) - 1;
			memcpy(c->event, s->event.p, n);
			c->event[n] = '\0';
			c->have_event = true;
		} else if (strlen(c->event) != s->event.n || memcmp(c->event, s->event.p, s->event.n) != 0) {
			c->other_event++;
			return 0;
		}
	}
	if ((c->o.has_from || c->o.has_to) && s->has_time) {
		double t = s->time - c->t0;
		if ((c->o.has_from && t < c->o.from) || (c->o.has_to && t >= c->o.to)) {
			c->out_of_range++;
			return 0;
		}
	}
	/* the root: comm (blanks as '_'), with -PID or -PID/TID ('?' when perf printed no pid) */
	char root[512];
	size_t cn = s->comm.n < 256 ? s->comm.n : 256;
	cn = strnlen(s->comm.p, cn); /* as "%.*s" would stop at a NUL */
	int rn;
	memcpy(root, s->comm.p, cn);
	rn = (int)cn;
	if (c->o.tid || c->o.pid) {
		root[rn++] = '-';
		/* "swapper 0/0": the perl takes tid 0 as no tid, and its pid as unknown */
		if (s->pid >= 0 && s->tid != 0)
			rn += (int)put_long(root + rn, s->pid);
		else
			root[rn++] = '?';
		if (c->o.tid) {
			root[rn++] = '/';
			rn += (int)put_long(root + rn, s->tid);
		}
	}
	for (int i = 0; i < rn; i++)
		if (root[i] == ' ' || root[i] == '\t')
			root[i] = '_';
		else if (root[i] == ';')
			root[i] = ':';
	/* stackcollapse-perf.pl tidies Java names of processes whose name (with
	 * -pid/tid) starts with "java" */
	bool java = rn >= 4 && memcmp(root, "java", 4) == 0;
	if (!reserve(c, 0, (size_t)rn))
		goto oom;
	memcpy(c->buf, root, (size_t)rn);
	len = (size_t)rn;
	for (size_t i = s->nframes; i > 0; i--) {
		const struct ps_frame *fr = &s->frames[i - 1];
		const char *f = fr->sym.p;
		size_t n = fr->sym.n;
		/* perf 4.8+ prints symbol offsets: sym+0x1a */
		if (n >= 8) {
			/* the hex digits ending it, by table without a loop */
			const unsigned char *e = (const unsigned char *)f + n;
			unsigned bits = lower_hex[e[-1]] | lower_hex[e[-2]] << 1 | lower_hex[e[-3]] << 2 |
					lower_hex[e[-4]] << 3 | lower_hex[e[-5]] << 4 | lower_hex[e[-6]] << 5 |
					lower_hex[e[-7]] << 6 | lower_hex[e[-8]] << 7;
			if (bits != 0xff) {
				size_t j = n - (size_t)__builtin_ctz(~bits);
				if (j > 2 && f[j - 1] == 'x' && f[j - 2] == '0' && f[j - 3] == '+' && j < n)
					n = j - 3;
				goto stripped;
			}
		}
		for (size_t j = n; j > 2; j--) {
			char ch = f[j - 1];
			if ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))
				continue;
			if (ch == 'x' && j >= 3 && f[j - 2] == '0' && f[j - 3] == '+' && j < n)
				n = j - 3;
			break;
		}
stripped:
		if (n > 0 && f[0] == '(')
			continue; /* a process name, not a function */
		/* "A->B->C": an inline chain, outermost first */
		size_t start = 0;
		bool inlined = false;
		const char *ann = dso_annotation(c, fr);
		for (;;) {
			size_t end;
			int r = add_func_fast(c, &len, f, start, n, java, inlined ? FRAME_MARK_INLINED : ann, &end);
			if (r < 0)
				goto oom;
			if (r > 0) {
				if (end == n)
					break;
				inlined = true;
				start = end + 2;
				continue;
			}
			const char *arrow = NULL;
			for (const char *q = memchr(f + start, '-', n - start); q && !arrow;
			     q = memchr(q + 1, '-', n - (size_t)(q + 1 - f)))
				if ((size_t)(q + 1 - f) < n && q[1] == '>')
					arrow = q;
			size_t j = arrow ? (size_t)(arrow - f) : n;
			if (!add_func(c, &len, f + start, j - start, fr, java, inlined))
				goto oom;
			if (!arrow)
				break;
			inlined = true;
			start = j + 2;
		}
	}
	*stack = c->buf;
	*stack_len = len;
	return 1;
oom:
	c->oom = true;
	return -1;
}

int collapse_sample(void *ctx, const struct ps_sample *s)
{
	struct collapse *c = ctx;
	char *stack;
	size_t len;
	int r = collapse_fold(c, s, &stack, &len);
	if (r <= 0)
		return r < 0 ? 1 : 0;
	uint64_t w = s->has_period && s->period > 0 ? s->period : 1;
	if (w >= COLLAPSE_MAX_TOTAL - c->rec->total) {
		c->too_big_line = s->line ? s->line : 1;
		c->oom = true;
		return 1;
	}
	if (recording_add(c->rec, stack, len, w) != 0) {
		c->oom = true;
		return 1;
	}
	c->kept++;
	return 0;
}
