/* hotspot_vm.h - one HotSpot JVM seen from outside: the walker's layout from the
 * gHotSpotVMStructs tables in its memory, and its methods' names from that memory. */
#ifndef JFLAME_HOTSPOT_VM_H
#define JFLAME_HOTSPOT_VM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>

#include "hotspot_names.h" /* hotspot_read_fn, struct hotspot_layout */
#include "profile.h"
#include "str_intern.h"
#include "vm_tables.h" /* struct hotspot_entry, hotspot_entry_fn */

struct hotspot_vm;

/* The JVM of process pid (a libjvm.so mapping), its tables read through
 * process_vm_readv. NULL with one line in err when pid has no libjvm.so or
 * its tables cannot be read (yet: a JVM still starting). Its names are kept
 * in memory of its own, freed with it, within the caps of hotspot_names.h;
 * its memory is read within the budget below. */
struct hotspot_vm *hotspot_vm_open(pid_t pid, char *err, size_t errlen);

/* The budget of reads of a live JVM's memory once its tables are read: a
 * sample's frames (hotspot_vm_sample starts a sample), and a second. */
#define HOTSPOT_READS_PER_SAMPLE 8192u
#define HOTSPOT_READS_PER_SECOND 100000u
/* What a vm ran into (said once each, as a warning). */
#define HOTSPOT_LIMIT_SAMPLE  1u
#define HOTSPOT_LIMIT_SECOND  2u
#define HOTSPOT_LIMIT_NAMES   4u
#define HOTSPOT_LIMIT_RENAMES 8u
#define HOTSPOT_LIMIT_ZNAMES  16u /* generational ZGC moved a Thread object: its name unread (a note) */
/* The reads from now on are sample seq's (a number that changes from one
 * sample to the next). */
void hotspot_vm_sample(struct hotspot_vm *vm, uint64_t seq);
/* The budget on (the default for hotspot_vm_open) or off (a tool that reads
 * a JVM whole, as the tests' probe). */
void hotspot_vm_budget(struct hotspot_vm *vm, bool on);
/* The HOTSPOT_LIMIT_* it ran into so far. */
unsigned hotspot_vm_limits(const struct hotspot_vm *vm);

/* libjvm's exported variables the tables are found through, in this order
 * (hotspot_vm_from_tables takes their addresses). */
enum hotspot_symbol {
	HOTSPOT_SYM_STRUCTS,	    /* gHotSpotVMStructs: VMStructEntry* */
	HOTSPOT_SYM_STRUCT_STRIDE,  /* gHotSpotVMStructEntryArrayStride, and the offsets in an entry: */
	HOTSPOT_SYM_STRUCT_TYPE,    /* gHotSpotVMStructEntryTypeNameOffset */
	HOTSPOT_SYM_STRUCT_FIELD,   /* gHotSpotVMStructEntryFieldNameOffset */
	HOTSPOT_SYM_STRUCT_TSTRING, /* gHotSpotVMStructEntryTypeStringOffset */
	HOTSPOT_SYM_STRUCT_STATIC,  /* gHotSpotVMStructEntryIsStaticOffset */
	HOTSPOT_SYM_STRUCT_OFFSET,  /* gHotSpotVMStructEntryOffsetOffset */
	HOTSPOT_SYM_STRUCT_ADDRESS, /* gHotSpotVMStructEntryAddressOffset */
	HOTSPOT_SYM_TYPES,	    /* gHotSpotVMTypes: VMTypeEntry* */
	HOTSPOT_SYM_TYPE_STRIDE,    /* gHotSpotVMTypeEntryArrayStride */
	HOTSPOT_SYM_TYPE_TYPE,	    /* gHotSpotVMTypeEntryTypeNameOffset */
	HOTSPOT_SYM_TYPE_SIZE,	    /* gHotSpotVMTypeEntrySizeOffset */
	HOTSPOT_NSYMS
};

/* A vm over any memory whose tables are found through the variables at
 * sym[HOTSPOT_NSYMS] (tests, the fuzzer): as hotspot_vm_open without a
 * process (no class-unloading counter). */
struct hotspot_vm *hotspot_vm_from_tables(const uint64_t sym[HOTSPOT_NSYMS], hotspot_read_fn read, void *ctx,
					  struct str_intern *si, char *err, size_t errlen);
/* A vm over any memory with a given layout (tests, the fuzzer): names only,
 * no walker layout, no class-unloading counter. */
struct hotspot_vm *hotspot_vm_new(const struct hotspot_layout *l, hotspot_read_fn read, void *ctx,
				  struct str_intern *si);
void hotspot_vm_free(struct hotspot_vm *vm);

/* The walker's layout: 1 filled, 0 not yet (the code cache or the
 * interpreter not set up: call again later), -1 never (unsupported: a
 * needed field missing or past what struct hotspot_proc can hold). */
int hotspot_vm_walker_info(struct hotspot_vm *vm, struct hotspot_proc *out);

/* Bytes of CodeBlob::_frame_complete_offset: 4 (int) up to JDK 22, 2
 * (int16_t, sign-extended: -1 is "never safe") from JDK 23; 0 unknown. */
int hotspot_vm_frame_complete_size(const struct hotspot_vm *vm);

/* Every ~100 ms, and right before samples are read: when the JVM has unloaded
 * classes since the last call (hsperfdata's java.cls.unloadedClasses; without
 * hsperfdata, every second), the names cached so far are closed: they serve
 * only samples taken before the last call, since a class's memory may now be
 * another's. True when it closed them. */
bool hotspot_vm_refresh(struct hotspot_vm *vm);

/* Its methods', nmethods' and code blobs' names, lines and inline chains
 * (hotspot_names.h: hotspot_names_method, _source, _line, _nmethod, _inline,
 * _blob, _unloaded), read within the budget above; the caps reached are said
 * as this pid's. Freed with the vm. */
struct hotspot_names *hotspot_vm_names(const struct hotspot_vm *vm);
/* The name of the generated stub that holds pc, as JVMTI gives it to agents
 * ("call_stub", "jbyte_disjoint_arraycopy"): from the JVM's StubCodeDesc
 * list when libjvm has a symbol table, else "call_stub" for the call stub's
 * return address; NULL (a static string or interned). */
const char *hotspot_vm_stub_name(struct hotspot_vm *vm, uint64_t pc);

/* The walker's unwinding rows of the JVM's stubs (hotspot_stubs_rows). */
int hotspot_vm_stub_rows(struct hotspot_vm *vm, struct stub_row **rows, size_t *n, char *err, size_t errlen);

/* The JVM's stub list (StubCodeDesc), NULL when libjvm's symbols do not name it. */
struct hotspot_stubs *hotspot_vm_stubs(struct hotspot_vm *vm);
/* The java.lang.Thread name of thread nstid (as the JVM's pid namespace
 * numbers it), UTF-8 into out: its length, or -1 (not a Java thread, not
 * readable; see hotspot_threads.h). */
int hotspot_vm_thread_name(struct hotspot_vm *vm, pid_t nstid, char *out, size_t len);
/* A boolean -XX flag's value now (JVMFlag table): 1 on, 0 off, -1 unknown. */
int hotspot_vm_flag_bool(struct hotspot_vm *vm, const char *name);

/* Calls fn for every entry of both tables, read anew (for tests and tools):
 * 0, or -1 when they cannot be read (a vm made by hotspot_vm_new has none). */
int hotspot_vm_entries(struct hotspot_vm *vm, hotspot_entry_fn fn, void *ctx);

#endif
