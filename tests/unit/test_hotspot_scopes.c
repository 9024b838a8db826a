/* test_hotspot_scopes.c - the inline chains of compiled methods decoded from
 * synthetic nmethods in a memory image, in JDK 17's layout (PcDescs, scopes
 * data and metadata inside the nmethod) and JDK 25's (immutable and mutable
 * data buffers): the PcDesc lookup, scope chains, CompressedReadStream
 * integers (x = 0 and x = 1), and bad memory of every kind.
 * `--write-seeds DIR` writes fuzz_hotspot_scopes seeds built the same way. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hotspot_scopes.h"

#define BASE	   0x10000ULL
#define IMAGE	   0x8000
#define FILL	   0xa5 /* what the image holds where nothing was written */
#define NM_OFF	   0x40 /* the nmethod's offset in the image */
#define ROOT	   200	/* the metadata index of the nmethod's own method */
#define NMETA	   260	/* Metadata*s of the test nmethods */
#define COMPILE_ID 1234

/* The image "mapped" at BASE: reads inside its first n bytes succeed, except
 * those touching [hole_lo, hole_hi); anything else fails, as unmapped memory
 * does for process_vm_readv. */
struct image {
	uint8_t m[IMAGE];
	size_t n;
	uint64_t hole_lo, hole_hi; /* addresses */
	size_t reads;
};

static int image_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct image *im = ctx;
	im->reads++;
	if (addr < BASE || addr - BASE > im->n || len > im->n - (addr - BASE))
		return -1;
	if (len && addr < im->hole_hi && addr + len > im->hole_lo)
		return -1;
	memcpy(buf, im->m + (addr - BASE), len);
	return 0;
}

static void put32(struct image *im, uint64_t off, uint32_t v)
{
	memcpy(im->m + off, &v, 4);
}

static void put64(struct image *im, uint64_t off, uint64_t v)
{
	memcpy(im->m + off, &v, 8);
}

/* gHotSpotVMStructs' offsets of a JDK 17 x86_64 build (fields it lacks: -1) */
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

/* JDK 25's */
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

static bool immutable_layout(const struct hotspot_scope_layout *l)
{
	return l->immutable >= 0;
}

/* --- an encoder of our own: HotSpot's writer ------------------------------------
 * UNSIGNED5 with x excluded low bytes (CompressedWriteStream::write_int before
 * JDK 20 is the same with x = 0): while the value is not below L = 192 - x and
 * fewer than 4 bytes were written, a "high" byte x + L + (v - L) % 64 and on
 * with (v - L) / 64; then the rest, x + v, ends it. */
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
		abort(); /* cannot happen for 32-bit values */
	p[i++] = (uint8_t)((uint32_t)x + v);
	return i;
}

/* --- synthetic nmethods ---------------------------------------------------------- */

struct sc {
	uint32_t index; /* into the Metadata*s, 1-based */
	int32_t bci;
};

struct pcd {
	int32_t pc, scope;
};

struct nmb {
	const struct hotspot_scope_layout *l;
	uint8_t data[0x1000]; /* the scopes data */
	size_t ndata;
	struct pcd pcs[512];
	size_t npcs;
	uint64_t meta[NMETA + 8];
	size_t nmeta;
	uint32_t root, compile_id;
	bool no_pad;  /* the scopes data not padded to 8 bytes: it ends where its last scope does */
	int32_t mark; /* build_method: the offset of chain_b's outermost scope */
	/* where nmb_finish put them: offsets in the image */
	uint64_t nm, code, meta_at, data_at, pcs_at, pcs_end, imm, mut, end;
};

static uint64_t method_of(uint32_t index)
{
	return 0x7f3a00001000ULL + 0x58ULL * index;
}

static void nmb_init(struct nmb *b, const struct hotspot_scope_layout *l, size_t nmeta)
{
	memset(b, 0, sizeof(*b));
	b->l = l;
	b->nmeta = nmeta;
	b->root = nmeta >= ROOT ? ROOT : 1;
	b->compile_id = COMPILE_ID;
	for (size_t k = 0; k < nmeta; k++)
		b->meta[k] = method_of((uint32_t)k + 1);
	/* DebugInformationRecorder starts its stream with one byte, so no scope
	 * is at offset 0 (serialized_null) */
	b->data[b->ndata++] = 0xff;
}

static void nmb_int(struct nmb *b, uint32_t v)
{
	b->ndata += enc_u5(b->data + b->ndata, v, b->l->stream_x);
}

/* A scope as DebugInformationRecorder::describe_scope writes it: its sender's
 * offset, its method's metadata index, bci + 1, then (with trailer) the
 * offsets of its locals, expressions and monitors (none here). Its offset. */
static int32_t put_scope_raw(struct nmb *b, uint32_t sender, uint32_t index, uint32_t bci1, bool trailer)
{
	int32_t at = (int32_t)b->ndata;
	nmb_int(b, sender);
	nmb_int(b, index);
	nmb_int(b, bci1);
	for (int k = 0; trailer && k < 3; k++)
		nmb_int(b, 0);
	return at;
}

/* A chain given outermost first, written outermost first (a scope names its
 * sender, written before it): the innermost scope's offset, for a PcDesc. */
static int32_t put_chain(struct nmb *b, const struct sc *c, int n)
{
	int32_t sender = 0;
	for (int i = 0; i < n; i++)
		sender = put_scope_raw(b, (uint32_t)sender, c[i].index, (uint32_t)(c[i].bci + 1), true);
	return sender;
}

static void put_pc(struct nmb *b, int32_t pc, int32_t scope)
{
	b->pcs[b->npcs++] = (struct pcd){ pc, scope };
}

/* Lays the nmethod out in a fresh image (FILL elsewhere):
 *   JDK 17: the nmethod (0x160-byte header, code), its Metadata*s, scopes
 *     data, PcDescs and dependencies, one after the other;
 *   JDK 25: the nmethod (0x100-byte header, code), its mutable data
 *     (relocations, Metadata*s), its immutable data (dependencies and
 *     tables, PcDescs, scopes data). */
