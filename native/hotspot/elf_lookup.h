/* elf_lookup.h - run-time addresses of a mapped ELF file's exported data
 * symbols by name: .dynsym values plus the load bias its mappings show. */
#ifndef JFLAME_ELF_LOOKUP_H
#define JFLAME_ELF_LOOKUP_H

#include <stddef.h>
#include <stdint.h>

/* One mapping of the file, as /proc/PID/maps gives it. */
struct elf_mapping {
	uint64_t start, end, offset;
};

/* The load bias (run-time address minus ELF virtual address) that the
 * mappings of the file show: for each mapping, the PT_LOAD segments whose
 * page-aligned file range holds its offset propose start - offset + p_offset
 * - p_vaddr; the bias most mappings agree on wins (ties: the lowest offset's).
 * 0 and *bias set, or -1 when no mapping fits any segment. */
int elf_lookup_bias(const char *path, const struct elf_mapping *maps, size_t nmaps, uint64_t *bias, char *err,
		    size_t errlen);

/* The run-time addresses of n defined symbols (.dynsym, then .symtab)
 * of the file at path, mapped as maps[0..nmaps) show: addrs[i] is 0 when
 * names[i] is not there (or outside every PT_LOAD segment). Returns how many
 * were found, or -1 with one line in err when the file is not a readable ELF
 * file or its mappings fit none of its segments. */
int elf_lookup_symbols(const char *path, const struct elf_mapping *maps, size_t nmaps, const char *const *names,
		       size_t n, uint64_t *addrs, char *err, size_t errlen);
/* The same, and each symbol's size (st_size: an array's bytes) in sizes[i]
 * (0 when not found). */
int elf_lookup_symbols_sized(const char *path, const struct elf_mapping *maps, size_t nmaps, const char *const *names,
			     size_t n, uint64_t *addrs, uint64_t *sizes, char *err, size_t errlen);

#endif
