/* jfr_read.c - the JFR reader: each chunk's header, its metadata (the class descriptions), its
 * constant pools (parsed by those descriptions and indexed by type and key), then its sample events. */
#include "jfr_read.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "frame_mark.h"
#include "grow.h"
#include "str_index.h"
#include "utf8.h"

#define JFR_HEADER_SIZE	  68
#define JFR_MAX_NEST	  32		      /* metadata elements and values nested at most this deep */
#define JFR_MAX_STRING	  (64u << 10)	      /* bytes of one decoded string kept (the rest dropped) */
#define JFR_MAX_FRAMES	  8192		      /* frames of one stack trace */
#define JFR_MAX_EXPANSION ((uint64_t)8 << 30) /* folded text built in all */

/* How a class's values are stored: a primitive, a string, or its fields in order. */
enum prim { P_OBJ, P_BYTE, P_SHORT, P_INT, P_LONG, P_FLOAT, P_DOUBLE, P_STRING };

struct jfield {
	const char *name;
	uint64_t type; /* its class's id */
	bool cpool;    /* a key into the constant pool of its type, not the value */
	bool array;
};

struct jclass {
	uint64_t id;
	const char *name;
	size_t field0, nfields; /* its fields: fields[field0 .. field0 + nfields) */
	enum prim prim;
};

/* (type, key) -> value, open addressing: two words of key, so not util's u64_map. */
struct map_slot {
	uint64_t type, key, val;
	bool used;
};
struct pool_map {
	struct map_slot *s;
	size_t n, cap;
};

/* A read position; reading past end sets bad and yields zeros. */
struct cur {
	const uint8_t *p, *end;
	bool bad;
};

/* Decoded text, at most JFR_MAX_STRING bytes, NUL-terminated. */
struct sbuf {
	char *p;
	size_t n, cap;
	bool oom;
};

enum kind { K_CPU, K_NATIVE, K_WALL, K_ALLOC, K_LOCK };

static const struct {
	const char *name;
	enum kind kind;
} kinds[] = { { "cpu", K_CPU }, { "wall", K_WALL }, { "alloc", K_ALLOC }, { "lock", K_LOCK }, { "native", K_NATIVE } };

/* A field of an object read: asked by name, found (f), where its value starts
 * (at) and, for numbers and pool keys, the value. */
struct fcap {
	const char *name;
	const struct jfield *f;
	const uint8_t *at;
	uint64_t num;
};

/* Stack trace cache values: the frames' text index << 2 | these. */
#define STACK_TRUNCATED 1u
#define STACK_BAD	2u

struct jr {
	const char *name;
	enum kind kind;
	struct stack_table *t;
	struct jfr_stats *st;
	/* the chunk being read */
	const uint8_t *chunk;
	size_t size, at; /* its length and where it starts in the file */
	bool compressed;
	int64_t start_ns, start_ticks, tps;
	uint64_t budget; /* values left to parse in this chunk */
	/* its metadata */
	char **strs;
	size_t nstrs;
	struct jclass *classes;
	size_t nclasses, classes_cap;
	struct jfield *fields;
	size_t nfields, fields_cap;
	const struct jclass *c_string;
	/* its constant pools: (type, key) -> offset in the chunk */
	struct pool_map pools;
	/* its stack traces folded: key -> value above */
	struct pool_map stacks;
	struct str_index frames;
	/* the events read: type ids (0 none) */
	uint64_t ev[3];
	uint64_t ev_jvminfo;
	uint64_t alloc_samples; /* jdk.ObjectAllocationSample events in the chunk */
	char pid_root[48];
	int native_c; /* native_is_c() of the chunk; -1 not known yet */
	/* scratch */
	struct folded_line line, text;
	struct sbuf s1, s2, thread;
	uint64_t expanded;
	char *err;
	size_t errlen;
	bool oom, too_complex;
};

/* ---- bytes ------------------------------------------------------------------------ */

static uint64_t be(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static size_t left(const struct cur *c)
{
	return (size_t)(c->end - c->p);
}

static uint8_t rd_u8(struct cur *c)
{
	if (c->bad || c->p >= c->end) {
		c->bad = true;
		return 0;
	}
	return *c->p++;
}

static uint64_t rd_fixed(struct cur *c, unsigned n)
{
	if (c->bad || left(c) < n) {
		c->bad = true;
		return 0;
	}
	uint64_t v = be(c->p, n);
	c->p += n;
	return v;
}

/* LEB128 as JFR writes it: 7 bits a byte, the ninth byte whole. */
static uint64_t rd_var(struct cur *c)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < 9; i++) {
		uint8_t b = rd_u8(c);
		if (c->bad)
			return 0;
		if (i == 8)
			return v | (uint64_t)b << 56;
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80))
			return v;
	}
	return v;
}

/* An integer of n bytes when not compressed. */
static uint64_t rd_num(const struct jr *r, struct cur *c, unsigned n)
{
	return r->compressed ? rd_var(c) : rd_fixed(c, n);
}

static uint64_t rd_int(const struct jr *r, struct cur *c)
{
	return rd_num(r, c, 4);
}

static uint64_t rd_long(const struct jr *r, struct cur *c)
{
	return rd_num(r, c, 8);
}

/* ---- text ------------------------------------------------------------------------- */

static void sbuf_put(struct sbuf *s, const char *p, size_t n)
{
	if (s->n + n > JFR_MAX_STRING)
		n = s->n < JFR_MAX_STRING ? JFR_MAX_STRING - s->n : 0;
	if (ARRAY_GROW(s->p, s->cap, s->n + n + 1) != 0) {
		s->oom = true;
		return;
	}
	memcpy(s->p + s->n, p, n);
	s->n += n;
	s->p[s->n] = '\0';
}

static void sbuf_cp(struct sbuf *s, uint32_t cp)
{
	char b[8];
	size_t k = 0;
	utf8_put(b, sizeof(b), &k, cp);
	sbuf_put(s, b, k);
}

static void sbuf_reset(struct sbuf *s)
{
	s->n = 0;
	if (s->p)
		s->p[0] = '\0';
}

/* UTF-8 bytes, each byte of an invalid sequence as \xHH. */
static void sbuf_utf8(struct sbuf *s, const uint8_t *p, size_t n)
{
	size_t i = 0;
	while (i < n) {
		uint32_t cp;
		size_t k = utf8_decode(p + i, n - i, &cp);
		if (k == 0) {
			char hex[8];
			int hn = snprintf(hex, sizeof(hex), "\\x%02x", p[i]);
			sbuf_put(s, hex, (size_t)hn);
			i++;
		} else {
			sbuf_put(s, (const char *)p + i, k);
			i += k;
		}
	}
}