static void nmb_finish(struct nmb *b, struct image *im)
{
	const struct hotspot_scope_layout *l = b->l;
	uint64_t nm = NM_OFF;
	memset(im->m, FILL, sizeof(im->m));
	im->n = IMAGE;
	im->hole_lo = im->hole_hi = 0;
	im->reads = 0;
	while (!b->no_pad && b->ndata % 8)
		b->data[b->ndata++] = 0;
	b->nm = nm;
	if (!immutable_layout(l)) {
		b->code = nm + 0x160;
		b->meta_at = nm + 0x260;
		b->data_at = b->meta_at + 8 * b->nmeta;
		b->pcs_at = b->data_at + b->ndata;
		b->pcs_end = b->pcs_at + 16 * b->npcs;
		b->end = b->pcs_end + 0x10; /* the dependencies */
		put64(im, nm + (uint64_t)l->code_begin, BASE + b->code);
		put32(im, nm + (uint64_t)l->metadata, (uint32_t)(b->meta_at - nm));
		put64(im, nm + (uint64_t)l->scopes_data_begin, BASE + b->data_at);
		put32(im, nm + (uint64_t)l->scopes_pcs, (uint32_t)(b->pcs_at - nm));
		put32(im, nm + (uint64_t)l->dependencies, (uint32_t)(b->pcs_end - nm));
	} else {
		b->code = nm + 0x100;
		b->mut = nm + 0x200;
		b->meta_at = b->mut + 0x28; /* after 0x28 bytes of relocations */
		b->imm = (b->meta_at + 8 * b->nmeta + 15) & ~15ULL;
		b->pcs_at = b->imm + 0x18; /* after the dependencies and exception tables */
		b->pcs_end = b->data_at = b->pcs_at + 16 * b->npcs;
		b->end = b->data_at + b->ndata;
		put32(im, nm + (uint64_t)l->code_begin, (uint32_t)(b->code - nm));
		put64(im, nm + (uint64_t)l->mutable_data, BASE + b->mut);
		put32(im, nm + (uint64_t)l->relocation_size, 0x28);
		put32(im, nm + (uint64_t)l->mutable_size, (uint32_t)(0x28 + 8 * b->nmeta));
		put64(im, nm + (uint64_t)l->immutable, BASE + b->imm);
		put32(im, nm + (uint64_t)l->scopes_pcs, (uint32_t)(b->pcs_at - b->imm));
		put32(im, nm + (uint64_t)l->scopes_data, (uint32_t)(b->data_at - b->imm));
		put32(im, nm + (uint64_t)l->immutable_size, (uint32_t)(b->end - b->imm));
	}
	if (b->end > IMAGE)
		abort();
	put64(im, nm + (uint64_t)l->method, method_of(b->root));
	put32(im, nm + (uint64_t)l->compile_id, b->compile_id);
	for (size_t k = 0; k < b->nmeta; k++)
		put64(im, b->meta_at + 8 * k, b->meta[k]);
	memcpy(im->m + b->data_at, b->data, b->ndata);
	for (size_t k = 0; k < b->npcs; k++) {
		uint64_t e = b->pcs_at + 16 * k;
		put32(im, e + (uint64_t)l->pc_offset, (uint32_t)b->pcs[k].pc);
		put32(im, e + (uint64_t)l->scope_offset, (uint32_t)b->pcs[k].scope);
		put32(im, e + 8, 0);  /* _obj_decode_offset */
		put32(im, e + 12, 0); /* _flags */
	}
}

/* hotspot_scopes_at for pc = code begin + off */
static int scopes_at(const struct nmb *b, struct image *im, int64_t off, struct hotspot_scope *out, int max)
{
	struct remote_mem mem = { image_read, im };
	return hotspot_scopes_at(b->l, &mem, BASE + b->nm, b->compile_id, BASE + b->code + (uint64_t)off, out, max);
}

#define NOUT  80
#define GUARD 0x5a

/* rc == n and out[0..n) == want; out[n..NOUT) untouched (GUARD) when n <= max */
static void check_chain(int line, const char *what, int rc, const struct hotspot_scope *out, const struct sc *want,
			int n)
{
	CHECK_MSG(rc == n, "line %d, %s: rc %d, want %d", line, what, rc, n);
	for (int i = 0; rc == n && i < n; i++)
		CHECK_MSG(out[i].method == method_of(want[i].index) && out[i].bci == want[i].bci,
			  "line %d, %s: scope %d is %#llx@%d, want %#llx@%d", line, what, i,
			  (unsigned long long)out[i].method, out[i].bci, (unsigned long long)method_of(want[i].index),
			  want[i].bci);
}

static void reset(struct hotspot_scope *out)
{
	memset(out, GUARD, sizeof(struct hotspot_scope) * NOUT);
}

/* --- hotspot_stream_int ------------------------------------------------------------ */

