/* hotspot_scopes.h - the inline chain of a compiled Java method at a pc: the
 * nmethod's PcDesc table and scopes data (its debug info) decoded from the JVM's memory. */
#ifndef JFLAME_HOTSPOT_SCOPES_H
#define JFLAME_HOTSPOT_SCOPES_H

#include <stddef.h>
#include <stdint.h>

#include "remote_mem.h"

/* Inlining depth decoded at most (C2's MaxInlineLevel is 15; deeper chains
 * are debug info this decoder does not trust). */
#define HOTSPOT_SCOPES_MAX 64

/* Where an nmethod keeps its debug info (byte offsets from gHotSpotVMStructs;
 * -1 when the JVM has no such field). Two layouts are known:
 *   up to JDK 22 - the PcDescs from nmethod + _scopes_pcs_offset to
 *     + _dependencies_offset, the scopes data from CompiledMethod::
 *     _scopes_data_begin to nmethod + _scopes_pcs_offset, the Method*s of the
 *     scopes (1-based) from nmethod + _metadata_offset to the scopes data;
 *   JDK 24 and later - PcDescs and scopes data in nmethod::_immutable_data
 *     (+ _scopes_pcs_offset, + _scopes_data_offset, _immutable_data_size
 *     bytes in all), the Method*s after the relocations in CodeBlob::
 *     _mutable_data (+ _relocation_size, _mutable_data_size bytes in all). */
struct hotspot_scope_layout {
	int stream_x;			/* the scopes' integers: 1 UNSIGNED5 (JDK 20+), 0 before */
	long code_begin;		/* CodeBlob::_code_begin (pointer) or, with code_offset, */
	int code_offset;		/* ... CodeBlob::_code_offset (int from the blob, JDK 23+) */
	long compile_id, method;	/* nmethod::_compile_id (int), _method (Method*) */
	long scopes_pcs, scopes_data;	/* nmethod::_scopes_pcs_offset, _scopes_data_offset (int) */
	long dependencies, metadata;	/* nmethod::_dependencies_offset, _metadata_offset (int) */
	long scopes_data_begin;		/* CompiledMethod::_scopes_data_begin (pointer) */
	long immutable, immutable_size; /* nmethod::_immutable_data (pointer), _immutable_data_size (int) */
	long mutable_data, relocation_size,
		mutable_size;			   /* CodeBlob::_mutable_data, _relocation_size, _mutable_data_size */
	long pcdesc_size, pc_offset, scope_offset; /* sizeof(PcDesc), PcDesc::_pc_offset, _scope_decode_offset */
};

/* One scope: a method and the bytecode index in it (-1: at its entry). */
struct hotspot_scope {
	uint64_t method; /* Method* */
	int32_t bci;
};

enum hotspot_scopes_rc {
	HOTSPOT_SCOPES_NONE = 0,	 /* no debug info covers pc: the nmethod's own method alone */
	HOTSPOT_SCOPES_BAD = -1,	 /* debug info that does not decode (bad memory, a freed nmethod) */
	HOTSPOT_SCOPES_GONE = -2,	 /* the nmethod's compile id is no longer compile_id */
	HOTSPOT_SCOPES_UNSUPPORTED = -3, /* the layout lacks what the decoder needs */
};

/* True when l has one of the two layouts above. */
int hotspot_scopes_supported(const struct hotspot_scope_layout *l);

/* The scopes of the code at pc (a return address for a caller's frame: the
 * PcDesc at or after it, as HotSpot's approximate lookup and JVMTI's inline
 * records place it) in nmethod nm, outermost (nm's own method) first, into
 * out[0..max): their count (>= 1), or an enum hotspot_scopes_rc. */
int hotspot_scopes_at(const struct hotspot_scope_layout *l, const struct remote_mem *m, uint64_t nm,
		      uint32_t compile_id, uint64_t pc, struct hotspot_scope *out, int max);

/* One integer of a CompressedReadStream at p[*pos] (p has n bytes): HotSpot's
 * 1-to-5-byte encoding (UNSIGNED5 with x excluded low bytes: 1 from JDK 20, 0
 * before). 0 and *pos advanced; -1 when the bytes run out or are excluded. */
int hotspot_stream_int(const uint8_t *p, size_t n, size_t *pos, int x, uint32_t *out);

#endif
