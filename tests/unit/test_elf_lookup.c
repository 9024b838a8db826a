/* test_elf_lookup.c - symbols' run-time addresses from a file and its mappings: a library
 * loaded here (dlsym the referee; its data's vaddr is not its offset), non-PIE, bad input. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "check.h"
#include "elf_lookup.h"

#include <dlfcn.h>
#include <gelf.h>
#include <libelf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef JFLAME_ELF_FIXTURES
#error "JFLAME_ELF_FIXTURES (the directory tests/unit/CMakeLists.txt builds the fixtures in) is not defined"
#endif

/* The mappings of path in this process, from /proc/self/maps. */
static size_t self_mappings(const char *path, struct elf_mapping *out, size_t max)
{
	char line[4352], file[4096];
	size_t n = 0;
	FILE *f = fopen("/proc/self/maps", "r");
	while (f && n < max && fgets(line, sizeof(line), f)) {
		unsigned long start, end, off;
		file[0] = '\0';
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %4095s", &start, &end, &off, file) == 4 &&
		    strcmp(file, path) == 0)
			out[n++] = (struct elf_mapping){ start, end, off };
	}
	if (f)
		fclose(f);
	return n;
}

static void test_shared_library(void)
{
	char path[4096], err[512];
	struct elf_mapping maps[16];
	const char *names[] = { "fixture_sink", "fixture_alpha", "no_such_symbol" };
	uint64_t addrs[3], bias = 0;
	snprintf(path, sizeof(path), "%s/libfixture.so", JFLAME_ELF_FIXTURES);
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	CHECK_MSG(h != NULL, "dlopen %s: %s", path, dlerror());
	if (!h)
		return;
	char *real = realpath(path, NULL);
	size_t n = self_mappings(real ? real : path, maps, 16);
	CHECK(n >= 3);
	CHECK_EQ_INT(elf_lookup_symbols(path, maps, n, names, 3, addrs, err, sizeof(err)), 2);
	CHECK_EQ_U64(addrs[0], (uintptr_t)dlsym(h, "fixture_sink")); /* .bss, in the RW segment */
	CHECK_EQ_U64(addrs[1], (uintptr_t)dlsym(h, "fixture_alpha"));
	CHECK_EQ_U64(addrs[2], 0);
	/* with sizes: an int's 4 bytes, none for what is not there */
	uint64_t sized[3], sizes[3];
	CHECK_EQ_INT(elf_lookup_symbols_sized(path, maps, n, names, 3, sized, sizes, err, sizeof(err)), 2);
	CHECK_EQ_U64(sized[0], addrs[0]);
	CHECK_EQ_U64(sizes[0], sizeof(int));
	CHECK(sizes[1] > 0);
	CHECK_EQ_U64(sizes[2], 0);
	/* the data mapping's offset lies in two segments' pages (the RW one's
	 * vaddr is not its offset): the other mappings outvote the wrong one */
	CHECK_EQ_INT(elf_lookup_bias(path, maps, n, &bias, err, sizeof(err)), 0);
	CHECK_EQ_U64(bias, maps[0].start - maps[0].offset);
	CHECK_EQ_INT(elf_lookup_bias(path, maps, 1, &bias, err, sizeof(err)), 0);
	CHECK_EQ_U64(bias, maps[0].start - maps[0].offset);
	free(real);
	dlclose(h);
}

/* A non-PIE program mapped where its segments say (bias 0): each PT_LOAD's
 * pages as the kernel maps them. */
static void test_not_pie(void)
{
	char path[4096], err[512], nm[4096], line[512];
	struct elf_mapping maps[16];
	size_t n = 0;
	uint64_t want = 0, addr = 0;
	const char *name = "fixture_sink";
	snprintf(path, sizeof(path), "%s/fixture_nopie", JFLAME_ELF_FIXTURES);
	int fd = open(path, O_RDONLY);
	elf_version(EV_CURRENT);
	Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	size_t phnum = 0;
	CHECK(e && elf_getphdrnum(e, &phnum) == 0);
	for (size_t i = 0; e && i < phnum && n < 16; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_filesz)
			maps[n++] = (struct elf_mapping){ ph.p_vaddr & ~0xfffULL,
							  (ph.p_vaddr + ph.p_filesz + 0xfff) & ~0xfffULL,
							  ph.p_offset & ~0xfffULL };
	}
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	/* nm's value of the symbol is its address */
	snprintf(nm, sizeof(nm), "%s/fixture_nopie.nm", JFLAME_ELF_FIXTURES);
	FILE *f = fopen(nm, "r");
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long long v;
		char type, sym[256];
		if (sscanf(line, "%llx %c %255s", &v, &type, sym) == 3 && strcmp(sym, name) == 0)
			want = v;
	}
	if (f)
		fclose(f);
	CHECK(want != 0);
	CHECK_EQ_INT(elf_lookup_symbols(path, maps, n, &name, 1, &addr, err, sizeof(err)), 1);
	CHECK_EQ_U64(addr, want);
	/* the same program loaded 1 MiB higher (as if it were PIE) */
	for (size_t i = 0; i < n; i++)
		maps[i].start += 0x100000, maps[i].end += 0x100000;
	CHECK_EQ_INT(elf_lookup_symbols(path, maps, n, &name, 1, &addr, err, sizeof(err)), 1);
	CHECK_EQ_U64(addr, want + 0x100000);
}

static void test_bad_input(void)
{
	char path[4096], err[512] = "";
	uint64_t addr = 1;
	const char *name = "fixture_sink";
	/* mappings at offsets no segment has */
	struct elf_mapping far = { 0x7f0000000000ULL, 0x7f0000001000ULL, 0x10000000 };
	snprintf(path, sizeof(path), "%s/libfixture.so", JFLAME_ELF_FIXTURES);
	CHECK_EQ_INT(elf_lookup_symbols(path, &far, 1, &name, 1, &addr, err, sizeof(err)), -1);
	CHECK(strstr(err, "fit none of its segments") != NULL);
	CHECK_EQ_INT(elf_lookup_symbols(path, &far, 0, &name, 1, &addr, err, sizeof(err)), -1);
	snprintf(path, sizeof(path), "%s/fixture_nopie.nm", JFLAME_ELF_FIXTURES);
	CHECK_EQ_INT(elf_lookup_symbols(path, &far, 1, &name, 1, &addr, err, sizeof(err)), -1);
	CHECK(strstr(err, "is not an ELF file") != NULL);
	CHECK_EQ_INT(elf_lookup_symbols("/nonexistent/libjvm.so", &far, 1, &name, 1, &addr, err, sizeof(err)), -1);
	CHECK_EQ_STR(err, "failed to open /nonexistent/libjvm.so: No such file or directory");
}

int main(void)
{
	test_shared_library();
	test_not_pie();
	test_bad_input();
	return check_report("elf_lookup");
}
