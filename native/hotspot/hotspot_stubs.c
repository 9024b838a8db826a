/* hotspot_stubs.c - names of the JVM's generated stubs (arraycopy, call_stub,
 * crypto intrinsics...) from its StubCodeDesc list, as JVMTI reports them to agents. */
#include "hotspot_stubs.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "key_search.h"
#include "stub_cfa.h"
#include "text_escape.h"

/* StubCodeDesc on JDK 17 to 25 (not in gHotSpotVMStructs): _next, _group,
 * _name, _begin, _end, each a pointer. */
#define DESC_NEXT     0
#define DESC_NAME     16
#define DESC_BEGIN    24
#define DESC_END      32
#define DESC_READ     40
#define STUB_MAX_SIZE (16u << 20) /* bytes of one stub at most */
#define NAME_MAX_LEN  128
#define RELOAD_NS     1000000000ULL
/* The code read for the walker's rows, at most (JDK 17 and 25: ~100 KiB in
 * all, the longest stub 12 KiB): a JVM that lists more is not read further */
#define ROWS_STUB_BYTES	 (256u << 10)
#define ROWS_TOTAL_BYTES (2u << 20)
#define ROWS_MAX	 8192 /* JDK 17: ~700, 25: ~900 */
#define RELOADS_MAX	 60
#define BLOB_READ	 256 /* bytes of a CodeBlob read: its fields are in the first */

struct stub {
	uint64_t begin, end;
	const char *name;
	uint8_t args; /* words its callers push for it (struct stub_row's args) */
};

struct hotspot_stubs {
	struct remote_mem mem;
	uint64_t list_addr;
	uint64_t blobs_addr; /* Runtime1::_blobs: C1's runtime stubs, blobs_n of them */
	size_t blobs_n;
	struct hotspot_blob_fields bf;
	struct str_intern *si;
	struct stub *v; /* sorted by begin */
	size_t n;
	uint64_t loaded_ns;
	unsigned loads;
};

struct hotspot_stubs *hotspot_stubs_new(const struct remote_mem *m, uint64_t list_addr, struct str_intern *si)
{
	struct hotspot_stubs *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->mem = *m;
	s->list_addr = list_addr;
	s->si = si;
	return s;
}

void hotspot_stubs_free(struct hotspot_stubs *s)
{
	if (!s)
		return;
	free(s->v);
	free(s);
}

size_t hotspot_stubs_count(const struct hotspot_stubs *s)
{
	return s ? s->n : 0;
}

