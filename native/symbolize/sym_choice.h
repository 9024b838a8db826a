/* sym_choice.h - which of the names sharing one address a symbol table keeps,
 * as perf chooses; one rule for kallsyms.c and elf_syms.c. */
#ifndef JFLAME_SYM_CHOICE_H
#define JFLAME_SYM_CHOICE_H

#include <stdint.h>
#include <string.h>

struct sym_choice {
	unsigned rank; /* lower wins: the table's binding order (global, local, weak …) */
	unsigned weak; /* 1 for a weak symbol where rank does not say it already */
	const char *name;
	uint32_t order; /* input order where the table has one (0 where not) */
};

static inline int sym_choice_underscores(const char *s)
{
	int n = 0;
	while (s[n] == '_')
		n++;
	return n;
}

/* < 0 when a is the better name: the lower rank, fewer leading underscores,
 * not weak, the longer name, the earlier in the input, then by bytes. */
static inline int sym_choice_cmp(const struct sym_choice *a, const struct sym_choice *b)
{
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	int ua = sym_choice_underscores(a->name), ub = sym_choice_underscores(b->name);
	if (ua != ub)
		return ua < ub ? -1 : 1;
	if (a->weak != b->weak)
		return a->weak < b->weak ? -1 : 1;
	size_t la = strlen(a->name), lb = strlen(b->name);
	if (la != lb)
		return la > lb ? -1 : 1;
	if (a->order != b->order)
		return a->order < b->order ? -1 : 1;
	return strcmp(a->name, b->name);
}

#endif
