/* name_normalize.h - folded stacks with the names that differ from one JVM run to
 * the next made alike (lambda and hidden-class addresses, generated accessors, pids, pool numbers). */
#ifndef JFLAME_NAME_NORMALIZE_H
#define JFLAME_NAME_NORMALIZE_H

#include <stddef.h>

#include "str_intern.h"

/* One frame's text with what a restart renumbers taken out, into out (len
 * bytes, NUL-terminated, cut to fit); returns the length written:
 *   Foo$$Lambda$8.0x00007f87c4006228.run  -> Foo$$Lambda.run  (JDK 17)
 *   Foo$$Lambda.0x0000000036045000.run    -> Foo$$Lambda.run  (JDK 21+; also /0x..., +0x...)
 *   LambdaForm$MH.0x00000008000c4400.invoke -> LambdaForm$MH.invoke (any hidden class)
 *   GeneratedMethodAccessor123.invoke     -> GeneratedMethodAccessor.invoke (and the
 *     Constructor and SerializationConstructor accessors)
 * A Java frame's mark of how it ran goes (_[0], _[j], _[i]: the JIT's choice
 * of the moment), so Foo.bar_[j] and Foo.bar_[0] are one method.
 * With thread set (the thread frame of a stack), numbers after '-' or '#'
 * become N: pool-3-thread-7 -> pool-N-thread-N, GC Thread#1 -> GC Thread#N. */
size_t name_normalize_frame(const char *frame, size_t n, int thread, char *out, size_t len);

/* A folded stack ("[Pod]..;[Con]..;[1234] java;thread;frames...") with its
 * roots as folded_diff_merge_ids writes them ("[Pod]*", "[Con]*", "[*] java"),
 * its thread frame and every other frame normalized: interned in si, or s
 * itself when nothing changed; NULL when out of memory. */
const char *name_normalize_stack(struct str_intern *si, const char *s);

#endif
