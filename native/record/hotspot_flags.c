/* hotspot_flags.c - boolean -XX flags of a HotSpot JVM read from its memory: the
 * JVMFlag table gHotSpotVMStructs locates, read once, names compared page by page. */
#include "hotspot_flags.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FLAGS 8192 /* -XX flags (JDK 17 has about 1,300) */
#define MAX_FLAG_STRIDE 256
#define FLAG_PAGES 4 /* page cache of the flag names (read in address order) */
#define PAGE 4096

/* Pages of libjvm's read-only data the flag names are in, read once each. */
struct pages {
	uint64_t addr[FLAG_PAGES]; /* page address + 1 when loaded */
	unsigned char data[FLAG_PAGES][PAGE];
};

/* True when the C string at addr is s. */
static bool cstr_is(const struct remote_mem *m, struct pages *pc, uint64_t addr, const char *s)
{
	size_t n = strlen(s) + 1; /* its NUL too */
	char buf[64];
	for (size_t i = 0; i < n; i++) {
		uint64_t a = addr + i, page = a & ~(uint64_t)(PAGE - 1);
		size_t slot = (size_t)(page / PAGE) % FLAG_PAGES;
		if (a < addr)
			return false;
		if (pc->addr[slot] != page + 1) {
			if (remote_mem_read(m, page, pc->data[slot], PAGE) != 0) { /* a partly mapped page: read as asked */
				pc->addr[slot] = 0;
				return n <= sizeof(buf) && remote_mem_read(m, addr, buf, n) == 0 && memcmp(buf, s, n) == 0;
			}
			pc->addr[slot] = page + 1;
		}
		if (pc->data[slot][a - page] != (unsigned char)s[i])
			return false;
	}
	return true;
}

struct flag_entry {
	uint64_t name, addr; /* JVMFlag::_name, _addr */
};

static int flag_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct flag_entry *)a)->name, y = ((const struct flag_entry *)b)->name;
	return (x > y) - (x < y);
}

int hotspot_flags_read(const struct remote_mem *m, const struct hotspot_flag_table *ft, const char *const *names,
		       int *values, size_t n)
{
	uint64_t table = remote_mem_u64(m, ft->flags), count = 0;
	long stride = ft->stride;
	unsigned char *e = NULL;
	struct flag_entry *flags = NULL;
	struct pages *pc = NULL;
	int rc = -1;
	for (size_t k = 0; k < n; k++)
		values[k] = -1;
	if (!table || remote_mem_read(m, ft->nflags, &count, 8) != 0 || count == 0 || count > MAX_FLAGS ||
	    stride < 16 || stride > MAX_FLAG_STRIDE || ft->name < 0 || ft->name > stride - 8 ||
	    ft->addr < 0 || ft->addr > stride - 8)
		return -1;
	if (!(e = malloc((size_t)count * (size_t)stride)) || !(flags = malloc((size_t)count * sizeof(*flags))) ||
	    !(pc = calloc(1, sizeof(*pc))) || remote_mem_read(m, table, e, (size_t)count * (size_t)stride) != 0)
		goto out;
	/* in the order of their names' addresses: each page of names read once */
	for (uint64_t i = 0; i < count; i++) {
		memcpy(&flags[i].name, e + i * (uint64_t)stride + (uint64_t)ft->name, 8);
		memcpy(&flags[i].addr, e + i * (uint64_t)stride + (uint64_t)ft->addr, 8);
	}
	qsort(flags, (size_t)count, sizeof(*flags), flag_cmp);
	for (uint64_t i = 0; i < count; i++) {
		uint8_t v;
		for (size_t k = 0; flags[i].name && k < n; k++)
			if (values[k] < 0 && cstr_is(m, pc, flags[i].name, names[k]) &&
			    remote_mem_read(m, flags[i].addr, &v, 1) == 0)
				values[k] = v != 0;
	}
	rc = 0;
out:
	free(pc);
	free(flags);
	free(e);
	return rc;
}