static bool map_get(const struct pool_map *m, uint64_t type, uint64_t key, uint64_t *val);

/* Reads the string at c (an encoding byte, then: 0 null, 1 empty, 2 a key
 * into the string pool, 3 UTF-8, 4 UTF-16 units, 5 Latin-1) into s (NULL:
 * skipped); *null when it is null. */
static void rd_string(struct jr *r, struct cur *c, struct sbuf *s, bool *null, int depth)
{
	uint8_t enc = rd_u8(c);
	uint64_t n;
	if (null)
		*null = enc == 0;
	switch (enc) {
	case 0:
	case 1:
		return;
	case 2: {
		uint64_t key = rd_long(r, c), off;
		if (!s || c->bad)
			return;
		if (depth > 2 || !r->c_string || !map_get(&r->pools, r->c_string->id, key, &off)) {
			c->bad = true;
			return;
		}
		struct cur pc = { r->chunk + off, r->chunk + r->size, false };
		rd_string(r, &pc, s, null, depth + 1);
		c->bad = pc.bad;
		return;
	}
	case 3:
	case 5:
		n = rd_int(r, c);
		if (c->bad || n > left(c)) {
			c->bad = true;
			return;
		}
		if (s && enc == 3)
			sbuf_utf8(s, c->p, (size_t)n);
		for (size_t i = 0; s && enc == 5 && i < n; i++)
			sbuf_cp(s, c->p[i]);
		c->p += n;
		return;
	case 4: {
		n = rd_int(r, c);
		if (c->bad || n > left(c)) {
			c->bad = true;
			return;
		}
		uint32_t high = 0; /* a high surrogate waiting for its low one */
		for (uint64_t i = 0; i < n && !c->bad; i++) {
			uint32_t u = (uint32_t)(rd_num(r, c, 2) & 0xffff);
			if (!s)
				continue;
			if (high && u >= 0xdc00 && u <= 0xdfff) {
				sbuf_cp(s, 0x10000 + ((high - 0xd800) << 10) + (u - 0xdc00));
				high = 0;
				continue;
			}
			if (high)
				sbuf_cp(s, 0xfffd);
			high = 0;
			if (u >= 0xd800 && u <= 0xdbff)
				high = u;
			else
				sbuf_cp(s, u >= 0xdc00 && u <= 0xdfff ? 0xfffd : u);
		}
		if (s && high)
			sbuf_cp(s, 0xfffd);
		return;
	}
	default:
		c->bad = true;
	}
}

/* ---- the (type, key) map ---------------------------------------------------------- */

static size_t map_hash(uint64_t type, uint64_t key)
{
	uint64_t h = type * 0x9e3779b97f4a7c15ULL ^ key;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (size_t)h;
}

static bool map_get(const struct pool_map *m, uint64_t type, uint64_t key, uint64_t *val)
{
	if (!m->cap)
		return false;
	for (size_t i = map_hash(type, key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		const struct map_slot *s = &m->s[i];
		if (!s->used)
			return false;
		if (s->type == type && s->key == key) {
			*val = s->val;
			return true;
		}
	}
}

/* Sets (type, key) to val. 0, or -1 when out of memory. */
static int map_put(struct pool_map *m, uint64_t type, uint64_t key, uint64_t val)
{
	if ((m->n + 1) * 4 > m->cap * 3) {
		size_t nc = m->cap ? m->cap * 2 : 1024;
		struct map_slot *ns = calloc(nc, sizeof(*ns));
		if (!ns)
			return -1;
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->s[i].used)
				continue;
			size_t j = map_hash(m->s[i].type, m->s[i].key) & (nc - 1);
			while (ns[j].used)
				j = (j + 1) & (nc - 1);
			ns[j] = m->s[i];
		}
		free(m->s);
		m->s = ns;
		m->cap = nc;
	}
	size_t i = map_hash(type, key) & (m->cap - 1);
	while (m->s[i].used && !(m->s[i].type == type && m->s[i].key == key))
		i = (i + 1) & (m->cap - 1);
	if (!m->s[i].used)
		m->n++;
	m->s[i] = (struct map_slot){ type, key, val, true };
	return 0;
}

static void map_clear(struct pool_map *m)
{
	if (m->cap)
		memset(m->s, 0, m->cap * sizeof(*m->s));
	m->n = 0;
}

/* ---- metadata ---------------------------------------------------------------------- */

