/* test_proc_maps.c - unit tests for proc_maps: golden maps texts in tests/data/proc_maps
 * (*.expect lookups at boundaries, unsorted, malformed), then the real /proc/self/maps. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "check.h"
#include "proc_maps.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

static const char *data_path(const char *name)
{
	static char path[4096 + 256];
	const char *dir = getenv("JFLAME_TEST_DATA");

	snprintf(path, sizeof(path), "%s/proc_maps/%s", dir ? dir : "tests/data", name);
	return path;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *p = NULL;
	size_t cap = 0;

	*len = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (*len + 4096 > cap) {
			cap = cap ? cap * 2 : 65536;
			p = realloc(p, cap);
			if (!p)
				exit(2);
		}
		size_t got = fread(p + *len, 1, cap - *len, f);
		if (!got)
			break;
		*len += got;
	}
	fclose(f);
	return p;
}

static void check_sorted(const struct proc_maps *pm, const char *what)
{
	for (size_t i = 0; i < pm->n; i++) {
		CHECK_MSG(pm->maps[i].start < pm->maps[i].end, "%s: map %zu empty", what, i);
		CHECK_MSG(strlen(pm->maps[i].perms) == 4, "%s: map %zu perms '%s'", what, i, pm->maps[i].perms);
		CHECK_MSG(pm->maps[i].path != NULL, "%s: map %zu has no path", what, i);
		if (i)
			CHECK_MSG(pm->maps[i - 1].start <= pm->maps[i].start, "%s: maps %zu, %zu out of order", what,
				  i - 1, i);
	}
}

/* Checks one NAME.expect against maps parsed from text and loaded from the file. */
static void run_expect(const struct proc_maps *pm, const char *expect, const char *what)
{
	FILE *f = fopen(expect, "r");
	char line[8192];
	int lineno = 0;

	CHECK_MSG(f != NULL, "%s: missing", expect);
	if (!f)
		return;
	check_sorted(pm, what);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long addr, n_want, start, end, offset, inode;
		unsigned maj, min;
		char perms[8];
		int pathpos = -1;
		char *nl = strchr(line, '\n');

		lineno++;
		if (nl)
			*nl = '\0';
		if (!line[0] || line[0] == '#')
			continue;
		if (sscanf(line, "count %llu", &n_want) == 1) {
			CHECK_MSG(pm->n == n_want, "%s (%s): %zu maps, want %llu", expect, what, pm->n, n_want);
			continue;
		}
		const char *arrow = strstr(line, " -> ");
		if (!arrow || sscanf(line, "%llx", &addr) != 1) {
			CHECK_MSG(0, "%s:%d: bad expect line", expect, lineno);
			continue;
		}
		const struct proc_map *m = proc_maps_find(pm, addr);
		if (strcmp(arrow + 4, "NONE") == 0) {
			CHECK_MSG(m == NULL, "%s:%d (%s): %llx found in %" PRIx64 "-%" PRIx64 " %s, want none", expect,
				  lineno, what, addr, m->start, m->end, m->path);
			continue;
		}
		if (sscanf(arrow + 4, "%llx-%llx %7s %llx %x:%x %llu%n", &start, &end, perms, &offset, &maj, &min,
			   &inode, &pathpos) != 7) {
			CHECK_MSG(0, "%s:%d: bad expect line", expect, lineno);
			continue;
		}
		const char *path = arrow + 4 + pathpos;
		if (*path == ' ')
			path++;
		CHECK_MSG(m != NULL, "%s:%d (%s): %llx not found", expect, lineno, what, addr);
		if (!m)
			continue;
		CHECK_MSG(m->start == start && m->end == end && strcmp(m->perms, perms) == 0 && m->offset == offset &&
				  m->dev_major == maj && m->dev_minor == min && m->inode == inode &&
				  strcmp(m->path, path) == 0,
			  "%s:%d (%s): %llx in %" PRIx64 "-%" PRIx64 " %s %" PRIx64 " %02x:%02x %" PRIu64 " '%s'",
			  expect, lineno, what, addr, m->start, m->end, m->perms, m->offset, m->dev_major, m->dev_minor,
			  m->inode, m->path);
	}
	fclose(f);
}

