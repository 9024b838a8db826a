/* hotspot_names.h - names of a HotSpot JVM's methods (Method*, nmethods, code
 * blobs) and their line numbers, read from its memory through any reader. */
#ifndef JFLAME_HOTSPOT_NAMES_H
#define JFLAME_HOTSPOT_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hotspot_scopes.h"
#include "remote_mem.h"
#include "str_intern.h"

/* Reads len bytes at addr of the JVM: 0 when all were read, else -1. */
typedef remote_read_fn hotspot_read_fn;

/* Field offsets and sizes the names need (bytes; -1 when the JVM has none). */
struct hotspot_layout {
	int jdk;		  /* major version (17, 25, ...); 0 unknown */
	long method_const_method; /* Method::_constMethod */
	long cm_constants, cm_name_index, cm_code_size;
	long cm_flags, cm_flags_size; /* ConstMethod::_flags (u2), JDK 21+ _flags._flags (u4) */
	long cm_size;		      /* sizeof(ConstMethod): the bytecodes follow it */
	long cp_pool_holder, cp_size, cp_source_file;
	long klass_name;
	long symbol_length, symbol_body;
	long blob_name;
	long nm_method, nm_compile_id;
	long cm_method_size;		    /* ConstMethod::_constMethod_size (int, words); 0 or -1 unknown */
	struct hotspot_scope_layout scopes; /* compiled methods' debug info (inlining) */
};

struct hotspot_names;

/* Caps on the names read from JVMs' memory: one JVM's, and every JVM's in all
 * (its interned names and their table). Past them a name not seen before is
 * not kept: its frame is left unnamed. */
#define HOTSPOT_NAMES_MAX_BYTES	    (32u << 20)
#define HOTSPOT_NAMES_ALL_MAX_BYTES (256u << 20)

/* Names read through read(ctx, ...) with layout l, interned in si. NULL when
 * out of memory. */
struct hotspot_names *hotspot_names_new(const struct hotspot_layout *l, hotspot_read_fn read, void *ctx,
					struct str_intern *si);
void hotspot_names_free(struct hotspot_names *n);
const struct hotspot_layout *hotspot_names_layout(const struct hotspot_names *n);
/* True when the JVM's debug info has a layout hotspot_scopes.h decodes. */
bool hotspot_names_inline_supported(const struct hotspot_names *n);

/* The JVM unloaded classes in [last_seen_ns, now_ns) (CLOCK_MONOTONIC):
 * names cached so far serve samples taken before last_seen_ns; names read
 * from now on serve samples from now_ns; a sample between the two gets a
 * name only when the method had the same one before. */
void hotspot_names_unloaded(struct hotspot_names *n, uint64_t last_seen_ns, uint64_t now_ns);

/* "Lpkg/Class;::method" (the agent's default naming), interned, of a Method*
 * a sample taken at t_ns ran; NULL when unreadable, or when cookie
 * (ConstMethod* >> 3 as the walker read it; 0: not checked) is not what the
 * Method holds now. */
const char *hotspot_names_method(struct hotspot_names *n, uint64_t method, uint32_t cookie, uint64_t t_ns);
/* The source file of that method's class ("Foo.java"), NULL when not known. */
const char *hotspot_names_source(struct hotspot_names *n, uint64_t method, uint32_t cookie, uint64_t t_ns);
/* The source line of bytecode index bci of that method, as the JVM's
 * Method::line_number_from_bci finds it; -1 when not known. */
int hotspot_names_line(struct hotspot_names *n, uint64_t method, uint32_t cookie, int bci);
/* The method an nmethod was compiled from (nmethod::_method), NULL unless the
 * nmethod's _compile_id is compile_id. */
const char *hotspot_names_nmethod(struct hotspot_names *n, uint64_t nmethod, uint32_t compile_id, uint64_t t_ns);
/* What hotspot_names_inline found. */
enum hotspot_inline {
	HOTSPOT_INLINE_NONE = 0, /* no debug info at pc: the compiled method alone */
	HOTSPOT_INLINE_CHAIN,	 /* the inline chain from the debug info */
	HOTSPOT_INLINE_BAD,	 /* debug info that did not decode: the compiled method alone */
	HOTSPOT_INLINE_GONE,	 /* the nmethod is not compile_id's any more: no name */
};
/* The inline chain at pc of an nmethod (compile_id) as its debug info gives
 * it: *name "Lpkg/A;::outer->Lpkg/B;::inner" (outermost first, each as
 * hotspot_names_method), interned; with lines, *lines the members' source
 * lines, interned, "File.java:12\nB.java:40" (one per member, "" when not
 * known), else NULL. Without a chain *name is the compiled method's
 * (hotspot_names_nmethod); NULL when nothing names it. */
enum hotspot_inline hotspot_names_inline(struct hotspot_names *n, uint64_t nmethod, uint32_t compile_id, uint64_t pc,
					 uint64_t t_ns, bool lines, const char **name, const char **line_text);
/* A code blob's CodeBlob::_name ("StubRoutines (1)", "nmethod"), interned;
 * kept per blob and read again at most once a second. */
const char *hotspot_names_blob(struct hotspot_names *n, uint64_t blob);
/* The bytes its names added to its str_intern; whether the caps refused one. */
size_t hotspot_names_charged(const struct hotspot_names *n);
/* Another cap than HOTSPOT_NAMES_MAX_BYTES for this JVM's names (tests). */
void hotspot_names_set_cap(struct hotspot_names *n, size_t bytes);
bool hotspot_names_capped(const struct hotspot_names *n);
/* Whether the JVM changed so many code blobs' names that they are no longer
 * read again (they keep the names they had). */
bool hotspot_names_renamed(const struct hotspot_names *n);
/* From now on the caps reached and the renames are said once each, as a
 * warning naming pid (hotspot_vm's names; others say nothing). */
void hotspot_names_say(struct hotspot_names *n, pid_t pid);

#endif
