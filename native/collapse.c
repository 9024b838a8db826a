/* collapse.c - one perf script sample to one folded line: root frame from
 * comm (and pid/tid), frames root first, names tidied and annotated as stackcollapse-perf.pl. */
#include "collapse.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	if (len + more + 1 <= c->cap)
		return true;
	size_t cap = c->cap ? c->cap : 4096;
	while (cap < len + more + 1)
		cap *= 2;
	char *b = realloc(c->buf, cap);
	if (!b)
		return false;
	c->buf = b;
	c->cap = cap;
	return true;
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
static bool add_func(struct collapse *c, size_t *len, const char *f, size_t n, const struct ps_frame *fr,
		     bool java, bool inlined)
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
		/* the common case is a plain copy; the fix-ups are rare */
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
		ann = "_[i]";
	else if (c->o.kernel && dn > 0 && (dso[0] == '[' || (dn >= 7 && memcmp(dso + dn - 7, "vmlinux", 7) == 0)) &&
		 !has_str(dso, dn, "unknown"))
		ann = "_[k]";
	else if (c->o.jit && (is_perf_map(dso, dn) || is_jitted_so(dso, dn)))
		ann = "_[j]";
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

int collapse_sample(void *ctx, const struct ps_sample *s)
{
	struct collapse *c = ctx;
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
	char root[512], pidbuf[24] = "?";
	if (s->pid >= 0)
		snprintf(pidbuf, sizeof(pidbuf), "%ld", s->pid);
	size_t cn = s->comm.n < 256 ? s->comm.n : 256;
	int rn;
	if (c->o.tid)
		rn = snprintf(root, sizeof(root), "%.*s-%s/%ld", (int)cn, s->comm.p, pidbuf, s->tid);
	else if (c->o.pid)
		rn = snprintf(root, sizeof(root), "%.*s-%s", (int)cn, s->comm.p, pidbuf);
	else
		rn = snprintf(root, sizeof(root), "%.*s", (int)cn, s->comm.p);
	if (rn < 0)
		rn = 0;
	for (int i = 0; i < rn; i++)
		if (root[i] == ' ' || root[i] == '\t')
			root[i] = '_';
		else if (root[i] == ';')
			root[i] = ':';
	bool java = !c->o.pid && !c->o.tid && rn == 4 && memcmp(root, "java", 4) == 0;
	if (!reserve(c, 0, (size_t)rn))
		goto oom;
	memcpy(c->buf, root, (size_t)rn);
	len = (size_t)rn;
	for (size_t i = s->nframes; i > 0; i--) {
		const struct ps_frame *fr = &s->frames[i - 1];
		const char *f = fr->sym.p;
		size_t n = fr->sym.n;
		/* perf 4.8+ prints symbol offsets: sym+0x1a */
		for (size_t j = n; j > 2; j--) {
			char ch = f[j - 1];
			if ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))
				continue;
			if (ch == 'x' && j >= 3 && f[j - 2] == '0' && f[j - 3] == '+' && j < n)
				n = j - 3;
			break;
		}
		if (n > 0 && f[0] == '(')
			continue; /* a process name, not a function */
		/* "A->B->C": an inline chain, outermost first */
		size_t start = 0;
		bool inlined = false;
		for (;;) {
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
	if (recording_add(c->rec, c->buf, len, s->has_period && s->period > 0 ? s->period : 1) != 0)
		goto oom;
	c->kept++;
	return 0;
oom:
	c->oom = true;
	return 1;
}
