/* hotspot_vm.c - reads a HotSpot JVM from outside: gHotSpotVMStructs and
 * gHotSpotVMTypes (the Serviceability Agent's tables) out of its memory with
 * process_vm_readv, the walker's layout from them, and method names. */
#include "hotspot_vm.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "hsperf.h"
#include "proc_info.h"
#include "proc_maps.h"

#define MAX_STRIDE 256         /* a table entry is well below this */
#define MAX_ENTRIES (1 << 17)  /* entries read from a table at most */
#define MAX_SYMBOL 65535       /* a Symbol's length is a u2 */
#define MAX_NAME 256           /* type, field and blob names */
#define NO_COUNTER_FLUSH_NS 1000000000ULL
#define CLOSED_KEEP_NS 5000000000ULL /* closed names serve samples this much older */
#define OPEN ((uint64_t)-1)

/* A Method*'s name, for samples taken in [from_ns, until_ns) (CLOCK_MONOTONIC):
 * a class's memory may be another class's after it is unloaded, so entries
 * are closed when the JVM reports unloading, and kept a while for the samples
 * taken before it. */
struct name_entry {
	uint64_t key;    /* Method* (0: empty) */
	uint32_t cookie; /* ConstMethod* >> 3 it was named from */
	const char *name;
	const char *source; /* "Foo.java", NULL when the class has none */
	uint64_t from_ns, until_ns;
};

#define LINE_CACHE 4096 /* direct-mapped */

struct line_entry {
	uint64_t method;
	uint32_t cookie, gen;
	int32_t bci, line;
};

struct hotspot_vm {
	pid_t pid, nspid;
	struct str_intern *si;
	hotspot_read_fn read;
	void *ctx;
	struct hotspot_layout l;
	/* the walker's layout */
	bool walkable;
	uint64_t heaps_addr, low_bound_addr, high_bound_addr, interp_code_addr;
	long ga_len, ga_data, heap_memory, heap_segmap, heap_log2_seg, vs_low, vs_high, heapblock_size;
	long sq_stub_buffer, sq_buffer_limit;
	long blob_frame_size, blob_frame_complete, blob_code_begin, blob_code_end;
	bool blob_code_offsets;
	/* names */
	struct name_entry *names;
	size_t nnames, cap;
	/* nmethod -> the name of its method, for the compile id it had: ids are
	 * never reused, so an entry never goes stale */
	struct name_entry *nms;
	size_t nnms, nmcap;
	/* (Method*, bci) -> source line, for the class unloadings seen so far */
	struct line_entry *lines;
	uint32_t unload_gen;
	int64_t unloaded;     /* java.cls.unloadedClasses when last read */
	bool have_counter;
	uint64_t checked_ns;  /* when the count was last seen unchanged */
	/* the last unloading happened in [window_ns, open_from_ns): samples from
	 * then cannot be told from the classes that replaced the unloaded ones */
	uint64_t window_ns, open_from_ns;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---- memory --------------------------------------------------------------------- */

static int remote_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	pid_t pid = (pid_t)(intptr_t)ctx;
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	if (!addr || len == 0)
		return len == 0 ? 0 : -1;
	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

static int rd(const struct hotspot_vm *vm, uint64_t addr, void *buf, size_t len)
{
	if (!addr || addr + len < addr)
		return -1;
	return vm->read(vm->ctx, addr, buf, len);
}

static uint64_t rd_u64(const struct hotspot_vm *vm, uint64_t addr)
{
	uint64_t v = 0;
	return rd(vm, addr, &v, 8) == 0 ? v : 0;
}

/* A NUL-terminated string of at most len - 1 bytes, read in small pieces so
 * one near the end of a mapping is still read. 0 when a NUL was found. */
static int rd_cstr(const struct hotspot_vm *vm, uint64_t addr, char *out, size_t len)
{
	size_t got = 0;
	while (got + 1 < len) {
		size_t chunk = 32 - ((addr + got) & 31);
		if (chunk > len - 1 - got)
			chunk = len - 1 - got;
		if (rd(vm, addr + got, out + got, chunk) != 0)
			return -1;
		void *nul = memchr(out + got, '\0', chunk);
		if (nul)
			return 0;
		got += chunk;
	}
	out[len - 1] = '\0';
	return -1;
}

/* ---- the tables ------------------------------------------------------------------ */

enum { S_BASE, S_STRIDE, S_TYPE, S_FIELD, S_STATIC, S_OFFSET, S_ADDRESS, T_BASE, T_STRIDE, T_TYPE, T_SIZE, NSYMS };

static const char *const sym_names[NSYMS] = {
	"gHotSpotVMStructs", "gHotSpotVMStructEntryArrayStride", "gHotSpotVMStructEntryTypeNameOffset",
	"gHotSpotVMStructEntryFieldNameOffset", "gHotSpotVMStructEntryIsStaticOffset",
	"gHotSpotVMStructEntryOffsetOffset", "gHotSpotVMStructEntryAddressOffset", "gHotSpotVMTypes",
	"gHotSpotVMTypeEntryArrayStride", "gHotSpotVMTypeEntryTypeNameOffset", "gHotSpotVMTypeEntrySizeOffset",
};

/* The run-time addresses of the table symbols: libjvm's dynamic symbols plus
 * its load bias (the mapping of its first PT_LOAD segment). */
static int find_symbols(const char *path, uint64_t map_start, uint64_t map_offset, uint64_t addr[NSYMS], char *err,
			size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = -1;
	Elf *e = NULL;
	size_t phnum, found = 0;
	uint64_t bias = 0;
	bool have_bias = false;
	memset(addr, 0, NSYMS * sizeof(addr[0]));
	if (fd < 0) {
		snprintf(err, errlen, "jflame: failed to open %s: %s", path, strerror(errno));
		return -1;
	}
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || elf_getphdrnum(e, &phnum) != 0) {
		snprintf(err, errlen, "jflame: %s is not an ELF file", path);
		goto out;
	}
	for (size_t i = 0; i < phnum && !have_bias; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_offset <= map_offset) {
			/* the mapping at map_offset holds this segment's bytes */
			bias = map_start - map_offset - (ph.p_vaddr - ph.p_offset);
			have_bias = true;
		}
	}
	for (Elf_Scn *scn = NULL; have_bias && (scn = elf_nextscn(e, scn)) != NULL && found < NSYMS;) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t n = d ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t i = 0; i < n && found < NSYMS; i++) {
			GElf_Sym s;
			const char *name;
			if (!gelf_getsym(d, (int)i, &s) || !s.st_value || !(name = elf_strptr(e, sh.sh_link, s.st_name)))
				continue;
			if (name[0] != 'g' || strncmp(name, "gHotSpotVM", 10) != 0)
				continue;
			for (int k = 0; k < NSYMS; k++)
				if (!addr[k] && strcmp(name, sym_names[k]) == 0)
					addr[k] = s.st_value + bias, found++;
		}
	}
	if (found < NSYMS)
		snprintf(err, errlen, "jflame: %s does not export HotSpot's gHotSpotVMStructs tables", path);
	else
		rc = 0;
