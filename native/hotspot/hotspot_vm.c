/* hotspot_vm.c - one HotSpot JVM seen from outside: gHotSpotVMStructs/Types read
 * from its memory (process_vm_readv), the walker's layout from them; the names are
 * hotspot_names.c's (hotspot_vm_names). */
#include "hotspot_vm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <time.h>

#include "elf_lookup.h"
#include "hotspot_flags.h"
#include "hotspot_stubs.h"
#include "hotspot_threads.h"
#include "hsperf.h"
#include "msg.h"
#include "proc_info.h"
#include "proc_maps.h"
#include "remote_mem.h"
#include "target_file.h"

#define NO_COUNTER_FLUSH_NS 1000000000ULL
#define PAGE		    4096
#define PAGES		    128 /* the table reader's page cache */
#define UNLOADED_COUNTER    "java.cls.unloadedClasses"

struct hotspot_vm {
	uint64_t jvm_text_low, jvm_text_high; /* libjvm's code (0 unknown) */
	pid_t pid, nspid;
	struct remote_mem mem;
	/* a live process's: its names' own memory (freed with the vm), and the
	 * budget of reads of its memory (budget_read) once its tables are read */
	struct str_intern *own_si;
	bool budget_on;
	uint32_t reads_sample, reads_second;
	uint64_t sample_seq, second_ns;
	unsigned said; /* HOTSPOT_LIMIT_* said already */
	struct hotspot_names *names;
	uint64_t sym[HOTSPOT_NSYMS]; /* 0: a vm without tables */
	/* the walker's layout */
	bool walkable;
	uint64_t heaps_addr, low_bound_addr, high_bound_addr, interp_code_addr;
	long ga_len, ga_data, heap_memory, heap_segmap, heap_log2_seg, vs_low, vs_high, heapblock_size;
	long sq_stub_buffer, sq_buffer_limit;
	long blob_name, blob_frame_size, blob_frame_complete, blob_code_begin, blob_code_end, nm_compile_id;
	long method_const_method, cm_size;
	int frame_complete_size;
	bool blob_code_offsets;
	uint64_t call_stub_ret_addr, call_stub_ret; /* StubRoutines::_call_stub_return_address, its value */
	struct hotspot_stubs *stubs;		    /* the generated stubs' names (NULL: libjvm has no .symtab) */
	struct hotspot_threads *threads;	    /* Java thread names (NULL: the tables lack what they need) */
	/* the JVMFlag table (-XX flags) */
	uint64_t flags_addr, nflags_addr;
	long flag_name, flag_addr, flag_size;
	/* class unloading */
	int64_t unloaded;	       /* java.cls.unloadedClasses when last read */
	struct hsperf_counter counter; /* ... kept open: read every 100 ms */
	bool have_counter;
	uint64_t checked_ns; /* when the count was last seen unchanged */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---- memory --------------------------------------------------------------------- */

static uint64_t coarse_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* A live process's memory, within its budget: a sample's frames are named
 * with at most HOTSPOT_READS_PER_SAMPLE reads, and at most
 * HOTSPOT_READS_PER_SECOND in a second; past them a read fails at once (the
 * frames are left unnamed), and it is said once. */
static int budget_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct hotspot_vm *vm = ctx;
	if (vm->budget_on) {
		uint64_t now = coarse_ns();
		if (now - vm->second_ns >= 1000000000ULL) {
			vm->second_ns = now;
			vm->reads_second = 0;
		}
		unsigned over = vm->reads_sample >= HOTSPOT_READS_PER_SAMPLE ? HOTSPOT_LIMIT_SAMPLE :
				vm->reads_second >= HOTSPOT_READS_PER_SECOND ? HOTSPOT_LIMIT_SECOND :
									       0;
		if (over) {
			if (!(vm->said & over)) {
				vm->said |= over;
				msg_warn("pid %d asked for more than %u reads of its memory %s to name its frames: "
					 "they are left unnamed past that (a JVM this deep in uncached frames is "
					 "unusual; one that changes its names to stall a profiler is hostile)\n",
					 (int)vm->pid,
					 over == HOTSPOT_LIMIT_SAMPLE ? HOTSPOT_READS_PER_SAMPLE :
									HOTSPOT_READS_PER_SECOND,
					 over == HOTSPOT_LIMIT_SAMPLE ? "for one sample" : "in a second");
			}
			return -1;
		}
		vm->reads_sample++;
		vm->reads_second++;
	}
	return remote_mem_pid_read((void *)(intptr_t)vm->pid, addr, buf, len);
}

void hotspot_vm_sample(struct hotspot_vm *vm, uint64_t seq)
{
	if (vm->sample_seq != seq) {
		vm->sample_seq = seq;
		vm->reads_sample = 0;
	}
}

void hotspot_vm_budget(struct hotspot_vm *vm, bool on)
{
	vm->budget_on = on && vm->own_si;
}

unsigned hotspot_vm_limits(const struct hotspot_vm *vm)
{
	/* the names' caps are said by the names (hotspot_names_say) */
	return vm->said | (hotspot_names_renamed(vm->names) ? HOTSPOT_LIMIT_RENAMES : 0) |
	       (hotspot_names_capped(vm->names) ? HOTSPOT_LIMIT_NAMES : 0);
}

