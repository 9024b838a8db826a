/* elf_syms.c - function symbols of ELF files via libelf (.symtab, a separate
 * debug file's .symtab, else .dynsym), looked up by file offset; a (dev, ino) cache. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* qsort_r */
#endif
#include "elf_syms.h"
#include "target_file.h"
#include "sym_choice.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* libiberty's header poisons basename(): it comes last and basename is unused */
#include <libiberty/demangle.h>

#include "str_intern.h"
#include "text_escape.h"

#define MAX_BUILD_ID  64   /* bytes; GNU ld writes 20 (sha1) */
#define PAGE_SIZE_MIN 4096 /* maps start on page boundaries before a segment */
#define OVERLAP_WALK  4	   /* symbols looked back at for nested ones */

enum { DEM_UNTRIED, DEM_AS_IS, DEM_OWNED };

struct elf_sym {
	uint64_t addr;
	uint64_t size;	/* 0 until finish() when the symbol had none */
	uint64_t limit; /* the end of the symbol's section, 0 if unknown */
	char *demangled;
	uint32_t name;	    /* offset into strs */
	unsigned char rank; /* lower wins a shared address */
	unsigned char weak;
	unsigned char dem; /* DEM_* */
};

struct load_seg {
	uint64_t off, vaddr, filesz;
};

struct elf_syms {
	struct elf_sym *syms;
	size_t n;
	char *strs; /* a copy of the string table the names index */
	struct load_seg *segs;
	size_t nsegs;
	char *debug_file;
	char build_id[2 * MAX_BUILD_ID + 1];
	int perf_rank; /* shared addresses ranked as perf does (the vDSO: rank_perf) */
};

static void set_build_id(struct elf_syms *es, const unsigned char *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		es->build_id[2 * i] = hex[p[i] >> 4];
		es->build_id[2 * i + 1] = hex[p[i] & 15];
	}
	es->build_id[2 * n] = '\0';
}

/* Finds a GNU build-id note in d; 1 when found. */
static int note_build_id(struct elf_syms *es, Elf_Data *d)
{
	GElf_Nhdr nh;
	size_t off = 0, next, name_off, desc_off;

	if (!d || !d->d_buf)
		return 0;
	while (off < d->d_size && (next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		const char *base = d->d_buf;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && memcmp(base + name_off, "GNU", 4) == 0 &&
		    nh.n_descsz > 0 && nh.n_descsz <= MAX_BUILD_ID) {
			set_build_id(es, (const unsigned char *)base + desc_off, nh.n_descsz);
			return 1;
		}
		off = next;
	}
	return 0;
}

/* The build-id from the note sections, else from PT_NOTE segments. */
static void read_build_id(struct elf_syms *es, Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Phdr ph;
	size_t nph = 0;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE && note_build_id(es, elf_getdata(scn, NULL)))
			return;
	if (elf_getphdrnum(elf, &nph) != 0)
		return;
	for (size_t i = 0; i < nph; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE || ph.p_offset > INT64_MAX)
			continue;
		if (note_build_id(es, elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz, ELF_T_NHDR)))
			return;
	}
}

static int read_segments(struct elf_syms *es, Elf *elf)
{
	GElf_Phdr ph;
	size_t nph = 0;

	if (elf_getphdrnum(elf, &nph) != 0 || !nph)
		return 0;
	es->segs = calloc(nph, sizeof(*es->segs));
	if (!es->segs)
		return -1;
	for (size_t i = 0; i < nph; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_filesz)
			es->segs[es->nsegs++] = (struct load_seg){ ph.p_offset, ph.p_vaddr, ph.p_filesz };
	return 0;
}

/* Of the symbols sharing an address, the one a reader knows: with a size,
 * visible (global or weak) rather than a local alias; then (in cmp_sym) fewer
 * leading underscores, global over weak, the longer name. So libc's write,
 * not __GI___libc_write, __libc_write or __write (debug file) or __write
 * (.dynsym). */
static unsigned char rank_of(const GElf_Sym *s)
{
	int bind = GELF_ST_BIND(s->st_info);
	return (unsigned char)((s->st_size ? 0 : 2) + (bind == STB_GLOBAL || bind == STB_WEAK ? 0 : 1));
}