out:
	if (e)
		elf_end(e);
	close(fd);
	return rc;
}

/* What the tables say, as the walker and the names need it. */
struct tables {
	long f[64];
	uint64_t a[16];
};

enum field {
	F_HEAP_MEMORY, F_HEAP_SEGMAP, F_HEAP_LOG2, F_VS_LOW, F_VS_HIGH, F_GA_LEN, F_GA_DATA, F_SQ_BUF, F_SQ_LIMIT,
	F_BLOB_NAME, F_BLOB_FRAME_SIZE, F_BLOB_COMPLETE, F_BLOB_CODE_BEGIN, F_BLOB_CODE_END, F_BLOB_CODE_OFFSET,
	F_BLOB_DATA_OFFSET, F_NM_COMPILE_ID, F_NM_METHOD, F_METHOD_CM, F_CM_CONSTANTS, F_CM_NAME, F_CM_CODE_SIZE,
	F_CM_FLAGS, F_CM_FLAGS2, F_CP_HOLDER, F_CP_SOURCE, F_KLASS_NAME, F_SYM_LENGTH, F_SYM_LENREF, F_SYM_BODY,
	T_HEAPBLOCK, T_CONSTMETHOD, T_CONSTANTPOOL, NFIELDS
};
enum statics { A_HEAPS, A_LOW, A_HIGH, A_INTERP, A_MAJOR, NSTATICS };

static const struct {
	const char *type, *field;
	int id;
} wanted[] = {
	{ "CodeHeap", "_memory", F_HEAP_MEMORY },
	{ "CodeHeap", "_segmap", F_HEAP_SEGMAP },
	{ "CodeHeap", "_log2_segment_size", F_HEAP_LOG2 },
	{ "VirtualSpace", "_low_boundary", F_VS_LOW },
	{ "VirtualSpace", "_high_boundary", F_VS_HIGH },
	{ "GrowableArrayBase", "_len", F_GA_LEN },
	{ "GenericGrowableArray", "_len", F_GA_LEN },
	{ "GrowableArray<int>", "_data", F_GA_DATA },
	{ "StubQueue", "_stub_buffer", F_SQ_BUF },
	{ "StubQueue", "_buffer_limit", F_SQ_LIMIT },
	{ "CodeBlob", "_name", F_BLOB_NAME },
	{ "CodeBlob", "_frame_size", F_BLOB_FRAME_SIZE },
	{ "CodeBlob", "_frame_complete_offset", F_BLOB_COMPLETE },
	{ "CodeBlob", "_code_begin", F_BLOB_CODE_BEGIN },
	{ "CodeBlob", "_code_end", F_BLOB_CODE_END },
	{ "CodeBlob", "_code_offset", F_BLOB_CODE_OFFSET },
	{ "CodeBlob", "_data_offset", F_BLOB_DATA_OFFSET },
	{ "nmethod", "_compile_id", F_NM_COMPILE_ID },
	{ "nmethod", "_method", F_NM_METHOD },
	{ "CompiledMethod", "_method", F_NM_METHOD },
	{ "Method", "_constMethod", F_METHOD_CM },
	{ "ConstMethod", "_constants", F_CM_CONSTANTS },
	{ "ConstMethod", "_name_index", F_CM_NAME },
	{ "ConstMethod", "_code_size", F_CM_CODE_SIZE },
	{ "ConstMethod", "_flags", F_CM_FLAGS },
	{ "ConstMethod", "_flags._flags", F_CM_FLAGS2 },
	{ "ConstantPool", "_pool_holder", F_CP_HOLDER },
	{ "ConstantPool", "_source_file_name_index", F_CP_SOURCE },
	{ "Klass", "_name", F_KLASS_NAME },
	{ "Symbol", "_length", F_SYM_LENGTH },
	{ "Symbol", "_length_and_refcount", F_SYM_LENREF },
	{ "Symbol", "_body", F_SYM_BODY },
};