static void test_stream_int(void)
{
	static const uint32_t values[] = { 0,	     1,		 63,	     64,	 189,	    190,
					   191,	     192,	 193,	     255,	 256,	    1000,
					   4095,     4096,	 12414,	     12415,	 12479,	    12480,
					   40001,    65536,	 786431,     786432,	 1u << 20,  50331647,
					   50331648, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff };
	uint8_t p[16];
	for (int x = 0; x <= 1; x++) {
		for (size_t k = 0; k < sizeof(values) / sizeof(values[0]); k++) {
			uint32_t v = values[k], got = 0xdeadbeef;
			size_t n = enc_u5(p, v, x), pos = 0;
			CHECK_MSG(hotspot_stream_int(p, n, &pos, x, &got) == 0 && got == v && pos == n,
				  "x %d, %u (%zu bytes): got %u, pos %zu", x, v, n, got, pos);
			for (size_t i = 0; x == 1 && i < n; i++)
				CHECK_MSG(p[i] != 0, "x 1, %u: byte %zu is 0", v, i);
			/* truncated: any prefix fails and leaves pos */
			for (size_t cut = 0; cut < n; cut++) {
				pos = 0;
				got = 0xdeadbeef;
				CHECK_MSG(hotspot_stream_int(p, cut, &pos, x, &got) == -1 && pos == 0 &&
						  got == 0xdeadbeef,
					  "x %d, %u cut to %zu bytes", x, v, cut);
			}
		}
		/* every value up to 70000, and 2^k - 1, 2^k, 2^k + 1, at a nonzero position */
		int bad = 0;
		for (uint64_t v = 0; v <= 70000 + 3 * 33; v++) {
			uint32_t w = v <= 70000 ? (uint32_t)v :
						  (uint32_t)((1ULL << ((v - 70001) / 3)) + (v - 70001) % 3 - 1),
				 got = 0;
			size_t n = 3 + enc_u5(p + 3, w, x), pos = 3;
			if (hotspot_stream_int(p, n, &pos, x, &got) != 0 || got != w || pos != n)
				bad++;
		}
		CHECK_EQ_INT(bad, 0);
	}
	/* the lengths: x = 0 ends a number at a byte below 192, x = 1 below 192 too (191 + 1) */
	CHECK_EQ_INT(enc_u5(p, 191, 0), 1);
	CHECK_EQ_INT(enc_u5(p, 192, 0), 2);
	CHECK_EQ_INT(enc_u5(p, 190, 1), 1);
	CHECK_EQ_INT(enc_u5(p, 191, 1), 2);
	CHECK_EQ_INT(enc_u5(p, 12479, 0), 2); /* 255 + 191 * 64: the largest of 2 bytes */
	CHECK_EQ_INT(enc_u5(p, 12480, 0), 3);
	CHECK_EQ_INT(enc_u5(p, 12414, 1), 2); /* 254 + 190 * 64 */
	CHECK_EQ_INT(enc_u5(p, 12415, 1), 3);
	CHECK_EQ_INT(enc_u5(p, 0xffffffff, 0), 5);
	CHECK_EQ_INT(enc_u5(p, 0xffffffff, 1), 5);
	/* fixed bytes, decoded (not only round trips of our own encoder) */
	static const struct {
		int x;
		uint8_t b[5];
		size_t n;
		uint32_t v;
	} known[] = {
		{ 0, { 0 }, 1, 0 },	   { 0, { 191 }, 1, 191 },
		{ 0, { 192, 0 }, 2, 192 }, { 0, { 255, 0 }, 2, 255 },
		{ 0, { 192, 1 }, 2, 256 }, { 0, { 0xe8, 0x0c }, 2, 1000 }, /* 232 + 12 * 64 */
		{ 1, { 1 }, 1, 0 },	   { 1, { 191 }, 1, 190 },
		{ 1, { 192, 1 }, 2, 191 }, { 1, { 0xe9, 0x0d }, 2, 1000 }, /* 232 + 12 * 64, each byte one more */
		{ 1, { 2 }, 1, 1 },
	};
	for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++) {
		uint32_t got = 0;
		size_t pos = 0;
		CHECK_MSG(hotspot_stream_int(known[k].b, known[k].n, &pos, known[k].x, &got) == 0 &&
				  got == known[k].v && pos == known[k].n,
			  "known %zu: got %u pos %zu", k, got, pos);
		size_t n = enc_u5(p, known[k].v, known[k].x);
		CHECK_MSG(n == known[k].n && memcmp(p, known[k].b, n) == 0, "known %zu encoded differently", k);
	}
	/* the fifth byte ends a number whatever it is (a sum that wraps, as HotSpot's) */
	{
		static const uint8_t ff[6] = { 255, 255, 255, 255, 255, 7 };
		uint32_t got = 0;
		size_t pos = 0;
		uint64_t w0 = 255ULL * (1 + 64 + 4096 + 262144 + 16777216),
			 w1 = 254ULL * (1 + 64 + 4096 + 262144 + 16777216);
		CHECK(hotspot_stream_int(ff, 6, &pos, 0, &got) == 0 && pos == 5 && got == (uint32_t)w0);
		pos = 0;
		CHECK(hotspot_stream_int(ff, 6, &pos, 1, &got) == 0 && pos == 5 && got == (uint32_t)w1);
	}
	/* byte 0 is excluded with x = 1, at the start or inside a number */
	{
		static const uint8_t z[] = { 0 }, hz[] = { 0xc0, 0x00 }, hhhhz[] = { 0xff, 0xff, 0xff, 0xff, 0x00 };
		uint32_t got = 77;
		size_t pos = 0;
		CHECK(hotspot_stream_int(z, 1, &pos, 1, &got) == -1 && pos == 0 && got == 77);
		CHECK(hotspot_stream_int(hz, 2, &pos, 1, &got) == -1 && pos == 0);
		CHECK(hotspot_stream_int(hhhhz, 5, &pos, 1, &got) == -1 && pos == 0);
		CHECK(hotspot_stream_int(hz, 2, &pos, 0, &got) == 0 && pos == 2 && got == 192);
	}
	/* several numbers in a row; a position at or past the end */
	{
		uint8_t s[32];
		uint32_t a = 0, b = 0, c = 0, d = 0;
		size_t n = 0, pos = 0;
		n += enc_u5(s + n, 40001, 1);
		n += enc_u5(s + n, 7, 1);
		n += enc_u5(s + n, 0xfffffff0, 1);
		CHECK(hotspot_stream_int(s, n, &pos, 1, &a) == 0 && hotspot_stream_int(s, n, &pos, 1, &b) == 0 &&
		      hotspot_stream_int(s, n, &pos, 1, &c) == 0);
		CHECK(a == 40001 && b == 7 && c == 0xfffffff0 && pos == n);
		CHECK(hotspot_stream_int(s, n, &pos, 1, &d) == -1 && pos == n);
		pos = n + 3;
		CHECK(hotspot_stream_int(s, n, &pos, 1, &d) == -1 && pos == n + 3);
		pos = 0;
		CHECK(hotspot_stream_int(NULL, 0, &pos, 0, &d) == -1);
	}
}

/* --- chains in a method ------------------------------------------------------------ */

static const struct sc chain_a[] = { { ROOT, -1 } };
static const struct sc chain_b[] = { { ROOT, 5 }, { 192, 40000 }, { 255, 0 } };
static const struct sc chain_c[] = { { ROOT, 12 } };
static const struct sc chain_d[] = { { ROOT, 191 }, { 1, 192 }, { NMETA, -1 } };
static const struct sc chain_e[] = { { ROOT, 65535 }, { 191, 190 } };

/* The method of the main tests: the sentinel PcDesc at -1, a 3-deep chain at
 * 0x30 and (shared) 0x70, depth 1 at 0x10 and 0x58, PcDescs without a scope
 * at 0x20, 0x40, 0x50 and 0x90, and the sentinel at the end (0x7fffffff,
 * without one too, as DebugInformationRecorder::pcs_size appends it). */
static void build_method(struct nmb *b, const struct hotspot_scope_layout *l)
{
	nmb_init(b, l, NMETA);
	int32_t a = put_chain(b, chain_a, 1);
	b->mark = (int32_t)b->ndata;
	int32_t bb = put_chain(b, chain_b, 3), c = put_chain(b, chain_c, 1), d = put_chain(b, chain_d, 3),
		e = put_chain(b, chain_e, 2);
	put_pc(b, -1, 0);
	put_pc(b, 0x10, a);
	put_pc(b, 0x20, 0);
	put_pc(b, 0x30, bb);
	put_pc(b, 0x40, 0);
	put_pc(b, 0x50, 0);
	put_pc(b, 0x58, c);
	put_pc(b, 0x70, bb);
	put_pc(b, 0x80, d);
	put_pc(b, 0x88, e);
	put_pc(b, 0x90, 0);
	put_pc(b, 0x7fffffff, 0); /* the end sentinel, PcDesc::upper_offset_limit */
}

