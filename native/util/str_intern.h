/* str_intern.h - a set of interned strings: each distinct string stored once,
 * so frames can be compared and hashed by pointer. */
#ifndef JFLAME_STR_INTERN_H
#define JFLAME_STR_INTERN_H

#include <stddef.h>
#include <stdint.h>

struct str_intern;

struct str_intern *str_intern_new(void);
void str_intern_free(struct str_intern *si);
/* The interned copy of s[0..len); NULL only when out of memory. */
const char *str_intern_n(struct str_intern *si, const char *s, size_t len);
const char *str_intern(struct str_intern *si, const char *s);
size_t str_intern_count(const struct str_intern *si);
/* The memory it holds (its strings' arena and its table), in bytes. */
size_t str_intern_bytes(const struct str_intern *si);
/* The interned copy of s[0..len) when it has one, else NULL (nothing added). */
const char *str_intern_find(const struct str_intern *si, const char *s, size_t len);

/* The string hash of the hash tables here and there: eight bytes a step, multiplied and
 * folded as murmur's finaliser mixes (not FNV-1a, as this comment once said). */
uint64_t str_hash(const char *s, size_t len);

#endif