static const struct jclass *class_of(const struct jr *r, uint64_t id)
{
	size_t lo = 0, hi = r->nclasses;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->classes[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < r->nclasses && r->classes[lo].id == id ? &r->classes[lo] : NULL;
}

static const struct jclass *class_named(const struct jr *r, const char *name)
{
	for (size_t i = 0; i < r->nclasses; i++)
		if (strcmp(r->classes[i].name, name) == 0)
			return &r->classes[i];
	return NULL;
}

static int cmp_class(const void *a, const void *b)
{
	uint64_t x = ((const struct jclass *)a)->id, y = ((const struct jclass *)b)->id;
	return x < y ? -1 : x > y;
}

static enum prim prim_of(const char *name)
{
	static const struct {
		const char *name;
		enum prim p;
	} prims[] = { { "boolean", P_BYTE }, { "byte", P_BYTE },     { "char", P_SHORT },
		      { "short", P_SHORT },  { "int", P_INT },	     { "long", P_LONG },
		      { "float", P_FLOAT },  { "double", P_DOUBLE }, { "java.lang.String", P_STRING } };
	for (size_t i = 0; i < sizeof(prims) / sizeof(prims[0]); i++)
		if (strcmp(prims[i].name, name) == 0)
			return prims[i].p;
	return P_OBJ;
}

static int meta_fail(struct jr *r, const char *what)
{
	snprintf(r->err, r->errlen, "%s: the metadata of the chunk at offset %zu %s", r->name, r->at, what);
	return -1;
}

/* The string table entry i, "" for null; NULL when i is out of range. */
static const char *meta_str(const struct jr *r, uint64_t i)
{
	if (i >= r->nstrs)
		return NULL;
	return r->strs[i] ? r->strs[i] : "";
}

/* One element of the metadata tree (name, attributes, children): "class"
 * elements become classes, their "field" children fields. cls: the index of
 * the class this element is in (-1 none). */
static int meta_element(struct jr *r, struct cur *c, int depth, long cls)
{
	const char *attr_id = NULL, *attr_name = NULL, *attr_class = NULL, *attr_cpool = NULL, *attr_dim = NULL;
	if (depth > JFR_MAX_NEST)
		return meta_fail(r, "nests deeper than 32 elements");
	if (r->budget == 0)
		return meta_fail(r, "has too many elements");
	r->budget--;
	const char *ename = meta_str(r, rd_int(r, c));
	uint64_t nattr = rd_int(r, c);
	if (c->bad || !ename || nattr > left(c))
		return meta_fail(r, "is truncated or refers to a string it does not have");
	for (uint64_t i = 0; i < nattr; i++) {
		const char *k = meta_str(r, rd_int(r, c)), *v = meta_str(r, rd_int(r, c));
		if (c->bad || !k || !v)
			return meta_fail(r, "is truncated or refers to a string it does not have");
		if (strcmp(k, "id") == 0)
			attr_id = v;
		else if (strcmp(k, "name") == 0)
			attr_name = v;
		else if (strcmp(k, "class") == 0)
			attr_class = v;
		else if (strcmp(k, "constantPool") == 0)
			attr_cpool = v;
		else if (strcmp(k, "dimension") == 0)
			attr_dim = v;
	}
	long child_cls = -1;
	if (strcmp(ename, "class") == 0) {
		char *end;
		if (!attr_id || !attr_name || !*attr_id)
			return meta_fail(r, "has a class without an id or a name");
		uint64_t id = strtoull(attr_id, &end, 10);
		if (*end)
			return meta_fail(r, "has a class whose id is not a number");
		if (ARRAY_GROW(r->classes, r->classes_cap, r->nclasses + 1) != 0)
			goto oom;
		r->classes[r->nclasses] = (struct jclass){ id, attr_name, r->nfields, 0, prim_of(attr_name) };
		child_cls = (long)r->nclasses++;
	} else if (strcmp(ename, "field") == 0 && cls >= 0) {
		struct jclass *k = &r->classes[cls];
		char *end;
		if (!attr_name || !attr_class || !*attr_class)
			return meta_fail(r, "has a field without a name or a type");
		uint64_t type = strtoull(attr_class, &end, 10);
		if (*end)
			return meta_fail(r, "has a field whose type is not a number");
		if (k->field0 + k->nfields != r->nfields)
			return meta_fail(r, "has a class inside a class");
		if (attr_dim && strcmp(attr_dim, "0") != 0 && strcmp(attr_dim, "1") != 0)
			return meta_fail(r, "has a field of more than one array dimension");
		if (ARRAY_GROW(r->fields, r->fields_cap, r->nfields + 1) != 0)
			goto oom;
		r->fields[r->nfields++] = (struct jfield){ attr_name, type,
							   attr_cpool && strcmp(attr_cpool, "true") == 0,
							   attr_dim && strcmp(attr_dim, "1") == 0 };
		k->nfields++;
	}
	uint64_t nchild = rd_int(r, c);
	if (c->bad || nchild > left(c))
		return meta_fail(r, "is truncated");
	for (uint64_t i = 0; i < nchild; i++)
		if (meta_element(r, c, depth + 1, child_cls) != 0)
			return -1;
	return 0;
oom:
	r->oom = true;
	snprintf(r->err, r->errlen, "out of memory reading %s", r->name);
	return -1;
}

/* The metadata event at offset off of the chunk. */
static int meta_read(struct jr *r, uint64_t off)
{
	struct cur c = { r->chunk + off, r->chunk + r->size, false };
	struct sbuf s = { 0 };
	uint64_t size = rd_int(r, &c);
	if (c.bad || size > r->size - off)
		return meta_fail(r, "runs past the chunk (a truncated or corrupt file)");
	if (size < 2)
		return meta_fail(r, "has an impossible size (a corrupt file)");
	c.end = r->chunk + off + size;
	if (rd_long(r, &c) != 0)
		return meta_fail(r, "is not where the chunk header says");
	rd_long(r, &c); /* start, duration, metadata id */
	rd_long(r, &c);
	rd_long(r, &c);
	uint64_t n = rd_int(r, &c);
	if (c.bad || n > left(&c))
		return meta_fail(r, "is truncated");
	r->strs = calloc(n ? n : 1, sizeof(*r->strs));
	if (!r->strs)
		goto oom;
	r->nstrs = (size_t)n;
	for (size_t i = 0; i < r->nstrs; i++) {
		bool null = false;
		sbuf_reset(&s);
		rd_string(r, &c, &s, &null, 3); /* no pools yet: a pool reference is bad */
		if (c.bad) {
			free(s.p);
			return meta_fail(r, "has a string that does not decode");
		}
		if (s.oom)
			goto oom;
		if (!null && !(r->strs[i] = strdup(s.p ? s.p : "")))
			goto oom;
	}
	free(s.p);
	s.p = NULL;
	r->budget = 1u << 20;
	if (meta_element(r, &c, 0, -1) != 0)
		return -1;
	if (r->nclasses)
		qsort(r->classes, r->nclasses, sizeof(*r->classes), cmp_class);
	for (size_t i = 1; i < r->nclasses; i++)
		if (r->classes[i].id == r->classes[i - 1].id)
			return meta_fail(r, "describes a type id twice");
	r->c_string = class_named(r, "java.lang.String");
	return 0;
oom:
	free(s.p);
	r->oom = true;
	snprintf(r->err, r->errlen, "out of memory reading %s", r->name);
	return -1;
}

/* ---- values ----------------------------------------------------------------------- */

static void skip_class(struct jr *r, struct cur *c, const struct jclass *k, int depth);

static void skip_field(struct jr *r, struct cur *c, const struct jfield *f, int depth)
{
	uint64_t n = 1;
	const struct jclass *k = NULL;
	if (depth > JFR_MAX_NEST) {
		c->bad = true;
		return;
	}
	if (f->array) {
		n = rd_int(r, c);
		if (n > left(c)) {
			c->bad = true;
			return;
		}
	}
	if (!f->cpool && !(k = class_of(r, f->type))) {
		c->bad = true; /* a type the metadata does not describe */
		return;
	}
	for (uint64_t i = 0; i < n && !c->bad; i++) {
		if (f->cpool)
			rd_long(r, c);
		else
			skip_class(r, c, k, depth + 1);
	}
}

static void skip_class(struct jr *r, struct cur *c, const struct jclass *k, int depth)
{
	if (r->budget == 0) {
		r->too_complex = true;
		c->bad = true;
		return;
	}
	r->budget--;
	switch (k->prim) {
	case P_BYTE:
		rd_u8(c);
		break;
	case P_SHORT:
		rd_num(r, c, 2);
		break;
	case P_INT:
		rd_num(r, c, 4);
		break;
	case P_LONG:
		rd_num(r, c, 8);
		break;
	case P_FLOAT:
		rd_fixed(c, 4);
		break;
	case P_DOUBLE:
		rd_fixed(c, 8);
		break;
	case P_STRING:
		rd_string(r, c, NULL, NULL, 0);
		break;
	case P_OBJ:
		for (size_t i = 0; i < k->nfields && !c->bad; i++)
			skip_field(r, c, &r->fields[k->field0 + i], depth + 1);
		break;
	}
}

/* Reads an object of class k at c, capturing the fields caps name (each
 * the first field of its name): where each starts and, for a number or a
 * pool key, its value. */
static void read_object(struct jr *r, struct cur *c, const struct jclass *k, struct fcap *caps, size_t n)
{
	for (size_t j = 0; j < n; j++)
		caps[j].f = NULL;
	if (k->prim != P_OBJ) {
		c->bad = true;
		return;
	}
	for (size_t i = 0; i < k->nfields && !c->bad; i++) {
		const struct jfield *f = &r->fields[k->field0 + i];
		struct fcap *cap = NULL;
		for (size_t j = 0; j < n && !cap; j++)
			if (!caps[j].f && strcmp(caps[j].name, f->name) == 0)
				cap = &caps[j];
		const struct jclass *fk = class_of(r, f->type);
		if (cap) {
			cap->f = f;
			cap->at = c->p;
			cap->num = 0;
		}
		if (cap && !f->array && f->cpool) {
			cap->num = rd_long(r, c);
		} else if (cap && !f->array && fk && fk->prim >= P_BYTE && fk->prim <= P_LONG) {
			unsigned width[] = { [P_SHORT] = 2, [P_INT] = 4, [P_LONG] = 8 };
			cap->num = fk->prim == P_BYTE ? rd_u8(c) : rd_num(r, c, width[fk->prim]);
		} else {
			skip_field(r, c, f, 1);
		}
	}
}

/* The pool entry (type, key): its class and a cursor at it. NULL when there is none. */
static const struct jclass *pool_entry(struct jr *r, uint64_t type, uint64_t key, struct cur *c)
{
	uint64_t off;
	const struct jclass *k = class_of(r, type);
	if (!k || !map_get(&r->pools, type, key, &off))
		return NULL;
	*c = (struct cur){ r->chunk + off, r->chunk + r->size, false };
	return k;
}

/* The text of a captured field (appended to s): an inline string, or a pool
 * key of a string or of an object with a "string" field (jdk.types.Symbol).
 * 0, 1 when it is null, -1 when it is missing or does not decode. */
static int field_text(struct jr *r, const struct fcap *cap, struct sbuf *s, int depth)
{
	const struct jfield *f = cap->f;
	const struct jclass *k;
	struct cur c;
	bool null = false;
	if (!f || f->array || depth > 3)
		return -1;
	if (!f->cpool) {
		k = class_of(r, f->type);
		if (!k || k->prim != P_STRING)
			return -1;
		c = (struct cur){ cap->at, r->chunk + r->size, false };
	} else {
		if (cap->num == 0 && !map_get(&r->pools, f->type, 0, &(uint64_t){ 0 }))
			return 1; /* key 0: null */
		if (!(k = pool_entry(r, f->type, cap->num, &c)))
			return -1;
		if (k->prim != P_STRING) {
			struct fcap str = { "string", NULL, NULL, 0 };
			read_object(r, &c, k, &str, 1);
			if (c.bad || !str.f)
				return -1;
			return field_text(r, &str, s, depth + 1);
		}
	}
	rd_string(r, &c, s, &null, 0);
	return c.bad ? -1 : null;
}

/* The name of class key (a pool key of type): its name with '.' as '/',
 * a hidden class's "/0x..." suffix as ".0x...", array descriptors ("[B", "[Ljava/lang/String;") as jflame writes them
 * ("byte[]", "java/lang/String[]"). -1 when missing. */
static int class_text(struct jr *r, uint64_t type, uint64_t key, struct sbuf *s)
{
	struct cur c;
	struct fcap name = { "name", NULL, NULL, 0 };
	const struct jclass *k = pool_entry(r, type, key, &c);
	if (!k)
		return -1;
	read_object(r, &c, k, &name, 1);
	if (c.bad)
		return -1;
	size_t from = s->n;
	if (field_text(r, &name, s, 0) < 0)
		return -1;
	char *p = s->p ? s->p + from : NULL;
	size_t n = s->n - from;
	for (size_t i = 0; i < n; i++)
		if (p[i] == '.')
			p[i] = '/';
	/* a hidden class (pkg/Name/0x1234): its suffix after a '.', as the JVM's
	 * signatures and jflame's agent write it */
	char *slash = n ? memrchr(p, '/', n) : NULL;
	if (slash && slash + 2 < p + n && slash[1] == '0' && slash[2] == 'x' &&
	    strspn(slash + 3, "0123456789abcdefABCDEF") == (size_t)(p + n - slash - 3) && slash + 3 < p + n)
		*slash = '.';
	size_t dims = 0;
	while (dims < n && p[dims] == '[')
		dims++;
	if (dims && dims < n) {
		static const char *const prim[] = { "B", "byte", "C", "char", "D", "double", "F", "float",
						    "I", "int",	 "J", "long", "S", "short",  "Z", "boolean" };
		char elem[512];
		const char *e = p + dims;
		size_t en = n - dims;
		elem[0] = '\0';
		if (en >= 3 && e[0] == 'L' && e[en - 1] == ';' && en - 2 < sizeof(elem))
			snprintf(elem, sizeof(elem), "%.*s", (int)(en - 2), e + 1);
		for (size_t i = 0; en == 1 && i < sizeof(prim) / sizeof(prim[0]); i += 2)
			if (e[0] == prim[i][0])
				snprintf(elem, sizeof(elem), "%s", prim[i + 1]);
		if (elem[0]) {
			s->n = from;
			sbuf_put(s, elem, strlen(elem));
			for (size_t i = 0; i < dims; i++)
				sbuf_put(s, "[]", 2);
		}
	}
	return 0;
}

/* ---- stacks ----------------------------------------------------------------------- */

/* The frame's name into s: "pkg/Class.method", or the method alone when
 * its class has no name or the frame is native code (bare); -1 when missing. */
static int frame_text(struct jr *r, const struct fcap *method, bool bare, struct sbuf *s)
{
	struct cur c;
	struct fcap mc[2] = { { "type", NULL, NULL, 0 }, { "name", NULL, NULL, 0 } };
	const struct jclass *k = method->f && method->f->cpool ? pool_entry(r, method->f->type, method->num, &c) : NULL;
	if (!k)
		return -1;
	read_object(r, &c, k, mc, 2);
	if (c.bad || !mc[1].f)
		return -1;
	sbuf_reset(s);
	if (!bare && mc[0].f && mc[0].f->cpool && mc[0].num) {
		if (class_text(r, mc[0].f->type, mc[0].num, s) != 0)
			return -1;
		if (s->n)
			sbuf_put(s, ".", 1);
	}
	return field_text(r, &mc[1], s, 0) < 0 ? -1 : 0;
}

/* What a frame type (its description) says: FRAME_MARK_KINDS' letters for
 * interpreted, JIT compiled (C1 too), inlined and kernel frames, 'n' native,
 * 'c' C++, 0 anything else. */
static char frame_kind(struct jr *r, uint64_t type, uint64_t key)
{
	struct cur c;
	struct fcap d = { "description", NULL, NULL, 0 };
	static const struct {
		const char *desc;
		char kind;
	} kinds[] = { { "Interpreted", '0' }, { "JIT compiled", 'j' }, { "C1 compiled", 'j' }, { "Inlined", 'i' },
		      { "Kernel", 'k' },      { "Native", 'n' },       { "C++", 'c' } };
	const struct jclass *k = pool_entry(r, type, key, &c);
	if (!k)
		return 0;
	read_object(r, &c, k, &d, 1);
	sbuf_reset(&r->s2);
	if (c.bad || field_text(r, &d, &r->s2, 0) != 0 || !r->s2.p)
		return 0;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(r->s2.p, kinds[i].desc) == 0)
			return kinds[i].kind;
	return 0;
}