static const struct {
	const char *type, *field;
	int id;
} wanted_static[] = {
	{ "CodeCache", "_heaps", A_HEAPS },
	{ "CodeCache", "_low_bound", A_LOW },
	{ "CodeCache", "_high_bound", A_HIGH },
	{ "AbstractInterpreter", "_code", A_INTERP },
	{ "Abstract_VM_Version", "_vm_major_version", A_MAJOR },
};

static const struct {
	const char *type;
	int id;
} wanted_types[] = {
	{ "HeapBlock", T_HEAPBLOCK },
	{ "ConstMethod", T_CONSTMETHOD },
	{ "ConstantPool", T_CONSTANTPOOL },
};

/* Reads one table: each entry's type name (and field name) through a cache of
 * the last few strings (entries of one type share their name's pointer). */
static int read_table(const struct hotspot_vm *vm, const uint64_t sym[NSYMS], bool types, struct tables *t)
{
	uint64_t base = rd_u64(vm, sym[types ? T_BASE : S_BASE]);
	uint64_t stride = rd_u64(vm, sym[types ? T_STRIDE : S_STRIDE]);
	uint64_t type_off = rd_u64(vm, sym[types ? T_TYPE : S_TYPE]);
	uint64_t field_off = types ? 0 : rd_u64(vm, sym[S_FIELD]);
	uint64_t static_off = types ? 0 : rd_u64(vm, sym[S_STATIC]);
	uint64_t offset_off = types ? 0 : rd_u64(vm, sym[S_OFFSET]);
	uint64_t address_off = types ? 0 : rd_u64(vm, sym[S_ADDRESS]);
	uint64_t size_off = types ? rd_u64(vm, sym[T_SIZE]) : 0;
	unsigned char e[MAX_STRIDE];
	char type[MAX_NAME], field[MAX_NAME];
	uint64_t type_ptr = 0;
	if (!base || !stride || stride > MAX_STRIDE || type_off + 8 > stride || field_off + 8 > stride ||
	    static_off + 4 > stride || offset_off + 8 > stride || address_off + 8 > stride || size_off + 8 > stride)
		return -1;
	type[0] = '\0';
	for (uint64_t i = 0; i < MAX_ENTRIES; i++) {
		uint64_t tp, fp, v;
		if (rd(vm, base + i * stride, e, stride) != 0)
			return -1;
		memcpy(&tp, e + type_off, 8);
		if (!tp)
			return 0; /* the end */
		if (tp != type_ptr) {
			if (rd_cstr(vm, tp, type, sizeof(type)) != 0)
				continue;
			type_ptr = tp;
		}
		if (types) {
			memcpy(&v, e + size_off, 8);
			for (size_t k = 0; k < sizeof(wanted_types) / sizeof(wanted_types[0]); k++)
				if (strcmp(type, wanted_types[k].type) == 0)
					t->f[wanted_types[k].id] = (long)v;
			continue;
		}
		memcpy(&fp, e + field_off, 8);
		if (!fp || rd_cstr(vm, fp, field, sizeof(field)) != 0)
			continue;
		int32_t is_static;
		memcpy(&is_static, e + static_off, 4);
		if (is_static) {
			memcpy(&v, e + address_off, 8);
			for (size_t k = 0; k < sizeof(wanted_static) / sizeof(wanted_static[0]); k++)
				if (strcmp(type, wanted_static[k].type) == 0 && strcmp(field, wanted_static[k].field) == 0)
					t->a[wanted_static[k].id] = v;
			continue;
		}
		memcpy(&v, e + offset_off, 8);
		for (size_t k = 0; k < sizeof(wanted) / sizeof(wanted[0]); k++)
			if (strcmp(type, wanted[k].type) == 0 && strcmp(field, wanted[k].field) == 0)
				t->f[wanted[k].id] = (long)v;
	}
	return -1;
}

