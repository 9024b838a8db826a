/* hotspot_flags.h - boolean -XX flags of a HotSpot JVM read from its memory: the
 * JVMFlag table gHotSpotVMStructs locates, read once, names compared page by page. */
#ifndef JFLAME_HOTSPOT_FLAGS_H
#define JFLAME_HOTSPOT_FLAGS_H

#include <stddef.h>
#include <stdint.h>

#include "remote_mem.h"

/* Where the table is (from gHotSpotVMStructs; -1 / 0 unknown). */
struct hotspot_flag_table {
	uint64_t flags, nflags; /* addresses of JVMFlag::flags (JVMFlag*) and JVMFlag::numFlags (size_t) */
	long stride;            /* sizeof(JVMFlag) */
	long name, addr;        /* JVMFlag::_name (const char*), _addr (the value) */
};

/* The values of boolean flags names[0..n) into values (1 on, 0 off, -1 no
 * such flag): 0, or -1 when the table cannot be read. */
int hotspot_flags_read(const struct remote_mem *m, const struct hotspot_flag_table *ft, const char *const *names,
		       int *values, size_t n);

#endif
