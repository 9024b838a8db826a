/* fuzz_kallsyms.c - libFuzzer target for kallsyms_load: the input as a kallsyms
 * file (in a memfd), then lookups checked for consistency and one-line errors. */
/* module: native/symbolize/kallsyms.c native/util/grow.c */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memfd_create */
#endif
#include "kallsyms.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Prints the message and aborts, which the fuzzer reports as a crash. */
static __attribute__((noreturn, format(printf, 1, 2))) void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fuzz_kallsyms: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/* A found symbol starts where lookup says, and has a name. */
static void check(const struct kallsyms *ks, uint64_t addr)
{
	uint64_t off = 0, off2 = 1;
	const char *mod = NULL, *mod2 = NULL;
	const char *name = kallsyms_lookup(ks, addr, &off, &mod);

	if (!name)
		return;
	if (!*name || off > addr)
		fail("%#llx: name \"%s\" offset %#llx", (unsigned long long)addr, name, (unsigned long long)off);
	if (mod && !*mod)
		fail("%#llx: empty module name", (unsigned long long)addr);
	if (kallsyms_lookup(ks, addr - off, &off2, &mod2) != name || off2 != 0 || mod2 != mod)
		fail("%#llx: its symbol's start %#llx is not the same symbol", (unsigned long long)addr,
		     (unsigned long long)(addr - off));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	char err[512] = "";

	if (fd < 0) {
		fd = memfd_create("fuzz_kallsyms", MFD_CLOEXEC);
		if (fd < 0) {
			perror("memfd_create");
			abort();
		}
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size) {
		perror("memfd");
		abort();
	}

	struct kallsyms *ks = kallsyms_load(path, err, sizeof(err));
	if (!ks) {
		/* one line saying why, without the prefix (the front end adds it) */
		if (!err[0] || strncmp(err, "jflame: ", 8) == 0 || strchr(err, '\n'))
			fail("error is not one line without the jflame: prefix: \"%s\"", err);
		return 0;
	}
	if (kallsyms_count(ks) > size / 6 + 1)
		fail("%zu symbols from %zu bytes", kallsyms_count(ks), size);

	/* addresses: every hex number in the input, its neighbours, and raw bytes */
	uint64_t v = 0;
	int digits = 0;
	for (size_t i = 0; i <= size; i++) {
		int c = i < size ? data[i] : ' ', h = c >= '0' && c <= '9' ? c - '0' :
						      c >= 'a' && c <= 'f' ? c - 'a' + 10 :
									     -1;
		if (h >= 0) {
			v = v << 4 | (uint64_t)h;
			digits++;
			continue;
		}
		if (digits) {
			check(ks, v);
			check(ks, v + 1);
			check(ks, v - 1);
			check(ks, v + 4096);
		}
		v = 0;
		digits = 0;
	}
	for (size_t i = 0; i + 8 <= size; i += 8) {
		uint64_t raw;
		memcpy(&raw, data + i, 8);
		check(ks, raw);
	}
	check(ks, 0);
	check(ks, UINT64_MAX);
	kallsyms_free(ks);
	return 0;
}