static void test_chains(const struct hotspot_scope_layout *l, const char *name)
{
	static struct nmb b;
	static struct image im;
	struct hotspot_scope out[NOUT];
	static const struct {
		int64_t off;
		const struct sc *want;
		int n; /* 0: HOTSPOT_SCOPES_NONE */
	} cases[] = {
		{ -1, NULL, 0 }, /* before the code */
		{ -0x1000, NULL, 0 },
		{ 0, chain_a, 1 }, /* before the first PcDesc: the first at or after */
		{ 0x0f, chain_a, 1 },
		{ 0x10, chain_a, 1 }, /* at it */
		{ 0x11, chain_b, 3 }, /* 0x20 has no scope: on to 0x30 */
		{ 0x20, chain_b, 3 },
		{ 0x2f, chain_b, 3 },
		{ 0x30, chain_b, 3 },
		{ 0x31, chain_c, 1 }, /* 0x40 and 0x50 have none */
		{ 0x50, chain_c, 1 },
		{ 0x58, chain_c, 1 },
		{ 0x59, chain_b, 3 }, /* 0x70: the scopes 0x30 has too */
		{ 0x70, chain_b, 3 },
		{ 0x71, chain_d, 3 },
		{ 0x80, chain_d, 3 },
		{ 0x81, chain_e, 2 },
		{ 0x88, chain_e, 2 },
		{ 0x89, NULL, 0 }, /* only 0x90 after it, without a scope */
		{ 0x90, NULL, 0 },
		{ 0x91, NULL, 0 }, /* past the last PcDesc */
		{ 0x10000, NULL, 0 },
		{ 0x7ffffffe, NULL, 0 },
		{ 0x7fffffff, NULL, 0 },   /* at the end sentinel */
		{ 0x80000000LL, NULL, 0 }, /* too far from the code to be an offset */
		{ 0x100000000LL, NULL, 0 },
	};
	build_method(&b, l);
	nmb_finish(&b, &im);
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		char what[64];
		snprintf(what, sizeof(what), "%s pc +%#llx", name, (long long)cases[k].off);
		reset(out);
		im.reads = 0;
		int rc = scopes_at(&b, &im, cases[k].off, out, NOUT);
		if (cases[k].n == 0) {
			CHECK_MSG(rc == HOTSPOT_SCOPES_NONE, "%s: rc %d", what, rc);
		} else {
			check_chain(__LINE__, what, rc, out, cases[k].want, cases[k].n);
			/* the header, a chunk of PcDescs, one read per scope and one per Method* */
			CHECK_MSG(im.reads <= 2 + 2 * (size_t)cases[k].n, "%s: %zu reads", what, im.reads);
		}
		CHECK_MSG(check_filled(out + (rc > 0 ? rc : 0), sizeof(out[0]) * (size_t)(NOUT - (rc > 0 ? rc : 0)),
				       GUARD) ||
				  rc < 0,
			  "%s: wrote past its chain", what);
	}
	/* max: exactly the depth suffices; less is BAD (the outermost scope
	 * would be lost), nothing written at or past out[max] */
	reset(out);
	check_chain(__LINE__, name, scopes_at(&b, &im, 0x30, out, 3), out, chain_b, 3);
	CHECK(check_filled(out + 3, sizeof(out[0]) * (NOUT - 3), GUARD));
	for (int max = 1; max <= 2; max++) {
		reset(out);
		CHECK_EQ_INT(scopes_at(&b, &im, 0x30, out, max), HOTSPOT_SCOPES_BAD);
		CHECK_MSG(check_filled(out + max, sizeof(out[0]) * (size_t)(NOUT - max), GUARD),
			  "%s max %d: wrote out[%d]", name, max, max);
	}
	reset(out);
	check_chain(__LINE__, name, scopes_at(&b, &im, 0x10, out, 1), out, chain_a, 1);
	CHECK_EQ_INT(scopes_at(&b, &im, 0x10, out, 0), HOTSPOT_SCOPES_UNSUPPORTED);
	CHECK_EQ_INT(scopes_at(&b, &im, 0x10, out, -1), HOTSPOT_SCOPES_UNSUPPORTED);
	/* another compilation now at this address */
	struct remote_mem mem = { image_read, &im };
	CHECK_EQ_INT(hotspot_scopes_at(l, &mem, BASE + b.nm, COMPILE_ID + 1, BASE + b.code + 0x30, out, NOUT),
		     HOTSPOT_SCOPES_GONE);
	CHECK_EQ_INT(hotspot_scopes_at(l, &mem, BASE + b.nm, 0, BASE + b.code + 0x30, out, NOUT), HOTSPOT_SCOPES_GONE);
	/* GONE before anything else: the rest may be garbage by now */
	put64(&im, b.nm + (uint64_t)l->method, 0);
	CHECK_EQ_INT(hotspot_scopes_at(l, &mem, BASE + b.nm, 99, BASE + b.code + 0x30, out, NOUT), HOTSPOT_SCOPES_GONE);
}

/* 300 PcDescs (several chunks of the reader), every third with a scope, some
 * of depth 2: every pc offset agrees with a linear search. */
static void test_many_pcdescs(const struct hotspot_scope_layout *l, const char *name)
{
	static struct nmb b;
	static struct image im;
	struct hotspot_scope out[NOUT];
	nmb_init(&b, l, NMETA);
	put_pc(&b, -1, 0);
	for (int32_t i = 1; i <= 300; i++) {
		int32_t scope = 0;
		if (i % 3 == 0) {
			struct sc c[2] = { { ROOT, i }, { (uint32_t)(i % NMETA) + 1, i * 150 } };
			scope = put_chain(&b, c, i % 7 == 0 ? 2 : 1);
		}
		put_pc(&b, 4 * i, scope);
	}
	nmb_finish(&b, &im);
	/* the last chunk of PcDescs is partial: nothing read past the table */
	if (!immutable_layout(l)) {
		im.hole_lo = BASE + b.pcs_end;
		im.hole_hi = BASE + b.pcs_end + 0x10;
	}
	int bad = 0, maxreads = 0;
	for (int64_t off = 0; off <= 4 * 300 + 4; off++) {
		size_t k = 1;
		while (k < b.npcs && (b.pcs[k].pc < off || b.pcs[k].scope == 0))
			k++;
		reset(out);
		im.reads = 0;
		int rc = scopes_at(&b, &im, off, out, NOUT);
		if (k == b.npcs) {
			if (rc != HOTSPOT_SCOPES_NONE) {
				bad++;
				fprintf(stderr, "%s pc +%#llx: rc %d, want NONE\n", name, (long long)off, rc);
			}
			continue;
		}
		int32_t i = b.pcs[k].pc / 4, n = i % 7 == 0 ? 2 : 1;
		if (rc != n || out[0].method != method_of(ROOT) || out[0].bci != i ||
		    (n == 2 && (out[1].method != method_of((uint32_t)(i % NMETA) + 1) || out[1].bci != i * 150))) {
			bad++;
			fprintf(stderr, "%s pc +%#llx: rc %d, want %d scopes of PcDesc %zu\n", name, (long long)off, rc,
				n, k);
		}
		maxreads = (int)im.reads > maxreads ? (int)im.reads : maxreads;
	}
	CHECK_MSG(bad == 0, "%s: %d pcs decoded wrong", name, bad);
	/* the header, at most one chunk per step of the binary search (9 over 301) and
	 * two more forward, two reads per scope: not one per PcDesc */
	CHECK_MSG(maxreads <= 1 + 9 + 2 + 4, "%s: up to %d reads", name, maxreads);
}

