/* hotspot_zgc.h - where generational ZGC has moved an object, read from outside the
 * JVM: a stale coloured pointer's object found through its generation's forwarding table. */
#ifndef JFLAME_HOTSPOT_ZGC_H
#define JFLAME_HOTSPOT_ZGC_H

#include <stdbool.h>
#include <stdint.h>

#include "vm_tables.h" /* struct hotspot_entry */
#include "remote_mem.h"

/* Generational ZGC relocates an object and heals the pointers to it lazily:
 * until the JVM loads a pointer again (or the next marking remaps it), the
 * pointer keeps the old address, its colour "load bad". The collector keeps
 * where each object of a relocated page went in that page's ZForwarding (a
 * hash of from-index to to-offset), found by granule in its generation's
 * ZForwardingTable, until its next relocation set. The tables export
 * ZForwarding's layout and the heap's, not where the two generations' tables
 * are: each ZGeneration holds its page allocator's and page table's addresses
 * (the ZHeap's, exported) followed by its forwarding table, and is found by
 * that pair in the ZCollectedHeap (both are members of its ZHeap in JDK 21
 * and 25). */
struct hotspot_zgc;

/* Built as hotspot_threads is: every table entry through hotspot_zgc_take,
 * then hotspot_zgc_ready. NULL when out of memory. */
struct hotspot_zgc *hotspot_zgc_new(const struct remote_mem *mem);
/* A hotspot_entry_fn: ctx is the struct hotspot_zgc. */
void hotspot_zgc_take(void *ctx, const struct hotspot_entry *e);
/* 0 when the tables say what a lookup needs (a JVM with generational ZGC
 * compiled in), -1 when not. */
int hotspot_zgc_ready(struct hotspot_zgc *z);
/* The address where the object at addr is now, addr being the address the
 * coloured pointer raw (as stored in a field or root) names: the forwarded
 * one when raw is load-bad and its page's forwarding has the object; addr
 * itself otherwise (a load-good pointer, a page not relocated, an object not
 * moved yet, a forwarding that cannot be read). Reads nothing for a
 * load-good pointer beyond the current load-bad mask. */
uint64_t hotspot_zgc_current(struct hotspot_zgc *z, uint64_t raw, uint64_t addr);
/* False once the generations' tables are known not to be found (or the JVM's
 * tables lack what a lookup needs): stale pointers are then not followed. */
bool hotspot_zgc_usable(const struct hotspot_zgc *z);
/* Objects found moved so far, and load-bad pointers looked up (moved or not:
 * every pointer not loaded since the collector's last phase change), for
 * tests and -v. */
uint64_t hotspot_zgc_forwarded(const struct hotspot_zgc *z);
uint64_t hotspot_zgc_stale(const struct hotspot_zgc *z);
void hotspot_zgc_free(struct hotspot_zgc *z);

#endif
