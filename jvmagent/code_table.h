/* code_table.h - the compiled code the agent has announced and not yet seen
 * unloaded: start address -> size, so an unload can name the range it frees. */
#ifndef JFLAME_CODE_TABLE_H
#define JFLAME_CODE_TABLE_H

#include <stddef.h>
#include <stdint.h>

struct code_table {
	uint64_t *keys; /* 0 = empty, 1 = removed; code never starts at 0 or 1 */
	uint64_t *sizes;
	size_t cap, used, live;
};

void code_table_init(struct code_table *t);
void code_table_free(struct code_table *t);
/* Adds or replaces start's size. 0, or -1 when out of memory. */
int code_table_put(struct code_table *t, uint64_t start, uint64_t size);
/* Removes start; returns its size, or 0 when unknown. */
uint64_t code_table_take(struct code_table *t, uint64_t start);

#endif