/* The tables and their strings live in libjvm's data: read whole pages once
 * (a few dozen reads instead of thousands); a page that cannot be read whole
 * (the end of a test's image) is read as asked. */
struct pages {
	uint64_t addr[PAGES]; /* page address + 1 when loaded (0: empty) */
	unsigned char data[PAGES][PAGE];
};

static int pages_read(const struct hotspot_vm *vm, struct pages *pc, uint64_t addr, void *buf, size_t len)
{
	unsigned char *out = buf;
	if (!addr || addr + len < addr)
		return -1;
	for (size_t done = 0; done < len;) {
		uint64_t a = addr + done, page = a & ~(uint64_t)(PAGE - 1);
		size_t slot = (size_t)(page / PAGE) % PAGES, n = PAGE - (size_t)(a - page);
		n = n < len - done ? n : len - done;
		if (pc->addr[slot] != page + 1) {
			if (remote_mem_read(&vm->mem, page, pc->data[slot], PAGE) != 0) {
				pc->addr[slot] = 0;
				return remote_mem_read(&vm->mem, addr, buf, len);
			}
			pc->addr[slot] = page + 1;
		}
		memcpy(out + done, pc->data[slot] + (a - page), n);
		done += n;
	}
	return 0;
}

/* ---- the tables ------------------------------------------------------------------ */

/* ... and after them, in the same lookup, the symbols that may be missing
 * (libjvm's .symtab, which a stripped build lacks). */
enum { OPT_STUB_LIST = HOTSPOT_NSYMS, OPT_C1_BLOBS, NSYMS_ALL };

static const char *const sym_names[NSYMS_ALL] = {
	"gHotSpotVMStructs",
	"gHotSpotVMStructEntryArrayStride",
	"gHotSpotVMStructEntryTypeNameOffset",
	"gHotSpotVMStructEntryFieldNameOffset",
	"gHotSpotVMStructEntryTypeStringOffset",
	"gHotSpotVMStructEntryIsStaticOffset",
	"gHotSpotVMStructEntryOffsetOffset",
	"gHotSpotVMStructEntryAddressOffset",
	"gHotSpotVMTypes",
	"gHotSpotVMTypeEntryArrayStride",
	"gHotSpotVMTypeEntryTypeNameOffset",
	"gHotSpotVMTypeEntrySizeOffset",
	"_ZN12StubCodeDesc5_listE", /* StubCodeDesc::_list: the generated stubs' names */
	"_ZN8Runtime16_blobsE",	    /* Runtime1::_blobs: C1's stubs, some without a frame size */
};

/* The tables' reads: through the vm's page cache. */
struct table_mem {
	const struct hotspot_vm *vm;
	struct pages *pc;
};

static int table_mem_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct table_mem *m = ctx;
	return pages_read(m->vm, m->pc, addr, buf, len);
}

/* Reads one table (types: gHotSpotVMTypes) and calls fn for each entry. */
static int table_read(const struct hotspot_vm *vm, struct pages *pc, bool types, hotspot_entry_fn fn, void *ctx)
{
	const uint64_t *s = vm->sym;
	struct table_mem m = { vm, pc };
	const struct vm_tables_mem mem = { table_mem_read, NULL, &m };
	struct vm_tables_layout l = { 0 };
	if (types) {
		l.types = remote_mem_u64(&vm->mem, s[HOTSPOT_SYM_TYPES]);
		l.type_stride = remote_mem_u64(&vm->mem, s[HOTSPOT_SYM_TYPE_STRIDE]);
		l.type_type = remote_mem_u64(&vm->mem, s[HOTSPOT_SYM_TYPE_TYPE]);
		l.type_size = remote_mem_u64(&vm->mem, s[HOTSPOT_SYM_TYPE_SIZE]);
	} else {
		l.structs = remote_mem_u64(&vm->mem, s[HOTSPOT_SYM_STRUCTS]);
		l.struct_stride = remote_mem_u64(&vm->mem, s[HOTSPOT_SYM_STRUCT_STRIDE]);
		l.struct_type = remote_mem_u64(&vm->mem, s[HOTSPOT_SYM_STRUCT_TYPE]);
		l.struct_field = remote_mem_u64(&vm->mem, s[HOTSPOT_SYM_STRUCT_FIELD]);
		l.struct_type_string = remote_mem_u64(&vm->mem, s[HOTSPOT_SYM_STRUCT_TSTRING]);
		l.struct_is_static = remote_mem_u64(&vm->mem, s[HOTSPOT_SYM_STRUCT_STATIC]);
		l.struct_offset = remote_mem_u64(&vm->mem, s[HOTSPOT_SYM_STRUCT_OFFSET]);
		l.struct_address = remote_mem_u64(&vm->mem, s[HOTSPOT_SYM_STRUCT_ADDRESS]);
	}
	return vm_tables_each(&l, types, &mem, fn, ctx);
}

int hotspot_vm_entries(struct hotspot_vm *vm, hotspot_entry_fn fn, void *ctx)
{
	struct pages *pc;
	int rc = -1;
	if (!vm->sym[HOTSPOT_SYM_STRUCTS] || !(pc = calloc(1, sizeof(*pc))))
		return -1;
	if (table_read(vm, pc, false, fn, ctx) == 0 && table_read(vm, pc, true, fn, ctx) == 0)
		rc = 0;
	free(pc);
	return rc;
}

