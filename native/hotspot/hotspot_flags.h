/* hotspot_flags.h - boolean -XX flags of a HotSpot JVM read from its memory: the
 * JVMFlag table gHotSpotVMStructs locates, walked by vm_tables.c, names read page by page. */
#ifndef JFLAME_HOTSPOT_FLAGS_H
#define JFLAME_HOTSPOT_FLAGS_H

#include <stddef.h>
#include <stdint.h>

#include "remote_mem.h"
#include "vm_tables.h"

/* The values of boolean flags names[0..n) into values (1 on, 0 off, -1 no
 * such flag): 0, or -1 when the table cannot be read. */
int hotspot_flags_read(const struct remote_mem *m, const struct vm_flag_table *ft, const char *const *names,
		       int *values, size_t n);

#endif