/* A 64-deep chain decodes (with max 64 and more), a 65-deep one is BAD:
 * HOTSPOT_SCOPES_MAX caps the depth whatever max says. */
static void test_depth_cap(const struct hotspot_scope_layout *l, const char *name)
{
	static struct nmb b;
	static struct image im;
	struct hotspot_scope out[NOUT];
	struct sc c[HOTSPOT_SCOPES_MAX + 1];
	for (int i = 0; i <= HOTSPOT_SCOPES_MAX; i++)
		c[i] = (struct sc){ i == 0 ? ROOT : (uint32_t)i * 3, i * 7 };
	nmb_init(&b, l, NMETA);
	int32_t deep = put_chain(&b, c, HOTSPOT_SCOPES_MAX), deeper = put_chain(&b, c, HOTSPOT_SCOPES_MAX + 1);
	put_pc(&b, -1, 0);
	put_pc(&b, 0x10, deep);
	put_pc(&b, 0x20, deeper);
	nmb_finish(&b, &im);
	reset(out);
	check_chain(__LINE__, name, scopes_at(&b, &im, 0x10, out, HOTSPOT_SCOPES_MAX), out, c, HOTSPOT_SCOPES_MAX);
	reset(out);
	check_chain(__LINE__, name, scopes_at(&b, &im, 0x10, out, NOUT), out, c, HOTSPOT_SCOPES_MAX);
	CHECK_EQ_INT(scopes_at(&b, &im, 0x10, out, HOTSPOT_SCOPES_MAX - 1), HOTSPOT_SCOPES_BAD);
	CHECK_EQ_INT(scopes_at(&b, &im, 0x20, out, NOUT), HOTSPOT_SCOPES_BAD);
	CHECK_EQ_INT(scopes_at(&b, &im, 0x20, out, HOTSPOT_SCOPES_MAX + 1), HOTSPOT_SCOPES_BAD);
}

/* Scopes data that does not decode: each a PcDesc of its own, BAD. */
static void test_bad_scopes(const struct hotspot_scope_layout *l, const char *name)
{
	static struct nmb b;
	static struct image im;
	struct hotspot_scope out[NOUT];
	struct sc inner[] = { { ROOT, 3 }, { 7, 9 } };
	nmb_init(&b, l, NMETA);
	int32_t good = put_chain(&b, inner, 2);
	/* a scope whose sender is itself */
	int32_t self = put_scope_raw(&b, (uint32_t)b.ndata, 5, 1, true);
	/* a cycle of two: x's sender is y (written right after x), y's is x */
	int32_t x_at = (int32_t)b.ndata, y_at = x_at + 7; /* 1-byte sender, 2-byte index, 1-byte bci, 3-byte trailer */
	CHECK_EQ_INT(put_scope_raw(&b, (uint32_t)y_at, ROOT, 1, true), x_at);
	CHECK_EQ_INT(put_scope_raw(&b, (uint32_t)x_at, 8, 2, true), y_at);
	/* a cycle of three through the root's scope */
	int32_t r_at = (int32_t)b.ndata, s_at = r_at + 7, t_at = s_at + 6;
	CHECK_EQ_INT(put_scope_raw(&b, (uint32_t)t_at, ROOT, 1, true), r_at); /* 1 + 2 + 1 + 3 bytes */
	CHECK_EQ_INT(put_scope_raw(&b, (uint32_t)r_at, 4, 1, true), s_at);    /* 1 + 1 + 1 + 3 */
	CHECK_EQ_INT(put_scope_raw(&b, (uint32_t)s_at, 6, 1, true), t_at);
	/* metadata indices 0 and past the end (in an inlined scope: in the outermost
	 * one the check that it is the nmethod's method would catch any); an index
	 * whose Method* is null */
	int32_t root_at = put_scope_raw(&b, 0, ROOT, 1, true);
	int32_t index0 = put_scope_raw(&b, (uint32_t)root_at, 0, 1, true);
	int32_t past = put_scope_raw(&b, (uint32_t)root_at, NMETA + 1, 1, true);
	int32_t far = put_scope_raw(&b, (uint32_t)root_at, 0xfffffff0, 1, true);
	int32_t index0_outer = put_scope_raw(&b, 0, 0, 1, true);
	b.meta[41] = 0;
	int32_t null_method = put_scope_raw(&b, 0, 42, 1, true);
	int32_t inner_null = put_scope_raw(&b, (uint32_t)put_scope_raw(&b, 0, ROOT, 4, true), 42, 1, true);
	/* a bci past any method's code (bci + 1 > 65536); 65535 is fine */
	int32_t bci_max = put_scope_raw(&b, 0, ROOT, 65536, true);
	int32_t bci_over = put_scope_raw(&b, 0, ROOT, 65537, true);
	int32_t bci_huge = put_scope_raw(&b, 0, ROOT, 0xffffffff, true);
	/* the outermost scope is another method than the nmethod's */
	struct sc other[] = { { 9, 3 }, { ROOT, 9 } };
	int32_t not_root = put_chain(&b, other, 2);
	/* senders outside the scopes data (its size is known below) and negative */
	int32_t sender_neg = put_scope_raw(&b, (uint32_t)-8, 5, 1, true);
	int32_t sender_far = put_scope_raw(&b, 0x7ffffff0, 5, 1, true);
	/* a sender into the middle of a scope: decodes as whatever it finds (here
	 * the root's scope's index byte onwards, not a valid scope) */
	size_t mid_sender_at = b.ndata;
	int32_t sender_size = put_scope_raw(&b, 0, 5, 1, true); /* sender patched below to the data's size */
	size_t padded = (b.ndata + 7) & ~(size_t)7;
	if (enc_u5(b.data + mid_sender_at, (uint32_t)padded, l->stream_x) != 1)
		abort(); /* the size fits one byte: the scope is as long as it was */
	int pc = 0;
	put_pc(&b, -1, 0);
	int32_t at[32];
	const char *why[32];
	int bad_n = 0;
#define BAD(scope, reason) (at[bad_n] = (scope), why[bad_n++] = (reason))
	BAD(self, "a sender that is itself");
	BAD(x_at, "a cycle of two");
	BAD(y_at, "a cycle of two, from the other end");
	BAD(r_at, "a cycle of three");
	BAD(s_at, "a cycle of three from its middle");
	BAD(index0, "metadata index 0");
	BAD(past, "metadata index past the end");
	BAD(far, "metadata index far past the end");
	BAD(index0_outer, "metadata index 0 in the outermost scope");
	BAD(null_method, "a null Method*");
	BAD(inner_null, "a null Method* inside a chain");
	BAD(bci_over, "bci 65536");
	BAD(bci_huge, "bci 0xfffffffe");
	BAD(not_root, "an outermost scope not the nmethod's method");
	BAD(sender_neg, "a negative sender");
	BAD(sender_far, "a sender far outside the scopes data");
	BAD(sender_size, "a sender just past the scopes data");
	BAD((int32_t)padded, "a scope offset just past the scopes data");
	BAD((int32_t)padded + 1000, "a scope offset far past the scopes data");
	BAD(-4, "a negative scope offset");
#undef BAD
	for (int k = 0; k < bad_n; k++)
		put_pc(&b, pc += 0x10, at[k]);
	put_pc(&b, pc += 0x10, good);
	put_pc(&b, pc += 0x10, bci_max);
	nmb_finish(&b, &im);
	if (b.ndata != padded)
		abort();
	for (int k = 0; k < bad_n; k++) {
		reset(out);
		im.reads = 0;
		int rc = scopes_at(&b, &im, 0x10 * (k + 1), out, NOUT);
		CHECK_MSG(rc == HOTSPOT_SCOPES_BAD, "%s, %s: rc %d", name, why[k], rc);
		CHECK_MSG(im.reads <= 2 + 2 * HOTSPOT_SCOPES_MAX, "%s, %s: %zu reads", name, why[k], im.reads);
	}
	/* the good ones among them still decode */
	reset(out);
	check_chain(__LINE__, name, scopes_at(&b, &im, 0x10 * (bad_n + 1), out, NOUT), out, inner, 2);
	struct sc bmax[] = { { ROOT, 65535 } };
	reset(out);
	check_chain(__LINE__, name, scopes_at(&b, &im, 0x10 * (bad_n + 2), out, NOUT), out, bmax, 1);
}