/* Whether the chunk's frame types include async-profiler's C++ or Kernel:
 * its "Native" frames are then C code named by the method alone (the JDK's
 * are Java native methods, with their class). */
static bool native_is_c(struct jr *r, uint64_t type)
{
	for (size_t i = 0; i < r->pools.cap; i++) {
		const struct map_slot *m = &r->pools.s[i];
		if (m->used && m->type == type) {
			char k = frame_kind(r, type, m->key);
			if (k == 'k' || k == 'c')
				return true;
		}
	}
	return false;
}

/* Folds stack trace key (of pool type) into r->frames: its cache value. */
static uint64_t stack_fold(struct jr *r, uint64_t type, uint64_t key)
{
	struct cur c;
	struct fcap sc[2] = { { "truncated", NULL, NULL, 0 }, { "frames", NULL, NULL, 0 } };
	const uint8_t **at = NULL;
	uint64_t v = STACK_BAD;
	const struct jclass *k = pool_entry(r, type, key, &c), *fk;
	if (!k)
		return STACK_BAD;
	read_object(r, &c, k, sc, 2);
	if (c.bad || !sc[1].f || !sc[1].f->array || sc[1].f->cpool || !(fk = class_of(r, sc[1].f->type)))
		return STACK_BAD;
	struct cur fc = { sc[1].at, r->chunk + r->size, false };
	uint64_t n = rd_int(r, &fc);
	if (fc.bad || n > left(&fc))
		return STACK_BAD;
	if (n > JFR_MAX_FRAMES)
		n = JFR_MAX_FRAMES + 1; /* too deep: folded as too long below */
	at = malloc((n ? n : 1) * sizeof(*at));
	if (!at) {
		r->oom = true;
		return STACK_BAD;
	}
	for (uint64_t i = 0; i < n && !fc.bad; i++) {
		at[i] = fc.p;
		skip_class(r, &fc, fk, 1);
	}
	if (fc.bad)
		goto out;
	r->text.len = 0;
	bool too_long = n > JFR_MAX_FRAMES;
	for (uint64_t i = n; i > 0 && !too_long; i--) { /* JFR lists the leaf first */
		struct fcap fr[2] = { { "method", NULL, NULL, 0 }, { "type", NULL, NULL, 0 } };
		struct cur ec = { at[i - 1], r->chunk + r->size, false };
		read_object(r, &ec, fk, fr, 2);
		if (ec.bad)
			goto out;
		char kind = 0;
		if (fr[1].f && fr[1].f->cpool) {
			kind = frame_kind(r, fr[1].f->type, fr[1].num);
			if (kind == 'n' && r->native_c < 0)
				r->native_c = native_is_c(r, fr[1].f->type);
		}
		if (frame_text(r, &fr[0], kind == 'k' || kind == 'c' || (kind == 'n' && r->native_c > 0), &r->s1) != 0)
			goto out;
		if (kind && strchr(FRAME_MARK_KINDS, kind))
			sbuf_put(&r->s1, (const char[]){ '_', '[', kind, ']' }, FRAME_MARK_LEN);
		if (r->s1.oom || r->s2.oom) {
			r->oom = true;
			goto out;
		}
		int pr = folded_line_push(&r->text, r->s1.p ? r->s1.p : "", r->s1.n, true);
		if (pr == FOLDED_PUSH_OOM) {
			r->oom = true;
			goto out;
		}
		too_long = pr == FOLDED_PUSH_LONG;
	}
	long idx = too_long ? -1 : str_index_add(&r->frames, r->text.buf ? r->text.buf : "", r->text.len);
	if (!too_long && idx < 0) {
		r->oom = true;
		goto out;
	}
	/* too long: index 0 with neither flag never happens for a real stack; mark it */
	v = too_long ? (STACK_BAD | STACK_TRUNCATED) :
		       ((uint64_t)idx << 2 | (sc[0].f && sc[0].num ? STACK_TRUNCATED : 0));
out:
	free(at);
	return v;
}

