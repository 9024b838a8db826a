/* fuzz_hotspot_names.c - libFuzzer target for reading a JVM over garbage memory: tables
 * and walker layout, or a given layout, then every naming function. */
/* module: native/hotspot/hotspot_vm.c native/hotspot/hotspot_names.c native/hotspot/hotspot_scopes.c native/hotspot/hotspot_flags.c native/hotspot/hotspot_stubs.c native/hotspot/stub_cfa.c native/hotspot/hotspot_threads.c native/hotspot/hotspot_zgc.c native/hotspot/remote_mem.c native/hotspot/elf_lookup.c native/util/str_intern.c native/util/text_escape.c native/attach/hsperf.c native/attach/proc_info.c native/attach/proc_maps.c native/util/target_file.c native/util/msg.c jvmagent/vm_tables.c native/util/grow.c native/util/u64_map.c */
#include "hotspot_vm.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Input: a 32-byte header, then the memory image, "mapped" at BASE.
 *   h[0] bit 0: JDK 25 (else 17) for a given layout; bit 1: table mode, the
 *     layout read from tables found through the 12 variables at the image's
 *     start (enum hotspot_symbol order; tests/unit/test_hotspot_tables.c
 *     writes such seeds)
 *   h[1..15]: a given layout's offsets (layout mode)
 *   h[16..17] Method* - BASE, h[18..21] cookie, h[22..23] bci,
 *   h[24..25] nmethod - BASE, h[26..29] compile id, h[30..31] blob - BASE */
#define BASE   0x10000ULL
#define HEADER 32

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

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static void check_name(const char *name, bool method)
{
	if (!name)
		return;
	size_t n = strlen(name);
	if (n == 0 || n > 4096)
		abort();
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)name[i] < 0x20 || name[i] == 0x7f)
			abort();
	if (method && (name[0] != 'L' || !strstr(name, ";::")))
		abort();
}

static void check_entry(void *ctx, const struct hotspot_entry *e)
{
	(void)ctx;
	if (!e->type || strlen(e->type) >= 256 || (e->field && strlen(e->field) >= 256) ||
	    (e->field && (!e->type_string || strlen(e->type_string) >= 256)))
		abort();
}

