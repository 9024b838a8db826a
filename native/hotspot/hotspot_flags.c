/* hotspot_flags.c - boolean -XX flags of a HotSpot JVM read from its memory: the
 * JVMFlag table walked by vm_tables.c (as the agent walks its own), names read page by page. */
#include "hotspot_flags.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define FLAG_PAGES 4 /* page cache of the flag names (read in address order) */
#define PAGE	   4096

/* The JVM's memory, and the pages of libjvm's read-only data the flag names
 * are in, each read once. */
struct flag_mem {
	const struct remote_mem *m;
	uint64_t addr[FLAG_PAGES]; /* page address + 1 when loaded */
	unsigned char data[FLAG_PAGES][PAGE];
};

static int flag_mem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct flag_mem *fm = ctx;
	return remote_mem_read(fm->m, addr, buf, len);
}

static int remote_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return remote_mem_read(ctx, addr, buf, len);
}

/* A flag's name through the page cache (a partly mapped page: read as asked). */
static int flag_mem_cstr(void *ctx, uint64_t addr, char *out, size_t len)
{
	struct flag_mem *fm = ctx;
	for (size_t i = 0; i + 1 < len; i++) {
		uint64_t a = addr + i, page = a & ~(uint64_t)(PAGE - 1);
		size_t slot = (size_t)(page / PAGE) % FLAG_PAGES;
		if (a < addr)
			return -1;
		if (fm->addr[slot] != page + 1) {
			if (remote_mem_read(fm->m, page, fm->data[slot], PAGE) != 0) {
				fm->addr[slot] = 0;
				return vm_tables_cstr(remote_read, (void *)fm->m, addr, out, len);
			}
			fm->addr[slot] = page + 1;
		}
		out[i] = (char)fm->data[slot][a - page];
		if (!out[i])
			return 0;
	}
	return -1;
}

int hotspot_flags_read(const struct remote_mem *m, const struct vm_flag_table *ft, const char *const *names,
		       int *values, size_t n)
{
	struct flag_mem *fm = calloc(1, sizeof(*fm));
	uint64_t *addrs = calloc(n ? n : 1, sizeof(*addrs));
	int rc = -1;
	for (size_t k = 0; k < n; k++)
		values[k] = -1;
	if (!fm || !addrs)
		goto out;
	fm->m = m;
	const struct vm_tables_mem mem = { flag_mem_read, flag_mem_cstr, fm };
	if (vm_flags_find(ft, &mem, names, addrs, n) != 0)
		goto out;
	for (size_t k = 0; k < n; k++) {
		uint8_t v;
		if (addrs[k] && remote_mem_read(m, addrs[k], &v, 1) == 0)
			values[k] = v != 0;
	}
	rc = 0;
out:
	free(addrs);
	free(fm);
	return rc;
}