/* ---- events ----------------------------------------------------------------------- */

/* Appends one frame to r->line: 0, or -1 (too long; r->oom when out of memory). */
static int line_push(struct jr *r, const char *s, size_t n, bool clean)
{
	int pr = folded_line_push(&r->line, s, n, clean);
	if (pr == FOLDED_PUSH_OOM)
		r->oom = true;
	return pr == FOLDED_PUSH_OK ? 0 : -1;
}

/* One sample event of class k at c. 0, or -1 on a fatal error (r->err). */

/* Whether folded frames f[0..n) start with jflame's roots: "[Pod]" or "[Con]"
 * frames, or a process root "[PID] name" (a .jfr jflame wrote keeps them as frames). */
static bool has_roots(const char *f, size_t n)
{
	size_t i = 1;
	if (n >= 5 && (memcmp(f, "[Pod]", 5) == 0 || memcmp(f, "[Con]", 5) == 0))
		return true;
	if (n < 4 || f[0] != '[')
		return false;
	while (i < n && f[i] >= '0' && f[i] <= '9')
		i++;
	return i > 1 && i + 1 < n && f[i] == ']' && f[i + 1] == ' ';
}

static int sample_event(struct jr *r, struct cur *c, const struct jclass *k)
{
	const char *weight =
		r->kind == K_ALLOC ?
			(strcmp(k->name, "jdk.ObjectAllocationSample") == 0 ? "weight" : "allocationSize") :
		r->kind == K_LOCK ? "duration" :
		r->kind == K_WALL ? "samples" :
				    "-";
	struct fcap ec[6] = { { "startTime", NULL, NULL, 0 },
			      { "sampledThread", NULL, NULL, 0 },
			      { "eventThread", NULL, NULL, 0 },
			      { "stackTrace", NULL, NULL, 0 },
			      { weight, NULL, NULL, 0 },
			      { r->kind != K_LOCK		       ? "objectClass" :
				strcmp(k->name, "jdk.ThreadPark") == 0 ? "parkedClass" :
									 "monitorClass",
				NULL, NULL, 0 } };
	read_object(r, c, k, ec, 6);
	if (c->bad) {
		if (r->too_complex)
			goto complex;
		r->st->bad_events++;
		return 0;
	}
	r->st->events++;
	const struct fcap *th = ec[1].f ? &ec[1] : &ec[2];
	const struct fcap *stc = &ec[3];
	if (!stc->f || !stc->f->cpool || stc->num == 0) {
		r->st->no_frames++;
		return 0;
	}
	/* the stack's frames, folded once per trace */
	uint64_t v;
	if (!map_get(&r->stacks, stc->f->type, stc->num, &v)) {
		v = stack_fold(r, stc->f->type, stc->num);
		if (r->oom)
			goto oom;
		if (r->too_complex)
			goto complex;
		if (map_put(&r->stacks, stc->f->type, stc->num, v) != 0)
			goto oom;
	}
	if (v == (STACK_BAD | STACK_TRUNCATED)) {
		r->st->too_long++;
		return 0;
	}
	if (v & STACK_BAD) {
		r->st->bad_refs++;
		return 0;
	}
	const char *frames = r->frames.strs[v >> 2];
	size_t frames_len = r->frames.lens[v >> 2];
	if (frames_len == 0) {
		r->st->no_frames++;
		return 0;
	}
	/* the thread: its Java name, else its OS name */
	sbuf_reset(&r->thread);
	if (th->f && th->f->cpool && th->num) {
		struct cur tc;
		struct fcap tn[2] = { { "javaName", NULL, NULL, 0 }, { "osName", NULL, NULL, 0 } };
		const struct jclass *tk = pool_entry(r, th->f->type, th->num, &tc);
		if (!tk) {
			r->st->bad_refs++;
			return 0;
		}
		read_object(r, &tc, tk, tn, 2);
		if (tc.bad || (field_text(r, &tn[0], &r->thread, 0) != 0 || r->thread.n == 0)) {
			sbuf_reset(&r->thread);
			if (tc.bad || field_text(r, &tn[1], &r->thread, 0) < 0) {
				r->st->bad_refs++;
				return 0;
			}
		}
	}
	/* the leaf of an allocation or a lock: the class */
	sbuf_reset(&r->s1);
	if (r->kind == K_ALLOC || r->kind == K_LOCK) {
		const struct fcap *cl = &ec[5];
		if (!cl->f || !cl->f->cpool || !cl->num)
			sbuf_put(&r->s1, "[unknown class]", 15);
		else if (class_text(r, cl->f->type, cl->num, &r->s1) != 0) {
			r->st->bad_refs++;
			return 0;
		}
		sbuf_put(&r->s1, r->kind == K_ALLOC ? FRAME_MARK_ALLOC : FRAME_MARK_LOCK, FRAME_MARK_LEN);
	}
	if (r->thread.oom || r->s1.oom || r->s2.oom)
		goto oom;
	/* the folded stack */
	r->line.len = 0;
	/* a stack that starts with jflame's roots (its own .jfr: [Pod]/[Con] frames, "[PID] name", the
	   thread) has them already; an event without a thread (jflame's of folded input without roots) gets none */
	bool roots = has_roots(frames, frames_len);
	if ((!roots && r->pid_root[0] && line_push(r, r->pid_root, strlen(r->pid_root), false) != 0) ||
	    (!roots && r->thread.n && line_push(r, r->thread.p, r->thread.n, true) != 0) ||
	    ((v & STACK_TRUNCATED) && line_push(r, "[truncated]", 11, false) != 0) ||
	    line_push(r, frames, frames_len, false) != 0 || (r->s1.n && line_push(r, r->s1.p, r->s1.n, true) != 0)) {
		if (r->oom)
			goto oom;
		r->st->too_long++;
		return 0;
	}
	if (v & STACK_TRUNCATED)
		r->st->truncated++;
	r->expanded += r->line.len + 1;
	if (r->expanded > JFR_MAX_EXPANSION) {
		snprintf(r->err, r->errlen,
			 "%s expands to more than %" PRIu64 " GiB of stacks; is it a real recording?", r->name,
			 JFR_MAX_EXPANSION >> 30);
		return -1;
	}
	uint64_t count = 1, w = 0;
	if (r->kind == K_WALL)
		count = ec[4].f ? ec[4].num : 1;
	else if (r->kind == K_ALLOC)
		w = ec[4].f ? ec[4].num : 0;
	else if (r->kind == K_LOCK && ec[4].f) { /* ticks to nanoseconds */
		double ns = (double)ec[4].num * 1e9 / (double)r->tps;
		w = ns < 1.8e19 ? (uint64_t)ns : UINT64_MAX;
	}
	if (count == 0)
		return 0;
	long id = stack_table_add(r->t, r->line.buf, r->line.len, count, w);
	if (id < 0)
		goto oom;
	double secs = (double)r->start_ns / 1e9;
	if (ec[0].f)
		secs += ((double)(int64_t)ec[0].num - (double)r->start_ticks) / (double)r->tps;
	if (stack_table_add_timed(r->t, (uint32_t)id, r->thread.p, r->thread.n, secs, w ? w : count) != 0)
		goto oom;
	return 0;
complex:
	snprintf(r->err, r->errlen,
		 "%s: the chunk at offset %zu takes too long to parse (values nested or repeated "
		 "beyond reason); is it a real recording?",
		 r->name, r->at);
	return -1;
oom:
	r->oom = true;
	snprintf(r->err, r->errlen, "out of memory reading %s", r->name);
	return -1;
}