/* A scope at the very end of the scopes data: its three integers decode from
 * fewer than 15 bytes; cut inside them, BAD. */
static void test_data_end(const struct hotspot_scope_layout *l, const char *name)
{
	static struct nmb b;
	static struct image im;
	struct hotspot_scope out[NOUT];
	struct sc want[] = { { ROOT, 40000 } };
	for (int cut = 0; cut <= 2; cut++) {
		nmb_init(&b, l, NMETA);
		b.no_pad = true;
		int32_t s = put_scope_raw(&b, 0, ROOT, 40001, false); /* 1 + 2 + 3 bytes */
		b.ndata -= (size_t)cut;
		put_pc(&b, -1, 0);
		put_pc(&b, 0x10, s);
		nmb_finish(&b, &im);
		reset(out);
		int rc = scopes_at(&b, &im, 0x10, out, NOUT);
		if (cut == 0)
			check_chain(__LINE__, name, rc, out, want, 1);
		else
			CHECK_MSG(rc == HOTSPOT_SCOPES_BAD, "%s: scope cut by %d bytes: rc %d", name, cut, rc);
	}
}

/* Sections and pointers of the nmethod itself that do not add up. */
static void test_bad_nmethod(const struct hotspot_scope_layout *l, const char *name)
{
	static struct nmb b;
	static struct image im;
	struct hotspot_scope out[NOUT];
	struct remote_mem mem = { image_read, &im };
	const uint64_t nm = NM_OFF;
	struct tweak {
		long field; /* layout offset of the field to change */
		int size;   /* 4 or 8 */
		int64_t delta;
		bool set; /* set to delta, not add it */
		const char *why;
	};
	const struct tweak old_tweaks[] = {
		{ l->dependencies, 4, 4, false, "PcDescs not a whole number (+4)" },
		{ l->dependencies, 4, -8, false, "PcDescs not a whole number (-8)" },
		{ l->dependencies, 4, -1, true, "a negative end of PcDescs" },
		{ l->scopes_pcs, 4, 8, false, "PcDescs start not a whole number of them before their end" },
		{ l->scopes_pcs, 4, -1, true, "a negative PcDesc offset" },
		{ l->scopes_pcs, 4, 0x10, true, "PcDescs before the scopes data" },
		{ l->metadata, 4, 0x7fff0000, true, "metadata after the scopes data" },
		{ l->metadata, 4, -8, true, "a negative metadata offset" },
		{ l->metadata, 4, 8 * (NMETA - 100), false, "Method*s ending before the indices used" },
		{ l->scopes_data_begin, 8, 0, true, "a null scopes data pointer" },
		{ l->scopes_data_begin, 8, BASE, true, "scopes data before the nmethod" },
		{ l->scopes_data_begin, 8, (int64_t)0xffff000000000000LL, true, "scopes data far away" },
		{ l->code_begin, 8, 0, true, "a null code begin" },
		{ l->code_begin, 8, (int64_t)0x7ff000000000LL, true, "code begin past the PcDescs (pc before code)" },
	};
	const struct tweak imm_tweaks[] = {
		{ l->scopes_pcs, 4, 8, false, "PcDescs not a whole number" },
		{ l->scopes_pcs, 4, -1, true, "a negative PcDesc offset" },
		{ l->scopes_pcs, 4, 0x7ffff000, true, "PcDescs after the scopes data" },
		{ l->scopes_data, 4, 4, false, "the scopes data offset moved by 4 (PcDescs not whole)" },
		{ l->immutable_size, 4, 0x10, true, "immutable data smaller than the scopes data offset" },
		{ l->immutable_size, 4, -1, true, "a negative immutable data size" },
		{ l->immutable, 8, 0, true, "a null immutable data pointer" },
		{ l->immutable, 8, (int64_t)0xffffffffffffff00LL, true, "immutable data that wraps" },
		{ l->immutable, 8, 0x7f0000000000LL, true, "unreadable immutable data" },
		{ l->mutable_data, 8, 0, true, "a null mutable data pointer" },
		{ l->mutable_data, 8, 0x7f0000000000LL, true, "unreadable mutable data (the Method*s)" },
		{ l->relocation_size, 4, 0x7fff0000, true, "relocations past the mutable data" },
		{ l->relocation_size, 4, -8, true, "a negative relocation size" },
		{ l->mutable_size, 4, 0x20, true, "mutable data smaller than its relocations" },
		{ l->mutable_size, 4, 0x28 + 8 * 100, true, "Method*s ending before the indices used" },
		{ l->code_begin, 4, -0x100, true, "a negative code offset" },
		{ l->code_begin, 4, 0, true, "code at the nmethod: the PcDescs' offsets from there" },
	};
	const struct tweak *tweaks = immutable_layout(l) ? imm_tweaks : old_tweaks;
	size_t ntweaks = immutable_layout(l) ? sizeof(imm_tweaks) / sizeof(imm_tweaks[0]) :
					       sizeof(old_tweaks) / sizeof(old_tweaks[0]);
	build_method(&b, l);
	for (size_t k = 0; k < ntweaks; k++) {
		const struct tweak *t = &tweaks[k];
		nmb_finish(&b, &im);
		uint64_t at = nm + (uint64_t)t->field;
		if (t->size == 4) {
			int32_t v;
			memcpy(&v, im.m + at, 4);
			put32(&im, at, (uint32_t)(t->set ? t->delta : v + t->delta));
		} else {
			uint64_t v;
			memcpy(&v, im.m + at, 8);
			put64(&im, at, t->set ? (uint64_t)t->delta : v + (uint64_t)t->delta);
		}
		reset(out);
		/* the pc as an offset from the real code begin; where code begin
		 * itself changed, the same absolute pc */
		int rc = hotspot_scopes_at(l, &mem, BASE + nm, COMPILE_ID, BASE + b.code + 0x30, out, NOUT);
		int want = HOTSPOT_SCOPES_BAD;
		if (t->field == l->code_begin && strstr(t->why, "pc before code"))
			want = HOTSPOT_SCOPES_NONE;
		if (t->field == l->code_begin && strstr(t->why, "code at the nmethod")) {
			/* pc is now code + 0x130 (0x100 + 0x30): past every PcDesc */
			want = HOTSPOT_SCOPES_NONE;
		}
		CHECK_MSG(rc == want, "%s, %s: rc %d, want %d", name, t->why, rc, want);
	}
	/* unreadable memory: the header, the PcDescs, the scopes data, a Method* */
	nmb_finish(&b, &im);
	check_chain(__LINE__, name, scopes_at(&b, &im, 0x30, out, NOUT), out, chain_b, 3);
	CHECK_EQ_INT(hotspot_scopes_at(l, &mem, BASE + IMAGE + 0x100, COMPILE_ID, BASE + b.code, out, NOUT),
		     HOTSPOT_SCOPES_BAD);
	CHECK_EQ_INT(hotspot_scopes_at(l, &mem, 8, COMPILE_ID, 0x1000, out, NOUT), HOTSPOT_SCOPES_BAD);
	CHECK_EQ_INT(hotspot_scopes_at(l, &mem, 0, COMPILE_ID, 0x1000, out, NOUT), HOTSPOT_SCOPES_BAD);
	CHECK_EQ_INT(hotspot_scopes_at(l, &mem, (uint64_t)-0x40, COMPILE_ID, 0x1000, out, NOUT), HOTSPOT_SCOPES_BAD);
	im.n = nm + (uint64_t)l->compile_id + 4; /* the image ends inside the header's last 8-byte read */
	CHECK_EQ_INT(scopes_at(&b, &im, 0x30, out, NOUT), HOTSPOT_SCOPES_BAD);
	im.n = IMAGE;
	const struct {
		uint64_t lo, hi;
		const char *why;
	} holes[] = {
		{ b.pcs_at, b.pcs_end, "the PcDescs" },
		{ b.pcs_at + 16 * 3, b.pcs_at + 16 * 3 + 4, "the PcDesc found" },
		{ b.data_at, b.data_at + b.ndata, "the scopes data" },
		{ b.data_at + (uint64_t)b.mark + 1, b.data_at + (uint64_t)b.mark + 2, "the outermost scope" },
		{ b.meta_at + 8 * (ROOT - 1), b.meta_at + 8 * ROOT, "the root's Method*" },
		{ b.meta_at + 8 * (255 - 1) + 7, b.meta_at + 8 * 255, "an inlined Method*" },
		{ nm + (uint64_t)l->method, nm + (uint64_t)l->method + 8, "the nmethod's _method" },
	};
	for (size_t k = 0; k < sizeof(holes) / sizeof(holes[0]); k++) {
		im.hole_lo = BASE + holes[k].lo;
		im.hole_hi = BASE + holes[k].hi;
		int rc = scopes_at(&b, &im, 0x30, out, NOUT);
		CHECK_MSG(rc == HOTSPOT_SCOPES_BAD, "%s, unreadable %s: rc %d", name, holes[k].why, rc);
	}
	/* reads stay inside the sections: unreadable memory right after the
	 * PcDescs (JDK 17: the dependencies) or the scopes data (JDK 25: the end
	 * of the immutable data), and after the Method*s (JDK 25: the padding
	 * before the immutable data; JDK 17's scopes data is there), changes nothing */
	for (int k = 0; k < (immutable_layout(l) ? 2 : 1); k++) {
		uint64_t after = k ? b.meta_at + 8 * b.nmeta : immutable_layout(l) ? b.end : b.pcs_end;
		im.hole_lo = BASE + after;
		im.hole_hi = BASE + after + 0x10;
		reset(out);
		check_chain(__LINE__, name, scopes_at(&b, &im, 0x30, out, NOUT), out, chain_b, 3);
		reset(out);
		check_chain(__LINE__, name, scopes_at(&b, &im, 0x88, out, NOUT), out, chain_e, 2);
		reset(out);
		check_chain(__LINE__, name, scopes_at(&b, &im, 0x71, out, NOUT), out, chain_d, 3);
	}
	im.hole_lo = im.hole_hi = 0;
	/* the nmethod's _method not the outermost scope's */
	put64(&im, nm + (uint64_t)l->method, method_of(1));
	CHECK_EQ_INT(scopes_at(&b, &im, 0x30, out, NOUT), HOTSPOT_SCOPES_BAD);
	put64(&im, nm + (uint64_t)l->method, 0);
	CHECK_EQ_INT(scopes_at(&b, &im, 0x30, out, NOUT), HOTSPOT_SCOPES_BAD);
	/* with the method wrong, a pc with no scope is still NONE */
	CHECK_EQ_INT(scopes_at(&b, &im, 0x89, out, NOUT), HOTSPOT_SCOPES_NONE);

	/* no PcDescs at all, or only the sentinel */
	for (int n = 0; n <= 1; n++) {
		nmb_init(&b, l, 4);
		if (n)
			put_pc(&b, -1, 0);
		nmb_finish(&b, &im);
		CHECK_EQ_INT(scopes_at(&b, &im, 0, out, NOUT), HOTSPOT_SCOPES_NONE);
		CHECK_EQ_INT(scopes_at(&b, &im, 0x40, out, NOUT), HOTSPOT_SCOPES_NONE);
	}
}

