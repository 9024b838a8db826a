/* hotspot_zgc.c - where generational ZGC has moved an object, read from outside the
 * JVM: a stale coloured pointer's object found through its generation's forwarding table. */
#include "hotspot_zgc.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "vm_tables.h"

#define GRANULE_SHIFT  21	  /* ZGranuleSizeShift: 2 MB, on every platform ZGC runs on */
#define MAX_FORWARDING 256	  /* bytes of a ZForwarding's header read at most */
#define MAX_ENTRIES    (1u << 18) /* a forwarding's entries: its from-index has 18 bits */
#define PROBE_CHUNK    8	  /* entries read at once while probing */
#define MAX_PROBES     64	  /* entries probed for one object (the table is at most half full) */
#define MAX_HEAP_SCAN  65536	  /* bytes of the collected heap searched for the generations */
#define SCAN_CHUNK     65536
#define GENERATIONS    2 /* young and old */

enum field {
	F_CH_HEAP,
	F_HEAP_PAGE_ALLOCATOR,
	F_HEAP_PAGE_TABLE,
	F_FT_MAP,
	F_GM_FWD_MAP,
	F_FWD_VIRTUAL,
	F_FWD_SHIFT,
	F_FWD_ENTRIES,
	F_ARRAY_LENGTH,
	F_VM_START,
	F_G_OFFSET_MASK,
	F_G_LOAD_BAD,
	T_COLLECTED_HEAP,
	T_FORWARDING,
	T_ENTRY,
	NFIELDS
};
enum statics { A_COLLECTED_HEAP, A_GLOBALS, NSTATICS };

static const struct vm_tables_want wanted[] = {
	{ "ZCollectedHeap", "_heap", F_CH_HEAP },
	{ "ZHeap", "_page_allocator", F_HEAP_PAGE_ALLOCATOR },
	{ "ZHeap", "_page_table", F_HEAP_PAGE_TABLE },
	{ "ZForwardingTable", "_map", F_FT_MAP },
	{ "ZGranuleMapForForwarding", "_map", F_GM_FWD_MAP },
	{ "ZForwarding", "_virtual", F_FWD_VIRTUAL },
	{ "ZForwarding", "_object_alignment_shift", F_FWD_SHIFT },
	{ "ZForwarding", "_entries", F_FWD_ENTRIES },
	{ "ZAttachedArrayForForwarding", "_length", F_ARRAY_LENGTH },
	{ "ZVirtualMemory", "_start", F_VM_START },
	{ "ZGlobalsForVMStructs", "_ZAddressOffsetMask", F_G_OFFSET_MASK },
	{ "ZGlobalsForVMStructs", "_ZPointerLoadBadMask", F_G_LOAD_BAD },
};
static const struct vm_tables_want wanted_static[] = {
	{ "Universe", "_collectedHeap", A_COLLECTED_HEAP },
	{ "ZGlobalsForVMStructs", "_instance_p", A_GLOBALS },
};
static const struct vm_tables_want wanted_types[] = {
	{ "ZCollectedHeap", NULL, T_COLLECTED_HEAP },
	{ "ZForwarding", NULL, T_FORWARDING },
	{ "ZForwardingEntry", NULL, T_ENTRY },
};

enum state { Z_UNUSABLE, Z_FIND, Z_FOUND, Z_NEVER };

struct hotspot_zgc {
	struct remote_mem mem;
	long f[NFIELDS];
	uint64_t a[NSTATICS];
	enum state state;
	int attempts;
	uint64_t load_bad_addr;	      /* where ZPointerLoadBadMask is */
	uint64_t offset_mask;	      /* ZAddressOffsetMask */
	uint64_t tables[GENERATIONS]; /* each generation's ZForwarding* array, by granule */
	uint64_t ntables, forwarded, stale;
};

struct hotspot_zgc *hotspot_zgc_new(const struct remote_mem *mem)
{
	struct hotspot_zgc *z = calloc(1, sizeof(*z));
	if (!z)
		return NULL;
	z->mem = *mem;
	for (size_t i = 0; i < NFIELDS; i++)
		z->f[i] = -1;
	return z;
}

void hotspot_zgc_take(void *ctx, const struct hotspot_entry *e)
{
	struct hotspot_zgc *z = ctx;
	int id;
	if (!e->field) {
		if ((id = vm_tables_match(wanted_types, sizeof(wanted_types) / sizeof(wanted_types[0]), e)) >= 0)
			z->f[id] = e->value <= 0xffff ? (long)e->value : -1;
		return;
	}
	if (e->is_static) {
		if ((id = vm_tables_match(wanted_static, sizeof(wanted_static) / sizeof(wanted_static[0]), e)) >= 0)
			z->a[id] = e->value;
		return;
	}
	if ((id = vm_tables_match(wanted, sizeof(wanted) / sizeof(wanted[0]), e)) >= 0)
		z->f[id] = e->value <= 0xffff ? (long)e->value : -1;
}