static void layout_from(struct hotspot_vm *vm, const struct tables *t)
{
	struct hotspot_layout *l = &vm->l;
	int32_t major = 0;
	if (t->a[A_MAJOR])
		rd(vm, t->a[A_MAJOR], &major, 4);
	l->jdk = major > 0 && major < 1000 ? major : 0;
	l->method_const_method = t->f[F_METHOD_CM];
	l->cm_constants = t->f[F_CM_CONSTANTS];
	l->cm_name_index = t->f[F_CM_NAME];
	l->cm_code_size = t->f[F_CM_CODE_SIZE];
	l->cm_flags = t->f[F_CM_FLAGS2] >= 0 ? t->f[F_CM_FLAGS2] : t->f[F_CM_FLAGS];
	l->cm_flags_size = t->f[F_CM_FLAGS2] >= 0 ? 4 : 2;
	l->cm_size = t->f[T_CONSTMETHOD];
	l->cp_pool_holder = t->f[F_CP_HOLDER];
	l->cp_source_file = t->f[F_CP_SOURCE];
	l->cp_size = t->f[T_CONSTANTPOOL];
	l->klass_name = t->f[F_KLASS_NAME];
	/* JDK 12+: the length is the high half of _length_and_refcount */
	l->symbol_length = t->f[F_SYM_LENGTH] >= 0 ? t->f[F_SYM_LENGTH] :
			   t->f[F_SYM_LENREF] >= 0 ? t->f[F_SYM_LENREF] + 2 : -1;
	l->symbol_body = t->f[F_SYM_BODY];
	l->blob_name = t->f[F_BLOB_NAME];
	l->nm_method = t->f[F_NM_METHOD];
	l->nm_compile_id = t->f[F_NM_COMPILE_ID];

	vm->heaps_addr = t->a[A_HEAPS];
	vm->low_bound_addr = t->a[A_LOW];
	vm->high_bound_addr = t->a[A_HIGH];
	vm->interp_code_addr = t->a[A_INTERP];
	vm->ga_len = t->f[F_GA_LEN];
	vm->ga_data = t->f[F_GA_DATA];
	vm->heap_memory = t->f[F_HEAP_MEMORY];
	vm->heap_segmap = t->f[F_HEAP_SEGMAP];
	vm->heap_log2_seg = t->f[F_HEAP_LOG2];
	vm->vs_low = t->f[F_VS_LOW];
	vm->vs_high = t->f[F_VS_HIGH];
	vm->heapblock_size = t->f[T_HEAPBLOCK];
	vm->sq_stub_buffer = t->f[F_SQ_BUF];
	vm->sq_buffer_limit = t->f[F_SQ_LIMIT];
	vm->blob_frame_size = t->f[F_BLOB_FRAME_SIZE];
	vm->blob_frame_complete = t->f[F_BLOB_COMPLETE];
	/* JDK 23+: the code's bounds are int offsets from the blob */
	vm->blob_code_offsets = t->f[F_BLOB_CODE_BEGIN] < 0;
	vm->blob_code_begin = vm->blob_code_offsets ? t->f[F_BLOB_CODE_OFFSET] : t->f[F_BLOB_CODE_BEGIN];
	vm->blob_code_end = vm->blob_code_offsets ? t->f[F_BLOB_DATA_OFFSET] : t->f[F_BLOB_CODE_END];
	long need[] = { vm->ga_len,          vm->ga_data,         vm->heap_memory,      vm->heap_segmap,
			vm->heap_log2_seg,   vm->vs_low,          vm->vs_high,          vm->heapblock_size,
			vm->sq_stub_buffer,  vm->sq_buffer_limit, vm->blob_frame_size,  vm->blob_frame_complete,
			vm->blob_code_begin, vm->blob_code_end,   l->blob_name,         l->nm_compile_id,
			l->method_const_method, l->cm_size };
	vm->walkable = vm->heaps_addr && vm->low_bound_addr && vm->high_bound_addr && vm->interp_code_addr;
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		vm->walkable = vm->walkable && need[i] >= 0 && need[i] <= 0xffff;
}

static struct hotspot_vm *vm_alloc(struct str_intern *si)
{
	struct hotspot_vm *vm = calloc(1, sizeof(*vm));
	if (!vm)
		return NULL;
	vm->si = si;
	vm->cap = 1024;
	vm->names = calloc(vm->cap, sizeof(*vm->names));
	if (!vm->names) {
		free(vm);
		return NULL;
	}
	vm->unloaded = -1;
	vm->nmcap = 256;
	vm->nms = calloc(vm->nmcap, sizeof(*vm->nms));
	vm->lines = calloc(LINE_CACHE, sizeof(*vm->lines));
	if (!vm->nms || !vm->lines) {
		free(vm->names);
		free(vm->nms);
		free(vm->lines);
		free(vm);
		return NULL;
	}
	return vm;
}

