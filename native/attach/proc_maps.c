/* proc_maps.c - parses /proc/PID/maps into a sorted array of mappings and finds
 * the one holding an address by binary search. */
#include "proc_maps.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "key_search.h"

static int cmp_start(const void *a, const void *b)
{
	const struct proc_map *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

int proc_maps_parse(struct proc_maps *pm, const char *text, size_t len)
{
	size_t cap = 64, n = 0, slen = 0;
	struct proc_map *maps = malloc(cap * sizeof(*maps));
	char *strings = malloc(len + 1);
	const char *p = text, *end = text + len;

	memset(pm, 0, sizeof(*pm));
	if (!maps || !strings)
		goto fail;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char line[4608];
		struct proc_map m = { 0 };
		int pathpos = -1;
		if (ll < sizeof(line)) {
			memcpy(line, p, ll);
			line[ll] = '\0';
			if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %x:%x %" SCNu64 " %n", &m.start,
				   &m.end, m.perms, &m.offset, &m.dev_major, &m.dev_minor, &m.inode, &pathpos) >= 7 &&
			    m.start < m.end) {
				const char *path = pathpos >= 0 && pathpos <= (int)ll ? line + pathpos : "";
				size_t pl = strlen(path);
				if (ARRAY_GROW(maps, cap, n + 1) != 0)
					goto fail;
				memcpy(strings + slen, path, pl + 1);
				m.path = (const char *)(uintptr_t)slen; /* offset until strings is final */
				slen += pl + 1;
				maps[n++] = m;
			}
		}
		p += ll + 1;
	}
	for (size_t i = 0; i < n; i++)
		maps[i].path = strings + (uintptr_t)maps[i].path;
	qsort(maps, n, sizeof(*maps), cmp_start);
	pm->maps = maps;
	pm->n = n;
	pm->strings = strings;
	return 0;
fail:
	free(maps);
	free(strings);
	return -1;
}

int proc_maps_load(struct proc_maps *pm, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	char *text = NULL;
	size_t len = 0, cap = 0;
	int rc = -1;

	memset(pm, 0, sizeof(*pm));
	if (!f) {
		snprintf(err, errlen, "failed to open %s: %s", path, strerror(errno));
		return -1;
	}
	for (;;) {
		if (ARRAY_GROW(text, cap, len + 65536) != 0) {
			snprintf(err, errlen, "out of memory reading %s", path);
			goto out;
		}
		size_t got = fread(text + len, 1, cap - len, f);
		len += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		snprintf(err, errlen, "failed to read %s: %s", path, strerror(errno));
		goto out;
	}
	if (proc_maps_parse(pm, text ? text : "", len) != 0) {
		snprintf(err, errlen, "out of memory parsing %s", path);
		goto out;
	}
	rc = 0;
out:
	free(text);
	fclose(f);
	return rc;
}

void proc_maps_free(struct proc_maps *pm)
{
	free(pm->maps);
	free(pm->strings);
	memset(pm, 0, sizeof(*pm));
}

const struct proc_map *proc_maps_find(const struct proc_maps *pm, uint64_t addr)
{
	size_t lo = KEY_UPPER_BOUND(pm->maps, pm->n, start, addr);
	if (lo == 0)
		return NULL;
	const struct proc_map *m = &pm->maps[lo - 1];
	return addr < m->end ? m : NULL;
}