/* The checkpoint event at c: its pools indexed. */
static int checkpoint(struct jr *r, struct cur *c, size_t off)
{
	rd_long(r, c); /* start, duration, delta to the previous checkpoint */
	rd_long(r, c);
	rd_long(r, c);
	rd_u8(c); /* its kind (flush, chunk header, ...) */
	uint64_t npools = rd_int(r, c);
	if (c->bad || npools > left(c))
		goto bad;
	for (uint64_t i = 0; i < npools; i++) {
		uint64_t type = rd_long(r, c), n = rd_int(r, c);
		const struct jclass *k = class_of(r, type);
		if (c->bad || n > left(c))
			goto bad;
		if (!k) {
			snprintf(r->err, r->errlen,
				 "%s: the constant pool event at offset %zu holds type %" PRIu64
				 " that the metadata does not describe",
				 r->name, r->at + off, type);
			return -1;
		}
		for (uint64_t j = 0; j < n; j++) {
			uint64_t key = rd_long(r, c);
			size_t at = (size_t)(c->p - r->chunk);
			skip_class(r, c, k, 0);
			if (c->bad)
				goto bad;
			if (map_put(&r->pools, type, key, at) != 0) {
				r->oom = true;
				snprintf(r->err, r->errlen, "out of memory reading %s", r->name);
				return -1;
			}
		}
	}
	return 0;
bad:
	if (r->too_complex)
		snprintf(r->err, r->errlen,
			 "%s: the constant pools at offset %zu take too long to parse (values nested "
			 "or repeated beyond reason); is it a real recording?",
			 r->name, r->at + off);
	else
		snprintf(r->err, r->errlen,
			 "%s: the constant pool event at offset %zu does not parse by its metadata "
			 "(truncated or corrupt)",
			 r->name, r->at + off);
	return -1;
}

