/* hotspot_vm.h - one HotSpot JVM seen from outside: its layout from the
 * gHotSpotVMStructs tables in its memory, for the eBPF walker, and the names
 * of its methods (Method*, nmethods, code blobs) read from that memory. */
#ifndef JFLAME_HOTSPOT_VM_H
#define JFLAME_HOTSPOT_VM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <linux/types.h>

#include "profile.h"
#include "str_intern.h"

/* Reads len bytes at addr of the JVM: 0 when all were read, else -1. */
typedef int (*hotspot_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* Field offsets and sizes the names need (bytes; -1 when the JVM has none). */
struct hotspot_layout {
	int jdk;                 /* major version (17, 25, ...); 0 unknown */
	long method_const_method; /* Method::_constMethod */
	long cm_constants, cm_name_index, cm_code_size, cm_flags, cm_flags_size, cm_size;
	long cp_pool_holder, cp_size, cp_source_file;
	long klass_name;
	long symbol_length, symbol_body;
	long blob_name;
	long nm_method, nm_compile_id;
};

struct hotspot_vm;

/* The JVM of process pid (a libjvm.so mapping), its tables read through
 * process_vm_readv. NULL with one line in err when pid has no libjvm.so or
 * its tables cannot be read (yet: a JVM still starting). */
struct hotspot_vm *hotspot_vm_open(pid_t pid, struct str_intern *si, char *err, size_t errlen);
/* A vm over any memory with a given layout (tests, the fuzzer); no walker
 * layout, no class-unloading counter. */
struct hotspot_vm *hotspot_vm_new(const struct hotspot_layout *l, hotspot_read_fn read, void *ctx,
				  struct str_intern *si);
void hotspot_vm_free(struct hotspot_vm *vm);

/* The walker's layout: 1 filled, 0 not yet (the code cache or the
 * interpreter not set up: call again later), -1 never (unsupported). */
int hotspot_vm_walker_info(struct hotspot_vm *vm, struct hotspot_proc *out);

/* Every ~100 ms, and right before samples are read: when the JVM has unloaded
 * classes since the last call (hsperfdata's java.cls.unloadedClasses; without
 * hsperfdata, every second), the names cached so far are closed: they serve
 * only samples taken before the last call, since a class's memory may now be
 * another's. */
void hotspot_vm_refresh(struct hotspot_vm *vm);

/* The JVM unloaded classes in [last_seen_ns, now_ns) (CLOCK_MONOTONIC):
 * names cached so far serve samples taken before last_seen_ns; names read
 * from now on serve samples from now_ns; a sample between the two gets a
 * name only when the method had the same one before (hotspot_vm_refresh calls
 * it; tests may too). */
void hotspot_vm_classes_unloaded(struct hotspot_vm *vm, uint64_t last_seen_ns, uint64_t now_ns);

/* "Lpkg/Class;::method" (the agent's default naming), interned, of a Method*
 * a sample taken at t_ns (CLOCK_MONOTONIC) ran; NULL when unreadable, or when
 * cookie (ConstMethod* >> 3 as the walker read it; 0: not checked) is not
 * what the Method holds now. */
const char *hotspot_method_name(struct hotspot_vm *vm, uint64_t method, uint32_t cookie, uint64_t t_ns);
/* The source file of that method's class ("Foo.java"), interned, NULL when
 * not known. */
const char *hotspot_method_source(struct hotspot_vm *vm, uint64_t method, uint32_t cookie, uint64_t t_ns);
/* The source line of bytecode index bci of that method (its compressed line
 * number table), -1 when not known. */
int hotspot_method_line(struct hotspot_vm *vm, uint64_t method, uint32_t cookie, int bci);
/* The method an nmethod was compiled from (nmethod::_method), NULL unless the
 * nmethod's _compile_id is compile_id. */
const char *hotspot_nmethod_name(struct hotspot_vm *vm, uint64_t nmethod, uint32_t compile_id, uint64_t t_ns);
/* A code blob's CodeBlob::_name ("StubRoutines (1)", "nmethod"), interned. */
const char *hotspot_blob_name(struct hotspot_vm *vm, uint64_t blob);

/* The layout the names use (for tests). */
const struct hotspot_layout *hotspot_vm_layout(const struct hotspot_vm *vm);

#endif
