/* fuzz_hotspot_names.c - libFuzzer target for the Method* -> name reader over
 * garbage memory: a layout and a memory image from the input, every naming
 * function called; names must stay printable, bounded and well formed. */
/* module: native/hotspot_vm.c native/str_intern.c native/hsperf.c native/proc_info.c native/proc_maps.c */
#include "hotspot_vm.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BASE 0x10000ULL /* where the image is "mapped" */
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
		if ((unsigned char)name[i] < 0x20)
			abort();
	if (method && (name[0] != 'L' || !strstr(name, ";::")))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HEADER)
		return 0;
	const uint8_t *h = data;
	struct image im = { data + HEADER, size - HEADER, 0 };
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
		.cp_source_file = h[15] >> 1,
	};
	struct str_intern *si = str_intern_new();
	struct hotspot_vm *vm = si ? hotspot_vm_new(&l, image_read, &im, si) : NULL;
	if (!vm)
		abort();
	uint64_t method = BASE + le16(h + 16), nmethod = BASE + le16(h + 24), blob = BASE + le16(h + 30);
	uint32_t cookie = le32(h + 18), compile_id = le32(h + 26);
	int bci = le16(h + 22);

	const char *a = hotspot_method_name(vm, method, 0, 1);
	check_name(a, true);
	check_name(hotspot_method_name(vm, method, cookie, 2), true);
	check_name(hotspot_method_source(vm, method, 0, 2), false);
	/* a second look is served from the cache: the same name */
	if (a && hotspot_method_name(vm, method, 0, 3) != a)
		abort();
	int line = hotspot_method_line(vm, method, 0, bci);
	if (line == 0 || line < -1)
		abort();
	check_name(hotspot_nmethod_name(vm, nmethod, compile_id, 4), true);
	check_name(hotspot_blob_name(vm, blob), false);
	hotspot_vm_refresh(vm);
	check_name(hotspot_method_name(vm, method, 0, 5), true);
	/* garbage never makes the reader wander: a bounded number of reads */
	if (im.reads > 64 + 2 * 1024)
		abort();
	hotspot_vm_free(vm);
	str_intern_free(si);
	return 0;
}