static void test_unsupported(void)
{
	static struct nmb b;
	static struct image im;
	struct hotspot_scope out[NOUT];
	CHECK(hotspot_scopes_supported(&jdk17));
	CHECK(hotspot_scopes_supported(&jdk25));
	build_method(&b, &jdk17);
	nmb_finish(&b, &im);
	struct hotspot_scope_layout l;
	struct {
		struct hotspot_scope_layout l;
		const char *why;
	} cases[12];
	int n = 0;
#define CASE(base, field, value, reason)    \
	do {                                \
		cases[n].l = (base);        \
		cases[n].l.field = (value); \
		cases[n++].why = (reason);  \
	} while (0)
	CASE(jdk17, stream_x, 2, "stream x 2");
	CASE(jdk17, stream_x, -1, "stream x unknown (-1)");
	CASE(jdk17, pcdesc_size, 0, "sizeof(PcDesc) 0");
	CASE(jdk17, pcdesc_size, 4, "sizeof(PcDesc) 4");
	CASE(jdk17, pcdesc_size, 1000, "sizeof(PcDesc) 1000");
	CASE(jdk17, pc_offset, 14, "PcDesc::_pc_offset past its end");
	CASE(jdk17, scope_offset, -1, "no PcDesc::_scope_decode_offset");
	CASE(jdk17, compile_id, -1, "no _compile_id");
	CASE(jdk17, method, 4000, "_method past the header read");
	CASE(jdk17, metadata, -1, "JDK 17 without _metadata_offset");
	CASE(jdk25, mutable_size, -1, "JDK 25 without _mutable_data_size");
	CASE(jdk25, code_begin, -1, "JDK 25 without _code_offset");
#undef CASE
	for (int k = 0; k < n; k++) {
		l = cases[k].l;
		struct remote_mem mem = { image_read, &im };
		im.reads = 0;
		CHECK_MSG(!hotspot_scopes_supported(&l), "%s: supported", cases[k].why);
		int rc = hotspot_scopes_at(&l, &mem, BASE + b.nm, COMPILE_ID, BASE + b.code + 0x30, out, NOUT);
		CHECK_MSG(rc == HOTSPOT_SCOPES_UNSUPPORTED && im.reads == 0, "%s: rc %d, %zu reads", cases[k].why, rc,
			  im.reads);
	}
	memset(&l, 0xff, sizeof(l));
	CHECK(!hotspot_scopes_supported(&l));
}

