/* test_hotspot_zgc.c - where generational ZGC moved an object, from synthetic
 * memory laid out as the tables say: the generations found in the collected
 * heap (and not elsewhere), a forwarding's open hash probed (collisions, the
 * wrap at its end), load-good pointers left alone, and bad memory of every kind.
 * `--write-seeds DIR` writes fuzz_hotspot_zgc seeds built the same way. */
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hotspot_zgc.h"

#define BASE  0x10000ULL
#define IMAGE 0x10000

/* the heap: offsets below 2^42 at 2^42 (x86-64's ZAddressHeapBase for a small heap) */
#define HEAP_BASE   (1ULL << 42)
#define OFFSET_MASK ((1ULL << 42) - 1)
#define LOAD_BAD    0xf000ULL /* the remapped bits of a stale colour */
#define GRANULE(n)  ((uint64_t)(n) << 21)

/* where things are in the image (offsets from BASE) */
#define O_CH_PTR   0x0010 /* Universe::_collectedHeap */
#define O_GLOB_PTR 0x0018 /* ZGlobalsForVMStructs::_instance_p */
#define O_GLOBALS  0x0040 /* the ZGlobalsForVMStructs: two pointers */
#define O_MASK	   0x0080 /* ZAddressOffsetMask's value */
#define O_BAD	   0x0088 /* ZPointerLoadBadMask's value */
#define O_CH	   0x1000 /* the ZCollectedHeap, 0x800 bytes */
#define O_DATA	   0x2000 /* memory outside the ZCollectedHeap */
#define O_TABLE0   0x3000 /* the generations' forwarding arrays, 16 granules each */
#define O_TABLE1   0x3100
#define O_FWD	   0x4000 /* a forwarding: header 0x38, then 16 entries */
#define O_FWD2	   0x4200 /* another, the old generation's */

/* layout (fed as table entries) */
#define CH_HEAP	     0x40
#define HEAP_PA	     0x10
#define HEAP_PT	     0x200
#define FWD_VIRTUAL  0x08
#define VM_START     0x00
#define FWD_SHIFT    0x18
#define FWD_ENTRIES  0x28
#define ARRAY_LENGTH 0x00
#define FWD_SIZE     0x34 /* entries at 0x38: the header aligned to an entry */
#define FWD_NENTRIES 16
#define ALIGN_SHIFT  3

struct image {
	uint8_t m[IMAGE];
	uint64_t hole_lo, hole_hi;
	size_t reads;
};

static int image_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct image *im = ctx;
	im->reads++;
	if (addr < BASE || addr - BASE > IMAGE || len > IMAGE - (addr - BASE))
		return -1;
	if (len && addr < im->hole_hi && addr + len > im->hole_lo)
		return -1;
	memcpy(buf, im->m + (addr - BASE), len);
	return 0;
}

static void put64(struct image *im, uint64_t off, uint64_t v)
{
	memcpy(im->m + off, &v, 8);
}

/* ZGC's from-index hash as HotSpot's ZHash::uint32_to_uint32 computes it,
 * written out here apart from the module's */
static uint32_t hash(uint32_t k)
{
	uint32_t x = ~k + (k << 15);
	x ^= x >> 12;
	x += x << 2;
	x ^= x >> 4;
	x *= 2057;
	return x ^ (x >> 16);
}

static void feed(struct hotspot_zgc *z)
{
	static const struct {
		const char *type, *field;
		uint64_t v;
	} fields[] = {
		{ "ZCollectedHeap", "_heap", CH_HEAP },
		{ "ZHeap", "_page_allocator", HEAP_PA },
		{ "ZHeap", "_page_table", HEAP_PT },
		{ "ZForwardingTable", "_map", 0 },
		{ "ZGranuleMapForForwarding", "_map", 0 },
		{ "ZForwarding", "_virtual", FWD_VIRTUAL },
		{ "ZForwarding", "_object_alignment_shift", FWD_SHIFT },
		{ "ZForwarding", "_entries", FWD_ENTRIES },
		{ "ZAttachedArrayForForwarding", "_length", ARRAY_LENGTH },
		{ "ZVirtualMemory", "_start", VM_START },
		{ "ZGlobalsForVMStructs", "_ZAddressOffsetMask", 0 },
		{ "ZGlobalsForVMStructs", "_ZPointerLoadBadMask", 8 },
		{ "ZPage", "_top", 0x30 }, /* one it does not want */
	};
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		struct hotspot_entry e = { fields[i].type, fields[i].field, "x", false, fields[i].v };
		hotspot_zgc_take(z, &e);
	}
	struct hotspot_entry ch = { "Universe", "_collectedHeap", "CollectedHeap*", true, BASE + O_CH_PTR };
	struct hotspot_entry gl = { "ZGlobalsForVMStructs", "_instance_p", "ZGlobalsForVMStructs*", true,
				    BASE + O_GLOB_PTR };
	struct hotspot_entry t1 = { "ZCollectedHeap", NULL, NULL, false, 0x800 };
	struct hotspot_entry t2 = { "ZForwarding", NULL, NULL, false, FWD_SIZE };
	struct hotspot_entry t3 = { "ZForwardingEntry", NULL, NULL, false, 8 };
	hotspot_zgc_take(z, &ch);
	hotspot_zgc_take(z, &gl);
	hotspot_zgc_take(z, &t1);
	hotspot_zgc_take(z, &t2);
	hotspot_zgc_take(z, &t3);
}