struct hotspot_vm *hotspot_vm_open(pid_t pid, struct str_intern *si, char *err, size_t errlen)
{
	char path[64], file[4200];
	struct proc_maps pm = { 0 };
	const struct proc_map *jvm = NULL;
	uint64_t sym[NSYMS];
	struct tables t;
	struct hotspot_vm *vm = NULL;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (proc_maps_load(&pm, path, err, errlen) != 0)
		return NULL;
	for (size_t i = 0; i < pm.n && !jvm; i++) {
		const char *slash = strrchr(pm.maps[i].path, '/');
		if (slash && strcmp(slash, "/libjvm.so") == 0)
			jvm = &pm.maps[i];
	}
	if (!jvm) {
		snprintf(err, errlen, "jflame: pid %d is not a HotSpot JVM (no libjvm.so)", (int)pid);
		goto fail;
	}
	/* the mapping with the lowest offset comes first in /proc/PID/maps */
	snprintf(file, sizeof(file), "/proc/%d/root%s", (int)pid, jvm->path);
	if (find_symbols(file, jvm->start, jvm->offset, sym, err, errlen) != 0) {
		snprintf(file, sizeof(file), "/proc/%d/map_files/%lx-%lx", (int)pid, (unsigned long)jvm->start,
			 (unsigned long)jvm->end);
		if (find_symbols(file, jvm->start, jvm->offset, sym, err, errlen) != 0)
			goto fail;
	}
	vm = vm_alloc(si);
	if (!vm) {
		snprintf(err, errlen, "jflame: out of memory");
		goto fail;
	}
	vm->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	vm->nspid = proc_info_nspid(path, pid);
	vm->read = remote_read;
	vm->ctx = (void *)(intptr_t)pid;
	for (size_t i = 0; i < sizeof(t.f) / sizeof(t.f[0]); i++)
		t.f[i] = -1;
	memset(t.a, 0, sizeof(t.a));
	if (read_table(vm, sym, false, &t) != 0 || read_table(vm, sym, true, &t) != 0) {
		snprintf(err, errlen, "jflame: failed to read HotSpot's tables from pid %d (a JVM still starting?)",
			 (int)pid);
		goto fail;
	}
	layout_from(vm, &t);
	if (vm->l.method_const_method < 0 || vm->l.cm_size <= 0 || vm->l.cm_constants < 0 || vm->l.cp_size <= 0 ||
	    vm->l.cp_pool_holder < 0 || vm->l.klass_name < 0 || vm->l.symbol_length < 0 || vm->l.symbol_body < 0) {
		snprintf(err, errlen, "jflame: pid %d: this JVM's tables lack the fields jflame names methods with",
			 (int)pid);
		goto fail;
	}
	vm->have_counter = hsperf_read_long(pid, vm->nspid, "java.cls.unloadedClasses", &vm->unloaded) == 0;
	vm->checked_ns = mono_ns();
	proc_maps_free(&pm);
	return vm;
fail:
	proc_maps_free(&pm);
	hotspot_vm_free(vm);
	return NULL;
}

struct hotspot_vm *hotspot_vm_new(const struct hotspot_layout *l, hotspot_read_fn read, void *ctx,
				  struct str_intern *si)
{
	struct hotspot_vm *vm = vm_alloc(si);
	if (!vm)
		return NULL;
	vm->l = *l;
	vm->read = read;
	vm->ctx = ctx;
	return vm;
}

void hotspot_vm_free(struct hotspot_vm *vm)
{
	if (!vm)
		return;
	free(vm->names);
	free(vm->nms);
	free(vm->lines);
	free(vm);
}

const struct hotspot_layout *hotspot_vm_layout(const struct hotspot_vm *vm)
{
	return &vm->l;
}

/* ---- the walker's layout ------------------------------------------------------- */

int hotspot_vm_walker_info(struct hotspot_vm *vm, struct hotspot_proc *out)
{
	uint64_t heaps, data, low, high, stubq, buf;
	int32_t len = 0, limit = 0, log2 = 0;
	if (!vm->walkable)
		return -1;
	memset(out, 0, sizeof(*out));
	heaps = rd_u64(vm, vm->heaps_addr);
	low = rd_u64(vm, vm->low_bound_addr);
	high = rd_u64(vm, vm->high_bound_addr);
	stubq = rd_u64(vm, vm->interp_code_addr);
	if (!heaps || !low || !high || high <= low || !stubq)
		return 0; /* not set up yet */
	if (rd(vm, heaps + (uint64_t)vm->ga_len, &len, 4) != 0 || !(data = rd_u64(vm, heaps + (uint64_t)vm->ga_data)))
		return 0;
	if (len <= 0)
		return 0;
	if (len > PROFILE_HOTSPOT_HEAPS)
		return -1;
	for (int32_t i = 0; i < len; i++) {
		uint64_t heap = rd_u64(vm, data + 8 * (uint64_t)i);
		if (!heap || rd(vm, heap + (uint64_t)vm->heap_log2_seg, &log2, 4) != 0)
			return 0;
		out->heap_low[i] = rd_u64(vm, heap + (uint64_t)vm->heap_memory + (uint64_t)vm->vs_low);
		out->heap_high[i] = rd_u64(vm, heap + (uint64_t)vm->heap_memory + (uint64_t)vm->vs_high);
		out->heap_segmap[i] = rd_u64(vm, heap + (uint64_t)vm->heap_segmap + (uint64_t)vm->vs_low);
		if (!out->heap_low[i] || out->heap_high[i] <= out->heap_low[i] || !out->heap_segmap[i])
			return 0;
		if (log2 < 4 || log2 > 16 || (out->segment_shift && out->segment_shift != (__u32)log2))
			return -1;
		out->segment_shift = (__u32)log2;
	}
	out->nheaps = (__u32)len;
	buf = rd_u64(vm, stubq + (uint64_t)vm->sq_stub_buffer);
	if (!buf || rd(vm, stubq + (uint64_t)vm->sq_buffer_limit, &limit, 4) != 0 || limit <= 0)
		return 0;
	out->code_low = low;
	out->code_high = high;
	out->interp_low = buf;
	out->interp_high = buf + (uint64_t)limit;
	out->heapblock_size = (__u32)vm->heapblock_size;
	out->blob_name = (__u16)vm->l.blob_name;
	out->blob_frame_size = (__u16)vm->blob_frame_size;
	out->blob_frame_complete = (__u16)vm->blob_frame_complete;
	out->blob_code_begin = (__u16)vm->blob_code_begin;
	out->blob_code_end = (__u16)vm->blob_code_end;
	out->nmethod_compile_id = (__u16)vm->l.nm_compile_id;
	out->method_const_method = (__u16)vm->l.method_const_method;
	out->const_method_size = (__u16)vm->l.cm_size;
	out->blob_code_offsets = vm->blob_code_offsets;
	long last = 0, fields[] = { vm->l.blob_name, vm->blob_frame_size, vm->blob_frame_complete,
				    vm->blob_code_begin, vm->blob_code_end, vm->l.nm_compile_id };
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		last = fields[i] > last ? fields[i] : last;
	if (last + 8 > 512)
		return -1;
	out->blob_header = (__u16)((last + 8 + 63) & ~63L);
	return 1;
}

