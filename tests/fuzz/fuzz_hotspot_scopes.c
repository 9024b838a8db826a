/* fuzz_hotspot_scopes.c - libFuzzer target for decoding an nmethod's debug info
 * (its PcDescs and scopes data) from garbage memory: hotspot_scopes_at keeps
 * its contract and agrees with a plain linear decoder of the same memory;
 * hotspot_stream_int agrees with one too, and with an encoder. */
/* module: native/hotspot/hotspot_scopes.c native/hotspot/remote_mem.c */
#include "hotspot_scopes.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Input: a 32-byte header, then the memory image, "mapped" at BASE.
 *   h[0] bit 0: JDK 25's layout (else JDK 17's); bit 1: stream x 1 (else 0);
 *     bit 2: the PcDesc's shape and stream x from h[18..21] instead (any
 *     values: unsupported layouts too)
 *   h[1..2] nmethod - BASE, h[3..6] compile id, h[7..10] pc - BASE (signed),
 *   h[11] max (signed), h[12..13] where a run of hotspot_stream_int starts in
 *   the image, h[14..17] a value encoded and decoded,
 *   h[18] sizeof(PcDesc), h[19] _pc_offset, h[20] _scope_decode_offset,
 *   h[21] stream x (bit 2)
 * tests/unit/test_hotspot_scopes.c --write-seeds DIR writes such seeds. */
#define BASE	    0x10000ULL
#define HEADER	    32
#define NOUT	    (HOTSPOT_SCOPES_MAX + 8)
#define REF_UNKNOWN 100 /* the linear decoder cannot tell (memory it cannot read whole, unsorted PcDescs) */

struct image {
	const uint8_t *p;
	size_t n;
	size_t reads;
};

/* Whole reads inside the image succeed; anything else fails, as unmapped
 * memory does for process_vm_readv. */
static int image_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct image *im = ctx;
	im->reads++;
	if (addr < BASE || addr - BASE > im->n || len > im->n - (addr - BASE))
		return -1;
	memcpy(buf, im->p + (addr - BASE), len);
	return 0;
}