/* perf's choice (choose_best_symbol): with a size, not weak, global, and only
 * then fewer leading underscores. So the vDSO's __vdso_clock_gettime (global),
 * not its weak alias clock_gettime: the name perf report and perf script show
 * for [vdso] frames. */
static unsigned char rank_perf(const GElf_Sym *s)
{
	int bind = GELF_ST_BIND(s->st_info);
	return (unsigned char)((s->st_size ? 0 : 4) + (bind == STB_WEAK ? 2 : bind == STB_GLOBAL ? 0 : 1));
}

/* The end address of section shndx when it holds addr, else 0. */
static uint64_t section_end(Elf *elf, size_t shndx, uint64_t addr)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf_getscn(elf, shndx);

	if (!scn || !gelf_getshdr(scn, &sh) || addr < sh.sh_addr || addr - sh.sh_addr >= sh.sh_size)
		return 0;
	return sh.sh_addr + sh.sh_size;
}

/* Adds the defined function symbols of elf's first section of type (SHT_SYMTAB
 * or SHT_DYNSYM), with a copy of its string table. Returns how many, -1 when
 * out of memory. */
static long read_symbols(struct elf_syms *es, Elf *elf, Elf64_Word type)
{
	Elf_Scn *scn = NULL, *strscn;
	GElf_Shdr sh, strsh;
	Elf_Data *d, *strd;
	size_t nsyms, fsize;
	long found = -1;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
			break;
	if (!scn || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
		return 0;
	strscn = elf_getscn(elf, sh.sh_link);
	if (!strscn || !gelf_getshdr(strscn, &strsh) || strsh.sh_type != SHT_STRTAB)
		return 0;
	strd = elf_getdata(strscn, NULL);
	fsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	if (!strd || !strd->d_buf || !strd->d_size || !fsize)
		return 0;
	nsyms = d->d_size / fsize;

	struct elf_sym *syms = malloc((nsyms ? nsyms : 1) * sizeof(*syms));
	char *strs = malloc(strd->d_size + 1);
	size_t n = 0;
	if (!syms || !strs || strd->d_size >= UINT32_MAX)
		goto out;
	memcpy(strs, strd->d_buf, strd->d_size);
	strs[strd->d_size] = '\0';
	for (size_t i = 0; i < nsyms; i++) {
		GElf_Sym s;
		int t;
		if (!gelf_getsym(d, (int)i, &s))
			continue;
		t = GELF_ST_TYPE(s.st_info);
		if ((t != STT_FUNC && t != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF || !s.st_value || !s.st_name ||
		    s.st_name >= strd->d_size || !strs[s.st_name])
			continue;
		syms[n++] = (struct elf_sym){
			.addr = s.st_value,
			.size = s.st_size,
			.limit = s.st_size || s.st_shndx >= SHN_LORESERVE ? 0 :
									    section_end(elf, s.st_shndx, s.st_value),
			.name = (uint32_t)s.st_name,
			.rank = es->perf_rank ? rank_perf(&s) : rank_of(&s),
			.weak = GELF_ST_BIND(s.st_info) == STB_WEAK,
		};
	}
	found = (long)n;
	if (n) {
		es->syms = syms;
		es->n = n;
		es->strs = strs;
		syms = NULL;
		strs = NULL;
	}
out:
	free(syms);
	free(strs);
	return found;
}

static int cmp_sym(const void *pa, const void *pb, void *strs)
{
	const struct elf_sym *a = pa, *b = pb;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	struct sym_choice ca = { a->rank, a->weak, (const char *)strs + a->name, 0 },
			  cb = { b->rank, b->weak, (const char *)strs + b->name, 0 };
	return sym_choice_cmp(&ca, &cb);
}

/* Sorts, keeps the preferred symbol per address, and gives symbols without
 * a size the distance to the next one (within their section). */
static void finish(struct elf_syms *es)
{
	size_t n = 0;

	if (!es->n)
		return;
	qsort_r(es->syms, es->n, sizeof(*es->syms), cmp_sym, es->strs);
	for (size_t i = 0; i < es->n; i++)
		if (!n || es->syms[n - 1].addr != es->syms[i].addr)
			es->syms[n++] = es->syms[i];
	es->n = n;
	for (size_t i = 0; i < n; i++) {
		struct elf_sym *s = &es->syms[i];
		uint64_t end = i + 1 < n ? es->syms[i + 1].addr : UINT64_MAX;
		if (s->size)
			continue;
		if (s->limit > s->addr && s->limit < end)
			end = s->limit;
		s->size = end == UINT64_MAX ? 1 : end - s->addr;
	}
}

/* Opens path read-only for what it must be: through target_file, a regular
 * file (not a FIFO or a device a hostile debuglink could name) that the
 * process's user may read, links resolved inside its root. fd or -1 with
 * errno (EINVAL: not a regular file, EPERM: refused). */
static int open_regular(const char *path, struct stat *st)
{
	char why[256];
	int fd = target_file_open(path, TARGET_FILE_READABLE | TARGET_FILE_QUIET, ELF_MAX_FILE, st, why, sizeof(why));
	if (fd == -2) {
		errno = strstr(why, "not a regular file") ? EINVAL : EPERM;
		if (errno == EPERM)
			target_file_warn(path, why);
		return -1;
	}
	return fd;
}

static int crc_matches(int fd, uint32_t want)
{
	unsigned char buf[1 << 16];
	uLong crc = crc32(0L, Z_NULL, 0);
	off_t pos = 0;
	ssize_t got;

	while ((got = pread(fd, buf, sizeof(buf), pos)) > 0) {
		crc = crc32(crc, buf, (uInt)got);
		pos += got;
	}
	return got == 0 && (uint32_t)crc == want;
}

/* The .gnu_debuglink name (a plain file name) and CRC; 1 when there is one. */
static int read_debuglink(Elf *elf, char *name, size_t namelen, uint32_t *crc)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;
	const char *sname;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || !(sname = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(sname, ".gnu_debuglink") != 0)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		const unsigned char *p = d ? d->d_buf : NULL;
		size_t len = p ? strnlen((const char *)p, d->d_size) : 0;
		size_t at = (len + 4) & ~(size_t)3; /* the NUL, then 4-byte aligned */
		if (!len || len >= namelen || at + 4 > d->d_size || memchr(p, '/', len) ||
		    strcmp((const char *)p, ".") == 0 || strcmp((const char *)p, "..") == 0)
			return 0;
		memcpy(name, p, len + 1);
		if (elf_getident(elf, NULL)[EI_DATA] == ELFDATA2MSB)
			*crc = (uint32_t)p[at] << 24 | (uint32_t)p[at + 1] << 16 | (uint32_t)p[at + 2] << 8 | p[at + 3];
		else
			*crc = (uint32_t)p[at + 3] << 24 | (uint32_t)p[at + 2] << 16 | (uint32_t)p[at + 1] << 8 | p[at];
		return 1;
	}
	return 0;
}

