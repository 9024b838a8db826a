/* folded_diff.h - two folded profiles merged into one differential profile,
 * stack by stack, as difffolded.pl does: "stack BEFORE AFTER". */
#ifndef JFLAME_FOLDED_DIFF_H
#define JFLAME_FOLDED_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stack_table.h"
#include "str_intern.h"

struct folded_diff {
	struct stack_table t;		    /* stacks sorted (byte order), each once: counts are
				 AFTER's, befores BEFORE's (0 where a stack is only
				 on one side) */
	uint64_t total_before, total_after; /* as read (before normalizing) */
};

/* How stacks are matched: normalize scales BEFORE's counts to AFTER's total,
 * each rounded down (difffolded.pl -n); strip_hex writes every 0x<hex> as
 * "0x..." (difffolded.pl -s); merge_ids writes the root frames that name one
 * run's instances as "[Pod]*", "[Con]*" and "[*] <process name>", so two
 * recordings of the same service (other pids, a new pod) line up. */
struct folded_diff_opts {
	bool normalize, strip_hex, merge_ids;
};

/* Merges the counts of before and after into d (its own copy of the stacks).
 * 0, or -1 when out of memory. */
int folded_diff_build(struct folded_diff *d, const struct stack_table *before, const struct stack_table *after,
		      const struct folded_diff_opts *o);
/* s with its leading [Pod]/[Con]/[<pid>] frames written as merge_ids does:
 * interned in si, or s itself when there is nothing to change (NULL when out
 * of memory). Public for tests. */
const char *folded_diff_merge_ids(struct str_intern *si, const char *s);
void folded_diff_free(struct folded_diff *d);

/* Writes "stack before after" lines. 0, or -1 on a write error. */
int folded_diff_write(FILE *out, const struct folded_diff *d);

#endif