/* The image's bytes at [addr, addr + len), or NULL where they are not all there. */
static const uint8_t *at(const struct image *im, uint64_t addr, uint64_t len)
{
	if (!addr || addr + len < addr || addr < BASE || addr - BASE > im->n || len > im->n - (addr - BASE))
		return NULL;
	return im->p + (addr - BASE);
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return le32(p) | (uint64_t)le32(p + 4) << 32;
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static const struct hotspot_scope_layout jdk17 = {
	.stream_x = 0,
	.code_begin = 0x20,
	.code_offset = 0,
	.compile_id = 0x130,
	.method = 0x70,
	.scopes_pcs = 0x10c,
	.scopes_data = -1,
	.dependencies = 0x110,
	.metadata = 0x104,
	.scopes_data_begin = 0x78,
	.immutable = -1,
	.immutable_size = -1,
	.mutable_data = -1,
	.relocation_size = -1,
	.mutable_size = -1,
	.pcdesc_size = 16,
	.pc_offset = 0,
	.scope_offset = 4,
};

static const struct hotspot_scope_layout jdk25 = {
	.stream_x = 1,
	.code_begin = 0x24,
	.code_offset = 1,
	.compile_id = 0xd4,
	.method = 0x50,
	.scopes_pcs = 0xc4,
	.scopes_data = 0xc8,
	.dependencies = -1,
	.metadata = -1,
	.scopes_data_begin = -1,
	.immutable = 0x60,
	.immutable_size = 0xa0,
	.mutable_data = 0x10,
	.relocation_size = 0x1c,
	.mutable_size = 0x30,
	.pcdesc_size = 16,
	.pc_offset = 0,
	.scope_offset = 4,
};

/* One UNSIGNED5 integer, read as its definition says: byte i less x is digit
 * i, worth 64^i; a digit below 192 - x (or the fifth) is the last. */
static int ref_int(const uint8_t *p, size_t n, size_t *pos, int x, uint32_t *out)
{
	uint64_t sum = 0, weight = 1;
	for (size_t i = 0; i < 5; i++) {
		if (*pos + i >= n || p[*pos + i] < x)
			return -1;
		uint32_t d = p[*pos + i] - (uint32_t)x;
		sum += d * weight;
		weight *= 64;
		if (d < 192 - (uint32_t)x || i == 4) {
			*pos += i + 1;
			*out = (uint32_t)sum;
			return 0;
		}
	}
	return -1;
}

/* HotSpot's writer: high bytes x + L + (v - L) % 64 while v >= L (4 at most), then x + v. */
static size_t enc_u5(uint8_t *p, uint32_t v, int x)
{
	const uint32_t l = 192 - (uint32_t)x;
	size_t i = 0;
	while (v >= l && i < 4) {
		v -= l;
		p[i++] = (uint8_t)((uint32_t)x + l + v % 64);
		v /= 64;
	}
	if ((uint32_t)x + v > 255)
		abort();
	p[i++] = (uint8_t)((uint32_t)x + v);
	return i;
}

/* [begin, end) at base + a .. base + b: 0 <= a <= b, at most 64 MiB, no wrap. */
static bool ref_section(uint64_t base, int32_t a, int32_t b, uint64_t *begin, uint64_t *end)
{
	if (!base || a < 0 || b < a || (uint64_t)b - (uint64_t)a > (64u << 20) || base + (uint64_t)b < base)
		return false;
	*begin = base + (uint64_t)a;
	*end = base + (uint64_t)b;
	return true;
}

static int32_t i32(const uint8_t *p)
{
	return (int32_t)le32(p);
}

/* The chain as hotspot_scopes.h describes it, found by a linear scan of the
 * whole PcDesc table: the same result as hotspot_scopes_at, or REF_UNKNOWN. */
static int ref_scopes(const struct hotspot_scope_layout *l, const struct image *im, uint64_t nm, uint32_t compile_id,
		      uint64_t pc, struct hotspot_scope *out, int max)
{
	if (!hotspot_scopes_supported(l) || max < 1)
		return HOTSPOT_SCOPES_UNSUPPORTED;
	/* the header is read in one piece, up to 8 bytes past its last field */
	const long offs[] = { l->code_begin,  l->compile_id,	 l->method,	  l->scopes_pcs,
			      l->scopes_data, l->dependencies,	 l->metadata,	  l->scopes_data_begin,
			      l->immutable,   l->immutable_size, l->mutable_data, l->relocation_size,
			      l->mutable_size };
	long top = 0;
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++)
		top = offs[i] + 8 > top ? offs[i] + 8 : top;
	const uint8_t *h = at(im, nm, (uint64_t)top);
	if (!h)
		return HOTSPOT_SCOPES_BAD;
	if (le32(h + l->compile_id) != compile_id)
		return HOTSPOT_SCOPES_GONE;
	uint64_t method = le64(h + l->method), code, pcs, pcs_end, data, data_end, meta, meta_end;
	if (l->code_offset) {
		if (i32(h + l->code_begin) < 0)
			return HOTSPOT_SCOPES_BAD;
		code = nm + le32(h + l->code_begin);
	} else {
		code = le64(h + l->code_begin);
	}
	if (l->immutable >= 0) {
		uint64_t imm = le64(h + l->immutable), mut = le64(h + l->mutable_data);
		if (!ref_section(imm, i32(h + l->scopes_pcs), i32(h + l->scopes_data), &pcs, &pcs_end) ||
		    !ref_section(imm, i32(h + l->scopes_data), i32(h + l->immutable_size), &data, &data_end) ||
		    !ref_section(mut, i32(h + l->relocation_size), i32(h + l->mutable_size), &meta, &meta_end))
			return HOTSPOT_SCOPES_BAD;
	} else {
		uint64_t d = le64(h + l->scopes_data_begin);
		if (d <= nm || d - nm > 0x7fffffff)
			return HOTSPOT_SCOPES_BAD;
		int32_t doff = (int32_t)(d - nm);
		if (!ref_section(nm, i32(h + l->scopes_pcs), i32(h + l->dependencies), &pcs, &pcs_end) ||
		    !ref_section(nm, doff, i32(h + l->scopes_pcs), &data, &data_end) ||
		    !ref_section(nm, i32(h + l->metadata), doff, &meta, &meta_end))
			return HOTSPOT_SCOPES_BAD;
	}
	uint64_t ps = (uint64_t)l->pcdesc_size;
	if (!code || (pcs_end - pcs) % ps != 0 || (pcs_end - pcs) / ps > (1u << 22))
		return HOTSPOT_SCOPES_BAD;
	uint64_t npcs = (pcs_end - pcs) / ps, nmeta = (meta_end - meta) / 8;
	if (pc < code || pc - code > 0x7fffffff)
		return HOTSPOT_SCOPES_NONE;
	int32_t off = (int32_t)(pc - code), scope = 0;
	if (npcs == 0)
		return HOTSPOT_SCOPES_NONE;
	const uint8_t *t = at(im, pcs, npcs * ps);
	if (!t)
		return REF_UNKNOWN;
	for (uint64_t i = 1; i < npcs; i++)
		if (i32(t + i * ps + l->pc_offset) < i32(t + (i - 1) * ps + l->pc_offset))
			return REF_UNKNOWN; /* a binary search finds one of several */
	uint64_t i = 0;
	while (i < npcs && i32(t + i * ps + l->pc_offset) < off)
		i++;
	for (; i < npcs && scope == 0; i++)
		scope = i32(t + i * ps + l->scope_offset);
	if (scope == 0)
		return HOTSPOT_SCOPES_NONE;
	uint64_t size = data_end - data;
	const uint8_t *s = at(im, data, size);
	if (!s)
		return REF_UNKNOWN;
	int n = 0;
	while (scope != 0) {
		uint32_t sender, index, bci;
		size_t pos = (size_t)scope;
		if (scope < 0 || (uint64_t)scope >= size || n >= max || n >= HOTSPOT_SCOPES_MAX)
			return HOTSPOT_SCOPES_BAD;
		if (ref_int(s, size, &pos, l->stream_x, &sender) || ref_int(s, size, &pos, l->stream_x, &index) ||
		    ref_int(s, size, &pos, l->stream_x, &bci) || index == 0 || index > nmeta || bci > 65536)
			return HOTSPOT_SCOPES_BAD;
		const uint8_t *m = at(im, meta + 8 * (uint64_t)(index - 1), 8);
		if (!m || !le64(m))
			return HOTSPOT_SCOPES_BAD;
		/* innermost first here: placed from the end */
		out[n].method = le64(m);
		out[n].bci = (int32_t)bci - 1;
		n++;
		scope = (int32_t)sender;
	}
	for (int k = 0; k < n / 2; k++) {
		struct hotspot_scope x = out[k];
		out[k] = out[n - 1 - k];
		out[n - 1 - k] = x;
	}
	return out[0].method == method ? n : HOTSPOT_SCOPES_BAD;
}

