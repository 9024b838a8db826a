/* grow.h - the one array growth: an array's capacity in elements doubled (from
 * ARRAY_GROW_FIRST) until it holds what is needed, the bytes' size checked. */
#ifndef JFLAME_GROW_H
#define JFLAME_GROW_H

#include <stddef.h>

#define ARRAY_GROW_FIRST 16 /* elements of an array's first allocation */

/* Makes room for need elements of elem_size bytes in the array whose pointer
 * is at arrp (any object pointer's address: it is read and written with
 * memcpy), of *cap elements now: *cap doubles, from ARRAY_GROW_FIRST, until it
 * is need or more. 0 (also when it held need already), or -1 when the size
 * overflows or out of memory: the array and *cap are then unchanged. */
int array_grow(void *arrp, size_t *cap, size_t need, size_t elem_size);
/* array_grow, the new elements zeroed. */
int array_grow_zeroed(void *arrp, size_t *cap, size_t need, size_t elem_size);

/* The typed forms: arr an array pointer (an lvalue), cap its size_t capacity;
 * no call when it holds need already (cap and need are read twice). */
#define ARRAY_GROW(arr, cap, need) ((need) <= (cap) ? 0 : array_grow(&(arr), &(cap), (need), sizeof(*(arr))))
#define ARRAY_GROW_ZEROED(arr, cap, need) \
	((need) <= (cap) ? 0 : array_grow_zeroed(&(arr), &(cap), (need), sizeof(*(arr))))

#endif