/* Tries one candidate debug file: a regular file other than the main one, an
 * ELF file with a matching build-id (when want_id) or CRC (when !want_id),
 * with function symbols in a .symtab. 1 when its symbols were taken. */
static int try_debug_file(struct elf_syms *es, const char *path, const struct stat *main_st, int want_id, uint32_t crc)
{
	struct elf_syms probe = { 0 };
	struct stat st;
	Elf *elf = NULL;
	int fd, used = 0;

	fd = open_regular(path, &st);
	if (fd < 0)
		return 0;
	if (st.st_dev == main_st->st_dev && st.st_ino == main_st->st_ino)
		goto out;
	if (!want_id && !crc_matches(fd, crc))
		goto out;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		goto out;
	if (want_id) {
		read_build_id(&probe, elf);
		if (strcmp(probe.build_id, es->build_id) != 0)
			goto out;
	}
	if (read_symbols(es, elf, SHT_SYMTAB) > 0) {
		es->debug_file = strdup(path);
		used = 1;
	}
out:
	elf_end(elf);
	close(fd);
	return used;
}

/* try_debug_file on the path fmt makes; 0 when it would be too long. */
static __attribute__((format(printf, 5, 6))) int try_debug_path(struct elf_syms *es, const struct stat *main_st,
								int want_id, uint32_t crc, const char *fmt, ...)
{
	char path[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	return n > 0 && (size_t)n < sizeof(path) && try_debug_file(es, path, main_st, want_id, crc);
}

/* Looks for a separate debug file with a .symtab, in gdb's order: by build-id
 * under root, then the debuglink name next to the file, in its .debug/, and
 * under root's /usr/lib/debug mirror of the file's directory. root has no
 * trailing slash. */
static void read_debug_symbols(struct elf_syms *es, Elf *elf, const char *path, const char *root,
			       const struct stat *main_st)
{
	const char *id = es->build_id, *slash = strrchr(path, '/'), *rel;
	char name[256];
	uint32_t crc = 0;
	size_t rootlen = strlen(root);
	int dirlen = slash ? (int)(slash - path) : 1;

	if (strlen(id) >= 4 &&
	    try_debug_path(es, main_st, 1, 0, "%s/usr/lib/debug/.build-id/%.2s/%s.debug", root, id, id + 2))
		return;
	if (!read_debuglink(elf, name, sizeof(name), &crc))
		return;
	if (!slash)
		path = ".";
	/* the file's directory as seen under root, for root's debug mirror */
	rel = path;
	if (rootlen && (size_t)dirlen >= rootlen && strncmp(path, root, rootlen) == 0 &&
	    (path[rootlen] == '/' || (size_t)dirlen == rootlen))
		rel = path + rootlen;
	int rellen = dirlen - (int)(rel - path);
	if (try_debug_path(es, main_st, 0, crc, "%.*s/%s", dirlen, path, name) ||
	    try_debug_path(es, main_st, 0, crc, "%.*s/.debug/%s", dirlen, path, name))
		return;
	try_debug_path(es, main_st, 0, crc, "%s/usr/lib/debug%s%.*s/%s", root, *rel == '/' ? "" : "/", rellen, rel,
		       name);
}

/* Reads elf's segments, build-id and symbols into es: .symtab, else (with
 * path: a file to look for separate debug files of) a debug file's .symtab,
 * else .dynsym. 0, or -1 when out of memory. */
static int load_elf(struct elf_syms *es, Elf *elf, const char *path, const char *root, const struct stat *st)
{
	char rootbuf[4096];

	if (read_segments(es, elf) != 0)
		return -1;
	read_build_id(es, elf);
	long n = read_symbols(es, elf, SHT_SYMTAB);
	if (n == 0 && path) {
		/* root without trailing slashes: "" for "/" */
		int rootlen = root ? (int)strlen(root) : 0;
		while (rootlen && root[rootlen - 1] == '/')
			rootlen--;
		snprintf(rootbuf, sizeof(rootbuf), "%.*s", rootlen, rootlen ? root : "");
		read_debug_symbols(es, elf, path, rootbuf, st);
		n = (long)es->n;
	}
	if (n == 0)
		n = read_symbols(es, elf, SHT_DYNSYM);
	if (n < 0)
		return -1;
	finish(es);
	return 0;
}

/* Loads from fd, open on path; the caller closes fd. */
static struct elf_syms *load_fd(int fd, const struct stat *st, const char *path, const char *root, char *err,
				size_t errlen)
{
	struct elf_syms *es = calloc(1, sizeof(*es));
	Elf *elf = NULL;
	GElf_Ehdr eh;
	int ok = 0;

	if (!es) {
		snprintf(err, errlen, "out of memory loading %s", path);
		goto out;
	}
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		snprintf(err, errlen, "%s is not an ELF file", path);
		goto out;
	}
	if (load_elf(es, elf, path, root, st) != 0) {
		snprintf(err, errlen, "out of memory loading %s", path);
		goto out;
	}
	ok = 1;
out:
	elf_end(elf);
	if (!ok) {
		elf_syms_free(es);
		es = NULL;
	}
	return es;
}