/* ---- names ------------------------------------------------------------------------ */

static size_t slot_of(const struct hotspot_vm *vm, uint64_t key)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ULL;
	return (size_t)(h >> 32) & (vm->cap - 1);
}

static void names_insert(struct hotspot_vm *vm, const struct name_entry *e)
{
	size_t i = slot_of(vm, e->key);
	while (vm->names[i].key)
		i = (i + 1) & (vm->cap - 1);
	vm->names[i] = *e;
	vm->nnames++;
}

/* Rebuilds the table into cap slots without the entries closed before
 * drop_before (0 keeps all). */
static int names_rebuild(struct hotspot_vm *vm, size_t cap, uint64_t drop_before)
{
	struct name_entry *old = vm->names, *n = calloc(cap, sizeof(*n));
	size_t oldcap = vm->cap;
	if (!n)
		return -1;
	vm->names = n;
	vm->cap = cap;
	vm->nnames = 0;
	for (size_t i = 0; i < oldcap; i++)
		if (old[i].key && old[i].until_ns >= drop_before)
			names_insert(vm, &old[i]);
	free(old);
	return 0;
}

/* Names read until now hold up to `until` (the last time the JVM was seen
 * with the old count); names read from now on, for samples from now on. */
static void names_close(struct hotspot_vm *vm, uint64_t until, uint64_t now)
{
	for (size_t i = 0; i < vm->cap; i++)
		if (vm->names[i].key && vm->names[i].until_ns == OPEN)
			vm->names[i].until_ns = until;
	vm->window_ns = until;
	vm->open_from_ns = now;
	vm->unload_gen++; /* cached line numbers may be of replaced classes */
	if (now > CLOSED_KEEP_NS)
		names_rebuild(vm, vm->cap, now - CLOSED_KEEP_NS);
}

void hotspot_vm_refresh(struct hotspot_vm *vm)
{
	uint64_t now = mono_ns();
	int64_t unloaded;
	if (vm->have_counter) {
		if (hsperf_read_long(vm->pid, vm->nspid, "java.cls.unloadedClasses", &unloaded) == 0) {
			if (unloaded != vm->unloaded)
				names_close(vm, vm->checked_ns, now);
			vm->unloaded = unloaded;
			vm->checked_ns = now;
			return;
		}
		vm->have_counter = false; /* gone: close names every second instead */
	}
	if (vm->pid && now - vm->checked_ns >= NO_COUNTER_FLUSH_NS) {
		names_close(vm, now, now);
		vm->checked_ns = now;
	}
}

/* The name of key for a sample taken at t_ns: the entry whose time range
 * holds it, else the one that ends at t_ns (`until` with t_ns OPEN: the open one). */
static struct name_entry *names_find(struct hotspot_vm *vm, uint64_t key, uint64_t t_ns, uint64_t until)
{
	for (size_t i = slot_of(vm, key); vm->names[i].key; i = (i + 1) & (vm->cap - 1)) {
		struct name_entry *e = &vm->names[i];
		if (e->key == key && (until ? e->until_ns == until : e->from_ns <= t_ns && t_ns < e->until_ns))
			return e;
	}
	return NULL;
}

static void names_put(struct hotspot_vm *vm, uint64_t key, uint32_t cookie, const char *name, const char *source)
{
	if ((vm->nnames + 1) * 2 > vm->cap && names_rebuild(vm, vm->cap * 2, 0) != 0)
		return;
	struct name_entry e = { key, cookie, name, source, vm->open_from_ns, OPEN };
	names_insert(vm, &e);
}

/* A Symbol's text appended to out (bounded): 0, or -1 when unreadable. */
static int symbol_append(const struct hotspot_vm *vm, uint64_t sym, char *out, size_t len, size_t *pos)
{
	uint16_t n = 0;
	char buf[512];
	if (!sym || rd(vm, sym + (uint64_t)vm->l.symbol_length, &n, 2) != 0 || n == 0)
		return -1;
	for (size_t done = 0; done < n;) {
		size_t chunk = n - done < sizeof(buf) ? n - done : sizeof(buf);
		if (rd(vm, sym + (uint64_t)vm->l.symbol_body + done, buf, chunk) != 0)
			return -1;
		for (size_t i = 0; i < chunk; i++) {
			unsigned char c = (unsigned char)buf[i];
			if (c < 0x20 || c == 0x7f)
				return -1; /* not a class or method name: garbage */
			if (*pos + 1 < len)
				out[(*pos)++] = (char)c;
		}
		done += chunk;
	}
	out[*pos < len ? *pos : len - 1] = '\0';
	return 0;
}

