/* elf_lookup.c - run-time addresses of a mapped ELF file's exported data
 * symbols by name: .dynsym values plus the load bias its mappings show. */
#include "elf_lookup.h"
#include "target_file.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_PHDRS 64 /* program headers looked at; real files have a dozen */

struct segments {
	GElf_Phdr ph[MAX_PHDRS];
	size_t n;
};

static void segments_load(Elf *e, struct segments *s)
{
	size_t phnum = 0;
	s->n = 0;
	if (elf_getphdrnum(e, &phnum) != 0)
		return;
	for (size_t i = 0; i < phnum && s->n < MAX_PHDRS; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_filesz > 0)
			s->ph[s->n++] = ph;
	}
}

/* Whether mapping m can hold segment ph's bytes: its file offset lies in the
 * segment's page-aligned file range. The bias it then implies goes to *bias. */
static bool segment_fits(const GElf_Phdr *ph, const struct elf_mapping *m, uint64_t page, uint64_t *bias)
{
	uint64_t lo = ph->p_offset & ~(page - 1), hi = ph->p_offset + ph->p_filesz;
	if (m->offset < lo || m->offset >= hi || m->end <= m->start)
		return false;
	*bias = m->start - m->offset + ph->p_offset - ph->p_vaddr;
	return true;
}

/* How many mappings propose bias. */
static size_t bias_votes(const struct segments *s, const struct elf_mapping *maps, size_t nmaps, uint64_t page,
			 uint64_t bias)
{
	size_t votes = 0;
	for (size_t i = 0; i < nmaps; i++) {
		bool yes = false;
		for (size_t k = 0; k < s->n && !yes; k++) {
			uint64_t b;
			yes = segment_fits(&s->ph[k], &maps[i], page, &b) && b == bias;
		}
		votes += yes;
	}
	return votes;
}

static int segments_bias(const struct segments *s, const struct elf_mapping *maps, size_t nmaps, uint64_t *bias)
{
	long pagesz = sysconf(_SC_PAGESIZE);
	uint64_t page = pagesz > 0 ? (uint64_t)pagesz : 4096;
	size_t best = 0;
	for (size_t i = 0; i < nmaps; i++)
		for (size_t k = 0; k < s->n; k++) {
			uint64_t b;
			if (!segment_fits(&s->ph[k], &maps[i], page, &b))
				continue;
			size_t votes = bias_votes(s, maps, nmaps, page, b);
			if (votes > best)
				best = votes, *bias = b;
		}
	return best ? 0 : -1;
}

static Elf *elf_open(const char *path, int *fd, char *err, size_t errlen)
{
	Elf *e;
	char why[256];
	/* a file of the target's: regular, its user's to read, links inside its root */
	*fd = target_file_open(path, TARGET_FILE_READABLE | TARGET_FILE_QUIET, ELF_MAX_FILE, NULL, why, sizeof(why));
	if (*fd < 0) {
		snprintf(err, errlen, "failed to open %s: %s", path, *fd == -2 ? why : strerror(errno));
		*fd = -1;
		return NULL;
	}
	elf_version(EV_CURRENT);
	e = elf_begin(*fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		snprintf(err, errlen, "%s is not an ELF file", path);
		if (e)
			elf_end(e);
		close(*fd);
		*fd = -1;
		return NULL;
	}
	return e;
}

int elf_lookup_bias(const char *path, const struct elf_mapping *maps, size_t nmaps, uint64_t *bias, char *err,
		    size_t errlen)
{
	int fd, rc = -1;
	struct segments s;
	Elf *e = elf_open(path, &fd, err, errlen);
	if (!e)
		return -1;
	segments_load(e, &s);
	rc = segments_bias(&s, maps, nmaps, bias);
	if (rc != 0)
		snprintf(err, errlen, "the mappings of %s fit none of its segments", path);
	elf_end(e);
	close(fd);
	return rc;
}

/* Whether vaddr lies in a loaded segment (its memory size: .bss too). */
static bool segments_hold(const struct segments *s, uint64_t vaddr)
{
	for (size_t k = 0; k < s->n; k++)
		if (vaddr >= s->ph[k].p_vaddr && vaddr - s->ph[k].p_vaddr < s->ph[k].p_memsz)
			return true;
	return false;
}

/* Looks the names not found yet up in the symbol table of type type
 * (SHT_DYNSYM, SHT_SYMTAB); returns how many it found. */
static size_t table_lookup(Elf *e, Elf32_Word type, const struct segments *s, uint64_t bias, const char *const *names,
			   size_t n, uint64_t *addrs, uint64_t *sizes, size_t found)
{
	size_t more = 0;
	for (Elf_Scn *scn = NULL; found + more < n && (scn = elf_nextscn(e, scn)) != NULL;) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type || !sh.sh_entsize || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0, nsyms = sh.sh_size / sh.sh_entsize; i < nsyms && found + more < n; i++) {
			GElf_Sym sym;
			const char *name;
			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF || !sym.st_value ||
			    !(name = elf_strptr(e, sh.sh_link, sym.st_name)) || !segments_hold(s, sym.st_value))
				continue;
			for (size_t k = 0; k < n; k++)
				if (!addrs[k] && strcmp(name, names[k]) == 0) {
					addrs[k] = sym.st_value + bias;
					if (sizes)
						sizes[k] = sym.st_size;
					more++;
					break;
				}
		}
	}
	return more;
}

int elf_lookup_symbols(const char *path, const struct elf_mapping *maps, size_t nmaps, const char *const *names,
		       size_t n, uint64_t *addrs, char *err, size_t errlen)
{
	return elf_lookup_symbols_sized(path, maps, nmaps, names, n, addrs, NULL, err, errlen);
}

int elf_lookup_symbols_sized(const char *path, const struct elf_mapping *maps, size_t nmaps, const char *const *names,
			     size_t n, uint64_t *addrs, uint64_t *sizes, char *err, size_t errlen)
{
	int fd, found = -1;
	size_t n_found;
	struct segments s;
	uint64_t bias = 0;
	Elf *e = elf_open(path, &fd, err, errlen);
	if (!e)
		return -1;
	memset(addrs, 0, n * sizeof(addrs[0]));
	if (sizes)
		memset(sizes, 0, n * sizeof(sizes[0]));
	segments_load(e, &s);
	if (segments_bias(&s, maps, nmaps, &bias) != 0) {
		snprintf(err, errlen, "the mappings of %s fit none of its segments", path);
		goto out;
	}
	/* exported symbols first: a stripped library has only those */
	n_found = table_lookup(e, SHT_DYNSYM, &s, bias, names, n, addrs, sizes, 0);
	n_found += table_lookup(e, SHT_SYMTAB, &s, bias, names, n, addrs, sizes, n_found);
	found = (int)n_found;
out:
	elf_end(e);
	close(fd);
	return found;
}