/* What the vm needs from the tables. */
enum field {
	F_HEAP_MEMORY,
	F_HEAP_SEGMAP,
	F_HEAP_LOG2,
	F_VS_LOW,
	F_VS_HIGH,
	F_GA_LEN,
	F_GA_DATA,
	F_SQ_BUF,
	F_SQ_LIMIT,
	F_BLOB_NAME,
	F_BLOB_FRAME_SIZE,
	F_BLOB_COMPLETE,
	F_BLOB_CODE_BEGIN,
	F_BLOB_CODE_END,
	F_BLOB_CODE_OFFSET,
	F_BLOB_DATA_OFFSET,
	F_NM_COMPILE_ID,
	F_NM_METHOD,
	F_METHOD_CM,
	F_CM_CONSTANTS,
	F_CM_NAME,
	F_CM_CODE_SIZE,
	F_CM_FLAGS,
	F_CM_FLAGS2,
	F_CM_METHOD_SIZE,
	F_CP_HOLDER,
	F_CP_SOURCE,
	F_KLASS_NAME,
	F_SYM_LENGTH,
	F_SYM_LENREF,
	F_SYM_BODY,
	F_NM_SCOPES_PCS,
	F_NM_SCOPES_DATA,
	F_NM_DEPS,
	F_NM_METADATA,
	F_CM_SCOPES_DATA,
	F_NM_IMMUTABLE,
	F_NM_IMMUTABLE_SIZE,
	F_BLOB_MUTABLE,
	F_BLOB_RELOC_SIZE,
	F_BLOB_MUTABLE_SIZE,
	F_PCDESC_PC,
	F_PCDESC_SCOPE,
	F_FLAG_NAME,
	F_FLAG_ADDR,
	T_HEAPBLOCK,
	T_CONSTMETHOD,
	T_CONSTANTPOOL,
	T_PCDESC,
	T_JVMFLAG,
	NFIELDS
};
enum statics { A_HEAPS, A_LOW, A_HIGH, A_INTERP, A_MAJOR, A_FLAGS, A_NFLAGS, A_CALL_STUB_RET, NSTATICS };

static const struct vm_tables_want wanted[] = {
	{ "CodeHeap", "_memory", F_HEAP_MEMORY },
	{ "CodeHeap", "_segmap", F_HEAP_SEGMAP },
	{ "CodeHeap", "_log2_segment_size", F_HEAP_LOG2 },
	{ "VirtualSpace", "_low_boundary", F_VS_LOW },
	{ "VirtualSpace", "_high_boundary", F_VS_HIGH },
	{ "GrowableArrayBase", "_len", F_GA_LEN },    /* JDK 16+ */
	{ "GenericGrowableArray", "_len", F_GA_LEN }, /* before */
	{ "GrowableArray<int>", "_data", F_GA_DATA },
	{ "StubQueue", "_stub_buffer", F_SQ_BUF },
	{ "StubQueue", "_buffer_limit", F_SQ_LIMIT },
	{ "CodeBlob", "_name", F_BLOB_NAME },
	{ "CodeBlob", "_frame_size", F_BLOB_FRAME_SIZE },
	{ "CodeBlob", "_frame_complete_offset", F_BLOB_COMPLETE },
	{ "CodeBlob", "_code_begin", F_BLOB_CODE_BEGIN }, /* up to JDK 22: pointers */
	{ "CodeBlob", "_code_end", F_BLOB_CODE_END },
	{ "CodeBlob", "_code_offset", F_BLOB_CODE_OFFSET }, /* JDK 23+: int offsets from the blob */
	{ "CodeBlob", "_data_offset", F_BLOB_DATA_OFFSET },
	{ "nmethod", "_compile_id", F_NM_COMPILE_ID },
	{ "nmethod", "_method", F_NM_METHOD },	      /* JDK 23+ */
	{ "CompiledMethod", "_method", F_NM_METHOD }, /* before */
	{ "Method", "_constMethod", F_METHOD_CM },
	{ "ConstMethod", "_constants", F_CM_CONSTANTS },
	{ "ConstMethod", "_name_index", F_CM_NAME },
	{ "ConstMethod", "_code_size", F_CM_CODE_SIZE },
	{ "ConstMethod", "_flags", F_CM_FLAGS },	 /* u2 up to JDK 20 */
	{ "ConstMethod", "_flags._flags", F_CM_FLAGS2 }, /* u4 from JDK 21 */
	{ "ConstMethod", "_constMethod_size", F_CM_METHOD_SIZE },
	{ "ConstantPool", "_pool_holder", F_CP_HOLDER },
	{ "ConstantPool", "_source_file_name_index", F_CP_SOURCE },
	{ "Klass", "_name", F_KLASS_NAME },
	{ "Symbol", "_length", F_SYM_LENGTH },		    /* u2, JDK 13+ */
	{ "Symbol", "_length_and_refcount", F_SYM_LENREF }, /* u4, length in the high half, before */
	{ "Symbol", "_body", F_SYM_BODY },
	/* compiled methods' debug info (hotspot_scopes.h) */
	{ "nmethod", "_scopes_pcs_offset", F_NM_SCOPES_PCS },
	{ "nmethod", "_scopes_data_offset", F_NM_SCOPES_DATA },	      /* JDK 23+ */
	{ "nmethod", "_dependencies_offset", F_NM_DEPS },	      /* up to JDK 22 */
	{ "nmethod", "_metadata_offset", F_NM_METADATA },	      /* up to JDK 22 */
	{ "CompiledMethod", "_scopes_data_begin", F_CM_SCOPES_DATA }, /* up to JDK 22 */
	{ "nmethod", "_immutable_data", F_NM_IMMUTABLE },	      /* JDK 24+ */
	{ "nmethod", "_immutable_data_size", F_NM_IMMUTABLE_SIZE },
	{ "CodeBlob", "_mutable_data", F_BLOB_MUTABLE }, /* JDK 25+ */
	{ "CodeBlob", "_relocation_size", F_BLOB_RELOC_SIZE },
	{ "CodeBlob", "_mutable_data_size", F_BLOB_MUTABLE_SIZE },
	{ "PcDesc", "_pc_offset", F_PCDESC_PC },
	{ "PcDesc", "_scope_decode_offset", F_PCDESC_SCOPE },
	{ "JVMFlag", "_name", F_FLAG_NAME },
	{ "JVMFlag", "_addr", F_FLAG_ADDR },
};