/* --- fuzz seeds -------------------------------------------------------------------
 * fuzz_hotspot_scopes.c's 32-byte header, then the image from BASE:
 *   h[0] bit 0 JDK 25's layout (else 17's), bit 1 stream x 1; h[1..2]
 *   nmethod - BASE; h[3..6] compile id; h[7..10] pc - BASE; h[11] max;
 *   h[12..13] where hotspot_stream_int starts; h[14..17] a value to encode. */
static int write_seed(const char *dir, const char *name, struct nmb *b, int64_t off, int max)
{
	static struct image im;
	uint8_t h[32] = { 0 };
	char path[4096];
	nmb_finish(b, &im);
	uint16_t nm = (uint16_t)b->nm;
	uint32_t pc = (uint32_t)((int64_t)b->code + off), v = 40001;
	uint16_t spos = (uint16_t)b->data_at;
	h[0] = (uint8_t)((immutable_layout(b->l) ? 1 : 0) | (b->l->stream_x ? 2 : 0));
	memcpy(h + 1, &nm, 2);
	memcpy(h + 3, &b->compile_id, 4);
	memcpy(h + 7, &pc, 4);
	h[11] = (uint8_t)max;
	memcpy(h + 12, &spos, 2);
	memcpy(h + 14, &v, 4);
	if (32 + b->end > 4096) {
		fprintf(stderr, "%s: %llu bytes, too big a seed\n", name, (unsigned long long)b->end);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(h, 1, sizeof(h), f) != sizeof(h) || fwrite(im.m, 1, b->end, f) != b->end) {
		perror(path);
		if (f)
			fclose(f);
		return 1;
	}
	return fclose(f) != 0;
}

static int write_seeds(const char *dir)
{
	static struct nmb b;
	struct hotspot_scope_layout jdk21 = jdk17, jdk25x0 = jdk25;
	int rc = 0;
	jdk21.stream_x = 1;
	jdk25x0.stream_x = 0;
	build_method(&b, &jdk17);
	rc |= write_seed(dir, "jdk17_depth3", &b, 0x11, 64);
	build_method(&b, &jdk21);
	rc |= write_seed(dir, "jdk21_depth1", &b, 0x31, 64);
	build_method(&b, &jdk25);
	rc |= write_seed(dir, "jdk25_depth3", &b, 0x71, 64);
	build_method(&b, &jdk25);
	rc |= write_seed(dir, "jdk25_max2", &b, 0x30, 2);
	build_method(&b, &jdk25x0);
	rc |= write_seed(dir, "jdk25_x0_depth2", &b, 0x88, 64);
	build_method(&b, &jdk17);
	rc |= write_seed(dir, "jdk17_none", &b, 0x89, 64);
	/* cycles: a scope that is its own sender; two that are each other's */
	for (int k = 0; k < 2; k++) {
		nmb_init(&b, k ? &jdk25 : &jdk17, NMETA);
		int32_t x_at = (int32_t)b.ndata, y_at = x_at + 7;
		put_scope_raw(&b, (uint32_t)y_at, ROOT, 1, true);
		put_scope_raw(&b, (uint32_t)x_at, 8, 2, true);
		int32_t self = put_scope_raw(&b, (uint32_t)b.ndata, ROOT, 3, true);
		put_pc(&b, -1, 0);
		put_pc(&b, 0x10, x_at);
		put_pc(&b, 0x20, self);
		rc |= write_seed(dir, k ? "jdk25_cycle" : "jdk17_cycle", &b, 0x10, 64);
		if (!k)
			rc |= write_seed(dir, "jdk17_self", &b, 0x20, 64);
	}
	return rc;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--write-seeds") == 0)
		return write_seeds(argv[2]);
	struct hotspot_scope_layout jdk21 = jdk17, jdk25x0 = jdk25;
	jdk21.stream_x = 1;   /* JDK 20-22: the old layout, UNSIGNED5 */
	jdk25x0.stream_x = 0; /* not a real JVM: the immutable layout with x 0 */
	const struct {
		const struct hotspot_scope_layout *l;
		const char *name;
	} layouts[] = { { &jdk17, "jdk17" }, { &jdk21, "jdk21" }, { &jdk25, "jdk25" }, { &jdk25x0, "jdk25 x0" } };
	test_stream_int();
	for (size_t k = 0; k < sizeof(layouts) / sizeof(layouts[0]); k++) {
		test_chains(layouts[k].l, layouts[k].name);
		test_many_pcdescs(layouts[k].l, layouts[k].name);
		test_depth_cap(layouts[k].l, layouts[k].name);
		test_bad_scopes(layouts[k].l, layouts[k].name);
		test_data_end(layouts[k].l, layouts[k].name);
		test_bad_nmethod(layouts[k].l, layouts[k].name);
	}
	test_unsupported();
	return check_report("hotspot_scopes");
}