/* Walks the chunk's events: pass 0 indexes the pools and notes the JVM's pid,
 * pass 1 reads the samples. */
static int chunk_events(struct jr *r, int pass)
{
	size_t pos = JFR_HEADER_SIZE;
	while (pos < r->size) {
		struct cur c = { r->chunk + pos, r->chunk + r->size, false };
		uint64_t size = rd_int(r, &c);
		if (c.bad || size == 0 || size > r->size - pos) {
			snprintf(r->err, r->errlen, "%s: the event at offset %zu %s", r->name, r->at + pos,
				 c.bad || size > r->size - pos ? "runs past its chunk (a truncated or corrupt file)" :
								 "has size 0 (a corrupt file)");
			return -1;
		}
		c.end = r->chunk + pos + size;
		uint64_t type = rd_long(r, &c);
		if (c.bad) {
			snprintf(r->err, r->errlen, "%s: the event at offset %zu is truncated", r->name, r->at + pos);
			return -1;
		}
		if (pass == 0 && type == 1 && checkpoint(r, &c, pos) != 0)
			return -1;
		if (pass == 0 && type && type == r->ev_jvminfo) {
			struct fcap pid = { "pid", NULL, NULL, 0 };
			read_object(r, &c, class_of(r, type), &pid, 1);
			if (!c.bad && pid.f && pid.num > 0 && pid.num < (1u << 31))
				snprintf(r->pid_root, sizeof(r->pid_root), "[%" PRIu64 "] java", pid.num);
		}
		if (pass == 0 && type && r->kind == K_ALLOC && type == r->ev[0])
			r->alloc_samples++;
		if (pass == 1 && type > 1) {
			bool want = type == r->ev[0] || (type == r->ev[1] || type == r->ev[2]);
			if (r->kind == K_ALLOC && r->alloc_samples)
				want = type == r->ev[0]; /* the sampled events when there are any, not both */
			if (want && sample_event(r, &c, class_of(r, type)) != 0)
				return -1;
		}
		pos += (size_t)size;
	}
	return 0;
}

static void chunk_free(struct jr *r)
{
	for (size_t i = 0; i < r->nstrs; i++)
		free(r->strs[i]);
	free(r->strs);
	r->strs = NULL;
	r->nstrs = 0;
	r->nclasses = r->nfields = 0;
	r->c_string = NULL;
	map_clear(&r->pools);
	map_clear(&r->stacks);
	str_index_free(&r->frames);
	str_index_init(&r->frames);
	r->pid_root[0] = '\0';
	r->alloc_samples = 0;
	r->native_c = -1;
}

