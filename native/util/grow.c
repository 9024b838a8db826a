/* grow.c - the one array growth (grow.h): doubling from ARRAY_GROW_FIRST,
 * the element count and the bytes checked for overflow before realloc. */
#include "grow.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int grow(void *arrp, size_t *cap, size_t need, size_t elem_size, bool zero)
{
	size_t c = *cap ? *cap : ARRAY_GROW_FIRST;
	void *p, *q;

	if (need <= *cap)
		return 0;
	while (c < need) {
		if (c > SIZE_MAX / 2)
			return -1;
		c *= 2;
	}
	if (!elem_size || c > SIZE_MAX / elem_size)
		return -1;
	memcpy(&p, arrp, sizeof(p));
	q = realloc(p, c * elem_size);
	if (!q)
		return -1;
	if (zero)
		memset((char *)q + *cap * elem_size, 0, (c - *cap) * elem_size);
	memcpy(arrp, &q, sizeof(q));
	*cap = c;
	return 0;
}

int array_grow(void *arrp, size_t *cap, size_t need, size_t elem_size)
{
	return grow(arrp, cap, need, elem_size, false);
}

int array_grow_zeroed(void *arrp, size_t *cap, size_t need, size_t elem_size)
{
	return grow(arrp, cap, need, elem_size, true);
}