/* Fields read as 4-byte ints: taken only when the tables say "int". */
static const int int_fields[] = { F_NM_SCOPES_PCS,     F_NM_SCOPES_DATA,    F_NM_DEPS,
				  F_NM_METADATA,       F_NM_IMMUTABLE_SIZE, F_BLOB_RELOC_SIZE,
				  F_BLOB_MUTABLE_SIZE, F_PCDESC_PC,	    F_PCDESC_SCOPE };

static const struct vm_tables_want wanted_static[] = {
	{ "CodeCache", "_heaps", A_HEAPS },
	{ "CodeCache", "_low_bound", A_LOW },
	{ "CodeCache", "_high_bound", A_HIGH },
	{ "AbstractInterpreter", "_code", A_INTERP },
	{ "Abstract_VM_Version", "_vm_major_version", A_MAJOR },
	{ "JVMFlag", "flags", A_FLAGS },
	{ "JVMFlag", "numFlags", A_NFLAGS },
	{ "StubRoutines", "_call_stub_return_address", A_CALL_STUB_RET },
};

static const struct vm_tables_want wanted_types[] = {
	{ "HeapBlock", NULL, T_HEAPBLOCK },	  { "ConstMethod", NULL, T_CONSTMETHOD },
	{ "ConstantPool", NULL, T_CONSTANTPOOL }, { "PcDesc", NULL, T_PCDESC },
	{ "JVMFlag", NULL, T_JVMFLAG },
};

struct tables {
	long f[NFIELDS];
	uint64_t a[NSTATICS];
	int complete_size; /* bytes of CodeBlob::_frame_complete_offset */
};

static void tables_take(void *ctx, const struct hotspot_entry *e)
{
	struct tables *t = ctx;
	int id;
	if (!e->field) {
		if ((id = vm_tables_match(wanted_types, sizeof(wanted_types) / sizeof(wanted_types[0]), e)) >= 0)
			t->f[id] = e->value <= 0xffff ? (long)e->value : -1;
		return;
	}
	if (e->is_static) {
		if ((id = vm_tables_match(wanted_static, sizeof(wanted_static) / sizeof(wanted_static[0]), e)) >= 0)
			t->a[id] = e->value;
		return;
	}
	if ((id = vm_tables_match(wanted, sizeof(wanted) / sizeof(wanted[0]), e)) < 0)
		return;
	/* an offset past 64 KiB is no offset this code can use */
	t->f[id] = e->value <= 0xffff ? (long)e->value : -1;
	if (id == F_BLOB_COMPLETE) /* "int", from JDK 23 "int16_t" */
		t->complete_size = strstr(e->type_string, "16") ? 2 : strstr(e->type_string, "int") ? 4 : 0;
	for (size_t i = 0; i < sizeof(int_fields) / sizeof(int_fields[0]); i++)
		if (int_fields[i] == id && strcmp(e->type_string, "int") != 0)
			t->f[id] = -1;
}

static bool fits_u16(long v)
{
	return v >= 0 && v <= 0xffff;
}