int hotspot_zgc_ready(struct hotspot_zgc *z)
{
	bool ok = z->a[A_COLLECTED_HEAP] && z->a[A_GLOBALS];
	for (size_t i = 0; i < NFIELDS; i++)
		ok = ok && z->f[i] >= 0;
	/* the entries follow the header, aligned to an entry; an entry is one word */
	ok = ok && z->f[T_ENTRY] == 8 && z->f[T_FORWARDING] > 0 && z->f[T_FORWARDING] <= MAX_FORWARDING &&
	     z->f[F_FWD_SHIFT] + 8 <= z->f[T_FORWARDING] &&
	     z->f[F_FWD_ENTRIES] + z->f[F_ARRAY_LENGTH] + 8 <= z->f[T_FORWARDING] &&
	     z->f[F_FWD_VIRTUAL] + z->f[F_VM_START] + 8 <= z->f[T_FORWARDING];
	z->state = ok ? Z_FIND : Z_UNUSABLE;
	return ok ? 0 : -1;
}

bool hotspot_zgc_usable(const struct hotspot_zgc *z)
{
	return z && z->state != Z_UNUSABLE && z->state != Z_NEVER;
}

uint64_t hotspot_zgc_forwarded(const struct hotspot_zgc *z)
{
	return z ? z->forwarded : 0;
}

uint64_t hotspot_zgc_stale(const struct hotspot_zgc *z)
{
	return z ? z->stale : 0;
}

void hotspot_zgc_free(struct hotspot_zgc *z)
{
	free(z);
}

/* ---- finding the generations' tables ---------------------------------------------- */

static uint64_t u64(const struct hotspot_zgc *z, uint64_t addr)
{
	return remote_mem_u64(&z->mem, addr);
}

/* Takes the forwarding tables of the generations whose page allocator and page
 * table words are found in buf (len bytes read at base): each ZGeneration holds
 * the heap's page allocator's and page table's addresses, then its forwarding
 * table (a granule map: one pointer to its array). */
static void tables_take(struct hotspot_zgc *z, const unsigned char *buf, size_t len, uint64_t base, uint64_t pa,
			uint64_t pt)
{
	long map = z->f[F_FT_MAP] + z->f[F_GM_FWD_MAP];
	for (size_t i = 0; i + 16 <= len && z->ntables < GENERATIONS; i += 8) {
		uint64_t x, y, table;
		memcpy(&x, buf + i, 8);
		memcpy(&y, buf + i + 8, 8);
		if (x != pa || y != pt)
			continue;
		if (i + 16 + (size_t)map + 8 <= len)
			memcpy(&table, buf + i + 16 + map, 8);
		else
			table = u64(z, base + i + 16 + (uint64_t)map);
		if (!table || (table & 7) || (z->ntables && z->tables[0] == table))
			continue;
		z->tables[z->ntables++] = table;
	}
}

/* Searches [lo, hi) for the generations, SCAN_CHUNK bytes a read. */
static void tables_search(struct hotspot_zgc *z, uint64_t lo, uint64_t hi, uint64_t pa, uint64_t pt)
{
	unsigned char *buf = malloc(SCAN_CHUNK + 16);
	if (!buf)
		return;
	for (uint64_t at = lo & ~7ull; at < hi && z->ntables < GENERATIONS; at += SCAN_CHUNK) {
		/* 16 bytes more: a pair across two chunks */
		size_t len = hi - at < SCAN_CHUNK + 16 ? (size_t)(hi - at) : SCAN_CHUNK + 16;
		if (remote_mem_read(&z->mem, at, buf, len) == 0)
			tables_take(z, buf, len, at, pa, pt);
	}
	free(buf);
}

