/* elf_syms.h - symbols of one ELF file via libelf: .symtab, else .dynsym, or a
 * separate debug file (build-id, .gnu_debuglink); C++ names demangled. */
#ifndef JFLAME_ELF_SYMS_H
#define JFLAME_ELF_SYMS_H

#include <stddef.h>
#include <stdint.h>

struct elf_syms;

/* Loads the symbols of the ELF file at path. root is the directory separate
 * debug files are looked up under ("" or NULL for "/", "/proc/PID/root" for a
 * process in another mount namespace): ROOT/usr/lib/debug/.build-id/xx/rest.debug,
 * then the .gnu_debuglink name next to the file, in its .debug/ and under
 * ROOT/usr/lib/debug/<dir of file> (CRC-checked). Symbols come from the file's
 * .symtab, else a debug file's .symtab, else the file's .dynsym; function
 * symbols only (STT_FUNC, STT_GNU_IFUNC), those without a size reaching to the
 * next one. Returns NULL with a one-line reason in err (naming path) when the
 * file is not a readable ELF file (or not a regular file). A file without any
 * symbols is not an error: lookups then fail. No file larger than ELF_MAX_FILE
 * (target_file.h) is read. */
struct elf_syms *elf_syms_load(const char *path, const char *root, char *err, size_t errlen);
void elf_syms_free(struct elf_syms *es);

/* The symbols of a vDSO image in memory (image[0..size), read from a copy):
 * looked up by offset into the image (addr - the [vdso] mapping's start),
 * translated through its PT_LOAD segment as for a file. Of the names sharing
 * an address, perf's choice: the global __vdso_clock_gettime over its weak
 * alias clock_gettime, as perf report and perf script show [vdso] frames.
 * NULL with one line in err when it is not an ELF image. */
struct elf_syms *elf_syms_load_vdso(const void *image, size_t size, char *err, size_t errlen);

/* The function containing the byte at file offset off (as /proc/PID/maps
 * gives: addr - map start + map offset), translated through the PT_LOAD
 * segments. Returns the demangled name without parameters
 * ("G1ParScanThreadState::trim_queue_partially"), valid until elf_syms_free,
 * and the offset into the symbol in *sym_off; NULL if no symbol covers it.
 * Names are demangled on first lookup and cached in es: not thread-safe. */
const char *elf_syms_lookup(struct elf_syms *es, uint64_t off, uint64_t *sym_off);

/* The file's GNU build-id as lowercase hex ("" when it has none). */
const char *elf_syms_build_id(const struct elf_syms *es);

/* Number of function symbols loaded (for tests and diagnostics). */
size_t elf_syms_count(const struct elf_syms *es);

/* The separate debug file the symbols came from, NULL when they came from the
 * file itself (.symtab, else .dynsym). */
const char *elf_syms_debug_file(const struct elf_syms *es);

/* A cache of loaded files keyed by (device, inode) of the file, so each file's
 * symbols are loaded once and shared by every process that maps it. */
struct elf_cache;
struct elf_cache *elf_cache_new(void);
void elf_cache_free(struct elf_cache *c);
/* Symbols for path (opened as given, e.g. /proc/PID/root/usr/lib/x.so or
 * /proc/PID/map_files/...), looked up by its (dev, ino); NULL when it cannot be
 * loaded (the failure is remembered and not retried: by (dev, ino), or by path
 * when the file cannot even be opened). */
struct elf_syms *elf_cache_get(struct elf_cache *c, const char *path, const char *root, uint64_t want_ino);

#endif