/* a ZGeneration at off: vtable, id, the heap's page allocator and page table, its table */
static void generation(struct image *im, uint64_t off, uint64_t table)
{
	uint64_t heap = BASE + O_CH + CH_HEAP;
	put64(im, off, 0x7f0000001000ULL);
	put64(im, off + 8, 1);
	put64(im, off + 16, heap + HEAP_PA);
	put64(im, off + 24, heap + HEAP_PT);
	put64(im, off + 32, table);
}

/* the entry from-index -> to-offset at the first free slot from its hash */
static void forward(struct image *im, uint64_t fwd, uint64_t index, uint64_t to)
{
	uint64_t slot = hash((uint32_t)index) & (FWD_NENTRIES - 1), e;
	for (;; slot = (slot + 1) & (FWD_NENTRIES - 1)) {
		memcpy(&e, im->m + fwd + 0x38 + slot * 8, 8);
		if (!(e & 1))
			break;
	}
	put64(im, fwd + 0x38 + slot * 8, 1 | to << 1 | index << 46);
}

/* a forwarding for the page at granule g */
static void forwarding(struct image *im, uint64_t fwd, unsigned g)
{
	put64(im, fwd + FWD_VIRTUAL + VM_START, GRANULE(g));
	put64(im, fwd + FWD_SHIFT, ALIGN_SHIFT);
	put64(im, fwd + FWD_ENTRIES + ARRAY_LENGTH, FWD_NENTRIES);
}

static void image_init(struct image *im, bool in_heap)
{
	memset(im, 0, sizeof(*im));
	put64(im, O_CH_PTR, BASE + O_CH);
	put64(im, O_GLOB_PTR, BASE + O_GLOBALS);
	put64(im, O_GLOBALS, BASE + O_MASK);
	put64(im, O_GLOBALS + 8, BASE + O_BAD);
	put64(im, O_MASK, OFFSET_MASK);
	put64(im, O_BAD, LOAD_BAD);
	generation(im, in_heap ? O_CH + 0x300 : O_DATA + 0x100, BASE + O_TABLE0);
	generation(im, in_heap ? O_CH + 0x500 : O_DATA + 0x7f8, BASE + O_TABLE1);
	/* young: granule 3's page relocated; old: granule 5's */
	forwarding(im, O_FWD, 3);
	put64(im, O_TABLE0 + 3 * 8, BASE + O_FWD);
	forwarding(im, O_FWD2, 5);
	put64(im, O_TABLE1 + 5 * 8, BASE + O_FWD2);
}

static struct hotspot_zgc *open_image(struct image *im)
{
	struct remote_mem mem = { image_read, im };
	struct hotspot_zgc *z = hotspot_zgc_new(&mem);
	CHECK(z != NULL);
	feed(z);
	CHECK_EQ_INT(hotspot_zgc_ready(z), 0);
	return z;
}

/* the address of heap offset off */
static uint64_t heap(uint64_t off)
{
	return HEAP_BASE | off;
}

/* a stale and a healed pointer to heap offset off (x86-64's shift 16) */
static uint64_t stale(uint64_t off)
{
	return heap(off) << 16 | 0x8000;
}
static uint64_t good(uint64_t off)
{
	return heap(off) << 16 | 0x0010;
}