/* The chunk at r->chunk (its header checked): metadata, pools, samples. */
static int chunk_read(struct jr *r, uint64_t meta_off)
{
	static const char *const names[][3] = {
		[K_CPU] = { "jdk.ExecutionSample", NULL, NULL },
		[K_NATIVE] = { "jdk.NativeMethodSample", NULL, NULL },
		[K_WALL] = { "profiler.WallClockSample", NULL, NULL },
		[K_ALLOC] = { "jdk.ObjectAllocationSample", "jdk.ObjectAllocationInNewTLAB",
			      "jdk.ObjectAllocationOutsideTLAB" },
		/* monitors, and java.util.concurrent locks (async-profiler's lock=juc, the JDK's parks) */
		[K_LOCK] = { "jdk.JavaMonitorEnter", "jdk.ThreadPark", NULL },
	};
	if (meta_read(r, meta_off) != 0)
		return -1;
	for (int i = 0; i < 3; i++) {
		const struct jclass *k = names[r->kind][i] ? class_named(r, names[r->kind][i]) : NULL;
		r->ev[i] = k && k->id > 1 && k->prim == P_OBJ ? k->id : 0;
	}
	const struct jclass *ji = class_named(r, "jdk.JVMInformation");
	r->ev_jvminfo = ji && ji->id > 1 && ji->prim == P_OBJ ? ji->id : 0;
	/* every value of the chunk parsed a few times at most */
	r->budget = (uint64_t)r->size * 64 + (1u << 20);
	if (chunk_events(r, 0) != 0)
		return -1;
	if (!r->ev[0] && !r->ev[1] && !r->ev[2])
		return 0;
	return chunk_events(r, 1);
}

int jfr_read(struct stack_table *t, const void *buf, size_t len, const char *name, const char *events,
	     struct jfr_stats *st, char *err, size_t errlen)
{
	const uint8_t *b = buf;
	struct jr r = { .name = name, .t = t, .st = st, .err = err, .errlen = errlen, .native_c = -1 };
	int64_t first_ns = 0, last_ns = 0;
	size_t pos = 0;
	int rc = -1;

	memset(st, 0, sizeof(*st));
	str_index_init(&r.frames);
	if (!events)
		events = "cpu";
	size_t ki = 0;
	while (ki < sizeof(kinds) / sizeof(kinds[0]) && strcmp(kinds[ki].name, events) != 0)
		ki++;
	if (ki == sizeof(kinds) / sizeof(kinds[0])) {
		snprintf(err, errlen, "%s is a JFR recording: --sample-index takes %s there, not '%s'", name,
			 JFR_EVENT_NAMES, events);
		goto out;
	}
	r.kind = kinds[ki].kind;
	if (len < 4 || memcmp(b, "FLR\0", 4) != 0) {
		snprintf(err, errlen, "%s is not a JFR recording (it does not start with FLR\\0)", name);
		goto out;
	}
	while (pos < len) {
		const uint8_t *h = b + pos;
		if (len - pos < JFR_HEADER_SIZE) {
			snprintf(err, errlen,
				 "%s is truncated: the chunk at offset %zu has %zu of its header's %d bytes", name, pos,
				 len - pos, JFR_HEADER_SIZE);
			goto out;
		}
		if (memcmp(h, "FLR\0", 4) != 0) {
			snprintf(err, errlen, "%s: the bytes at offset %zu are not a JFR chunk (no FLR\\0 there)", name,
				 pos);
			goto out;
		}
		unsigned major = (unsigned)be(h + 4, 2), minor = (unsigned)be(h + 6, 2);
		if (major != 2) {
			snprintf(err, errlen,
				 "%s is JFR version %u.%u; jflame reads version 2 (JDK 11 and later, "
				 "async-profiler)",
				 name, major, minor);
			goto out;
		}
		uint64_t size = be(h + 8, 8), meta = be(h + 24, 8);
		int64_t start_ns = (int64_t)be(h + 32, 8), dur_ns = (int64_t)be(h + 40, 8);
		if (size < JFR_HEADER_SIZE || size > len - pos) {
			snprintf(err, errlen,
				 "%s is truncated: its chunk at offset %zu says %" PRIu64 " bytes and %zu are "
				 "there (a recording still being written?)",
				 name, pos, size, len - pos);
			goto out;
		}
		if (meta < JFR_HEADER_SIZE || meta >= size) {
			snprintf(err, errlen,
				 "%s: the chunk at offset %zu has no metadata (a recording still being "
				 "written, or a corrupt one)",
				 name, pos);
			goto out;
		}
		r.chunk = h;
		r.size = (size_t)size;
		r.at = pos;
		r.compressed = (h[67] & 1) != 0;
		r.start_ns = start_ns;
		r.start_ticks = (int64_t)be(h + 48, 8);
		r.tps = (int64_t)be(h + 56, 8);
		if (r.tps <= 0) {
			snprintf(err, errlen, "%s: the chunk at offset %zu has no clock rate (ticks a second)", name,
				 pos);
			goto out;
		}
		int cr = chunk_read(&r, meta);
		chunk_free(&r);
		if (cr != 0)
			goto out;
		st->chunks++;
		if (start_ns > 0 && (!first_ns || start_ns < first_ns))
			first_ns = start_ns;
		if (start_ns > 0 && dur_ns > 0 && dur_ns <= INT64_MAX - start_ns && start_ns + dur_ns > last_ns)
			last_ns = start_ns + dur_ns;
		pos += (size_t)size;
	}

	struct stack_meta *m = &t->meta;
	static const char *const count_type[] = {
		[K_CPU] = "samples", [K_NATIVE] = "samples", [K_WALL] = "samples", [K_ALLOC] = "alloc_samples", [K_LOCK] = "contentions"
	};
	static const char *const event[] = { [K_CPU] = "jdk.ExecutionSample",
					     [K_NATIVE] = "jdk.NativeMethodSample",
					     [K_WALL] = "profiler.WallClockSample",
					     [K_ALLOC] = "alloc",
					     [K_LOCK] = "lock" };
	snprintf(m->count_type, sizeof(m->count_type), "%s", count_type[r.kind]);
	snprintf(m->count_unit, sizeof(m->count_unit), "count");
	snprintf(m->event, sizeof(m->event), "%s", event[r.kind]);
	if (r.kind == K_ALLOC || r.kind == K_LOCK) {
		m->has_weight = true;
		snprintf(m->weight_type, sizeof(m->weight_type), "%s", r.kind == K_ALLOC ? "alloc_space" : "delay");
		snprintf(m->weight_unit, sizeof(m->weight_unit), "%s", r.kind == K_ALLOC ? "bytes" : "nanoseconds");
	}
	m->time_ns = first_ns;
	m->duration_ns = last_ns > first_ns && first_ns ? last_ns - first_ns : 0;
	rc = 0;
out:
	chunk_free(&r);
	free(r.classes);
	free(r.fields);
	free(r.pools.s);
	free(r.stacks.s);
	str_index_free(&r.frames);
	folded_line_free(&r.line);
	folded_line_free(&r.text);
	free(r.s1.p);
	free(r.s2.p);
	free(r.thread.p);
	return rc;
}
