/* hotspot_stubs.h - names of the JVM's generated stubs (arraycopy, call_stub,
 * crypto intrinsics...) from its StubCodeDesc list, as JVMTI reports them to agents. */
#ifndef JFLAME_HOTSPOT_STUBS_H
#define JFLAME_HOTSPOT_STUBS_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/types.h>

#include "profile.h" /* struct stub_row */
#include "remote_mem.h"
#include "str_intern.h"

/* At most this many stubs are read (JDK 17 and 25 have about 300). */
#define HOTSPOT_STUBS_MAX 8192

/* C1's stub blobs read at most (JDK 17: 39, 25: 40). */
#define HOTSPOT_STUBS_BLOBS_MAX 256

struct hotspot_stubs;

/* Where a CodeBlob's fields are (gHotSpotVMStructs): its name (a char *),
 * frame size (an int, int16_t from JDK 23), code's begin and end (pointers,
 * or from JDK 23 int offsets from the blob: code_offsets). */
struct hotspot_blob_fields {
	long name, frame_size, code_begin, code_end;
	bool code_offsets;
};

/* The stubs of a JVM whose StubCodeDesc::_list variable is at list_addr
 * (libjvm's .symtab); names interned in si. NULL when out of memory. */
struct hotspot_stubs *hotspot_stubs_new(const struct remote_mem *m, uint64_t list_addr, struct str_intern *si);
void hotspot_stubs_free(struct hotspot_stubs *s);
/* Adds the blobs of C1's Runtime1::_blobs array (count pointers at array)
 * whose frame size HotSpot leaves unknown to the stubs (names and rows),
 * read with the list; a layout whose fields lie past a blob's first 256
 * bytes adds none. */
void hotspot_stubs_set_blobs(struct hotspot_stubs *s, uint64_t array, size_t count,
			     const struct hotspot_blob_fields *f);

/* The name of the stub whose code holds pc ("jbyte_disjoint_arraycopy"),
 * interned; NULL when none does. The list is read at the first call and
 * again (at most once a second) when a pc is not in it: stubs are generated
 * as the JVM starts, some later. */
const char *hotspot_stubs_name(struct hotspot_stubs *s, uint64_t pc, uint64_t now_ns);

/* Calls fn for each stub (begin, end, name), in address order, the list
 * read first when it has not been; the count of stubs. */
size_t hotspot_stubs_each(struct hotspot_stubs *s, uint64_t now_ns,
			  void (*fn)(void *ctx, uint64_t begin, uint64_t end, const char *name), void *ctx);

/* The walker's unwinding rows of every stub (stub_cfa on its code, read from
 * the JVM), sorted by pc, a stub's end closing its rows (an unknown row): in
 * *rows (malloc'ed, the caller frees), *n of them. Bounded for a JVM that
 * lists what no JVM has: stubs over 256 KiB are left out, 2 MiB of code read
 * at most, 8192 rows. 0, or -1 with a line in err (no stubs, too many rows,
 * out of memory, no capstone). */
int hotspot_stubs_rows(struct hotspot_stubs *s, uint64_t now_ns, struct stub_row **rows, size_t *n, char *err,
		       size_t errlen);

/* How many stubs were read (tests). */
size_t hotspot_stubs_count(const struct hotspot_stubs *s);

#endif