static void test_moved(void)
{
	static struct image im;
	image_init(&im, true);
	uint64_t obj = GRANULE(3) + 0x100, to = GRANULE(9) + 0x40, index = 0x100 >> ALIGN_SHIFT;
	forward(&im, O_FWD, index, to);
	struct hotspot_zgc *z = open_image(&im);
	CHECK(hotspot_zgc_usable(z));
	CHECK_EQ_U64(hotspot_zgc_current(z, stale(obj), heap(obj)), heap(to));
	CHECK_EQ_U64(hotspot_zgc_forwarded(z), 1);
	CHECK_EQ_U64(hotspot_zgc_stale(z), 1);
	CHECK(hotspot_zgc_usable(z));
	/* healed: left alone, whatever the forwarding says */
	CHECK_EQ_U64(hotspot_zgc_current(z, good(obj), heap(obj)), heap(obj));
	/* another object of the page, not moved yet */
	CHECK_EQ_U64(hotspot_zgc_current(z, stale(obj + 8), heap(obj + 8)), heap(obj + 8));
	CHECK_EQ_U64(hotspot_zgc_stale(z), 2); /* the healed one is not looked up */
	/* a page not relocated */
	CHECK_EQ_U64(hotspot_zgc_current(z, stale(GRANULE(4)), heap(GRANULE(4))), heap(GRANULE(4)));
	/* the old generation's table */
	forward(&im, O_FWD2, 7, GRANULE(11));
	CHECK_EQ_U64(hotspot_zgc_current(z, stale(GRANULE(5) + 7 * 8), heap(GRANULE(5) + 7 * 8)), heap(GRANULE(11)));
	CHECK_EQ_U64(hotspot_zgc_forwarded(z), 2);
	hotspot_zgc_free(z);
}

/* generations elsewhere than in the collected heap are not looked for: given
 * up after a few tries, the addresses as they are */
static void test_outside(void)
{
	static struct image im;
	uint64_t obj = GRANULE(3) + 0x100;
	image_init(&im, false);
	forward(&im, O_FWD, 0x100 >> ALIGN_SHIFT, GRANULE(9));
	struct hotspot_zgc *z = open_image(&im);
	for (int i = 0; i < 10; i++)
		CHECK_EQ_U64(hotspot_zgc_current(z, stale(obj), heap(obj)), heap(obj));
	CHECK(!hotspot_zgc_usable(z));
	CHECK_EQ_U64(hotspot_zgc_forwarded(z), 0);
	hotspot_zgc_free(z);
}

/* entries whose hashes collide, and a run that wraps at the table's end */
static void test_probe(void)
{
	static struct image im;
	image_init(&im, true);
	uint64_t first = 0, same[4], n = 0;
	/* four from-indexes that hash to the same slot as index 1 */
	uint32_t want = hash(1) & (FWD_NENTRIES - 1);
	for (uint32_t i = 1; n < 4 && i < 4096; i++)
		if ((hash(i) & (FWD_NENTRIES - 1)) == want)
			same[n++] = i;
	CHECK_EQ_U64(n, 4);
	for (uint64_t i = 0; i < n; i++)
		forward(&im, O_FWD, same[i], GRANULE(8) + i * 64);
	struct hotspot_zgc *z = open_image(&im);
	for (uint64_t i = 0; i < n; i++) {
		uint64_t obj = GRANULE(3) + (same[i] << ALIGN_SHIFT);
		CHECK_EQ_U64(hotspot_zgc_current(z, stale(obj), heap(obj)), heap(GRANULE(8) + i * 64));
	}
	hotspot_zgc_free(z);
	/* slot 15 then 0: the probe wraps */
	image_init(&im, true);
	for (uint32_t i = 1; i < 65536 && !first; i++)
		if ((hash(i) & (FWD_NENTRIES - 1)) == FWD_NENTRIES - 1)
			first = i;
	CHECK(first != 0);
	put64(&im, O_FWD + 0x38 + 15 * 8, 1 | (GRANULE(8) << 1) | (uint64_t)(first + 1) << 46); /* another's */
	put64(&im, O_FWD + 0x38 + 0 * 8, 1 | (GRANULE(8) + 16) << 1 | (uint64_t)first << 46);
	z = open_image(&im);
	uint64_t obj = GRANULE(3) + ((uint64_t)first << ALIGN_SHIFT);
	CHECK_EQ_U64(hotspot_zgc_current(z, stale(obj), heap(obj)), heap(GRANULE(8) + 16));
	hotspot_zgc_free(z);
}

