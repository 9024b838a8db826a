/* vm_tables.h - HotSpot's gHotSpotVMStructs and gHotSpotVMTypes tables entry by entry,
 * shared by jflame (reading another process's memory) and the agent (its own). */
#ifndef JFLAME_VM_TABLES_H
#define JFLAME_VM_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One entry of the JVM's tables: a field (gHotSpotVMStructs: type, field,
 * type_string, offset or, when is_static, address) or a type
 * (gHotSpotVMTypes: type, size). */
struct hotspot_entry {
	const char *type, *field, *type_string; /* field and type_string NULL for a type */
	bool is_static;
	uint64_t value; /* the offset, the static field's address, or the type's size */
};
typedef void (*hotspot_entry_fn)(void *ctx, const struct hotspot_entry *e);

/* How the caller reads the JVM's memory: len bytes at addr into buf, 0 or -1. */
typedef int (*vm_tables_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* The caller's memory: read, and how a name is read (a NUL-terminated string
 * at addr of at most len - 1 bytes into out: 0, else -1). cstr NULL: through
 * read, by vm_tables_cstr (another process's memory, where nothing tells how
 * long a string is); in-process memory is read up to the NUL instead. */
struct vm_tables_mem {
	vm_tables_read_fn read;
	int (*cstr)(void *ctx, uint64_t addr, char *out, size_t len);
	void *ctx;
};

/* The values of libjvm's exported variables that say where the tables are and
 * how an entry is laid out (gHotSpotVMStructs, gHotSpotVMStructEntryArrayStride,
 * gHotSpotVMStructEntry*Offset; gHotSpotVMTypes, gHotSpotVMTypeEntry*). */
struct vm_tables_layout {
	uint64_t structs, struct_stride, struct_type, struct_field, struct_type_string, struct_is_static, struct_offset,
		struct_address;
	uint64_t types, type_stride, type_type, type_size;
};

/* The process's own memory, where the agent finds the tables. */
extern const struct vm_tables_mem vm_tables_own_memory;

/* Calls fn for each entry of one table (types: gHotSpotVMTypes, else
 * gHotSpotVMStructs), its strings read into fn's entry. The end is the entry
 * without a type name; garbage ends it too (bounded). 0 at the end, -1 when
 * the table cannot be read or its layout is not one. */
int vm_tables_each(const struct vm_tables_layout *l, bool types, const struct vm_tables_mem *mem, hotspot_entry_fn fn,
		   void *ctx);

/* A NUL-terminated string at addr of at most len - 1 bytes into out, read in
 * pieces up to 32-byte boundaries (near a mapping's end too): 0 when a NUL was found. */
int vm_tables_cstr(vm_tables_read_fn read, void *rctx, uint64_t addr, char *out, size_t len);

/* Where HotSpot's table of -XX flags is (JVMFlag, Flag before JDK 9), as
 * gHotSpotVMStructs says: 0 / -1 unknown. */
struct vm_flag_table {
	uint64_t flags, nflags; /* addresses of JVMFlag::flags (JVMFlag*) and JVMFlag::numFlags (size_t) */
	long stride;		/* sizeof(JVMFlag) */
	long name, addr;	/* JVMFlag::_name (const char*), _addr (the value) */
};

/* The addresses of the values of flags names[0..n) into addrs (0: no such
 * flag), the table read once and its names in address order (a reader that
 * caches pages reads each once). 0, or -1 when the table cannot be read or
 * is not one (more than 8192 flags, an entry of more than 256 bytes). */
int vm_flags_find(const struct vm_flag_table *ft, const struct vm_tables_mem *mem, const char *const *names,
		  uint64_t *addrs, size_t n);

/* A field or type a reader wants from the tables (field NULL: a type's size). */
struct vm_tables_want {
	const char *type, *field;
	int id;
};

/* The id of the first of want[0..n) that names entry e's type and field (or,
 * for a type's entry, its type), -1 when none does. */
int vm_tables_match(const struct vm_tables_want *want, size_t n, const struct hotspot_entry *e);

#endif
