/* vm_structs.c - finds fields and flags through HotSpot's gHotSpotVMStructs and
 * gHotSpotVMTypes tables, exported by libjvm for the serviceability agent. */
#define _GNU_SOURCE
#include "vm_structs.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

struct table {
	const char *base;
	uint64_t stride;
	uint64_t type_off, field_off, static_off, offset_off, address_off, size_off;
};

static struct table structs, types;
static int ready;
static long off_flag_name = -1, off_flag_addr = -1, flag_size = -1;
static void **flag_array_addr;
static size_t *flag_count_addr;
static long off_osthread = -1, off_thread_id = -1;

static void *sym(void *lib, const char *name)
{
	void *p = dlsym(lib, name);
	return p ? p : dlsym(RTLD_DEFAULT, name);
}

static int load_u64(void *lib, const char *name, uint64_t *out)
{
	uint64_t *p = sym(lib, name);
	if (!p)
		return -1;
	*out = *p;
	return 0;
}

static const char *str_at(const char *entry, uint64_t off)
{
	return *(const char *const *)(entry + off);
}

static int same(const char *a, const char *b)
{
	return a && strcmp(a, b) == 0;
}

/* libjvm: the launcher loads it RTLD_GLOBAL; otherwise find it in /proc/self/maps. */
static void *open_libjvm(void)
{
	void *self = dlopen(NULL, RTLD_NOW | RTLD_NOLOAD);
	char line[4096];
	void *lib = NULL;
	FILE *f;

	if (self && dlsym(self, "gHotSpotVMStructs"))
		return self;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return self;
	while (!lib && fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/');
		size_t n = path ? strlen(path) : 0;
		if (n > 0 && path[n - 1] == '\n')
			path[--n] = '\0';
		if (path && n >= 10 && strcmp(path + n - 10, "/libjvm.so") == 0)
			lib = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
	}
	fclose(f);
	return lib ? lib : self;
}

int vm_structs_init(void)
{
	void *lib;
	const char *const *sp, *const *tp;
	if (ready)
		return ready > 0 ? 0 : -1;
	ready = -1;
	lib = open_libjvm();
	sp = sym(lib, "gHotSpotVMStructs");
	tp = sym(lib, "gHotSpotVMTypes");
	if (!sp || !tp || !*sp || !*tp)
		return -1;
	structs.base = *sp;
	types.base = *tp;
	if (load_u64(lib, "gHotSpotVMStructEntryArrayStride", &structs.stride) ||
	    load_u64(lib, "gHotSpotVMStructEntryTypeNameOffset", &structs.type_off) ||
	    load_u64(lib, "gHotSpotVMStructEntryFieldNameOffset", &structs.field_off) ||
	    load_u64(lib, "gHotSpotVMStructEntryIsStaticOffset", &structs.static_off) ||
	    load_u64(lib, "gHotSpotVMStructEntryOffsetOffset", &structs.offset_off) ||
	    load_u64(lib, "gHotSpotVMStructEntryAddressOffset", &structs.address_off) ||
	    load_u64(lib, "gHotSpotVMTypeEntryArrayStride", &types.stride) ||
	    load_u64(lib, "gHotSpotVMTypeEntryTypeNameOffset", &types.type_off) ||
	    load_u64(lib, "gHotSpotVMTypeEntrySizeOffset", &types.size_off))
		return -1;

	for (const char *e = structs.base;; e += structs.stride) {
		const char *type = str_at(e, structs.type_off), *field = str_at(e, structs.field_off);
		if (!type)
			break;
		if (!field)
			continue;
		int is_static = *(const int32_t *)(e + structs.static_off);
		uint64_t offset = *(const uint64_t *)(e + structs.offset_off);
		void *address = *(void *const *)(e + structs.address_off);
		if (same(type, "JVMFlag") || same(type, "Flag")) {
			if (same(field, "_name"))
				off_flag_name = (long)offset;
			else if (same(field, "_addr"))
				off_flag_addr = (long)offset;
			else if (same(field, "flags") && is_static)
				flag_array_addr = address;
			else if (same(field, "numFlags") && is_static)
				flag_count_addr = address;
		} else if ((same(type, "Thread") || same(type, "JavaThread")) && same(field, "_osthread")) {
			off_osthread = (long)offset;
		} else if (same(type, "OSThread") && same(field, "_thread_id")) {
			off_thread_id = (long)offset;
		}
	}
	for (const char *e = types.base;; e += types.stride) {
		const char *type = str_at(e, types.type_off);
		if (!type)
			break;
		if (same(type, "JVMFlag") || same(type, "Flag"))
			flag_size = (long)*(const uint64_t *)(e + types.size_off);
	}
	ready = 1;
	return 0;
}

/* The address of a flag's value in HotSpot's flag table, NULL when not there. */
static unsigned char *flag_value(const char *name)
{
	if (ready <= 0 || off_flag_name < 0 || off_flag_addr < 0 || flag_size <= 0 || !flag_array_addr ||
	    !flag_count_addr || !*flag_array_addr)
		return NULL;
	const char *flags = *flag_array_addr;
	size_t count = *flag_count_addr;
	for (size_t i = 0; i < count; i++) {
		const char *f = flags + i * (size_t)flag_size;
		const char *fname = *(const char *const *)(f + off_flag_name);
		unsigned char *addr = *(unsigned char *const *)(f + off_flag_addr);
		if (fname && addr && strcmp(fname, name) == 0)
			return addr;
	}
	return NULL;
}

int vm_structs_bool_flag(const char *name)
{
	const unsigned char *v = flag_value(name);
	return v ? (*v ? 1 : 0) : -1;
}

int vm_structs_set_bool_flag(const char *name)
{
	unsigned char *v = flag_value(name);
	if (!v)
		return -1;
	if (!*v)
		*(volatile unsigned char *)v = 1;
	return 0;
}

pid_t vm_structs_thread_tid(uintptr_t java_thread)
{
	char path[64];
	struct stat st;
	if (ready <= 0 || !java_thread || off_osthread < 0 || off_thread_id < 0)
		return -1;
	const char *osthread = *(const char *const *)(java_thread + (uintptr_t)off_osthread);
	if (!osthread)
		return -1;
	pid_t tid = *(const pid_t *)(osthread + off_thread_id);
	/* Only a tid that is one of our own tasks is believed. */
	snprintf(path, sizeof(path), "/proc/self/task/%d", (int)tid);
	if (tid <= 0 || stat(path, &st) != 0)
		return -1;
	return tid;
}
