/* hotspot_scopes.c - the inline chain of a compiled Java method at a pc: the
 * nmethod's PcDesc table and scopes data (its debug info) decoded from the JVM's memory. */
#include "hotspot_scopes.h"

#include <stdbool.h>
#include <string.h>

#define HEADER_MAX   1024	 /* bytes of an nmethod read for its fields */
#define PCDESCS_MAX  (1u << 22)	 /* PcDescs of one nmethod at most */
#define SECTION_MAX  (64u << 20) /* bytes of a debug-info section at most */
#define CHUNK	     64		 /* PcDescs read at once */
#define PCDESC_MAX   64		 /* sizeof(PcDesc) at most (16 on JDK 17 to 25) */
#define SCOPE_HEADER 15		 /* a scope's sender, method and bci: three ints of 5 bytes at most */

/* UNSIGNED5: each byte less x is a digit; a digit below 256 - 64 - x ends the
 * number, which has at most 5 of them, each worth 64 times the one before. */
int hotspot_stream_int(const uint8_t *p, size_t n, size_t *pos, int x, uint32_t *out)
{
	const uint32_t lg_h = 6, l = 256 - 64 - (uint32_t)x;
	uint32_t sum = 0;
	size_t at = *pos;
	for (uint32_t i = 0; i < 5; i++) {
		if (at + i >= n || p[at + i] < (uint32_t)x)
			return -1;
		uint32_t b = (uint32_t)p[at + i] - (uint32_t)x;
		sum += b << (lg_h * i);
		if (b < l || i == 4) {
			*pos = at + i + 1;
			*out = sum;
			return 0;
		}
	}
	return -1;
}

static bool have(long off)
{
	return off >= 0 && off + 8 <= HEADER_MAX;
}

int hotspot_scopes_supported(const struct hotspot_scope_layout *l)
{
	bool common = have(l->code_begin) && have(l->compile_id) && have(l->method) && have(l->scopes_pcs) &&
		      l->pcdesc_size >= 8 && l->pcdesc_size <= PCDESC_MAX && l->pc_offset >= 0 &&
		      l->pc_offset + 4 <= l->pcdesc_size && l->scope_offset >= 0 &&
		      l->scope_offset + 4 <= l->pcdesc_size && (l->stream_x == 0 || l->stream_x == 1);
	bool old = have(l->dependencies) && have(l->metadata) && have(l->scopes_data_begin);
	bool imm = have(l->immutable) && have(l->immutable_size) && have(l->scopes_data) && have(l->mutable_data) &&
		   have(l->relocation_size) && have(l->mutable_size);
	return common && (old || imm);
}

static int32_t i32_at(const uint8_t *h, long off)
{
	int32_t v;
	memcpy(&v, h + off, 4);
	return v;
}

static uint64_t u64_at(const uint8_t *h, long off)
{
	uint64_t v;
	memcpy(&v, h + off, 8);
	return v;
}

/* [begin, end) of a section at base + a .. base + b, both ints from the header. */
static bool section(uint64_t base, int32_t a, int32_t b, uint64_t *begin, uint64_t *end)
{
	if (!base || a < 0 || b < a || (uint32_t)(b - a) > SECTION_MAX || base + (uint64_t)b < base)
		return false;
	*begin = base + (uint64_t)a;
	*end = base + (uint64_t)b;
	return true;
}

/* An nmethod's debug info, located. */
struct debug_info {
	uint64_t code, pcs, npcs, data, data_end, meta, nmeta, method;
};

static int locate(const struct hotspot_scope_layout *l, const struct remote_mem *m, uint64_t nm, uint32_t compile_id,
		  struct debug_info *d)
{
	uint8_t h[HEADER_MAX];
	long top = 0, offs[] = { l->code_begin,	 l->compile_id,	    l->method,	     l->scopes_pcs,
				 l->scopes_data, l->dependencies,   l->metadata,     l->scopes_data_begin,
				 l->immutable,	 l->immutable_size, l->mutable_data, l->relocation_size,
				 l->mutable_size };
	uint64_t pcs_end, meta_end;
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++)
		top = offs[i] + 8 > top ? offs[i] + 8 : top;
	if (remote_mem_read(m, nm, h, (size_t)top) != 0)
		return HOTSPOT_SCOPES_BAD;
	if ((uint32_t)i32_at(h, l->compile_id) != compile_id)
		return HOTSPOT_SCOPES_GONE;
	d->method = u64_at(h, l->method);
	d->code = l->code_offset ? nm + (uint64_t)(uint32_t)i32_at(h, l->code_begin) : u64_at(h, l->code_begin);
	if (l->code_offset && i32_at(h, l->code_begin) < 0)
		return HOTSPOT_SCOPES_BAD;
	bool ok;
	if (have(l->immutable) && have(l->immutable_size) && have(l->scopes_data) && have(l->mutable_data) &&
	    have(l->relocation_size) && have(l->mutable_size)) {
		uint64_t imm = u64_at(h, l->immutable), mut = u64_at(h, l->mutable_data);
		int32_t reloc = i32_at(h, l->relocation_size);
		ok = section(imm, i32_at(h, l->scopes_pcs), i32_at(h, l->scopes_data), &d->pcs, &pcs_end) &&
		     section(imm, i32_at(h, l->scopes_data), i32_at(h, l->immutable_size), &d->data, &d->data_end) &&
		     section(mut, reloc, i32_at(h, l->mutable_size), &d->meta, &meta_end);
	} else {
		/* the metadata, the scopes data and the PcDescs follow each other */
		int32_t pcs = i32_at(h, l->scopes_pcs);
		uint64_t data = u64_at(h, l->scopes_data_begin);
		int32_t data_off = data > nm && data - nm <= 0x7fffffff ? (int32_t)(data - nm) : -1;
		ok = data_off >= 0 && section(nm, pcs, i32_at(h, l->dependencies), &d->pcs, &pcs_end) &&
		     section(nm, data_off, pcs, &d->data, &d->data_end) &&
		     section(nm, i32_at(h, l->metadata), data_off, &d->meta, &meta_end);
	}
	if (!ok || !d->code || (pcs_end - d->pcs) % (uint64_t)l->pcdesc_size != 0)
		return HOTSPOT_SCOPES_BAD;
	d->npcs = (pcs_end - d->pcs) / (uint64_t)l->pcdesc_size;
	d->nmeta = (meta_end - d->meta) / 8;
	return d->npcs <= PCDESCS_MAX ? 0 : HOTSPOT_SCOPES_BAD;
}

