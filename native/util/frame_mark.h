/* frame_mark.h - the marks a frame's name ends with to say what ran: the brief's "_[j]"
 * JIT-compiled, "_[i]" inlined, "_[0]" interpreted, "_[k]" kernel; "_[a]" allocated, "_[l]" lock class. */
#ifndef JFLAME_FRAME_MARK_H
#define JFLAME_FRAME_MARK_H

#include <stddef.h>
#include <string.h>

#define FRAME_MARK_JIT	   "_[j]"
#define FRAME_MARK_INLINED "_[i]"
#define FRAME_MARK_INTERP  "_[0]"
#define FRAME_MARK_KERNEL  "_[k]"
#define FRAME_MARK_ALLOC   "_[a]"
#define FRAME_MARK_LOCK	   "_[l]"
#define FRAME_MARK_LEN	   4	    /* every mark's length */
#define FRAME_MARK_KINDS   "ji0kal" /* the letters, in the order above */

/* The letter of the mark s[0..len) ends with ('j', 'i', '0', 'k', 'a', 'l'),
 * or 0 when it ends with none (a name may be nothing but a mark). */
static inline char frame_mark_kind(const char *s, size_t len)
{
	if (len < FRAME_MARK_LEN || s[len - 4] != '_' || s[len - 3] != '[' || s[len - 1] != ']' || !s[len - 2] ||
	    !strchr(FRAME_MARK_KINDS, s[len - 2]))
		return 0;
	return s[len - 2];
}

#endif