static void layout_from(struct hotspot_vm *vm, const struct tables *t, struct hotspot_layout *l)
{
	int32_t major = 0;
	if (t->a[A_MAJOR])
		remote_mem_read(&vm->mem, t->a[A_MAJOR], &major, 4);
	l->jdk = major > 0 && major < 1000 ? major : 0;
	l->method_const_method = t->f[F_METHOD_CM];
	l->cm_constants = t->f[F_CM_CONSTANTS];
	l->cm_name_index = t->f[F_CM_NAME];
	l->cm_code_size = t->f[F_CM_CODE_SIZE];
	l->cm_flags = t->f[F_CM_FLAGS2] >= 0 ? t->f[F_CM_FLAGS2] : t->f[F_CM_FLAGS];
	l->cm_flags_size = t->f[F_CM_FLAGS2] >= 0 ? 4 : 2;
	l->cm_size = t->f[T_CONSTMETHOD];
	l->cm_method_size = t->f[F_CM_METHOD_SIZE];
	l->cp_pool_holder = t->f[F_CP_HOLDER];
	l->cp_source_file = t->f[F_CP_SOURCE];
	l->cp_size = t->f[T_CONSTANTPOOL];
	l->klass_name = t->f[F_KLASS_NAME];
	/* before JDK 13 the length is the high half of _length_and_refcount */
	l->symbol_length = t->f[F_SYM_LENGTH] >= 0 ? t->f[F_SYM_LENGTH] :
			   t->f[F_SYM_LENREF] >= 0 ? t->f[F_SYM_LENREF] + 2 :
						     -1;
	l->symbol_body = t->f[F_SYM_BODY];
	l->blob_name = t->f[F_BLOB_NAME];
	l->nm_method = t->f[F_NM_METHOD];
	l->nm_compile_id = t->f[F_NM_COMPILE_ID];
	l->scopes = (struct hotspot_scope_layout){
		.stream_x = l->jdk >= 20 ? 1 :
			    l->jdk > 0	 ? 0 :
					   -1,
		.code_begin = t->f[F_BLOB_CODE_BEGIN] >= 0 ? t->f[F_BLOB_CODE_BEGIN] : t->f[F_BLOB_CODE_OFFSET],
		.code_offset = t->f[F_BLOB_CODE_BEGIN] < 0,
		.compile_id = t->f[F_NM_COMPILE_ID],
		.method = t->f[F_NM_METHOD],
		.scopes_pcs = t->f[F_NM_SCOPES_PCS],
		.scopes_data = t->f[F_NM_SCOPES_DATA],
		.dependencies = t->f[F_NM_DEPS],
		.metadata = t->f[F_NM_METADATA],
		.scopes_data_begin = t->f[F_CM_SCOPES_DATA],
		.immutable = t->f[F_NM_IMMUTABLE],
		.immutable_size = t->f[F_NM_IMMUTABLE_SIZE],
		.mutable_data = t->f[F_BLOB_MUTABLE],
		.relocation_size = t->f[F_BLOB_RELOC_SIZE],
		.mutable_size = t->f[F_BLOB_MUTABLE_SIZE],
		.pcdesc_size = t->f[T_PCDESC],
		.pc_offset = t->f[F_PCDESC_PC],
		.scope_offset = t->f[F_PCDESC_SCOPE],
	};
	vm->call_stub_ret_addr = t->a[A_CALL_STUB_RET];
	vm->flags_addr = t->a[A_FLAGS];
	vm->nflags_addr = t->a[A_NFLAGS];
	vm->flag_name = t->f[F_FLAG_NAME];
	vm->flag_addr = t->f[F_FLAG_ADDR];
	vm->flag_size = t->f[T_JVMFLAG];

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
	vm->blob_name = l->blob_name;
	vm->blob_frame_size = t->f[F_BLOB_FRAME_SIZE];
	vm->blob_frame_complete = t->f[F_BLOB_COMPLETE];
	vm->frame_complete_size = t->complete_size;
	vm->blob_code_offsets = t->f[F_BLOB_CODE_BEGIN] < 0;
	vm->blob_code_begin = vm->blob_code_offsets ? t->f[F_BLOB_CODE_OFFSET] : t->f[F_BLOB_CODE_BEGIN];
	vm->blob_code_end = vm->blob_code_offsets ? t->f[F_BLOB_DATA_OFFSET] : t->f[F_BLOB_CODE_END];
	vm->nm_compile_id = l->nm_compile_id;
	vm->method_const_method = l->method_const_method;
	vm->cm_size = l->cm_size;
	long need[] = { vm->ga_len,
			vm->ga_data,
			vm->heap_memory,
			vm->heap_segmap,
			vm->heap_log2_seg,
			vm->vs_low,
			vm->vs_high,
			vm->heapblock_size,
			vm->sq_stub_buffer,
			vm->sq_buffer_limit,
			vm->blob_frame_size,
			vm->blob_frame_complete,
			vm->blob_code_begin,
			vm->blob_code_end,
			vm->blob_name,
			vm->nm_compile_id,
			vm->method_const_method,
			vm->cm_size };
	vm->walkable = vm->heaps_addr && vm->low_bound_addr && vm->high_bound_addr && vm->interp_code_addr &&
		       vm->frame_complete_size;
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		vm->walkable = vm->walkable && fits_u16(need[i]);
}

static struct hotspot_vm *vm_alloc(hotspot_read_fn read, void *ctx)
{
	struct hotspot_vm *vm = calloc(1, sizeof(*vm));
	if (!vm)
		return NULL;
	vm->mem = (struct remote_mem){ read, ctx };
	vm->unloaded = -1;
	vm->counter.fd = -1;
	return vm;
}

/* One pass over the tables feeds both the vm's layout and the thread names. */
struct load_ctx {
	struct tables *t;
	struct hotspot_threads *threads;
};

static void load_take(void *ctx, const struct hotspot_entry *e)
{
	struct load_ctx *c = ctx;
	tables_take(c->t, e);
	hotspot_threads_take(c->threads, e);
}

/* Reads the tables through the variables at sym and sets the vm up from them;
 * who ("pid 123") begins a failure's line. */
