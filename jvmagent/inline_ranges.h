/* inline_ranges.h - splits a compiled method's code into address ranges that
 * share one inline chain, from the JVM's per-PC inlining records (unfold). */
#ifndef JFLAME_INLINE_RANGES_H
#define JFLAME_INLINE_RANGES_H

#include <stddef.h>
#include <stdint.h>

/* One PC record: the chain of methods active at pc, innermost first (as JVMTI
 * PCStackInfo gives it); methods are opaque ids compared by value. */
struct inline_pc {
	uint64_t pc;
	int depth;
	const void *const *methods;
};

/* A range [start, end) whose code belongs to chain (innermost first, depth
 * entries). depth 1 means the compiled method itself, nothing inlined. */
struct inline_range {
	uint64_t start, end;
	int depth;
	const void *const *methods;
};

/* Covers [code_start, code_end) with ranges: the code after the previous
 * record's pc up to and including a record's pc belongs to that record's
 * chain. A record's pc is where HotSpot describes the scope: the return
 * address of a call (so a caller frame's address, as a stack walker sees it,
 * names the chain of its call site) or a safepoint poll. Code after the last
 * record belongs to the compiled method itself (chain = root, one entry,
 * which must outlive out). Records are expected in ascending pc order, as
 * HotSpot gives them; records outside the code, empty chains and records
 * below the current position are skipped; adjacent ranges with the same
 * chain merge. Writes at most max ranges into out and returns the number
 * needed (call again with a bigger array if it is larger than max). */
size_t inline_ranges_build(uint64_t code_start, uint64_t code_end, const void *const *root, const struct inline_pc *pcs,
			   size_t npcs, struct inline_range *out, size_t max);

#endif