/* 0 when both generations' tables were found, -1 when not (yet). */
static int tables_find(struct hotspot_zgc *z)
{
	uint64_t ch = u64(z, z->a[A_COLLECTED_HEAP]), globals = u64(z, z->a[A_GLOBALS]);
	uint64_t heap, pa, pt, mask_addr;
	long size = z->f[T_COLLECTED_HEAP];
	if (!ch || !globals)
		return -1;
	heap = ch + (uint64_t)z->f[F_CH_HEAP];
	pa = heap + (uint64_t)z->f[F_HEAP_PAGE_ALLOCATOR];
	pt = heap + (uint64_t)z->f[F_HEAP_PAGE_TABLE];
	mask_addr = u64(z, globals + (uint64_t)z->f[F_G_OFFSET_MASK]);
	z->load_bad_addr = u64(z, globals + (uint64_t)z->f[F_G_LOAD_BAD]);
	z->offset_mask = mask_addr ? u64(z, mask_addr) : 0;
	if (!z->load_bad_addr || !z->offset_mask || (z->offset_mask & (z->offset_mask + 1)))
		return -1; /* not set up yet; the mask is 2^n - 1 */
	z->ntables = 0;
	tables_search(z, ch, ch + (uint64_t)(size > MAX_HEAP_SCAN ? MAX_HEAP_SCAN : size), pa, pt);
	return z->ntables == GENERATIONS ? 0 : -1;
}

/* ---- a lookup ------------------------------------------------------------------ */

/* ZGC's hash of a from-index (a 32-bit integer mix, Thomas Wang's). */
static uint32_t index_hash(uint32_t key)
{
	key = ~key + (key << 15);
	key = key ^ (key >> 12);
	key = key + (key << 2);
	key = key ^ (key >> 4);
	key = key * 2057;
	key = key ^ (key >> 16);
	return key;
}

/* A forwarding's entries follow its header (aligned to an entry): an open
 * hash of from-index, probed linearly from the index's hash; an entry is a
 * word: bit 0 populated, bits 1-45 the to-offset, 46-63 the from-index (the
 * object's offset in its page over the page's object alignment).
 * Where forwarding fwd says the object at heap offset off went, into *to: true
 * when it says, false when fwd does not cover off or has no entry for it. */
static bool forwarding_find(const struct hotspot_zgc *z, uint64_t fwd, uint64_t off, uint64_t *to)
{
	unsigned char head[MAX_FORWARDING];
	uint64_t start, shift, length, index, entries, chunk[PROBE_CHUNK];
	long hsize = z->f[T_FORWARDING];
	if (remote_mem_read(&z->mem, fwd, head, (size_t)hsize) != 0)
		return false;
	memcpy(&start, head + z->f[F_FWD_VIRTUAL] + z->f[F_VM_START], 8);
	memcpy(&shift, head + z->f[F_FWD_SHIFT], 8);
	memcpy(&length, head + z->f[F_FWD_ENTRIES] + z->f[F_ARRAY_LENGTH], 8);
	if (off < start || shift > GRANULE_SHIFT || length == 0 || length > MAX_ENTRIES || (length & (length - 1)))
		return false;
	index = (off - start) >> shift;
	if (index >= MAX_ENTRIES)
		return false;
	entries = fwd + (((uint64_t)hsize + 7) & ~7ull);
	uint64_t cursor = index_hash((uint32_t)index) & (length - 1);
	for (unsigned probed = 0; probed < MAX_PROBES && probed < length;) {
		/* a run of entries up to the table's end at once */
		size_t n = length - cursor < PROBE_CHUNK ? (size_t)(length - cursor) : PROBE_CHUNK;
		if (remote_mem_read(&z->mem, entries + cursor * 8, chunk, n * 8) != 0)
			return false;
		for (size_t i = 0; i < n; i++, probed++) {
			uint64_t e = chunk[i];
			if (!(e & 1))
				return false; /* an empty entry ends the probe: not moved (yet) */
			if ((e >> 46) == index) {
				*to = (e >> 1) & ((1ull << 45) - 1);
				return true;
			}
		}
		cursor = (cursor + n) & (length - 1);
	}
	return false;
}

uint64_t hotspot_zgc_current(struct hotspot_zgc *z, uint64_t raw, uint64_t addr)
{
	uint64_t bad, off;
	if (!z || !addr || z->state == Z_UNUSABLE || z->state == Z_NEVER)
		return addr;
	if (z->state == Z_FIND) {
		if (tables_find(z) == 0)
			z->state = Z_FOUND;
		else if (++z->attempts >= 8)
			z->state = Z_NEVER;
		if (z->state != Z_FOUND)
			return addr;
	}
	if (remote_mem_read(&z->mem, z->load_bad_addr, &bad, 8) != 0 || !(raw & bad))
		return addr; /* load-good: the address is the object's */
	z->stale++;
	off = addr & z->offset_mask;
	for (size_t g = 0; g < z->ntables; g++) {
		uint64_t fwd = u64(z, z->tables[g] + (off >> GRANULE_SHIFT) * 8), to;
		if (!fwd || (fwd & 7))
			continue;
		if (forwarding_find(z, fwd, off, &to)) {
			z->forwarded++;
			return (addr & ~z->offset_mask) | to;
		}
	}
	return addr;
}