static int vm_load(struct hotspot_vm *vm, const uint64_t sym[HOTSPOT_NSYMS], struct str_intern *si, const char *who,
		   char *err, size_t errlen)
{
	struct hotspot_layout l;
	struct tables t = { .complete_size = 0 };
	memcpy(vm->sym, sym, sizeof(vm->sym));
	struct load_ctx ctx = { &t, hotspot_threads_new(&vm->mem, 0) };
	for (size_t i = 0; i < NFIELDS; i++)
		t.f[i] = -1;
	if (!ctx.threads) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	vm->threads = ctx.threads;
	if (hotspot_vm_entries(vm, load_take, &ctx) != 0) {
		snprintf(err, errlen, "%s: failed to read HotSpot's gHotSpotVMStructs tables (a JVM still starting?)",
			 who);
		return -1;
	}
	layout_from(vm, &t, &l);
	hotspot_threads_jdk(vm->threads, l.jdk);
	if (hotspot_threads_ready(vm->threads) != 0) { /* names by the kernel's comm then */
		hotspot_threads_free(vm->threads);
		vm->threads = NULL;
	}
	if (l.method_const_method < 0 || l.cm_size <= 0 || l.cm_constants < 0 || l.cm_name_index < 0 ||
	    l.cp_size <= 0 || l.cp_pool_holder < 0 || l.klass_name < 0 || l.symbol_length < 0 || l.symbol_body < 0) {
		snprintf(err, errlen, "%s: HotSpot's tables lack the fields methods are named with", who);
		return -1;
	}
	if (!(vm->names = hotspot_names_new(&l, vm->mem.read, vm->mem.ctx, si))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	hotspot_names_say(vm->names, vm->pid);
	return 0;
}

struct hotspot_vm *hotspot_vm_from_tables(const uint64_t sym[HOTSPOT_NSYMS], hotspot_read_fn read, void *ctx,
					  struct str_intern *si, char *err, size_t errlen)
{
	struct hotspot_vm *vm = vm_alloc(read, ctx);
	if (!vm) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (vm_load(vm, sym, si, "memory", err, errlen) != 0) {
		hotspot_vm_free(vm);
		return NULL;
	}
	return vm;
}

/* libjvm.so's name in /proc/PID/maps, also when it was replaced on disk. */
static bool is_libjvm(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash && (strcmp(slash, "/libjvm.so") == 0 || strcmp(slash, "/libjvm.so (deleted)") == 0);
}

/* The addresses of the table variables in process pid: libjvm's .dynsym
 * with the load bias its mappings show. */
static int libjvm_symbols(pid_t pid, uint64_t sym[NSYMS_ALL], uint64_t size[NSYMS_ALL], uint64_t text[2], char *err,
			  size_t errlen)
{
	char path[64], file[4200];
	struct proc_maps pm = { 0 };
	struct elf_mapping *maps = NULL;
	const struct proc_map *jvm = NULL;
	struct stat st;
	size_t n = 0;
	int rc = -1, found;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (proc_maps_load(&pm, path, err, errlen) != 0)
		return -1;
	for (size_t i = 0; i < pm.n && !jvm; i++)
		if (is_libjvm(pm.maps[i].path))
			jvm = &pm.maps[i];
	if (!jvm) {
		snprintf(err, errlen, "pid %d is not a HotSpot JVM (no libjvm.so)", (int)pid);
		goto out;
	}
	if (!(maps = calloc(pm.n, sizeof(*maps)))) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < pm.n; i++) /* every mapping of that very file */
		if (pm.maps[i].inode == jvm->inode && pm.maps[i].dev_major == jvm->dev_major &&
		    pm.maps[i].dev_minor == jvm->dev_minor && strcmp(pm.maps[i].path, jvm->path) == 0)
			maps[n++] = (struct elf_mapping){ pm.maps[i].start, pm.maps[i].end, pm.maps[i].offset };
	for (size_t i = 0; i < pm.n; i++) /* its code, for the walker's stack scan */
		if (pm.maps[i].inode == jvm->inode && strchr(pm.maps[i].perms, 'x') && !text[1])
			text[0] = pm.maps[i].start, text[1] = pm.maps[i].end;
	/* the file as the process sees it (its mount namespace), else the
	 * mapping itself (replaced on disk, or no access to its root) */
	snprintf(file, sizeof(file), "/proc/%d/root%s", (int)pid, jvm->path);
	int fd = target_file_open(file, TARGET_FILE_READABLE | TARGET_FILE_QUIET, ELF_MAX_FILE, &st, NULL, 0);
	if (fd >= 0)
		close(fd);
	found = fd < 0 || st.st_ino != jvm->inode ?
			-1 :
			elf_lookup_symbols_sized(file, maps, n, sym_names, NSYMS_ALL, sym, size, err, errlen);
	if (found < 0) {
		snprintf(file, sizeof(file), "/proc/%d/map_files/%lx-%lx", (int)pid, (unsigned long)jvm->start,
			 (unsigned long)jvm->end);
		found = elf_lookup_symbols_sized(file, maps, n, sym_names, NSYMS_ALL, sym, size, err, errlen);
	}
	for (size_t i = 0; found >= 0 && i < HOTSPOT_NSYMS; i++)
		if (!sym[i])
			found = -2;
	if (found == -2)
		snprintf(err, errlen, "%s does not export HotSpot's gHotSpotVMStructs tables", jvm->path);
	rc = found >= 0 ? 0 : -1;
out:
	free(maps);
	proc_maps_free(&pm);
	return rc;
}