/* A hidden class's name "pkg/Foo$$Lambda$14+0x0000000800c01234" (its Symbol)
 * reads "pkg/Foo$$Lambda$14.0x0000000800c01234", as JVMTI (and so the agent)
 * gives it. */
static void hidden_class_dot(char *klass, size_t from, size_t to)
{
	for (size_t i = to; i > from + 2; i--)
		if (klass[i - 2] == '+' && klass[i - 1] == '0' && i < to && klass[i] == 'x') {
			klass[i - 2] = '.';
			return;
		}
}

/* Whether unloading was seen in [last_seen, now): names cached so far hold
 * for samples taken before last_seen; names read from now on for samples
 * from now on; samples between are named only when both agree. */
void hotspot_vm_classes_unloaded(struct hotspot_vm *vm, uint64_t last_seen_ns, uint64_t now_ns)
{
	names_close(vm, last_seen_ns, now_ns);
}

/* The source file a class's constant pool names (its SourceFile attribute). */
static const char *source_file(struct hotspot_vm *vm, uint64_t cp)
{
	char file[MAX_NAME];
	uint16_t index = 0;
	size_t pos = 0;
	if (vm->l.cp_source_file < 0 || rd(vm, cp + (uint64_t)vm->l.cp_source_file, &index, 2) != 0 || !index)
		return NULL;
	uint64_t sym = rd_u64(vm, cp + (uint64_t)vm->l.cp_size + 8 * (uint64_t)index) & ~1ULL;
	if (symbol_append(vm, sym, file, sizeof(file), &pos) != 0)
		return NULL;
	return str_intern(vm->si, file);
}

const char *hotspot_method_source(struct hotspot_vm *vm, uint64_t method, uint32_t cookie, uint64_t t_ns)
{
	if (!hotspot_method_name(vm, method, cookie, t_ns))
		return NULL;
	struct name_entry *e = names_find(vm, method, t_ns, 0);
	return e && (!cookie || e->cookie == cookie) ? e->source : NULL;
}

const char *hotspot_method_name(struct hotspot_vm *vm, uint64_t method, uint32_t cookie, uint64_t t_ns)
{
	char name[2 * MAX_NAME + 1024];
	uint64_t cm, cp, holder, pool_sym;
	uint16_t name_index = 0;
	size_t pos = 0;
	if (!method || (method & 7))
		return NULL;
	struct name_entry *e = names_find(vm, method, t_ns, 0);
	if (e && (!cookie || e->cookie == cookie))
		return e->name;
	cm = rd_u64(vm, method + (uint64_t)vm->l.method_const_method);
	if (!cm || (cookie && (uint32_t)(cm >> 3) != cookie))
		return NULL;
	cp = rd_u64(vm, cm + (uint64_t)vm->l.cm_constants);
	if (!cp || rd(vm, cm + (uint64_t)vm->l.cm_name_index, &name_index, 2) != 0 || name_index == 0)
		return NULL;
	holder = rd_u64(vm, cp + (uint64_t)vm->l.cp_pool_holder);
	pool_sym = rd_u64(vm, cp + (uint64_t)vm->l.cp_size + 8 * (uint64_t)name_index) & ~1ULL;
	if (!holder)
		return NULL;
	name[pos++] = 'L';
	if (symbol_append(vm, rd_u64(vm, holder + (uint64_t)vm->l.klass_name), name, 1200, &pos) != 0)
		return NULL;
	hidden_class_dot(name, 1, pos);
	memcpy(name + pos, ";::", 3);
	pos += 3;
	if (symbol_append(vm, pool_sym, name, sizeof(name), &pos) != 0)
		return NULL;
	name[pos < sizeof(name) ? pos : sizeof(name) - 1] = '\0';
	const char *s = str_intern(vm->si, name);
	if (!s)
		return NULL;
	if (t_ns >= vm->open_from_ns) { /* what memory holds now names samples from then on */
		const char *source = source_file(vm, cp);
		e = names_find(vm, method, t_ns, OPEN);
		if (e)
			e->cookie = (uint32_t)(cm >> 3), e->name = s, e->source = source;
		else
			names_put(vm, method, (uint32_t)(cm >> 3), s, source);
		return s;
	}
	/* a sample from around the last unloading: named only when the method
	 * had this very name before it too (its class may have been replaced) */
	if (t_ns >= vm->window_ns) {
		e = names_find(vm, method, t_ns, vm->window_ns);
		return e && e->name == s ? s : NULL;
	}
	return s; /* older: what memory holds now, uncached */
}

/* One UNSIGNED5 number (HotSpot's CompressedReadStream): x is 1 from JDK 21
 * (bytes below it are excluded), 0 before. */
static int read_u5(const unsigned char *p, size_t n, size_t *at, unsigned x, uint32_t *out)
{
	uint32_t sum = 0;
	for (int i = 0, shift = 0; i < 5; i++, shift += 6) {
		if (*at >= n || p[*at] < x)
			return -1;
		unsigned b = p[(*at)++] - x;
		sum += (uint32_t)b << shift;
		if (b + x < 192)
			break;
	}
	*out = sum;
	return 0;
}

static int method_line(struct hotspot_vm *vm, uint64_t method, uint32_t cookie, int bci);