static void check_walker(struct hotspot_vm *vm)
{
	struct hotspot_proc hp;
	int rc = hotspot_vm_walker_info(vm, &hp);
	if (rc < -1 || rc > 1)
		abort();
	if (rc == 1 &&
	    (hp.nheaps == 0 || hp.nheaps > PROFILE_HOTSPOT_HEAPS || hp.blob_header > 512 || hp.blob_header < 64 ||
	     hp.segment_shift < 4 || hp.segment_shift > 16 || hp.code_high <= hp.code_low ||
	     hp.interp_high <= hp.interp_low || hp.interp_low < hp.code_low || hp.interp_high > hp.code_high))
		abort();
	for (__u32 i = 0; rc == 1 && i < hp.nheaps; i++)
		if (hp.heap_high[i] <= hp.heap_low[i] || hp.heap_low[i] < hp.code_low || hp.heap_high[i] > hp.code_high)
			abort();
	int size = hotspot_vm_frame_complete_size(vm);
	if (size != 0 && size != 2 && size != 4)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HEADER)
		return 0;
	const uint8_t *h = data;
	struct image im = { data + HEADER, size - HEADER, 0 };
	struct str_intern *si = str_intern_new();
	struct hotspot_vm *vm = NULL;
	bool tables = h[0] & 2;
	if (!si)
		abort();
	if (tables) {
		uint64_t sym[HOTSPOT_NSYMS];
		char err[256] = "";
		for (int k = 0; k < HOTSPOT_NSYMS; k++)
			sym[k] = BASE + 8 * (uint64_t)k;
		vm = hotspot_vm_from_tables(sym, image_read, &im, si, err, sizeof(err));
		if (!vm && (!err[0] || strncmp(err, "jflame: ", 8) == 0 || strchr(err, '\n')))
			abort(); /* one line saying why, without the prefix (the front end adds it) */
		if (!vm)
			goto out;
		check_walker(vm);
		if (hotspot_vm_entries(vm, check_entry, NULL) != 0)
			abort(); /* read once, the same memory reads again */
	} else {
		struct hotspot_layout l = {
			.jdk = h[0] & 1 ? 25 : 17,
			.method_const_method = h[1],
			.cm_constants = h[2],
			.cm_name_index = h[3],
			.cm_code_size = h[4],
			.cm_flags = h[5],
			.cm_size = h[6],
			.cp_pool_holder = h[7],
			.cp_size = h[8],
			.klass_name = h[9],
			.symbol_length = h[10],
			.symbol_body = h[11],
			.blob_name = h[12],
			.nm_method = h[13],
			.nm_compile_id = h[14],
			.cm_flags_size = h[15] & 1 ? 4 : 2,
			.cp_source_file = h[15] >> 2,
			.cm_method_size = h[15] & 2 ? 24 : -1,
		};
		if (!(vm = hotspot_vm_new(&l, image_read, &im, si)))
			abort();
	}
	uint64_t method = BASE + le16(h + 16), nmethod = BASE + le16(h + 24), blob = BASE + le16(h + 30);
	uint32_t cookie = le32(h + 18), compile_id = le32(h + 26);
	int bci = le16(h + 22);
	size_t before = im.reads;
	struct hotspot_names *names = hotspot_vm_names(vm);

	const char *a = hotspot_names_method(names, method, 0, 1);
	check_name(a, true);
	check_name(hotspot_names_method(names, method, cookie, 2), true);
	check_name(hotspot_names_source(names, method, 0, 2), false);
	/* a second look is served from the cache: the same name */
	if (a && hotspot_names_method(names, method, 0, 3) != a)
		abort();
	int line = hotspot_names_line(names, method, 0, bci);
	if (line == 0 || line < -1 || line != hotspot_names_line(names, method, 0, bci))
		abort();
	check_name(hotspot_names_nmethod(names, nmethod, compile_id, 4), true);
	check_name(hotspot_names_blob(names, blob), false);
	size_t before_extra = im.reads;
	if (tables) { /* inline chains, the flag table, thread names: over garbage too */
		const char *chain = NULL, *lines = NULL;
		char tname[1100];
		enum hotspot_inline rc = hotspot_names_inline(names, nmethod, compile_id, nmethod + le16(h + 22), 4,
							      true, &chain, &lines);
		if ((int)rc < HOTSPOT_INLINE_NONE || rc > HOTSPOT_INLINE_GONE || (rc == HOTSPOT_INLINE_GONE && chain) ||
		    (rc == HOTSPOT_INLINE_CHAIN && (!chain || !lines)))
			abort();
		check_name(chain, true);
		int on = hotspot_vm_flag_bool(vm, "DebugNonSafepoints");
		if (on < -1 || on > 1)
			abort();
		int n = hotspot_vm_thread_name(vm, (pid_t)le16(h + 30), tname, sizeof(tname));
		if (n < -1 || (n >= 0 && ((size_t)n >= sizeof(tname) || tname[n] != '\0')))
			abort();
	}
	before += im.reads - before_extra; /* the bound below is the names' */
	hotspot_vm_refresh(vm);
	hotspot_names_unloaded(names, 6, 7);
	check_name(hotspot_names_method(names, method, 0, 5), true); /* around the unloading */
	check_name(hotspot_names_method(names, method, 0, 8), true);
	/* garbage never makes the reader wander: a bounded number of reads
	 * (a symbol is read in at most 128 pieces) */
	if (im.reads - before > 64 + 8 * 3 * 128)
		abort();
out:
	hotspot_vm_free(vm);
	str_intern_free(si);
	return 0;
}