static void test_golden(void)
{
	static const char *const names[] = { "jvm", "unsorted", "malformed" };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char file[64], expect[4096 + 256], err[256] = "";
		struct proc_maps pm;
		size_t len;

		snprintf(file, sizeof(file), "%s.maps", names[i]);
		snprintf(expect, sizeof(expect), "%s", data_path(file));
		strcpy(strrchr(expect, '.'), ".expect");

		/* from memory: an exact-size copy without a NUL, so a read past the end shows */
		char *text = slurp(data_path(file), &len);
		CHECK_MSG(text != NULL, "cannot read %s", data_path(file));
		if (!text)
			continue;
		char *exact = malloc(len ? len : 1);
		memcpy(exact, text, len);
		CHECK_EQ_INT(proc_maps_parse(&pm, exact, len), 0);
		free(exact);
		free(text);
		run_expect(&pm, expect, "parse");
		proc_maps_free(&pm);
		CHECK(pm.maps == NULL && pm.n == 0);

		/* and from the file */
		CHECK_MSG(proc_maps_load(&pm, data_path(file), err, sizeof(err)) == 0, "%s", err);
		run_expect(&pm, expect, "load");
		proc_maps_free(&pm);
	}
}

static void test_edges(void)
{
	struct proc_maps pm;
	char err[256] = "";

	/* nothing */
	CHECK_EQ_INT(proc_maps_parse(&pm, "", 0), 0);
	CHECK_EQ_INT(pm.n, 0);
	CHECK(proc_maps_find(&pm, 0) == NULL);
	CHECK(proc_maps_find(&pm, 0x400000) == NULL);
	proc_maps_free(&pm);
	CHECK_EQ_INT(proc_maps_parse(&pm, "\n\n\n", 3), 0);
	CHECK_EQ_INT(pm.n, 0);
	proc_maps_free(&pm);

	/* the length bounds the text: what follows is not read */
	static const char two[] = "1000-2000 r-xp 00000000 00:00 0 /a\n3000-4000 r-xp 00000000 00:00 0 /b\n";
	CHECK_EQ_INT(proc_maps_parse(&pm, two, strlen(two) / 2), 0);
	CHECK_EQ_INT(pm.n, 1);
	CHECK(proc_maps_find(&pm, 0x3000) == NULL);
	proc_maps_free(&pm);

	/* a line cut in its path keeps the part there is */
	CHECK_EQ_INT(proc_maps_parse(&pm, two, 33), 0);
	CHECK_EQ_INT(pm.n, 1);
	if (pm.n)
		CHECK_EQ_STR(pm.maps[0].path, "/");
	proc_maps_free(&pm);

	/* the top of the address space */
	static const char top[] = "fffffffffffff000-ffffffffffffffff r-xp 00000000 00:00 0 [top]\n";
	CHECK_EQ_INT(proc_maps_parse(&pm, top, strlen(top)), 0);
	CHECK_EQ_INT(pm.n, 1);
	CHECK(proc_maps_find(&pm, 0xfffffffffffff000ULL) != NULL);
	CHECK(proc_maps_find(&pm, 0xfffffffffffffffeULL) != NULL);
	CHECK(proc_maps_find(&pm, UINT64_MAX) == NULL);
	proc_maps_free(&pm);

	/* a path of PATH_MAX - 1 bytes, deleted, between two short lines; then a
	 * line far longer than any real one, skipped without harm */
	size_t plen = PATH_MAX - 1, cap = 3 * PATH_MAX + 20000;
	char *text = malloc(cap), *path = malloc(plen + 16);
	size_t n = 0;
	path[0] = '/';
	for (size_t i = 1; i < plen; i++)
		path[i] = i % 64 == 0 ? '/' : (char)('a' + i % 26);
	path[plen] = '\0';
	n += (size_t)snprintf(text + n, cap - n, "1000-2000 r-xp 00000000 08:01 1 /first\n");
	n += (size_t)snprintf(text + n, cap - n, "2000-3000 r-xp 00001000 08:01 2 %s (deleted)\n", path);
	n += (size_t)snprintf(text + n, cap - n, "3000-4000 r-xp 00000000 08:01 3 /x");
	for (int i = 0; i < 15000; i++)
		text[n++] = 'y';
	n += (size_t)snprintf(text + n, cap - n, "\n4000-5000 r-xp 00000000 08:01 4 /last\n");
	CHECK_EQ_INT(proc_maps_parse(&pm, text, n), 0);
	const struct proc_map *m = proc_maps_find(&pm, 0x2000);
	CHECK_MSG(m && strlen(m->path) == plen + 10 && strncmp(m->path, path, plen) == 0 &&
			  strcmp(m->path + plen, " (deleted)") == 0,
		  "a path of PATH_MAX-1 bytes is not kept whole");
	CHECK(proc_maps_find(&pm, 0x1000) && strcmp(proc_maps_find(&pm, 0x1000)->path, "/first") == 0);
	CHECK(proc_maps_find(&pm, 0x4000) && strcmp(proc_maps_find(&pm, 0x4000)->path, "/last") == 0);
	m = proc_maps_find(&pm, 0x3000);
	CHECK_MSG(m == NULL || (strncmp(m->path, "/xyyy", 5) == 0 && m->end == 0x4000),
		  "an overlong line gave a wrong mapping");
	check_sorted(&pm, "long lines");
	proc_maps_free(&pm);
	free(text);
	free(path);

	/* many lines, in reverse order */
	cap = 20000 * 64;
	text = malloc(cap);
	n = 0;
	for (int i = 20000; i > 0; i--)
		n += (size_t)snprintf(text + n, cap - n, "%x-%x r--p 00000000 00:00 %d /lib%d.so\n", i * 0x10000,
				      i * 0x10000 + 0x8000, i, i);
	CHECK_EQ_INT(proc_maps_parse(&pm, text, n), 0);
	CHECK_EQ_INT(pm.n, 20000);
	check_sorted(&pm, "reverse");
	int bad = 0;
	for (int i = 1; i <= 20000 && bad < 3; i++) {
		char want[32];
		snprintf(want, sizeof(want), "/lib%d.so", i);
		const struct proc_map *a = proc_maps_find(&pm, (uint64_t)i * 0x10000 + 0x7fff);
		const struct proc_map *b = proc_maps_find(&pm, (uint64_t)i * 0x10000 + 0x8000);
		int ok = a && strcmp(a->path, want) == 0 && a->inode == (uint64_t)i && !b;
		CHECK_MSG(ok, "reverse: lib %d", i);
		bad += !ok;
	}
	proc_maps_free(&pm);
	free(text);

	/* errors */
	CHECK_EQ_INT(proc_maps_load(&pm, data_path("missing.maps"), err, sizeof(err)), -1);
	CHECK_HAS_STR(err, "failed to open ");
	CHECK_HAS_STR(err, "proc_maps/missing.maps: No such file or directory");
	CHECK(strchr(err, '\n') == NULL);
	CHECK(pm.n == 0 && pm.maps == NULL);
	proc_maps_free(&pm); /* harmless after a failed load */
}