struct hotspot_vm *hotspot_vm_open(pid_t pid, char *err, size_t errlen)
{
	char path[64], who[32];
	uint64_t sym[NSYMS_ALL], size[NSYMS_ALL], text[2] = { 0, 0 };
	struct hotspot_vm *vm = NULL;
	struct str_intern *si;

	if (libjvm_symbols(pid, sym, size, text, err, errlen) != 0)
		return NULL;
	if (!(vm = vm_alloc(budget_read, NULL)) || !(vm->own_si = si = str_intern_new())) {
		hotspot_vm_free(vm);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	vm->mem.ctx = vm;
	vm->pid = pid;
	vm->jvm_text_low = text[0];
	vm->jvm_text_high = text[1];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	vm->nspid = proc_info_nspid(path, pid);
	snprintf(who, sizeof(who), "pid %d", (int)pid);
	if (vm_load(vm, sym, si, who, err, errlen) != 0) {
		hotspot_vm_free(vm);
		return NULL;
	}
	if (sym[OPT_STUB_LIST] && !(vm->stubs = hotspot_stubs_new(&vm->mem, sym[OPT_STUB_LIST], si))) {
		snprintf(err, errlen, "out of memory");
		hotspot_vm_free(vm);
		return NULL;
	}
	if (vm->stubs && sym[OPT_C1_BLOBS] && size[OPT_C1_BLOBS] >= 8) {
		const struct hotspot_blob_fields bf = { vm->blob_name, vm->blob_frame_size, vm->blob_code_begin,
							vm->blob_code_end, vm->blob_code_offsets };
		hotspot_stubs_set_blobs(vm->stubs, sym[OPT_C1_BLOBS], size[OPT_C1_BLOBS] / 8, &bf);
	}
	vm->have_counter = hsperf_counter_open(&vm->counter, pid, vm->nspid, UNLOADED_COUNTER) == 0 &&
			   hsperf_counter_read(&vm->counter, &vm->unloaded) == 0;
	vm->checked_ns = mono_ns();
	vm->budget_on = true;
	return vm;
}

struct hotspot_vm *hotspot_vm_new(const struct hotspot_layout *l, hotspot_read_fn read, void *ctx,
				  struct str_intern *si)
{
	struct hotspot_vm *vm = vm_alloc(read, ctx);
	if (!vm)
		return NULL;
	if (!(vm->names = hotspot_names_new(l, read, ctx, si))) {
		free(vm);
		return NULL;
	}
	hotspot_names_say(vm->names, vm->pid);
	return vm;
}

void hotspot_vm_free(struct hotspot_vm *vm)
{
	if (!vm)
		return;
	hotspot_names_free(vm->names);
	hotspot_stubs_free(vm->stubs);
	hotspot_threads_free(vm->threads);
	hsperf_counter_close(&vm->counter);
	str_intern_free(vm->own_si);
	free(vm);
}

struct hotspot_names *hotspot_vm_names(const struct hotspot_vm *vm)
{
	return vm->names;
}

int hotspot_vm_frame_complete_size(const struct hotspot_vm *vm)
{
	return vm->frame_complete_size;
}

/* ---- flags -------------------------------------------------------------------- */

int hotspot_vm_flag_bool(struct hotspot_vm *vm, const char *name)
{
	const struct vm_flag_table ft = { vm->flags_addr, vm->nflags_addr, vm->flag_size, vm->flag_name,
					  vm->flag_addr };
	int value = -1;
	return hotspot_flags_read(&vm->mem, &ft, &name, &value, 1) == 0 ? value : -1;
}

/* ---- threads ------------------------------------------------------------------ */

int hotspot_vm_thread_name(struct hotspot_vm *vm, pid_t nstid, char *out, size_t len)
{
	int rc = vm->threads ? hotspot_threads_name(vm->threads, nstid, out, len) : -1;
	if (rc < 0 && vm->threads && !(vm->said & HOTSPOT_LIMIT_ZNAMES) && hotspot_threads_moving(vm->threads)) {
		vm->said |= HOTSPOT_LIMIT_ZNAMES;
		msg_say("pid %d runs generational ZGC, which moves Thread objects and tells where only as the JVM "
			"reads them again: a moved thread shows its kernel name (15 bytes) until the JVM has read it "
			"again, its Java name after\n",
			(int)vm->pid);
	}
	return rc;
}

/* ---- stubs -------------------------------------------------------------------- */

int hotspot_vm_stub_rows(struct hotspot_vm *vm, struct stub_row **rows, size_t *n, char *err, size_t errlen)
{
	if (!vm->stubs) {
		*rows = NULL;
		*n = 0;
		snprintf(err, errlen, "libjvm's symbols do not name its stubs (StubCodeDesc::_list)");
		return -1;
	}
	return hotspot_stubs_rows(vm->stubs, mono_ns(), rows, n, err, errlen);
}

struct hotspot_stubs *hotspot_vm_stubs(struct hotspot_vm *vm)
{
	return vm->stubs;
}

const char *hotspot_vm_stub_name(struct hotspot_vm *vm, uint64_t pc)
{
	const char *name = vm->stubs ? hotspot_stubs_name(vm->stubs, pc, mono_ns()) : NULL;
	if (name)
		return name;
	/* without the list: the call stub's return address, in the tables */
	if (!vm->call_stub_ret && vm->call_stub_ret_addr) /* set once, as the JVM starts */
		vm->call_stub_ret = remote_mem_u64(&vm->mem, vm->call_stub_ret_addr);
	return pc && pc == vm->call_stub_ret ? "call_stub" : NULL;
}

/* ---- the walker's layout ------------------------------------------------------- */

int hotspot_vm_walker_info(struct hotspot_vm *vm, struct hotspot_proc *out)
{
	uint64_t heaps, data, low, high, stubq, buf;
	int32_t len = 0, limit = 0, log2 = 0;
	if (!vm->walkable)
		return -1;
	memset(out, 0, sizeof(*out));
	heaps = remote_mem_u64(&vm->mem, vm->heaps_addr);
	low = remote_mem_u64(&vm->mem, vm->low_bound_addr);
	high = remote_mem_u64(&vm->mem, vm->high_bound_addr);
	stubq = remote_mem_u64(&vm->mem, vm->interp_code_addr);
	if (!heaps || !low || high <= low || !stubq)
		return 0; /* not set up yet */
	if (remote_mem_read(&vm->mem, heaps + (uint64_t)vm->ga_len, &len, 4) != 0 ||
	    !(data = remote_mem_u64(&vm->mem, heaps + (uint64_t)vm->ga_data)) || len <= 0)
		return 0;
	if (len > PROFILE_HOTSPOT_HEAPS)
		return -1;
	for (int32_t i = 0; i < len; i++) {
		uint64_t heap = remote_mem_u64(&vm->mem, data + 8 * (uint64_t)i);
		if (!heap || remote_mem_read(&vm->mem, heap + (uint64_t)vm->heap_log2_seg, &log2, 4) != 0)
			return 0;
		out->heap_low[i] = remote_mem_u64(&vm->mem, heap + (uint64_t)vm->heap_memory + (uint64_t)vm->vs_low);
		out->heap_high[i] = remote_mem_u64(&vm->mem, heap + (uint64_t)vm->heap_memory + (uint64_t)vm->vs_high);
		out->heap_segmap[i] = remote_mem_u64(&vm->mem, heap + (uint64_t)vm->heap_segmap + (uint64_t)vm->vs_low);
		if (!out->heap_low[i] || out->heap_high[i] <= out->heap_low[i] || !out->heap_segmap[i])
			return 0;
		if (out->heap_low[i] < low || out->heap_high[i] > high)
			return 0; /* the bounds not updated yet */
		/* one segment size (CodeCacheSegmentSize) for every heap */
		if (log2 < 4 || log2 > 16 || (out->segment_shift && out->segment_shift != (__u32)log2))
			return -1;
		out->segment_shift = (__u32)log2;
	}
	out->nheaps = (__u32)len;
	buf = remote_mem_u64(&vm->mem, stubq + (uint64_t)vm->sq_stub_buffer);
	/* buf + limit compared without overflow: the target's memory says what they are */
	if (!buf || remote_mem_read(&vm->mem, stubq + (uint64_t)vm->sq_buffer_limit, &limit, 4) != 0 || limit <= 0 ||
	    buf < low || buf > high || (uint64_t)limit > high - buf)
		return 0;
	out->code_low = low;
	out->code_high = high;
	out->interp_low = buf;
	out->interp_high = buf + (uint64_t)limit;
	out->jvm_text_low = vm->jvm_text_low;
	out->jvm_text_high = vm->jvm_text_high;
	out->heapblock_size = (__u32)vm->heapblock_size;
	out->blob_name = (__u16)vm->blob_name;
	out->blob_frame_size = (__u16)vm->blob_frame_size;
	out->blob_frame_complete = (__u16)vm->blob_frame_complete;
	out->blob_code_begin = (__u16)vm->blob_code_begin;
	out->blob_code_end = (__u16)vm->blob_code_end;
	out->nmethod_compile_id = (__u16)vm->nm_compile_id;
	out->method_const_method = (__u16)vm->method_const_method;
	out->const_method_size = (__u16)vm->cm_size;
	out->blob_code_offsets = vm->blob_code_offsets;
	/* the walker reads a blob's first blob_header bytes: up to its last field */
	long last = 0, fields[] = { vm->blob_name,	 vm->blob_frame_size, vm->blob_frame_complete,
				    vm->blob_code_begin, vm->blob_code_end,   vm->nm_compile_id };
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		last = fields[i] > last ? fields[i] : last;
	if (last + 8 > 512)
		return -1;
	out->blob_header = (__u16)((last + 8 + 63) & ~63L);
	return 1;
}

/* ---- class unloading ------------------------------------------------------------- */

bool hotspot_vm_refresh(struct hotspot_vm *vm)
{
	uint64_t now = mono_ns();
	int64_t unloaded;
	bool changed = false;
	if (!vm->pid)
		return false;
	if (vm->have_counter) {
		if (hsperf_counter_read(&vm->counter, &unloaded) == 0) {
			if (unloaded != vm->unloaded) {
				hotspot_names_unloaded(vm->names, vm->checked_ns, now);
				changed = true;
			}
			vm->unloaded = unloaded;
			vm->checked_ns = now;
			return changed;
		}
		vm->have_counter = false; /* gone: close names every second instead */
	}
	if (now - vm->checked_ns >= NO_COUNTER_FLUSH_NS) {
		hotspot_names_unloaded(vm->names, now, now);
		vm->checked_ns = now;
		changed = true;
	}
	return changed;
}
