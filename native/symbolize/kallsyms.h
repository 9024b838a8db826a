/* kallsyms.h - kernel symbols from /proc/kallsyms (modules included), looked up
 * by address for the kernel frames of a stack. */
#ifndef JFLAME_KALLSYMS_H
#define JFLAME_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct kallsyms;

/* A kallsyms file ("/proc/kallsyms"), parsed at the first lookup (or count):
 * its first lines are read now. Returns NULL with a one-line reason in err
 * when it cannot be read, has no well-formed line, or when every address is
 * zero (no privilege: kptr_restrict), saying how to fix it; a later load that
 * fails says why on stderr and leaves no symbols.
 * Malformed lines are skipped and counted (kallsyms_malformed). Only text
 * symbols (t T w W, modules' too) are kept; of several at one address, the one
 * perf would choose (global over local over weak, fewer leading underscores,
 * longer). */
struct kallsyms *kallsyms_load(const char *path, char *err, size_t errlen);
void kallsyms_free(struct kallsyms *ks);

/* The text symbol containing addr: its name, the offset into it, and its module
 * ("ext4") or NULL for the core kernel. NULL when addr is below the first
 * symbol or past the last one by more than a page. */
const char *kallsyms_lookup(const struct kallsyms *ks, uint64_t addr, uint64_t *offset, const char **module);

size_t kallsyms_count(const struct kallsyms *ks);
size_t kallsyms_malformed(const struct kallsyms *ks);

#endif
