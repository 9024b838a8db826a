/* fuzz_proc_maps.c - libFuzzer target for proc_maps: parses the input as /proc/PID/maps,
 * checks the array (sorted, non-empty ranges, paths from the input) and every find(). */
/* module: native/attach/proc_maps.c native/util/grow.c */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "proc_maps.h"

#include <inttypes.h>
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

	fprintf(stderr, "fuzz_proc_maps: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/* The mapping holding addr by a linear search: NULL, or the last one by start. */
static const struct proc_map *naive_find(const struct proc_maps *pm, uint64_t addr)
{
	const struct proc_map *found = NULL;
	for (size_t i = 0; i < pm->n; i++)
		if (pm->maps[i].start <= addr && addr < pm->maps[i].end)
			found = &pm->maps[i];
	return found;
}

static void check_find(const struct proc_maps *pm, uint64_t addr, int disjoint)
{
	const struct proc_map *m = proc_maps_find(pm, addr), *want = naive_find(pm, addr);

	if (m && !(m->start <= addr && addr < m->end))
		fail("find(%#" PRIx64 ") gave %#" PRIx64 "-%#" PRIx64 ", which does not hold it", addr, m->start,
		     m->end);
	if (m && (m < pm->maps || m >= pm->maps + pm->n))
		fail("find(%#" PRIx64 ") gave a pointer outside the array", addr);
	if (!want && m)
		fail("find(%#" PRIx64 ") found a mapping the linear search did not", addr);
	if (disjoint && want != m)
		fail("find(%#" PRIx64 ") missed %#" PRIx64 "-%#" PRIx64, addr, want->start, want->end);
}

static void check_maps(const struct proc_maps *pm, const uint8_t *data, size_t size)
{
	int disjoint = 1;

	if (pm->n && !pm->maps)
		fail("%zu maps, no array", pm->n);
	for (size_t i = 0; i < pm->n; i++) {
		const struct proc_map *m = &pm->maps[i];
		if (!(m->start < m->end))
			fail("map %zu: %#" PRIx64 "-%#" PRIx64 " is empty", i, m->start, m->end);
		if (i && pm->maps[i - 1].start > m->start)
			fail("maps %zu, %zu out of order", i - 1, i);
		if (i && pm->maps[i - 1].end > m->start)
			disjoint = 0;
		if (!memchr(m->perms, '\0', sizeof(m->perms)))
			fail("map %zu: perms not terminated", i);
		if (!m->path)
			fail("map %zu: NULL path", i);
		if (strchr(m->path, '\n'))
			fail("map %zu: newline in path", i);
		if (m->path[0] && !memmem(data, size, m->path, strlen(m->path)))
			fail("map %zu: path \"%s\" not in the input", i, m->path);
		if (m->path[0] == ' ')
			fail("map %zu: path \"%s\" starts with a space", i, m->path);
	}
	for (size_t i = 0; i < pm->n; i++) {
		const struct proc_map *m = &pm->maps[i];
		check_find(pm, m->start, disjoint);
		check_find(pm, m->end - 1, disjoint);
		check_find(pm, m->end, disjoint);
		check_find(pm, m->start - 1, disjoint);
		check_find(pm, m->start + (m->end - m->start) / 2, disjoint);
	}
	check_find(pm, 0, disjoint);
	check_find(pm, UINT64_MAX, disjoint);
	/* addresses from the input's bytes */
	for (size_t i = 0; i + 8 <= size && i < 256; i += 8) {
		uint64_t a;
		memcpy(&a, data + i, 8);
		check_find(pm, a, disjoint);
		check_find(pm, a >> 24, disjoint);
	}
}

/* proc_maps_load of the same bytes from a file must agree with proc_maps_parse. */
static void check_load(const struct proc_maps *pm, const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz_proc_maps", MFD_CLOEXEC);
	char path[64], err[256] = "";
	struct proc_maps lm;

	if (fd < 0)
		return;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	for (size_t done = 0; done < size;) {
		ssize_t w = write(fd, data + done, size - done);
		if (w <= 0)
			fail("write failed");
		done += (size_t)w;
	}
	if (proc_maps_load(&lm, path, err, sizeof(err)) != 0)
		fail("proc_maps_load: %s", err);
	if (lm.n != pm->n)
		fail("load found %zu maps, parse %zu", lm.n, pm->n);
	for (size_t i = 0; i < lm.n; i++) {
		const struct proc_map *a = &lm.maps[i], *b = &pm->maps[i];
		/* the sort is not stable: compare as sets where starts repeat */
		if (a->start != b->start)
			fail("map %zu: load %#" PRIx64 ", parse %#" PRIx64, i, a->start, b->start);
		if ((i == 0 || lm.maps[i - 1].start != a->start) &&
		    (i + 1 == lm.n || lm.maps[i + 1].start != a->start) &&
		    (a->end != b->end || a->offset != b->offset || a->inode != b->inode ||
		     a->dev_major != b->dev_major || a->dev_minor != b->dev_minor || strcmp(a->perms, b->perms) != 0 ||
		     strcmp(a->path, b->path) != 0))
			fail("map %zu differs between load and parse", i);
	}
	proc_maps_free(&lm);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proc_maps pm;

	if (proc_maps_parse(&pm, (const char *)data, size) != 0)
		return 0; /* out of memory */
	check_maps(&pm, data, size);
	check_load(&pm, data, size);
	proc_maps_free(&pm);
	if (pm.maps || pm.n || pm.strings)
		fail("proc_maps_free left the struct set");
	return 0;
}
