/* kallsyms.c - kernel text symbols from /proc/kallsyms (core and modules) in one
 * address-sorted array, their names in one arena; loaded at the first lookup. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include "kallsyms.h"
#include "sym_choice.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grow.h"
#include "key_search.h"

/* A symbol with no next one in its own module (or the kernel's) covers at most
 * this much, as perf does for the last symbol of a region. */
#define KSYM_LAST_SPAN 4096
/* /proc/kallsyms is generated as it is read: big reads mean few syscalls; the
 * file (5 MB and more) is parsed a read at a time, never held whole */
#define READ_CHUNK (1 << 20)
/* kallsyms_load reads this much: enough to see readable addresses */
#define PROBE_READ (16 << 10)

/* 16 bytes: 120,000 symbols and more on a distribution kernel. A symbol ends
 * where the next begins (see sym_end); names are copied to the arena in the
 * file's order, so a lower name offset is an earlier line. */
struct ksym {
	uint64_t addr;
	uint32_t name;	    /* offset into the arena */
	uint16_t module;    /* index into modules, 0: the core kernel */
	unsigned char rank; /* 0 global, 1 local, 2 weak: lower wins a shared address */
};

struct kallsyms {
	struct ksym *syms;
	size_t n, cap;
	char *arena; /* the names of text symbols and of modules, NUL-terminated */
	size_t arena_len, arena_cap;
	uint32_t *modules; /* arena offsets of module names; [0] unused */
	size_t nmodules, modules_cap, last_module;
	size_t malformed;
	char *path; /* not loaded yet: loaded from here at the first lookup */
};

static int module_is(const struct kallsyms *ks, size_t i, const char *s, size_t len)
{
	const char *m = ks->arena + ks->modules[i];
	return strncmp(m, s, len) == 0 && m[len] == '\0';
}

/* s[0..len) copied to the arena, NUL-terminated: its offset, or -1 when out
 * of memory (or past 4 GiB). */
static long arena_add(struct kallsyms *ks, const char *s, size_t len)
{
	size_t at = ks->arena_len;

	if (at + len + 1 >= UINT32_MAX || ARRAY_GROW(ks->arena, ks->arena_cap, at + len + 1) != 0)
		return -1;
	memcpy(ks->arena + at, s, len);
	ks->arena[at + len] = '\0';
	ks->arena_len = at + len + 1;
	return (long)at;
}

/* The index (>= 1) of module name s[0..len), added if new; -1 when out of
 * memory (or past 65535 modules). A module's lines come together, so its last
 * match is tried first. */
