/* vm_structs.c - finds fields and flags through HotSpot's gHotSpotVMStructs and
 * gHotSpotVMTypes tables in the agent's own process (parsed by vm_tables.c, as jflame's are). */
#define _GNU_SOURCE
#include "vm_structs.h"
#include "glibc_compat.h"
#include "vm_tables.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static int ready;
static struct vm_flag_table flag_table = { 0, 0, -1, -1, -1 };
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

enum { W_FLAG_NAME, W_FLAG_ADDR, W_FLAGS, W_NUM_FLAGS, W_OSTHREAD, W_THREAD_ID, W_FLAG_SIZE };

/* JDK 9+ spells the flag type JVMFlag, JDK 8 Flag. */
static const struct vm_tables_want wanted[] = {
	{ "JVMFlag", "_name", W_FLAG_NAME },
	{ "Flag", "_name", W_FLAG_NAME },
	{ "JVMFlag", "_addr", W_FLAG_ADDR },
	{ "Flag", "_addr", W_FLAG_ADDR },
	{ "JVMFlag", "flags", W_FLAGS },
	{ "Flag", "flags", W_FLAGS },
	{ "JVMFlag", "numFlags", W_NUM_FLAGS },
	{ "Flag", "numFlags", W_NUM_FLAGS },
	{ "Thread", "_osthread", W_OSTHREAD },
	{ "JavaThread", "_osthread", W_OSTHREAD },
	{ "OSThread", "_thread_id", W_THREAD_ID },
	{ "JVMFlag", NULL, W_FLAG_SIZE },
	{ "Flag", NULL, W_FLAG_SIZE },
};

static void tables_take(void *ctx, const struct hotspot_entry *e)
{
	(void)ctx;
	switch (vm_tables_match(wanted, sizeof(wanted) / sizeof(wanted[0]), e)) {
	case W_FLAG_NAME:
		flag_table.name = (long)e->value;
		break;
	case W_FLAG_ADDR:
		flag_table.addr = (long)e->value;
		break;
	case W_FLAGS:
		if (e->is_static)
			flag_table.flags = e->value;
		break;
	case W_NUM_FLAGS:
		if (e->is_static)
			flag_table.nflags = e->value;
		break;
	case W_OSTHREAD:
		off_osthread = (long)e->value;
		break;
	case W_THREAD_ID:
		off_thread_id = (long)e->value;
		break;
	case W_FLAG_SIZE:
		flag_table.stride = (long)e->value;
		break;
	}
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
	struct vm_tables_layout l;
	if (ready)
		return ready > 0 ? 0 : -1;
	ready = -1;
	lib = open_libjvm();
	sp = sym(lib, "gHotSpotVMStructs");
	tp = sym(lib, "gHotSpotVMTypes");
	if (!sp || !tp || !*sp || !*tp)
		return -1;
	l.structs = (uint64_t)(uintptr_t)*sp;
	l.types = (uint64_t)(uintptr_t)*tp;
	if (load_u64(lib, "gHotSpotVMStructEntryArrayStride", &l.struct_stride) ||
	    load_u64(lib, "gHotSpotVMStructEntryTypeNameOffset", &l.struct_type) ||
	    load_u64(lib, "gHotSpotVMStructEntryFieldNameOffset", &l.struct_field) ||
	    load_u64(lib, "gHotSpotVMStructEntryTypeStringOffset", &l.struct_type_string) ||
	    load_u64(lib, "gHotSpotVMStructEntryIsStaticOffset", &l.struct_is_static) ||
	    load_u64(lib, "gHotSpotVMStructEntryOffsetOffset", &l.struct_offset) ||
	    load_u64(lib, "gHotSpotVMStructEntryAddressOffset", &l.struct_address) ||
	    load_u64(lib, "gHotSpotVMTypeEntryArrayStride", &l.type_stride) ||
	    load_u64(lib, "gHotSpotVMTypeEntryTypeNameOffset", &l.type_type) ||
	    load_u64(lib, "gHotSpotVMTypeEntrySizeOffset", &l.type_size))
		return -1;
	if (vm_tables_each(&l, false, &vm_tables_own_memory, tables_take, NULL) != 0 ||
	    vm_tables_each(&l, true, &vm_tables_own_memory, tables_take, NULL) != 0)
		return -1;
	ready = 1;
	return 0;
}

/* The address of a flag's value in HotSpot's flag table (walked by
 * vm_tables.c, as jflame walks it from outside), NULL when not there. */
static unsigned char *flag_value(const char *name)
{
	uint64_t addr;
	if (ready <= 0 || vm_flags_find(&flag_table, &vm_tables_own_memory, &name, &addr, 1) != 0)
		return NULL;
	return (unsigned char *)(uintptr_t)addr;
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
	if (tid <= 0 || compat_stat(path, &st) != 0)
		return -1;
	return tid;
}