struct elf_syms *elf_syms_load_vdso(const void *image, size_t size, char *err, size_t errlen)
{
	struct elf_syms *es = calloc(1, sizeof(*es));
	char *copy = size ? malloc(size) : NULL; /* libelf's to read: the image itself is read-only */
	Elf *elf = NULL;
	GElf_Ehdr eh;
	int ok = 0;

	if (!es || !copy) {
		snprintf(err, errlen, "out of memory loading the vDSO");
		goto out;
	}
	memcpy(copy, image, size);
	es->perf_rank = 1;
	elf_version(EV_CURRENT);
	elf = elf_memory(copy, size);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		snprintf(err, errlen, "the vDSO is not an ELF image");
		goto out;
	}
	if (load_elf(es, elf, NULL, NULL, NULL) != 0) {
		snprintf(err, errlen, "out of memory loading the vDSO");
		goto out;
	}
	ok = 1;
out:
	elf_end(elf); /* es keeps copies of what it needs */
	free(copy);
	if (!ok) {
		elf_syms_free(es);
		es = NULL;
	}
	return es;
}

struct elf_syms *elf_syms_load(const char *path, const char *root, char *err, size_t errlen)
{
	struct elf_syms *es = NULL;
	struct stat st;
	int fd;

	fd = open_regular(path, &st);
	if (fd < 0) {
		if (errno == EINVAL)
			snprintf(err, errlen, "%s is not a regular file", path);
		else
			snprintf(err, errlen, "failed to open %s: %s", path, strerror(errno));
		return NULL;
	}
	es = load_fd(fd, &st, path, root, err, errlen);
	close(fd);
	return es;
}

