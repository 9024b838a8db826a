/* hotspot_stubs.c - names of the JVM's generated stubs (arraycopy, call_stub,
 * crypto intrinsics...) from its StubCodeDesc list, as JVMTI reports them to agents. */
#include "hotspot_stubs.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

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
#define RELOADS_MAX   60

struct stub {
	uint64_t begin, end;
	const char *name;
};

struct hotspot_stubs {
	struct remote_mem mem;
	uint64_t list_addr;
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

/* A stub's name: a printable C string of at most NAME_MAX_LEN - 1 bytes. */
static const char *stub_name(struct hotspot_stubs *s, uint64_t addr)
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
	for (size_t i = 0; i < got; i++)
		if ((unsigned char)name[i] <= 0x20 || (unsigned char)name[i] >= 0x7f)
			return NULL;
	return text_intern(s->si, name, got);
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
		if (begin && begin < end && end - begin <= STUB_MAX_SIZE && (name = stub_name(s, e[DESC_NAME / 8])))
			v[n++] = (struct stub){ begin, end, name };
		d = e[DESC_NEXT / 8];
	}
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
		size_t lo = 0, hi = s->n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (s->v[mid].begin <= pc)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo && pc < s->v[lo - 1].end)
			return s->v[lo - 1].name;
	}
	return NULL;
}
