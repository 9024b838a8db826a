/* vm_tables.c - HotSpot's gHotSpotVMStructs and gHotSpotVMTypes tables read entry by entry,
 * over memory the caller reads: jflame's from another process, the agent's its own. */
#include "vm_tables.h"

#include <stdlib.h>
#include <string.h>

#define MAX_STRIDE  256	      /* a table entry is well below this */
#define MAX_ENTRIES (1 << 15) /* entries of a table at most (JDK 17 has 1500) */
#define MAX_NAME    256	      /* type, field and type names */
#define MAX_FLAGS   8192      /* -XX flags (JDK 17 has about 1,300) */

int vm_tables_cstr(vm_tables_read_fn read, void *rctx, uint64_t addr, char *out, size_t len)
{
	for (size_t got = 0; got + 1 < len;) {
		size_t chunk = 32 - ((addr + got) & 31); /* stops at 32-byte boundaries: near a mapping's end too */
		chunk = chunk < len - 1 - got ? chunk : len - 1 - got;
		if (read(rctx, addr + got, out + got, chunk) != 0)
			return -1;
		if (memchr(out + got, '\0', chunk))
			return 0;
		got += chunk;
	}
	return -1;
}

/* A name, as the caller's memory reads one. */
static int name_read(const struct vm_tables_mem *mem, uint64_t addr, char *out, size_t len)
{
	return mem->cstr ? mem->cstr(mem->ctx, addr, out, len) : vm_tables_cstr(mem->read, mem->ctx, addr, out, len);
}

int vm_tables_each(const struct vm_tables_layout *l, bool types, const struct vm_tables_mem *mem, hotspot_entry_fn fn,
		   void *ctx)
{
	uint64_t base = types ? l->types : l->structs;
	uint64_t stride = types ? l->type_stride : l->struct_stride;
	uint64_t type_off = types ? l->type_type : l->struct_type;
	uint64_t field_off = types ? 0 : l->struct_field;
	uint64_t tstring_off = types ? 0 : l->struct_type_string;
	uint64_t static_off = types ? 0 : l->struct_is_static;
	uint64_t offset_off = types ? 0 : l->struct_offset;
	uint64_t address_off = types ? 0 : l->struct_address;
	uint64_t size_off = types ? l->type_size : 0;
	unsigned char e[MAX_STRIDE];
	char type[MAX_NAME], field[MAX_NAME], tstring[MAX_NAME];
	uint64_t type_ptr = 0;
	if (!base || stride < 8 || stride > MAX_STRIDE || type_off > stride - 8 || field_off > stride - 8 ||
	    tstring_off > stride - 8 || static_off > stride - 4 || offset_off > stride - 8 ||
	    address_off > stride - 8 || size_off > stride - 8)
		return -1;
	for (uint64_t i = 0; i < MAX_ENTRIES; i++) {
		uint64_t tp, fp, sp, v;
		int32_t is_static;
		if (mem->read(mem->ctx, base + i * stride, e, stride) != 0)
			return -1;
		memcpy(&tp, e + type_off, 8);
		if (!tp)
			return 0;
		if (tp != type_ptr) { /* entries of one type share their name */
			type_ptr = 0;
			if (name_read(mem, tp, type, sizeof(type)) != 0)
				continue;
			type_ptr = tp;
		}
		struct hotspot_entry ent = { .type = type };
		if (types) {
			memcpy(&ent.value, e + size_off, 8);
			fn(ctx, &ent);
			continue;
		}
		memcpy(&fp, e + field_off, 8);
		memcpy(&sp, e + tstring_off, 8);
		memcpy(&is_static, e + static_off, 4);
		if (!fp || name_read(mem, fp, field, sizeof(field)) != 0)
			continue;
		ent.field = field;
		ent.type_string = sp && name_read(mem, sp, tstring, sizeof(tstring)) == 0 ? tstring : "";
		ent.is_static = is_static != 0;
		memcpy(&v, e + (ent.is_static ? address_off : offset_off), 8);
		ent.value = v;
		fn(ctx, &ent);
	}
	return -1;
}

/* This process's own memory (the agent's): the tables are in it. */
static int own_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (!addr)
		return -1;
	memcpy(buf, (const void *)(uintptr_t)addr, len);
	return 0;
}

/* ... and its names, up to their NUL. */
static int own_cstr(void *ctx, uint64_t addr, char *out, size_t len)
{
	const char *s = (const char *)(uintptr_t)addr;
	size_t n;
	(void)ctx;
	if (!s || len == 0 || (n = strnlen(s, len - 1)) >= len - 1)
		return -1;
	memcpy(out, s, n + 1);
	return 0;
}

const struct vm_tables_mem vm_tables_own_memory = { own_read, own_cstr, NULL };

int vm_tables_match(const struct vm_tables_want *want, size_t n, const struct hotspot_entry *e)
{
	for (size_t k = 0; k < n; k++) {
		if (strcmp(e->type, want[k].type) != 0)
			continue;
		if (want[k].field ? e->field && strcmp(e->field, want[k].field) == 0 : !e->field)
			return want[k].id;
	}
	return -1;
}

struct flag_entry {
	uint64_t name, addr; /* JVMFlag::_name, _addr */
};

static int flag_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct flag_entry *)a)->name, y = ((const struct flag_entry *)b)->name;
	return (x > y) - (x < y);
}

int vm_flags_find(const struct vm_flag_table *ft, const struct vm_tables_mem *mem, const char *const *names,
		  uint64_t *addrs, size_t n)
{
	uint64_t table = 0, count = 0;
	long stride = ft->stride;
	unsigned char *e = NULL;
	struct flag_entry *flags = NULL;
	char name[MAX_NAME];
	int rc = -1;
	for (size_t k = 0; k < n; k++)
		addrs[k] = 0;
	if (!ft->flags || !ft->nflags || mem->read(mem->ctx, ft->flags, &table, 8) != 0 || !table ||
	    mem->read(mem->ctx, ft->nflags, &count, 8) != 0 || count == 0 || count > MAX_FLAGS || stride < 16 ||
	    stride > MAX_STRIDE || ft->name < 0 || ft->name > stride - 8 || ft->addr < 0 || ft->addr > stride - 8)
		return -1;
	if (!(e = malloc((size_t)count * (size_t)stride)) || !(flags = malloc((size_t)count * sizeof(*flags))) ||
	    mem->read(mem->ctx, table, e, (size_t)count * (size_t)stride) != 0)
		goto out;
	for (uint64_t i = 0; i < count; i++) {
		memcpy(&flags[i].name, e + i * (uint64_t)stride + (uint64_t)ft->name, 8);
		memcpy(&flags[i].addr, e + i * (uint64_t)stride + (uint64_t)ft->addr, 8);
	}
	qsort(flags, (size_t)count, sizeof(*flags), flag_cmp);
	for (uint64_t i = 0; i < count; i++) {
		if (!flags[i].name || !flags[i].addr || name_read(mem, flags[i].name, name, sizeof(name)) != 0)
			continue;
		for (size_t k = 0; k < n; k++)
			if (!addrs[k] && strcmp(name, names[k]) == 0)
				addrs[k] = flags[i].addr;
	}
	rc = 0;
out:
	free(flags);
	free(e);
	return rc;
}