void elf_syms_free(struct elf_syms *es)
{
	if (!es)
		return;
	for (size_t i = 0; i < es->n; i++)
		if (es->syms[i].dem == DEM_OWNED)
			free(es->syms[i].demangled);
	free(es->syms);
	free(es->strs);
	free(es->segs);
	free(es->debug_file);
	free(es);
}

/* The virtual address of file offset off: inside a PT_LOAD's file bytes, else
 * in the page before one (a map starts on a page boundary). */
static int to_vaddr(const struct elf_syms *es, uint64_t off, uint64_t *vaddr)
{
	if (!es->nsegs) {
		*vaddr = off;
		return 1;
	}
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < es->nsegs; i++) {
			const struct load_seg *s = &es->segs[i];
			uint64_t start = pass ? s->off & ~(uint64_t)(PAGE_SIZE_MIN - 1) : s->off;
			if (off >= start && off - s->off < s->filesz) {
				*vaddr = off - s->off + s->vaddr;
				return 1;
			}
			if (pass && off >= start && off < s->off) {
				*vaddr = s->vaddr - (s->off - off);
				return 1;
			}
		}
	}
	return 0;
}

static const char *sym_name(struct elf_syms *es, struct elf_sym *s)
{
	const char *raw = es->strs + s->name;

	if (s->dem == DEM_UNTRIED) {
		char *d = raw[0] == '_' && raw[1] == 'Z' ? cplus_demangle(raw, DMGL_ANSI) : NULL;
		const char *at = d ? NULL : strchr(raw, '@');
		/* a symbol version ("clock_gettime@@GLIBC_2.17") is not part of the name */
		if (at && at > raw)
			d = strndup(raw, (size_t)(at - raw));
		/* a target's file: its names are its text, escaped once here */
		const char *name = d ? d : raw;
		size_t n = strlen(name);
		if (text_needs_escape(name, n)) {
			size_t need = text_escape(NULL, 0, name, n) + 1;
			char *e = malloc(need);
			if (e)
				text_escape(e, need, name, n);
			free(d);
			if (!e)
				return "[unknown]";
			d = e;
		}
		s->demangled = d;
		s->dem = d ? DEM_OWNED : DEM_AS_IS;
	}
	return s->dem == DEM_OWNED ? s->demangled : raw;
}