static int test_function(int x)
{
	return x * 3 + 1;
}

/* The live maps of this test: its own code, its stack, the vDSO. */
static void test_self(const char *argv0)
{
	struct proc_maps pm;
	char err[256] = "", exe[PATH_MAX] = "";
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	CHECK(n > 0);
	if (n > 0)
		exe[n] = '\0';
	CHECK_MSG(proc_maps_load(&pm, "/proc/self/maps", err, sizeof(err)) == 0, "%s", err);
	CHECK(pm.n > 5);
	check_sorted(&pm, "/proc/self/maps");
	for (size_t i = 1; i < pm.n; i++)
		CHECK_MSG(pm.maps[i - 1].end <= pm.maps[i].start, "/proc/self/maps: maps %zu and %zu overlap", i - 1,
			  i);

	uint64_t fn = (uint64_t)(uintptr_t)&test_function;
	const struct proc_map *m = proc_maps_find(&pm, fn);
	CHECK_MSG(m != NULL, "test_function at %#" PRIx64 " not found", fn);
	if (m) {
		CHECK_MSG(fn >= m->start && fn < m->end, "wrong mapping");
		CHECK_EQ_STR(m->perms, "r-xp");
		CHECK_EQ_STR(m->path, exe);
		CHECK(m->inode != 0);
	}
	m = proc_maps_find(&pm, (uint64_t)(uintptr_t)&proc_maps_find);
	CHECK(m && strcmp(m->path, exe) == 0 && m->perms[2] == 'x'); /* linked in statically */
	m = proc_maps_find(&pm, (uint64_t)(uintptr_t)&getauxval);    /* a shared library's code */
	CHECK(m && m->perms[2] == 'x' && m->path[0] == '/');
	m = proc_maps_find(&pm, (uint64_t)(uintptr_t)argv0); /* argv lives on the main stack */
	CHECK_MSG(m && strcmp(m->path, "[stack]") == 0, "argv[0] in %s", m ? m->path : "nothing");
	uint64_t vdso = getauxval(AT_SYSINFO_EHDR);
	if (vdso) {
		m = proc_maps_find(&pm, vdso);
		CHECK_MSG(m && strcmp(m->path, "[vdso]") == 0, "vdso in %s", m ? m->path : "nothing");
	}
	CHECK(test_function(1) == 4);
	proc_maps_free(&pm);
}

int main(int argc, char **argv)
{
	(void)argc;
	test_golden();
	test_edges();
	test_self(argv[0]);
	return check_report("test_proc_maps");
}