/* PcDescs read CHUNK at a time. */
struct pcdescs {
	const struct hotspot_scope_layout *l;
	const struct remote_mem *m;
	const struct debug_info *d;
	uint64_t first, n; /* the chunk held: PcDescs [first, first + n) */
	uint8_t buf[CHUNK * PCDESC_MAX];
};

/* PcDesc i's pc offset and scope offset: 0, or -1 unreadable. */
static int pcdesc(struct pcdescs *c, uint64_t i, int32_t *pc, int32_t *scope)
{
	size_t ps = (size_t)c->l->pcdesc_size;
	if (i < c->first || i >= c->first + c->n) {
		uint64_t first = i - i % CHUNK, n = c->d->npcs - first < CHUNK ? c->d->npcs - first : CHUNK;
		c->n = 0;
		if (remote_mem_read(c->m, c->d->pcs + first * ps, c->buf, (size_t)n * ps) != 0)
			return -1;
		c->first = first;
		c->n = n;
	}
	const uint8_t *e = c->buf + (size_t)(i - c->first) * ps;
	*pc = i32_at(e, c->l->pc_offset);
	*scope = i32_at(e, c->l->scope_offset);
	return 0;
}

int hotspot_scopes_at(const struct hotspot_scope_layout *l, const struct remote_mem *m, uint64_t nm,
		      uint32_t compile_id, uint64_t pc, struct hotspot_scope *out, int max)
{
	struct debug_info d;
	struct pcdescs c = { .l = l, .m = m, .d = &d };
	int32_t at_pc, scope = 0;
	int rc, n = 0;
	if (!hotspot_scopes_supported(l) || max < 1)
		return HOTSPOT_SCOPES_UNSUPPORTED;
	if ((rc = locate(l, m, nm, compile_id, &d)) != 0)
		return rc;
	if (pc < d.code || pc - d.code > 0x7fffffff)
		return HOTSPOT_SCOPES_NONE;
	int32_t off = (int32_t)(pc - d.code);
	/* the first PcDesc at or after off (they are sorted by pc; the first is a
	 * sentinel at -1), then on to the first one with a scope, as JVMTI's inline
	 * records skip those without */
	uint64_t lo = 0, hi = d.npcs;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (pcdesc(&c, mid, &at_pc, &scope) != 0)
			return HOTSPOT_SCOPES_BAD;
		if (at_pc < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (scope = 0; lo < d.npcs && scope == 0; lo++)
		if (pcdesc(&c, lo, &at_pc, &scope) != 0)
			return HOTSPOT_SCOPES_BAD;
	if (scope == 0)
		return HOTSPOT_SCOPES_NONE;
	/* the chain, innermost first: each scope names its sender's offset */
	uint64_t size = d.data_end - d.data;
	while (scope != 0) {
		uint8_t s[SCOPE_HEADER];
		uint32_t sender, index, bci;
		size_t pos = 0, len;
		if (scope < 0 || (uint64_t)scope >= size || n >= max || n >= HOTSPOT_SCOPES_MAX)
			return HOTSPOT_SCOPES_BAD;
		len = size - (uint64_t)scope < SCOPE_HEADER ? (size_t)(size - (uint64_t)scope) : SCOPE_HEADER;
		if (remote_mem_read(m, d.data + (uint64_t)scope, s, len) != 0 ||
		    hotspot_stream_int(s, len, &pos, l->stream_x, &sender) != 0 ||
		    hotspot_stream_int(s, len, &pos, l->stream_x, &index) != 0 ||
		    hotspot_stream_int(s, len, &pos, l->stream_x, &bci) != 0 || index == 0 || index > d.nmeta ||
		    bci > 0xffff + 1)
			return HOTSPOT_SCOPES_BAD;
		out[n].method = remote_mem_u64(m, d.meta + (uint64_t)(index - 1) * 8);
		out[n].bci = (int32_t)bci - 1; /* InvocationEntryBci is -1 */
		if (!out[n].method)
			return HOTSPOT_SCOPES_BAD;
		n++;
		scope = (int32_t)sender;
	}
	/* outermost first; the outermost scope is the nmethod's own method */
	for (int i = 0; i < n / 2; i++) {
		struct hotspot_scope t = out[i];
		out[i] = out[n - 1 - i];
		out[n - 1 - i] = t;
	}
	return out[0].method == d.method ? n : HOTSPOT_SCOPES_BAD;
}