static int by_begin(const void *a, const void *b)
{
	const struct stub *x = a, *y = b;
	return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* A stub's name: a printable C string of at most NAME_MAX_LEN - 1 bytes;
 * spaces inside it when spaces (a CodeBlob's: "C1 Runtime new_instance_blob"). */
static const char *stub_name(struct hotspot_stubs *s, uint64_t addr, bool spaces)
{
	char name[NAME_MAX_LEN];
	size_t got = 0;
	while (got + 1 < sizeof(name)) {
		size_t chunk = 32 - ((addr + got) & 31); /* stops at 32-byte boundaries: near a mapping's end too */
		chunk = chunk < sizeof(name) - 1 - got ? chunk : sizeof(name) - 1 - got;
		if (remote_mem_read(&s->mem, addr + got, name + got, chunk) != 0)
			return NULL;
		char *nul = memchr(name + got, '\0', chunk);
		got += nul ? (size_t)(nul - (name + got)) : chunk;
		if (nul)
			break;
	}
	if (got == 0 || got + 1 >= sizeof(name))
		return NULL;
	for (size_t i = 0; i < got; i++) {
		unsigned char c = (unsigned char)name[i];
		bool inner_space = spaces && c == ' ' && i > 0 && i + 1 < got;
		if ((c <= 0x20 && !inner_space) || c >= 0x7f)
			return NULL;
	}
	return text_intern(s->si, name, got);
}

void hotspot_stubs_set_blobs(struct hotspot_stubs *s, uint64_t array, size_t count, const struct hotspot_blob_fields *f)
{
	long most = 0, fields[] = { f->name, f->frame_size, f->code_begin, f->code_end };
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		most = fields[i] > most ? fields[i] : most;
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (fields[i] < 0 || most + 8 > BLOB_READ)
			return; /* a layout this does not know: no blobs */
	s->blobs_addr = array;
	s->blobs_n = count < HOTSPOT_STUBS_BLOBS_MAX ? count : HOTSPOT_STUBS_BLOBS_MAX;
	s->bf = *f;
}

static uint64_t field_addr(const uint8_t *hdr, long off, bool offsets, uint64_t blob)
{
	int32_t o;
	uint64_t a;
	if (offsets) {
		memcpy(&o, hdr + off, sizeof(o));
		return o > 0 ? blob + (uint64_t)o : 0;
	}
	memcpy(&a, hdr + off, sizeof(a));
	return a;
}

/* The blobs of the array at s->blobs_addr whose frame size HotSpot does not
 * know (C1's stubs that never set one: g1_post_barrier_slow, slow_subtype_check):
 * the walker has no size to unwind them by, so they get rows as stubs do. At
 * most room of them into v; how many. */
static size_t blobs_load(struct hotspot_stubs *s, struct stub *v, size_t room)
{
	size_t n = 0;
	for (size_t i = 0; i < s->blobs_n && n < room; i++) {
		uint64_t blob = 0;
		uint8_t hdr[BLOB_READ];
		int16_t frame_words;
		if (remote_mem_read(&s->mem, s->blobs_addr + 8 * i, &blob, 8) != 0)
			break;
		if (!blob || (blob & 7) || remote_mem_read(&s->mem, blob, hdr, sizeof(hdr)) != 0)
			continue;
		/* an int up to JDK 22, an int16_t after: its low half, either way */
		memcpy(&frame_words, hdr + s->bf.frame_size, sizeof(frame_words));
		if (frame_words >= 0)
			continue;
		uint64_t name_at, begin = field_addr(hdr, s->bf.code_begin, s->bf.code_offsets, blob),
				  end = field_addr(hdr, s->bf.code_end, s->bf.code_offsets, blob);
		const char *name;
		memcpy(&name_at, hdr + s->bf.name, sizeof(name_at));
		if (begin > blob && begin < end && end - begin <= STUB_MAX_SIZE && (name = stub_name(s, name_at, true)))
			/* C1 code pushes the two klasses it checks and pops them after
			 * the call (LIR_Assembler::emit_typecheck_helper, JDK 17 to 25) */
			v[n++] = (struct stub){ begin, end, name, strstr(name, "slow_subtype_check") ? 2 : 0 };
	}
	return n;
}

/* Reads the list anew: 0, or -1 when it cannot be read at all. A list that
 * breaks off (garbage, a freed descriptor) keeps what was read before it. */
static int stubs_load(struct hotspot_stubs *s)
{
	struct stub *v = calloc(HOTSPOT_STUBS_MAX, sizeof(*v));
	size_t n = 0;
	uint64_t d;
	if (!v)
		return -1;
	d = remote_mem_u64(&s->mem, s->list_addr);
	for (size_t i = 0; d && i < HOTSPOT_STUBS_MAX; i++) {
		uint64_t e[DESC_READ / 8];
		if ((d & 7) || remote_mem_read(&s->mem, d, e, sizeof(e)) != 0)
			break;
		uint64_t begin = e[DESC_BEGIN / 8], end = e[DESC_END / 8];
		const char *name;
		if (begin && begin < end && end - begin <= STUB_MAX_SIZE &&
		    (name = stub_name(s, e[DESC_NAME / 8], false)))
			v[n++] = (struct stub){ begin, end, name, 0 };
		d = e[DESC_NEXT / 8];
	}
	n += blobs_load(s, v + n, HOTSPOT_STUBS_MAX - n);
	qsort(v, n, sizeof(*v), by_begin);
	free(s->v);
	s->v = v;
	s->n = n;
	return 0;
}

const char *hotspot_stubs_name(struct hotspot_stubs *s, uint64_t pc, uint64_t now_ns)
{
	for (int pass = 0; s && pass < 2; pass++) {
		if (pass == 1 || !s->loads) { /* first use, or a pc the list did not hold */
			if (s->loads >= RELOADS_MAX || (s->loads && now_ns - s->loaded_ns < RELOAD_NS))
				return NULL;
			s->loads++;
			s->loaded_ns = now_ns;
			if (stubs_load(s) != 0)
				return NULL;
		}
		/* the last stub beginning at or before pc (stubs do not overlap) */
		size_t lo = KEY_UPPER_BOUND(s->v, s->n, begin, pc);
		if (lo && pc < s->v[lo - 1].end)
			return s->v[lo - 1].name;
	}
	return NULL;
}

size_t hotspot_stubs_each(struct hotspot_stubs *s, uint64_t now_ns,
			  void (*fn)(void *ctx, uint64_t begin, uint64_t end, const char *name), void *ctx)
{
	if (!s)
		return 0;
	if (!s->loads) {
		s->loads++;
		s->loaded_ns = now_ns;
		if (stubs_load(s) != 0)
			return 0;
	}
	for (size_t i = 0; i < s->n; i++)
		if (fn)
			fn(ctx, s->v[i].begin, s->v[i].end, s->v[i].name);
	return s->n;
}

/* A row of stub_cfa's (offsets in a stub) as the walker's (pc, 16-bit
 * offsets): a rule whose offsets do not fit is left unknown. */
static struct stub_row row_to_walker(const struct stub_cfa_row *r, uint64_t begin, uint8_t args)
{
	struct stub_row w = { .pc = begin + r->at, .args = args };
	bool fits = r->off >= INT16_MIN && r->off <= INT16_MAX && r->off2 >= INT16_MIN && r->off2 <= INT16_MAX &&
		    r->fp_off >= INT16_MIN && r->fp_off <= INT16_MAX;
	if (!fits)
		return w;
	w.base = r->base;
	w.fp = r->fp;
	w.off = (int16_t)r->off;
	w.off2 = (int16_t)r->off2;
	w.fp_off = (int16_t)r->fp_off;
	return w;
}

static bool row_same(const struct stub_row *a, const struct stub_row *b)
{
	return a->base == b->base && a->fp == b->fp && a->off == b->off && a->off2 == b->off2 &&
	       a->fp_off == b->fp_off && a->args == b->args;
}

int hotspot_stubs_rows(struct hotspot_stubs *s, uint64_t now_ns, struct stub_row **rows, size_t *n, char *err,
		       size_t errlen)
{
	struct stub_cfa *sc = NULL;
	struct stub_row *out = NULL;
	uint8_t *code = NULL;
	size_t nout = 0, cap = 0, code_cap = 0;
	int rc = -1;
	*rows = NULL;
	*n = 0;
	if (!s || (!s->loads && hotspot_stubs_each(s, now_ns, NULL, NULL) == 0) || !s->n) {
		snprintf(err, errlen, "no stubs read");
		return -1;
	}
	if (!(sc = stub_cfa_new(err, errlen)))
		return -1;
	size_t total = 0;
	for (size_t i = 0; i < s->n; i++) {
		const struct stub *st = &s->v[i];
		size_t len = st->end - st->begin, nr = 0;
		struct stub_cfa_row *cr = NULL;
		if (len > ROWS_STUB_BYTES)
			continue; /* no rows: the heuristics */
		if ((total += len) > ROWS_TOTAL_BYTES)
			break;
		if (ARRAY_GROW(code, code_cap, len) != 0)
			goto oom;
		if (remote_mem_read(&s->mem, st->begin, code, len) != 0)
			continue; /* unread: no rows, the heuristics */
		if (stub_cfa_analyze(sc, code, len, st->begin, &cr, &nr, NULL) != 0)
			goto oom;
		if (ARRAY_GROW(out, cap, nout + nr + 1) != 0) {
			free(cr);
			goto oom;
		}
		for (size_t k = 0; k < nr; k++) {
			struct stub_row w = row_to_walker(&cr[k], st->begin, st->args);
			if (nout && out[nout - 1].pc < w.pc && row_same(&out[nout - 1], &w))
				continue;
			while (nout && out[nout - 1].pc >= w.pc) /* overlapping stubs: the later one's from here */
				nout--;
			out[nout++] = w;
		}
		/* every stub's rows end at its end: a pc past it (a blob the list does
		 * not name, a stub left out) gets no rule of it; a stub that begins
		 * there replaces this row with its first */
		out[nout++] = (struct stub_row){ .pc = st->end };
		free(cr);
		if (nout > ROWS_MAX) {
			snprintf(err, errlen, "its stubs make more than %d rows", ROWS_MAX);
			goto done;
		}
	}
	*rows = out;
	*n = nout;
	out = NULL;
	rc = 0;
	goto done;
oom:
	snprintf(err, errlen, "out of memory");
done:
	free(out);
	free(code);
	stub_cfa_free(sc);
	return rc;
}
