/* fuzz_elf_syms.c - libFuzzer target for elf_syms_load: the input as an ELF file
 * in a private directory (also the debug root), then lookups, build-id, the cache. */
/* module: native/symbolize/elf_syms.c native/util/text_escape.c native/util/str_intern.c native/util/target_file.c native/util/msg.c */
/* Seeds in corpus/elf_syms (names without .o/.so, which .gitignore drops):
 * tests/data/elf/tiny.s assembled (relocatable_obj) and linked with gcc
 * -nostdlib -static -Wl,-n (tiny_static) and -shared with 16-byte pages
 * (tiny_shared); objcopy --strip-all (tiny_shared_stripped), --only-keep-debug
 * (tiny_debug), --add-gnu-debuglink (tiny_debuglink), -O elf32-little
 * (tiny_le32); and the first bytes of fixture binaries (trunc_*). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "elf_syms.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Prints the message and aborts, which the fuzzer reports as a crash. */
static __attribute__((noreturn, format(printf, 1, 2))) void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fuzz_elf_syms: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static char dir[64], path[96];

static void remove_dir(void)
{
	unlink(path);
	rmdir(dir);
}

/* A found name is a non-empty string, the same one each time. */
static void check(struct elf_syms *es, uint64_t off)
{
	uint64_t sym_off = 0;
	const char *name = elf_syms_lookup(es, off, &sym_off);

	if (!name)
		return;
	if (!*name)
		fail("offset %#llx: empty name", (unsigned long long)off);
	if (elf_syms_lookup(es, off, NULL) != name)
		fail("offset %#llx: a second lookup gave another string", (unsigned long long)off);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512] = "";
	int fd;

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz_elf_syms.XXXXXX");
		if (!mkdtemp(dir)) {
			perror("mkdtemp");
			abort();
		}
		snprintf(path, sizeof(path), "%s/input", dir);
		atexit(remove_dir);
	}
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size || close(fd) != 0) {
		perror(path);
		abort();
	}

	struct elf_syms *es = elf_syms_load(path, dir, err, sizeof(err));
	if (!es) {
		/* one line saying why, without the prefix (the front end adds it) */
		if (!err[0] || strncmp(err, "jflame: ", 8) == 0 || strchr(err, '\n'))
			fail("error is not one line without the jflame: prefix: \"%s\"", err);
		return 0;
	}
	const char *id = elf_syms_build_id(es);
	size_t idlen = strlen(id);
	if (idlen % 2 || idlen > 128 || strspn(id, "0123456789abcdef") != idlen)
		fail("build-id \"%s\"", id);
	if (elf_syms_count(es) > size)
		fail("%zu symbols from %zu bytes", elf_syms_count(es), size);

	/* offsets: every byte of the file, raw 8-byte values, the extremes */
	for (uint64_t off = 0; off <= size + 64; off++)
		check(es, off);
	for (size_t i = 0; i + 8 <= size; i += 8) {
		uint64_t raw;
		memcpy(&raw, data + i, 8);
		check(es, raw);
	}
	check(es, UINT64_MAX);
	elf_syms_free(es);

	/* the cache: loads it again, and gives that for a second path to it */
	struct elf_cache *c = elf_cache_new();
	if (!c)
		abort();
	char proc_path[128];
	snprintf(proc_path, sizeof(proc_path), "/proc/self/root%s", path);
	struct elf_syms *a = elf_cache_get(c, path, dir, 0), *b = elf_cache_get(c, proc_path, dir, 0);
	if (a != b)
		fail("two paths to one file gave two entries");
	if (a)
		check(a, size / 2);
	elf_cache_free(c);
	return 0;
}
