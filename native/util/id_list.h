/* id_list.h - a growing array of 64-bit ids: the profile writers' frame and
 * location ids of every stack, back to back. */
#ifndef JFLAME_ID_LIST_H
#define JFLAME_ID_LIST_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "grow.h"

struct id_list {
	uint64_t *v;
	size_t n, cap;
};

/* Appends id, doubling the array when full: 0, or -1 when out of memory
 * (the list is then unchanged). */
static inline int id_list_push(struct id_list *l, uint64_t id)
{
	if (ARRAY_GROW(l->v, l->cap, l->n + 1) != 0)
		return -1;
	l->v[l->n++] = id;
	return 0;
}

static inline void id_list_free(struct id_list *l)
{
	free(l->v);
	l->v = NULL;
	l->n = l->cap = 0;
}

#endif
