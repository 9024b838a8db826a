/* fuzz_jit_syms.c - libFuzzer target for jit_syms: the input as an events log and as a
 * perf map, read whole, in two parts and after truncation; lookups at addresses from it. */
/* module: native/symbolize/jit_syms.c native/util/str_intern.c native/util/text_escape.c native/util/target_file.c native/util/msg.c native/util/grow.c native/util/u64_map.c */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "jit_syms.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "text_escape.h"

#define MAX_ADDRS 48
#define MAX_TIMES 12
#define MAX_TIDS  8

/* Prints the message and aborts, which the fuzzer reports as a crash. */
static __attribute__((noreturn, format(printf, 1, 2))) void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fuzz_jit_syms: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/* What to ask: addresses and times taken from the input's numbers. */
struct queries {
	uint64_t addr[MAX_ADDRS], t[MAX_TIMES];
	pid_t tid[MAX_TIDS];
	size_t na, nt, ntid;
};

static int hexdigit(uint8_t c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static void add_addr(struct queries *q, uint64_t v)
{
	if (q->na < MAX_ADDRS)
		q->addr[q->na++] = v;
}

static void make_queries(struct queries *q, const uint8_t *d, size_t n)
{
	memset(q, 0, sizeof(*q));
	q->t[q->nt++] = 0;
	q->t[q->nt++] = UINT64_MAX;
	for (size_t i = 0; i < n;) {
		if (!hexdigit(d[i])) {
			i++;
			continue;
		}
		uint64_t hex = 0, dec = 0;
		int digits = 0, decimal = 1;
		size_t j = i;
		for (; j < n && hexdigit(d[j]); j++, digits++) {
			int v = d[j] <= '9' ? d[j] - '0' : (d[j] | 0x20) - 'a' + 10;
			hex = hex * 16 + (uint64_t)v;
			if (d[j] > '9')
				decimal = 0;
			else
				dec = dec * 10 + (uint64_t)(d[j] - '0');
		}
		i = j;
		if (digits > 16)
			continue;
		/* a token and its neighbours: starts, ends, just past */
		add_addr(q, hex);
		add_addr(q, hex - 1);
		add_addr(q, hex + 1);
		if (decimal && q->nt < MAX_TIMES) {
			q->t[q->nt++] = dec;
			if (q->nt < MAX_TIMES)
				q->t[q->nt++] = dec - 1;
		}
		if (decimal && dec > 0 && dec < 1u << 22 && q->ntid < MAX_TIDS)
			q->tid[q->ntid++] = (pid_t)dec;
	}
	/* sums of two tokens: start + size lands on ends of ranges */
	for (size_t a = 0, na = q->na; a + 3 < na && q->na < MAX_ADDRS; a += 3)
		add_addr(q, q->addr[a] + q->addr[a + 3]);
}

struct answer {
	const char *name;
	uint64_t off;
};

struct state {
	struct answer a[MAX_ADDRS * MAX_TIMES];
	const char *thread[MAX_TIDS];
	size_t count;
	int has_times;
};

static void ask(struct jit_syms *js, const struct queries *q, const uint8_t *data, size_t size, struct state *st)
{
	st->count = jit_syms_count(js);
	st->has_times = jit_syms_has_times(js);
	for (size_t i = 0; i < q->na; i++)
		for (size_t k = 0; k < q->nt; k++) {
			struct answer *an = &st->a[i * MAX_TIMES + k];
			an->off = 0;
			an->name = jit_syms_lookup(js, q->addr[i], q->t[k], &an->off);
			if (!an->name)
				continue;
			/* the input's text, escaped (text_escape): no control byte */
			char *raw = strdup(an->name);
			for (const char *c = an->name; *c; c++)
				if ((unsigned char)*c < 0x20 || *c == 0x7f)
					fail("lookup gave \"%s\", with a control byte", an->name);
			if (raw)
				text_unescape(raw);
			if (raw && !memmem(data, size, raw, strlen(raw)))
				fail("lookup(%#" PRIx64 ", %" PRIu64 ") gave \"%s\", not in the input", q->addr[i],
				     q->t[k], an->name);
			free(raw);
			if (an->off > q->addr[i])
				fail("lookup(%#" PRIx64 ") gave offset %#" PRIx64 ", past address 0", q->addr[i],
				     an->off);
			const char *again = jit_syms_lookup(js, q->addr[i], q->t[k], NULL);
			if (again != an->name)
				fail("lookup(%#" PRIx64 ", %" PRIu64 ") changed between calls", q->addr[i], q->t[k]);
		}
	for (size_t i = 0; i < q->ntid; i++) {
		st->thread[i] = jit_syms_thread_name(js, q->tid[i]);
		for (const char *c = st->thread[i]; c && *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				fail("thread %d is \"%s\", with a control byte", (int)q->tid[i], st->thread[i]);
	}
}

static int same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static void compare(const struct queries *q, const struct state *x, const struct state *y, const char *what)
{
	if (x->count != y->count)
		fail("%s: %zu entries vs %zu", what, x->count, y->count);
	if (x->has_times != y->has_times)
		fail("%s: has_times differs", what);
	for (size_t i = 0; i < q->na; i++)
		for (size_t k = 0; k < q->nt; k++) {
			const struct answer *a = &x->a[i * MAX_TIMES + k], *b = &y->a[i * MAX_TIMES + k];
			if (!same_str(a->name, b->name) || (a->name && a->off != b->off))
				fail("%s: lookup(%#" PRIx64 ", %" PRIu64 ") gave \"%s\"+%#" PRIx64
				     " vs \"%s\"+%#" PRIx64,
				     what, q->addr[i], q->t[k], a->name ? a->name : "NULL", a->off,
				     b->name ? b->name : "NULL", b->off);
		}
	for (size_t i = 0; i < q->ntid; i++)
		if (!same_str(x->thread[i], y->thread[i]))
			fail("%s: thread %d named \"%s\" vs \"%s\"", what, (int)q->tid[i],
			     x->thread[i] ? x->thread[i] : "NULL", y->thread[i] ? y->thread[i] : "NULL");
}

/* Whether a complete perf map line of the input covers addr (parsed as a perf
 * map line is: "START SIZE name", hex, a nonzero size that does not wrap). */
static int map_covers(const uint8_t *data, size_t size, uint64_t addr)
{
	static char line[4097];
	const uint8_t *p = data, *end = data + size;

	while (p < end) {
		const uint8_t *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break; /* not complete: not read */
		size_t n = (size_t)(nl - p);
		const uint8_t *at = p;
		p = nl + 1;
		if (n >= sizeof(line))
			continue; /* longer than any input here: not judged */
		memcpy(line, at, n);
		line[n] = '\0';
		uint64_t start, len;
		int pos = 0;
		if (!line[0] || line[0] == '#')
			continue;
		if (sscanf(line, "%" SCNx64 " %" SCNx64 " %n", &start, &len, &pos) < 2 || pos == 0)
			continue;
		/* lines claiming more than 256 MiB of code are garbage and ignored */
		if (len && len <= (256ULL << 20) && start + len >= start && start <= addr && addr - start < len)
			return 1;
	}
	return 0;
}

/* A file of ours to write the input to: a memfd, else a temporary file. */
struct file {
	int fd;
	char path[64];
	char tmp[64]; /* unlinked at the end when not a memfd */
};

static void file_open(struct file *f)
{
	f->tmp[0] = '\0';
	f->fd = memfd_create("fuzz_jit_syms", MFD_CLOEXEC);
	if (f->fd < 0) {
		snprintf(f->tmp, sizeof(f->tmp), "/tmp/fuzz_jit_syms-XXXXXX");
		f->fd = mkstemp(f->tmp);
		if (f->fd < 0)
			fail("no temporary file");
		snprintf(f->path, sizeof(f->path), "%s", f->tmp);
	} else {
		snprintf(f->path, sizeof(f->path), "/proc/self/fd/%d", f->fd);
	}
}

static void file_write(struct file *f, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t w = write(f->fd, p, n);
		if (w <= 0)
			fail("write failed");
		p += w;
		n -= (size_t)w;
	}
}

static void file_close(struct file *f)
{
	close(f->fd);
	if (f->tmp[0])
		unlink(f->tmp);
}

/* The table of the first len bytes read in one update, opened as events log or map. */
static struct jit_syms *open_as(struct file *f, int as_map, struct str_intern *si)
{
	struct jit_syms *js = as_map ? jit_syms_open("/nonexistent/jflame-fuzz.events", f->path, si) :
				       jit_syms_open(f->path, "/nonexistent/perf-fuzz.map", si);
	if (!js)
		fail("jit_syms_open failed on %s", f->path);
	if (jit_syms_has_times(js) == as_map)
		fail("has_times %d opened as %s", jit_syms_has_times(js), as_map ? "map" : "events");
	return js;
}

static void one_mode(const uint8_t *data, size_t size, const struct queries *q, int as_map, size_t split, size_t cut,
		     struct state *st)
{
	struct str_intern *si = str_intern_new();
	struct file whole, parts, prefix;
	int lines;

	if (!si)
		return;
	/* whole */
	file_open(&whole);
	file_write(&whole, data, size);
	struct jit_syms *a = open_as(&whole, as_map, si);
	lines = jit_syms_update(a);
	if (lines < 0)
		fail("update failed");
	if (jit_syms_update(a) != 0)
		fail("a second update read more");
	ask(a, q, data, size, &st[0]);
	/* a perf map has no times: any line covering an address names it */
	for (size_t i = 0; as_map && i < q->na; i++)
		if (!st[0].a[i * MAX_TIMES].name && map_covers(data, size, q->addr[i]))
			fail("lookup(%#" PRIx64 ") found nothing, but a map line covers it", q->addr[i]);

	/* in two parts, with lookups between */
	file_open(&parts);
	file_write(&parts, data, split);
	struct jit_syms *b = open_as(&parts, as_map, si);
	int l1 = jit_syms_update(b);
	ask(b, q, data, size, &st[1]);
	file_write(&parts, data + split, size - split);
	int l2 = jit_syms_update(b);
	if (l1 < 0 || l2 < 0 || l1 + l2 != lines)
		fail("%d + %d lines in two parts, %d whole (split at %zu)", l1, l2, lines, split);
	ask(b, q, data, size, &st[1]);
	compare(q, &st[0], &st[1], as_map ? "map whole vs two parts" : "events whole vs two parts");

	/* the whole file cut short (a new writer): as if only the prefix had been there */
	if (ftruncate(whole.fd, (off_t)cut) != 0)
		fail("ftruncate failed");
	if (jit_syms_update(a) < 0)
		fail("update after truncation failed");
	ask(a, q, data, size, &st[0]);
	file_open(&prefix);
	file_write(&prefix, data, cut);
	struct jit_syms *c = open_as(&prefix, as_map, si);
	jit_syms_update(c);
	ask(c, q, data, size, &st[1]);
	compare(q, &st[0], &st[1], as_map ? "map truncated vs prefix" : "events truncated vs prefix");

	jit_syms_free(a);
	jit_syms_free(b);
	jit_syms_free(c);
	file_close(&whole);
	file_close(&parts);
	file_close(&prefix);
	str_intern_free(si);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct state st[2];
	struct queries q;
	uint64_t h = 1469598103934665603ULL;

	for (size_t i = 0; i < size; i++)
		h = (h ^ data[i]) * 1099511628211ULL;
	size_t split = size ? (size_t)(h % (size + 1)) : 0;
	size_t cut = size ? (size_t)((h >> 32) % (size + 1)) : 0;
	make_queries(&q, data, size);
	one_mode(data, size, &q, 0, split, cut, st);
	one_mode(data, size, &q, 1, split, cut, st);

	/* the unescaping of thread names, on its own */
	char *s = malloc(size + 1);
	if (s) {
		memcpy(s, data, size);
		s[size] = '\0';
		size_t before = strlen(s);
		text_unescape(s);
		if (strlen(s) > before)
			fail("text_unescape made a string longer");
		free(s);
	}
	return 0;
}
