/* hotspot_threads.h - the java.lang.Thread names of a HotSpot JVM's threads, read
 * from its memory (thread list, Thread objects, Strings) without an agent. */
#ifndef JFLAME_HOTSPOT_THREADS_H
#define JFLAME_HOTSPOT_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "hotspot_vm.h" /* struct hotspot_entry */
#include "remote_mem.h"

/* Characters (UTF-16 units) of a name read at most: longer names are cut. */
#define HOTSPOT_THREAD_NAME_MAX 256

struct hotspot_threads;

/* Names of a JVM of major version jdk_major (17, 25, ...; 0 unknown) read
 * through mem (copied). Built from the JVM's tables: feed it every entry
 * through hotspot_threads_take, then call hotspot_threads_ready. NULL when
 * out of memory. */
struct hotspot_threads *hotspot_threads_new(const struct remote_mem *mem, int jdk_major);
/* The JVM's major version, when it is known only once the tables are read. */
void hotspot_threads_jdk(struct hotspot_threads *t, int jdk_major);
/* A hotspot_entry_fn: ctx is the struct hotspot_threads. */
void hotspot_threads_take(void *ctx, const struct hotspot_entry *e);
/* 0 usable, -1 not (the tables lack a field the names are read with). */
int hotspot_threads_ready(struct hotspot_threads *t);
/* The java.lang.Thread name of kernel thread tid (as the JVM's own pid
 * namespace numbers it: OSThread::_thread_id), written to out (UTF-8,
 * NUL-terminated; cut at a character to fit len): its length in bytes, or -1
 * when tid is not a Java thread or its name cannot be read (a JVM still
 * starting, a lone UTF-16 surrogate, compact object headers); control
 * characters are kept (callers escape them as target text). The
 * heap's layout and the fields' offsets are found at the first call, the
 * thread list read again only when the JVM replaced it (a thread started or
 * ended): then a name costs five reads of the JVM's memory, a tid that is no
 * Java thread one. Callers keep names by tid. */
int hotspot_threads_name(struct hotspot_threads *t, pid_t tid, char *out, size_t len);
/* True when the JVM runs generational ZGC and its forwarding tables were not
 * found (hotspot_zgc.h): a Thread object it has moved is then not found
 * through a root it has not healed yet, and such a name is not read until
 * the JVM loads the root again or ZGC next marks. */
bool hotspot_threads_moving(const struct hotspot_threads *t);
/* Objects found moved through generational ZGC's forwarding tables so far,
 * and its load-bad pointers looked up there (hotspot_zgc.h). */
unsigned long long hotspot_threads_forwarded(const struct hotspot_threads *t);
unsigned long long hotspot_threads_stale(const struct hotspot_threads *t);
void hotspot_threads_free(struct hotspot_threads *t);

#endif