const char *elf_syms_lookup(struct elf_syms *es, uint64_t off, uint64_t *sym_off)
{
	uint64_t va;
	size_t lo = 0, hi = es->n;

	if (!to_vaddr(es, off, &va))
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (es->syms[mid].addr <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the last symbol starting at or below va, or one just before it that
	 * encloses it (a function with a nested alias or a cold part) */
	for (size_t k = 0; k < OVERLAP_WALK && lo > 0; k++, lo--) {
		struct elf_sym *s = &es->syms[lo - 1];
		if (va - s->addr < s->size) {
			if (sym_off)
				*sym_off = va - s->addr;
			return sym_name(es, s);
		}
	}
	return NULL;
}

const char *elf_syms_build_id(const struct elf_syms *es)
{
	return es->build_id;
}

size_t elf_syms_count(const struct elf_syms *es)
{
	return es->n;
}

const char *elf_syms_debug_file(const struct elf_syms *es)
{
	return es->debug_file;
}

/* The cache: chained buckets keyed by (dev, ino), or by path for a file that
 * could not even be opened. */
struct cache_entry {
	struct cache_entry *next;
	dev_t dev;
	ino_t ino;
	char *path; /* set for path-keyed failures */
	struct elf_syms *es;
};

struct elf_cache {
	struct cache_entry **buckets;
	size_t nbuckets, n;
};

static size_t hash_key(dev_t dev, ino_t ino, const char *path)
{
	uint64_t h;

	if (path) {
		h = str_hash(path, strlen(path));
	} else {
		h = (uint64_t)dev * 0x9e3779b97f4a7c15ULL;
		h = (h ^ (uint64_t)ino) * 0xff51afd7ed558ccdULL;
		h ^= h >> 33;
	}
	return (size_t)h;
}

struct elf_cache *elf_cache_new(void)
{
	struct elf_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->nbuckets = 256;
	c->buckets = calloc(c->nbuckets, sizeof(*c->buckets));
	if (!c->buckets) {
		free(c);
		return NULL;
	}
	return c;
}

void elf_cache_free(struct elf_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nbuckets; i++) {
		struct cache_entry *e = c->buckets[i], *next;
		for (; e; e = next) {
			next = e->next;
			elf_syms_free(e->es);
			free(e->path);
			free(e);
		}
	}
	free(c->buckets);
	free(c);
}

static struct cache_entry *cache_find(struct elf_cache *c, dev_t dev, ino_t ino, const char *path)
{
	struct cache_entry *e = c->buckets[hash_key(dev, ino, path) & (c->nbuckets - 1)];

	for (; e; e = e->next)
		if (path ? e->path && strcmp(e->path, path) == 0 : !e->path && e->dev == dev && e->ino == ino)
			return e;
	return NULL;
}

/* Doubles the buckets when entries outnumber them; a failure just keeps the
 * chains longer. */
static void cache_grow(struct elf_cache *c)
{
	size_t nb = c->nbuckets * 2;
	struct cache_entry **b = calloc(nb, sizeof(*b));

	if (!b)
		return;
	for (size_t i = 0; i < c->nbuckets; i++) {
		struct cache_entry *e = c->buckets[i], *next;
		for (; e; e = next) {
			size_t h = hash_key(e->dev, e->ino, e->path) & (nb - 1);
			next = e->next;
			e->next = b[h];
			b[h] = e;
		}
	}
	free(c->buckets);
	c->buckets = b;
	c->nbuckets = nb;
}

/* Remembers es (NULL: a failure) under the key; es is freed if that fails. */
static struct elf_syms *cache_add(struct elf_cache *c, dev_t dev, ino_t ino, const char *path, struct elf_syms *es)
{
	struct cache_entry *e = calloc(1, sizeof(*e));

	if (!e || (path && !(e->path = strdup(path)))) {
		free(e);
		elf_syms_free(es);
		return NULL;
	}
	e->dev = dev;
	e->ino = ino;
	e->es = es;
	if (c->n >= c->nbuckets)
		cache_grow(c);
	size_t h = hash_key(dev, ino, path) & (c->nbuckets - 1);
	e->next = c->buckets[h];
	c->buckets[h] = e;
	c->n++;
	return es;
}

struct elf_syms *elf_cache_get(struct elf_cache *c, const char *path, const char *root, uint64_t want_ino)
{
	struct cache_entry *e;
	struct elf_syms *es;
	struct stat st;
	char err[512];
	int fd;

	if (cache_find(c, 0, 0, path))
		return NULL;
	fd = open_regular(path, &st);
	if (fd < 0)
		return cache_add(c, 0, 0, path, NULL);
	if (want_ino && (uint64_t)st.st_ino != want_ino) {
		close(fd); /* not the file mapped (replaced, or another one put there) */
		return NULL;
	}
	e = cache_find(c, st.st_dev, st.st_ino, NULL);
	if (e)
		es = e->es;
	else
		es = cache_add(c, st.st_dev, st.st_ino, NULL, load_fd(fd, &st, path, root, err, sizeof(err)));
	close(fd);
	return es;
}
