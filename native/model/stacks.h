/* stacks.h - the renderers' input model: aggregated stacks as folded text with
 * their counts (what the folded readers produce and the graph writers draw). */
#ifndef JFLAME_STACKS_H
#define JFLAME_STACKS_H

#include <stdint.h>

/* One aggregated stack: frames root first joined by ';' (folded format),
 * its sample count, and for differential graphs the count before (count is then
 * the count after). Empty frames ("a;;b", a trailing ';') are skipped. The same
 * stack may appear more than once: counts add up. */
struct fg_stack {
	const char *frames;
	uint64_t count;
	uint64_t count_before;
};

#endif