/* a[0..n) and b[0..n) name the same scopes (their padding aside) */
static bool same(const struct hotspot_scope *a, const struct hotspot_scope *b, int n)
{
	for (int i = 0; i < n; i++)
		if (a[i].method != b[i].method || a[i].bci != b[i].bci)
			return false;
	return true;
}

static void check_stream(const struct image *im, size_t start, int x, uint32_t v)
{
	/* a run of integers through the image: each 1 to 5 bytes, as the reference reads them */
	size_t pos = start, rpos = start;
	for (int k = 0; k < 1000; k++) {
		uint32_t a = 0x5a5a5a5a, b = 0;
		size_t was = pos;
		int rc = hotspot_stream_int(im->p, im->n, &pos, x, &a), rrc = ref_int(im->p, im->n, &rpos, x, &b);
		if (rc != rrc || pos != rpos)
			abort();
		if (rc != 0) {
			if (rc != -1 || pos != was || a != 0x5a5a5a5a)
				abort(); /* a failure changes nothing */
			break;
		}
		if (pos - was < 1 || pos - was > 5 || a != b)
			abort();
	}
	/* v encoded decodes to v; any prefix of it fails */
	uint8_t e[8];
	size_t n = enc_u5(e, v, x), p = 0;
	uint32_t got = 0;
	if (hotspot_stream_int(e, n, &p, x, &got) != 0 || got != v || p != n)
		abort();
	for (size_t cut = 0; cut < n; cut++) {
		p = 0;
		if (hotspot_stream_int(e, cut, &p, x, &got) != -1 || p != 0)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HEADER)
		return 0;
	const uint8_t *h = data;
	struct image im = { data + HEADER, size - HEADER, 0 };
	struct remote_mem mem = { image_read, &im };
	struct hotspot_scope_layout l = h[0] & 1 ? jdk25 : jdk17;
	l.stream_x = h[0] & 2 ? 1 : 0;
	if (h[0] & 4) {
		l.pcdesc_size = h[18];
		l.pc_offset = (int8_t)h[19];
		l.scope_offset = (int8_t)h[20];
		l.stream_x = (int8_t)h[21];
	}
	uint64_t nm = BASE + le16(h + 1), pc = BASE + (uint64_t)(int64_t)i32(h + 7);
	uint32_t compile_id = le32(h + 3);
	int max = (int8_t)h[11];

	struct hotspot_scope out[NOUT], again[NOUT], ref[NOUT];
	memset(out, 0xee, sizeof(out));
	int rc = hotspot_scopes_at(&l, &mem, nm, compile_id, pc, out, max);
	size_t reads = im.reads;
	if (rc < HOTSPOT_SCOPES_UNSUPPORTED || rc > HOTSPOT_SCOPES_MAX || (rc > 0 && rc > max))
		abort();
	if ((!hotspot_scopes_supported(&l) || max < 1) != (rc == HOTSPOT_SCOPES_UNSUPPORTED))
		abort();
	if (rc == HOTSPOT_SCOPES_UNSUPPORTED && reads != 0)
		abort(); /* decided from the layout alone */
	/* garbage never makes the reader wander: the header, a chunk of PcDescs
	 * per step of a binary search (23 over 4M), forward the chunks of
	 * (8-byte at least) PcDescs the image can hold and one that fails, two
	 * reads per scope */
	if (reads > 1 + 23 + (im.n / (8 * 64) + 2) + 2 * HOTSPOT_SCOPES_MAX)
		abort();
	/* nothing written past out[max] */
	for (int i = max > 0 ? max : 0; i < NOUT; i++) {
		const uint8_t *b = (const uint8_t *)&out[i];
		for (size_t k = 0; k < sizeof(out[i]); k++)
			if (b[k] != 0xee)
				abort();
	}
	if (rc > 0) {
		const uint8_t *hd = at(&im, nm + (uint64_t)l.method, 8);
		if (!hd || out[0].method != le64(hd))
			abort(); /* the outermost scope is the nmethod's own method */
		for (int i = 0; i < rc; i++)
			if (!out[i].method || out[i].bci < -1 || out[i].bci > 65535)
				abort();
	}
	/* the same memory decodes the same way again */
	if (hotspot_scopes_at(&l, &mem, nm, compile_id, pc, again, max) != rc || (rc > 0 && !same(out, again, rc)))
		abort();
	/* and as a linear decoder of it does */
	int want = ref_scopes(&l, &im, nm, compile_id, pc, ref, max);
	if (want != REF_UNKNOWN && (want != rc || (rc > 0 && !same(out, ref, rc))))
		abort();

	if (l.stream_x == 0 || l.stream_x == 1)
		check_stream(&im, le16(h + 12) % (im.n + 1), l.stream_x, le32(h + 14));
	return 0;
}
