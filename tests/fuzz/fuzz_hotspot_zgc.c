/* fuzz_hotspot_zgc.c - libFuzzer target for following generational ZGC's
 * forwarding from garbage memory: hotspot_zgc_current gives back the address
 * or a forwarded one in the same heap, counts each forwarding, and reads a
 * bounded amount of memory however the image lies. */
/* module: native/hotspot/hotspot_zgc.c native/hotspot/remote_mem.c jvmagent/vm_tables.c */
#include "hotspot_zgc.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Input: a 24-byte header, then the memory image, "mapped" at BASE.
 *   h[0..7] the coloured pointer, h[8..15] the address it names,
 *   h[16] unused;
 *   h[17] how many lookups (1-4), h[18..19] the ZForwarding's size (any),
 *   h[20..21] its _entries offset, h[22] its _object_alignment_shift offset
 * The layout otherwise as tests/unit/test_hotspot_zgc.c's: Universe::_collectedHeap
 * at BASE + 0x10, ZGlobalsForVMStructs::_instance_p at BASE + 0x18; its
 * --write-seeds DIR writes seeds. */
#define BASE   0x10000ULL
#define HEADER 24
/* what one lookup may read once the tables are found: the mask, per
 * generation the table's slot, the forwarding's header and its probes */
#define LOOKUP_READS (1 + 2 * (2 + 64))
/* what finding the tables may read: the globals, then the collected heap */
#define FIND_READS 64

struct image {
	const uint8_t *p;
	size_t n;
	size_t reads;
};

static int image_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct image *im = ctx;
	im->reads++;
	if (addr < BASE || addr - BASE > im->n || len > im->n - (addr - BASE))
		return -1;
	memcpy(buf, im->p + (addr - BASE), len);
	return 0;
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint64_t le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void take(struct hotspot_zgc *z, const char *type, const char *field, bool is_static, uint64_t v)
{
	struct hotspot_entry e = { type, field, field ? "x" : NULL, is_static, v };
	hotspot_zgc_take(z, &e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HEADER)
		return 0;
	struct image im = { data + HEADER, size - HEADER, 0 };
	struct remote_mem mem = { image_read, &im };
	struct hotspot_zgc *z = hotspot_zgc_new(&mem);
	uint64_t raw = le64(data), addr = le64(data + 8);
	unsigned lookups = 1 + (data[17] & 3);
	if (!z)
		abort();
	take(z, "ZCollectedHeap", "_heap", false, 0x40);
	take(z, "ZHeap", "_page_allocator", false, 0x10);
	take(z, "ZHeap", "_page_table", false, 0x200);
	take(z, "ZForwardingTable", "_map", false, 0);
	take(z, "ZGranuleMapForForwarding", "_map", false, 0);
	take(z, "ZForwarding", "_virtual", false, 0x08);
	take(z, "ZForwarding", "_object_alignment_shift", false, data[22]);
	take(z, "ZForwarding", "_entries", false, le16(data + 20));
	take(z, "ZAttachedArrayForForwarding", "_length", false, 0);
	take(z, "ZVirtualMemory", "_start", false, 0);
	take(z, "ZGlobalsForVMStructs", "_ZAddressOffsetMask", false, 0);
	take(z, "ZGlobalsForVMStructs", "_ZPointerLoadBadMask", false, 8);
	take(z, "Universe", "_collectedHeap", true, BASE + 0x10);
	take(z, "ZGlobalsForVMStructs", "_instance_p", true, BASE + 0x18);
	take(z, "ZCollectedHeap", NULL, false, 0x800);
	take(z, "ZForwarding", NULL, false, le16(data + 18));
	take(z, "ZForwardingEntry", NULL, false, 8);
	if (hotspot_zgc_ready(z) != 0) {
		if (hotspot_zgc_current(z, raw, addr) != addr || im.reads)
			abort(); /* unusable: addresses as they are, nothing read */
		hotspot_zgc_free(z);
		return 0;
	}
	for (unsigned i = 0; i < lookups; i++) {
		uint64_t before = hotspot_zgc_forwarded(z);
		size_t reads = im.reads;
		uint64_t now = hotspot_zgc_current(z, raw, addr);
		uint64_t moved = hotspot_zgc_forwarded(z) - before;
		if (moved > 1 || (now != addr && moved != 1))
			abort();
		/* a forwarded address: the heap's base bits of addr and an offset below 2^45 */
		if (((now >> 45) & ~(addr >> 45)) != 0)
			abort();
		if (im.reads - reads > LOOKUP_READS + FIND_READS)
			abort();
		if (!addr && now)
			abort();
	}
	hotspot_zgc_free(z);
	return 0;
}