static long module_index(struct kallsyms *ks, const char *s, size_t len)
{
	size_t last = ks->last_module;
	long at;

	if (last && module_is(ks, last, s, len))
		return (long)last;
	for (size_t i = 1; i < ks->nmodules; i++)
		if (module_is(ks, i, s, len))
			return (long)(ks->last_module = i);
	if (ks->nmodules >= UINT16_MAX)
		return -1;
	if (ARRAY_GROW(ks->modules, ks->modules_cap, ks->nmodules + 1) != 0 || (at = arena_add(ks, s, len)) < 0)
		return -1;
	ks->modules[ks->nmodules] = (uint32_t)at;
	ks->last_module = ks->nmodules++;
	return (long)ks->last_module;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* One "addr type name[\t[module]]" line, without its newline. Returns 1 and
 * fills the fields, or 0 when the line is malformed. */
static int parse_line(const char *s, size_t len, uint64_t *addr, char *type, const char **name, size_t *name_len,
		      const char **mod, size_t *mod_len)
{
	const char *p = s, *end = s + len;
	uint64_t a = 0;
	int digits = 0, v;

	while (p < end && (v = hexval((unsigned char)*p)) >= 0) {
		if (++digits > 16)
			return 0;
		a = a << 4 | (uint64_t)v;
		p++;
	}
	if (!digits || p + 2 >= end || p[0] != ' ' || p[1] <= ' ' || p[1] > '~' || p[2] != ' ')
		return 0;
	*addr = a;
	*type = p[1];
	p += 3;
	*name = p;
	while (p < end && (unsigned char)*p > ' ')
		p++;
	*name_len = (size_t)(p - *name);
	if (!*name_len || (p < end && *p != ' ' && *p != '\t'))
		return 0;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	*mod = NULL;
	*mod_len = 0;
	if (p == end)
		return 1;
	if (*p != '[' || end[-1] != ']' || end - p < 3)
		return 0;
	*mod = p + 1;
	*mod_len = (size_t)(end - p - 2);
	for (const char *q = *mod; q < *mod + *mod_len; q++)
		if (*q == '[' || *q == ']' || (unsigned char)*q <= ' ')
			return 0;
	return 1;
}

/* The address shared by several names gets the best one, as perf chooses:
 * global over local over weak, fewer leading underscores, the longer name,
 * then the first in the file (sym_choice.h). */
static int cmp_sym(const void *pa, const void *pb, void *arena)
{
	const struct ksym *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	struct sym_choice ca = { a->rank, 0, (const char *)arena + a->name, a->name },
			  cb = { b->rank, 0, (const char *)arena + b->name, b->name };
	return sym_choice_cmp(&ca, &cb);
}

static int is_sorted(const struct ksym *s, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (s[i - 1].addr > s[i].addr)
			return 0;
	return 1;
}

/* Sorts and keeps the best name per address. */
static void finish(struct kallsyms *ks)
{
	size_t n = 0;

	/* without modules the lines come sorted: skip the sort then */
	if (!is_sorted(ks->syms, ks->n))
		qsort_r(ks->syms, ks->n, sizeof(*ks->syms), cmp_sym, ks->arena);
	for (size_t i = 0; i < ks->n; i++) {
		if (!n || ks->syms[n - 1].addr != ks->syms[i].addr)
			ks->syms[n++] = ks->syms[i];
		else if (cmp_sym(&ks->syms[i], &ks->syms[n - 1], ks->arena) < 0)
			ks->syms[n - 1] = ks->syms[i];
	}
	ks->n = n;
}

/* Where symbol i ends (exclusive): the next symbol's start if it is of the same
 * module or within KSYM_LAST_SPAN, else KSYM_LAST_SPAN past its own. */
static uint64_t sym_end(const struct kallsyms *ks, size_t i)
{
	const struct ksym *s = &ks->syms[i];
	uint64_t cap = s->addr + KSYM_LAST_SPAN < s->addr ? UINT64_MAX : s->addr + KSYM_LAST_SPAN;
	if (i + 1 < ks->n && (ks->syms[i + 1].module == s->module || ks->syms[i + 1].addr < cap))
		return ks->syms[i + 1].addr;
	return cap;
}

static int is_text(char type)
{
	return type == 't' || type == 'T' || type == 'w' || type == 'W';
}

static unsigned char rank_of(char type)
{
	return type == 'T' ? 0 : type == 't' ? 1 : 2;
}

/* One line (without its newline) into ks->syms; counts well-formed lines and
 * those with a nonzero address. -1 when out of memory. */
static int parse_one(struct kallsyms *ks, const char *line, size_t len, size_t *wellformed, size_t *nonzero)
{
	uint64_t addr;
	char type;
	const char *name, *mod;
	size_t name_len, mod_len;
	long mod_idx = 0, at;

	if (!parse_line(line, len, &addr, &type, &name, &name_len, &mod, &mod_len)) {
		ks->malformed++;
		return 0;
	}
	(*wellformed)++;
	if (addr)
		(*nonzero)++;
	/* data and absolute symbols would shadow functions; a zero address is
	 * no function's */
	if (!is_text(type) || !addr)
		return 0;
	if (mod && (mod_idx = module_index(ks, mod, mod_len)) < 0)
		return -1;
	if (ARRAY_GROW(ks->syms, ks->cap, ks->n + 1) != 0 || (at = arena_add(ks, name, name_len)) < 0)
		return -1;
	ks->syms[ks->n++] =
		(struct ksym){ .addr = addr, .name = (uint32_t)at, .module = (uint16_t)mod_idx, .rank = rank_of(type) };
	return 0;
}

/* Reads and parses fd's lines a READ_CHUNK at a time (a line cut by a read is
 * kept for the next one); with probe, the first read is PROBE_READ bytes and
 * the parse stops after any read that showed a line with an address. 0; -1
 * with errno on a read error, ENOMEM when out of memory. */
static int parse_fd(struct kallsyms *ks, int fd, size_t *wellformed, size_t *nonzero, int probe)
{
	size_t cap = READ_CHUNK, have = 0;
	char *buf = malloc(cap);
	ssize_t got = 0;
	int rc = -1;

	if (!buf) {
		errno = ENOMEM;
		return -1;
	}
	for (;;) {
		/* a line longer than a chunk: room for more */
		if (ARRAY_GROW(buf, cap, have + READ_CHUNK / 2) != 0) {
			errno = ENOMEM;
			goto out;
		}
		got = read(fd, buf + have, probe && !have ? PROBE_READ : cap - have);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			goto out;
		have += (size_t)got;
		char *p = buf, *end = buf + have, *nl;
		while ((nl = memchr(p, '\n', (size_t)(end - p))) || (got == 0 && p < end)) {
			if (!nl)
				nl = end;
			if (parse_one(ks, p, (size_t)(nl - p), wellformed, nonzero) != 0) {
				errno = ENOMEM;
				goto out;
			}
			p = nl < end ? nl + 1 : end;
		}
		if (got == 0 || (probe && *nonzero))
			break;
		have = (size_t)(end - p);
		memmove(buf, p, have);
	}
	rc = 0;
out:
	free(buf);
	return rc;
}

/* kernel.kptr_restrict when path is the kernel's own file; -1 otherwise or unreadable. */
static int kptr_restrict(const char *path)
{
	char buf[16] = "";
	int fd, v = -1;
	ssize_t n;

	if (strcmp(path, "/proc/kallsyms") != 0)
		return -1;
	fd = open("/proc/sys/kernel/kptr_restrict", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n > 0 && buf[0] >= '0' && buf[0] <= '9')
		v = buf[0] - '0';
	close(fd);
	return v;
}

/* Empties ks for a load from the start. */
static void reset(struct kallsyms *ks)
{
	ks->n = ks->arena_len = ks->malformed = 0;
	ks->nmodules = 1; /* index 0: the core kernel */
	ks->last_module = 0;
}

/* Loads path into ks (probe: only until readable addresses are seen). 0, or
 * -1 with a one-line reason in err. */
static int load(struct kallsyms *ks, const char *path, int probe, char *err, size_t errlen)
{
	size_t wellformed = 0, nonzero = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = -1;

	reset(ks);
	if (fd < 0) {
		snprintf(err, errlen, "failed to open %s: %s", path, strerror(errno));
		goto out;
	}
	if (parse_fd(ks, fd, &wellformed, &nonzero, probe) != 0) {
		if (errno == ENOMEM)
			snprintf(err, errlen, "out of memory loading %s", path);
		else
			snprintf(err, errlen, "failed to read %s: %s", path, strerror(errno));
		goto out;
	}
	if (!wellformed) {
		snprintf(err, errlen, "%s has no symbols (%zu malformed lines)", path, ks->malformed);
		goto out;
	}
	if (!nonzero) {
		if (kptr_restrict(path) == 2)
			snprintf(err, errlen,
				 "%s shows no addresses: kernel.kptr_restrict=2 hides them from "
				 "everyone; set it to 1 (and give jflame CAP_SYSLOG) or 0",
				 path);
		else
			snprintf(err, errlen,
				 "%s shows no addresses: jflame needs CAP_SYSLOG to read them "
				 "(in a container: --cap-add=SYSLOG, Kubernetes capabilities add SYSLOG; root on the "
				 "host has it), or kernel.kptr_restrict=0 with kernel.perf_event_paranoid <= 1",
				 path);
		goto out;
	}
	if (!probe)
		finish(ks);
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

/* The symbols, loaded now if they were not yet. A load that fails leaves no
 * symbols (kernel frames go unnamed) and says why on stderr, once. */
static struct kallsyms *loaded(const struct kallsyms *cks)
{
	struct kallsyms *ks = (struct kallsyms *)cks; /* allocated by kallsyms_load, not const */
	char err[512];

	if (!ks->path)
		return ks;
	if (load(ks, ks->path, 0, err, sizeof(err)) != 0) {
		reset(ks);
		fprintf(stderr, "%s; kernel frames are left unnamed\n", err);
	}
	free(ks->path);
	ks->path = NULL;
	return ks;
}

/* Only the first lines are read now: whether the file can be read and shows
 * addresses. The rest (5 MB and 40 ms of CPU for /proc/kallsyms) waits for
 * the first lookup, which may never come. */
struct kallsyms *kallsyms_load(const char *path, char *err, size_t errlen)
{
	struct kallsyms *ks = calloc(1, sizeof(*ks));

	if (!ks || ARRAY_GROW(ks->modules, ks->modules_cap, 1) != 0 || !(ks->path = strdup(path))) {
		snprintf(err, errlen, "out of memory loading %s", path);
		kallsyms_free(ks);
		return NULL;
	}
	if (load(ks, path, 1, err, errlen) != 0) {
		kallsyms_free(ks);
		return NULL;
	}
	reset(ks);
	return ks;
}

void kallsyms_free(struct kallsyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->arena);
	free(ks->modules);
	free(ks->path);
	free(ks);
}

const char *kallsyms_lookup(const struct kallsyms *cks, uint64_t addr, uint64_t *offset, const char **module)
{
	const struct kallsyms *ks = loaded(cks);
	/* the last symbol starting at or below addr */
	size_t lo = KEY_UPPER_BOUND(ks->syms, ks->n, addr, addr);
	if (!lo || addr >= sym_end(ks, lo - 1))
		return NULL;
	const struct ksym *s = &ks->syms[lo - 1];
	if (offset)
		*offset = addr - s->addr;
	if (module)
		*module = s->module ? ks->arena + ks->modules[s->module] : NULL;
	return ks->arena + s->name;
}

size_t kallsyms_count(const struct kallsyms *ks)
{
	return loaded(ks)->n;
}

size_t kallsyms_malformed(const struct kallsyms *ks)
{
	return loaded(ks)->malformed;
}