int hotspot_method_line(struct hotspot_vm *vm, uint64_t method, uint32_t cookie, int bci)
{
	size_t i = (size_t)(((method ^ ((uint64_t)(uint32_t)bci << 40)) * 0x9e3779b97f4a7c15ULL) >> 52) & (LINE_CACHE - 1);
	struct line_entry *e = &vm->lines[i];
	if (method && e->method == method && e->bci == bci && e->cookie == cookie && e->gen == vm->unload_gen)
		return e->line;
	int line = method_line(vm, method, cookie, bci);
	*e = (struct line_entry){ method, cookie, vm->unload_gen, bci, line };
	return line;
}

static int method_line(struct hotspot_vm *vm, uint64_t method, uint32_t cookie, int bci)
{
	unsigned char t[4096];
	uint64_t cm;
	uint32_t flags = 0;
	uint16_t code_size = 0;
	if (!method || bci < 0 || vm->l.cm_flags < 0 || vm->l.cm_code_size < 0)
		return -1;
	cm = rd_u64(vm, method + (uint64_t)vm->l.method_const_method);
	if (!cm || (cookie && (uint32_t)(cm >> 3) != cookie) ||
	    rd(vm, cm + (uint64_t)vm->l.cm_flags, &flags, (size_t)vm->l.cm_flags_size) != 0 ||
	    rd(vm, cm + (uint64_t)vm->l.cm_code_size, &code_size, 2) != 0)
		return -1;
	if (!(flags & 1)) /* has_linenumber_table */
		return -1;
	/* the table follows the bytecodes; read what there is of the first 4 KiB */
	uint64_t at = cm + (uint64_t)vm->l.cm_size + code_size;
	size_t n = sizeof(t);
	if (rd(vm, at, t, n) != 0) {
		n = 4096 - (size_t)(at & 4095); /* up to the end of its page */
		if (rd(vm, at, t, n) != 0)
			return -1;
	}
	unsigned x = vm->l.jdk >= 21 ? 1 : 0;
	uint32_t cur_bci = 0, cur_line = 0, best_bci = 0;
	int best = -1;
	for (size_t i = 0; i < n;) {
		unsigned char b = t[i++];
		if (b == 0)
			break;
		if (b == 0xff) {
			uint32_t db, dl;
			if (read_u5(t, n, &i, x, &db) != 0 || read_u5(t, n, &i, x, &dl) != 0)
				break;
			cur_bci += (db >> 1) ^ -(db & 1);
			cur_line += (dl >> 1) ^ -(dl & 1);
		} else {
			cur_bci += b >> 3;
			cur_line += b & 7;
		}
		if (cur_bci <= (uint32_t)bci && (best < 0 || cur_bci >= best_bci)) {
			best_bci = cur_bci;
			best = (int)cur_line;
		}
	}
	return best > 0 ? best : -1;
}

static size_t nm_slot(const struct hotspot_vm *vm, uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 32) & (vm->nmcap - 1);
}

static void nms_put(struct hotspot_vm *vm, uint64_t key, uint32_t compile_id, const char *name)
{
	if ((vm->nnms + 1) * 2 > vm->nmcap) {
		struct name_entry *old = vm->nms, *n = calloc(vm->nmcap * 2, sizeof(*n));
		size_t oldcap = vm->nmcap;
		if (!n)
			return;
		vm->nms = n;
		vm->nmcap = oldcap * 2;
		vm->nnms = 0;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].key)
				nms_put(vm, old[i].key, old[i].cookie, old[i].name);
		free(old);
	}
	size_t i = nm_slot(vm, key);
	while (vm->nms[i].key && vm->nms[i].key != key)
		i = (i + 1) & (vm->nmcap - 1);
	if (!vm->nms[i].key)
		vm->nnms++;
	vm->nms[i] = (struct name_entry){ .key = key, .cookie = compile_id, .name = name };
}

const char *hotspot_nmethod_name(struct hotspot_vm *vm, uint64_t nmethod, uint32_t compile_id, uint64_t t_ns)
{
	int32_t id = 0;
	if (!nmethod || vm->l.nm_compile_id < 0 || vm->l.nm_method < 0)
		return NULL;
	for (size_t i = nm_slot(vm, nmethod); vm->nms[i].key; i = (i + 1) & (vm->nmcap - 1))
		if (vm->nms[i].key == nmethod && vm->nms[i].cookie == compile_id)
			return vm->nms[i].name;
	if (rd(vm, nmethod + (uint64_t)vm->l.nm_compile_id, &id, 4) != 0 || (uint32_t)id != compile_id)
		return NULL;
	const char *name = hotspot_method_name(vm, rd_u64(vm, nmethod + (uint64_t)vm->l.nm_method), 0, t_ns);
	if (name)
		nms_put(vm, nmethod, compile_id, name);
	return name;
}

const char *hotspot_blob_name(struct hotspot_vm *vm, uint64_t blob)
{
	char name[MAX_NAME];
	if (!blob || vm->l.blob_name < 0)
		return NULL;
	uint64_t p = rd_u64(vm, blob + (uint64_t)vm->l.blob_name);
	if (!p || rd_cstr(vm, p, name, sizeof(name)) != 0 || !name[0])
		return NULL;
	for (char *c = name; *c; c++)
		if ((unsigned char)*c < 0x20)
			*c = '?';
	return str_intern(vm->si, name);
}