/* every kind of bad memory: the address comes back as it was */
static void test_bad(void)
{
	static struct image im;
	uint64_t obj = GRANULE(3) + 0x100, a = heap(obj);
	struct hotspot_zgc *z;

	/* a forwarding that cannot be read; entries that cannot */
	image_init(&im, true);
	forward(&im, O_FWD, 0x100 >> ALIGN_SHIFT, GRANULE(9));
	im.hole_lo = BASE + O_FWD, im.hole_hi = BASE + O_FWD + 8;
	z = open_image(&im);
	CHECK_EQ_U64(hotspot_zgc_current(z, stale(obj), a), a);
	im.hole_lo = BASE + O_FWD + 0x38, im.hole_hi = BASE + O_FWD + 0x38 + FWD_NENTRIES * 8;
	CHECK_EQ_U64(hotspot_zgc_current(z, stale(obj), a), a);
	hotspot_zgc_free(z);

	/* a length not a power of two, too large, 0; a shift past a granule; a start past the object */
	static const struct {
		uint64_t off, v;
	} breaks[] = {
		{ FWD_ENTRIES + ARRAY_LENGTH, 12 },
		{ FWD_ENTRIES + ARRAY_LENGTH, 1ULL << 40 },
		{ FWD_ENTRIES + ARRAY_LENGTH, 0 },
		{ FWD_SHIFT, 40 },
		{ FWD_VIRTUAL + VM_START, GRANULE(3) + 0x200 },
	};
	for (size_t i = 0; i < sizeof(breaks) / sizeof(breaks[0]); i++) {
		image_init(&im, true);
		forward(&im, O_FWD, 0x100 >> ALIGN_SHIFT, GRANULE(9));
		put64(&im, O_FWD + breaks[i].off, breaks[i].v);
		z = open_image(&im);
		CHECK_MSG(hotspot_zgc_current(z, stale(obj), a) == a, "break %zu", i);
		hotspot_zgc_free(z);
	}

	/* a full table without the object: the probe stops */
	image_init(&im, true);
	for (uint64_t s = 0; s < FWD_NENTRIES; s++)
		put64(&im, O_FWD + 0x38 + s * 8, 1 | (uint64_t)(1000 + s) << 46);
	z = open_image(&im);
	CHECK_EQ_U64(hotspot_zgc_current(z, stale(obj), a), a);
	hotspot_zgc_free(z);

	/* one generation only; none; the collected heap unreadable: tried a few times, then never */
	image_init(&im, true);
	put64(&im, O_CH + 0x500 + 16, 0);
	forward(&im, O_FWD, 0x100 >> ALIGN_SHIFT, GRANULE(9));
	z = open_image(&im);
	for (int i = 0; i < 20; i++)
		CHECK_EQ_U64(hotspot_zgc_current(z, stale(obj), a), a);
	size_t reads = im.reads;
	CHECK_EQ_U64(hotspot_zgc_current(z, stale(obj), a), a);
	CHECK_EQ_U64(im.reads, reads); /* given up: no reads */
	CHECK(!hotspot_zgc_usable(z));
	hotspot_zgc_free(z);

	image_init(&im, true);
	put64(&im, O_CH_PTR, 0);
	z = open_image(&im);
	CHECK_EQ_U64(hotspot_zgc_current(z, stale(obj), a), a);
	hotspot_zgc_free(z);

	/* an offset mask that is not 2^n - 1 */
	image_init(&im, true);
	put64(&im, O_MASK, 0x1234);
	z = open_image(&im);
	CHECK_EQ_U64(hotspot_zgc_current(z, stale(obj), a), a);
	hotspot_zgc_free(z);

	/* tables without ZGC's entries: unusable, and nothing read */
	struct remote_mem mem = { image_read, &im };
	z = hotspot_zgc_new(&mem);
	CHECK_EQ_INT(hotspot_zgc_ready(z), -1);
	CHECK(!hotspot_zgc_usable(z));
	reads = im.reads;
	CHECK_EQ_U64(hotspot_zgc_current(z, stale(obj), a), a);
	CHECK_EQ_U64(im.reads, reads);
	hotspot_zgc_free(z);
	CHECK_EQ_U64(hotspot_zgc_current(NULL, stale(obj), a), a);
	CHECK_EQ_U64(hotspot_zgc_forwarded(NULL), 0);
}

/* a fuzz_hotspot_zgc seed: its header, then the image's first SEED_IMAGE bytes */
#define SEED_IMAGE 0x4400
static void seed(const char *dir, const char *name, const struct image *im, uint64_t raw, uint64_t addr)
{
	uint8_t h[24] = { 0 };
	char path[4096];
	FILE *f;
	memcpy(h, &raw, 8);
	memcpy(h + 8, &addr, 8);
	h[17] = 1;
	h[18] = FWD_SIZE;
	h[20] = FWD_ENTRIES;
	h[22] = FWD_SHIFT;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "wb")) || fwrite(h, 1, sizeof(h), f) != sizeof(h) ||
	    fwrite(im->m, 1, SEED_IMAGE, f) != SEED_IMAGE || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
}

static int write_seeds(const char *dir)
{
	static struct image im;
	uint64_t obj = GRANULE(3) + 0x100;
	image_init(&im, true);
	forward(&im, O_FWD, 0x100 >> ALIGN_SHIFT, GRANULE(9) + 0x40);
	seed(dir, "moved", &im, stale(obj), heap(obj));
	seed(dir, "healed", &im, good(obj), heap(obj));
	forward(&im, O_FWD2, 7, GRANULE(11));
	seed(dir, "old", &im, stale(GRANULE(5) + 7 * 8), heap(GRANULE(5) + 7 * 8));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--write-seeds") == 0)
		return write_seeds(argv[2]);
	test_moved();
	test_outside();
	test_probe();
	test_bad();
	return check_report("hotspot_zgc");
}
