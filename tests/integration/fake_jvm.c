/* fake_jvm.c - a hostile "JVM" (issue 31): its own libjvm.so's VMStructs tables, a code
 * cache of stubs, threads under thousands of stub frames, stub names rewritten. */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

/* fake_libjvm.c's exports: its table variables are set through fake_jvm_set
 * (in the order of enum var), never referenced here (a copy relocation would
 * make the program's copy the one this file writes). */
extern void fake_jvm_set(int which, uint64_t v);
extern void *fake_jvm_spin_addr(void);

enum var {
	V_STRUCTS,
	V_STRUCT_STRIDE,
	V_STRUCT_TYPE,
	V_STRUCT_FIELD,
	V_STRUCT_TSTRING,
	V_STRUCT_STATIC,
	V_STRUCT_OFFSET,
	V_STRUCT_ADDRESS,
	V_TYPES,
	V_TYPE_STRIDE,
	V_TYPE_TYPE,
	V_TYPE_SIZE
};

#define NOBODY	    65534
#define SEG_SHIFT   6		 /* CodeHeap::_log2_segment_size */
#define BLOB_BYTES  256		 /* each stub blob: 4 segments */
#define HEAPBLOCK   16		 /* sizeof(HeapBlock) */
#define NAME_BYTES  256		 /* each blob's name buffer */
#define PC_IN_BLOB  160		 /* a stub's return address, inside its code */
#define STACK_BELOW (256 * 1024) /* room under a chain for the spin and signal handlers */
#define NAME_PREFIX "StubRoutines ("

/* HotSpot's table entries (vmStructs.hpp) */
struct vm_struct_entry {
	const char *type_name, *field_name, *type_string;
	int32_t is_static;
	uint64_t offset;
	void *address;
};

struct vm_type_entry {
	const char *type_name, *superclass_name;
	int32_t is_oop, is_integer, is_unsigned;
	uint64_t size;
};

/* The fake VM's objects, laid out as this file likes: the tables say where. */
struct virtual_space {
	char *low_boundary, *high_boundary;
};

struct code_heap {
	struct virtual_space memory, segmap;
	int32_t log2_segment_size;
};

struct growable_array {
	int32_t len, max;
	struct code_heap **data;
};

struct stub_queue {
	char *stub_buffer;
	int32_t buffer_limit;
};

struct code_blob {
	char *name;
	int32_t frame_size, frame_complete_offset;
	char *code_begin, *code_end;
	int32_t compile_id;
};

struct method {
	void *const_method;
};

struct const_method {
	void *constants;
	uint16_t name_index;
};

struct constant_pool {
	void *pool_holder;
};

struct klass {
	void *name;
};

struct symbol {
	uint16_t length;
	uint8_t body[6];
};

static struct growable_array *code_heaps;
static char *code_low_bound, *code_high_bound;
static struct stub_queue *interp_code;
static int32_t vm_major_version = 17;

static struct {
	long frames, threads;
	int rewrite;
	const char *tables;
	int stay_root;
	int shuffle; /* the spinners' return addresses changed all the time */
} opt = { 2000, 2, 1, "good", 0, 0 };

#define MAX_SPINNERS 256
static uint64_t *volatile chains[MAX_SPINNERS]; /* each spinner's frame records */

static char *code, *names; /* the code heap (and the interpreter's buffer after
                              it); the blobs' names */
static size_t heap_bytes;
static struct vm_struct_entry *structs;
static struct vm_type_entry *types;
static size_t nstructs, ntypes;
static char *no_nul;   /* a page of 'A's up to an unreadable page */
static char *unmapped; /* an address with nothing mapped */

static void die(const char *what)
{
	fprintf(stderr, "fake-jvm: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void *map(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		die("mmap");
	return p;
}

#define FIELD(t, f, ts, off)           \
	{                              \
		t, f, ts, 0, off, NULL \
	}
#define STATIC(t, f, ts, addr)                 \
	{                                      \
		t, f, ts, 1, 0, (void *)(addr) \
	}

static const struct vm_struct_entry good_structs[] = {
	FIELD("CodeHeap", "_memory", "VirtualSpace", offsetof(struct code_heap, memory)),
	FIELD("CodeHeap", "_segmap", "VirtualSpace", offsetof(struct code_heap, segmap)),
	FIELD("CodeHeap", "_log2_segment_size", "int", offsetof(struct code_heap, log2_segment_size)),
	FIELD("VirtualSpace", "_low_boundary", "char*", offsetof(struct virtual_space, low_boundary)),
	FIELD("VirtualSpace", "_high_boundary", "char*", offsetof(struct virtual_space, high_boundary)),
	FIELD("GrowableArrayBase", "_len", "int", offsetof(struct growable_array, len)),
	FIELD("GrowableArray<int>", "_data", "int*", offsetof(struct growable_array, data)),
	FIELD("StubQueue", "_stub_buffer", "address", offsetof(struct stub_queue, stub_buffer)),
	FIELD("StubQueue", "_buffer_limit", "int", offsetof(struct stub_queue, buffer_limit)),
	FIELD("CodeBlob", "_name", "const char*", offsetof(struct code_blob, name)),
	FIELD("CodeBlob", "_frame_size", "int", offsetof(struct code_blob, frame_size)),
	FIELD("CodeBlob", "_frame_complete_offset", "int", offsetof(struct code_blob, frame_complete_offset)),
	FIELD("CodeBlob", "_code_begin", "address", offsetof(struct code_blob, code_begin)),
	FIELD("CodeBlob", "_code_end", "address", offsetof(struct code_blob, code_end)),
	FIELD("nmethod", "_compile_id", "int", offsetof(struct code_blob, compile_id)),
	FIELD("Method", "_constMethod", "ConstMethod*", offsetof(struct method, const_method)),
	FIELD("ConstMethod", "_constants", "ConstantPool*", offsetof(struct const_method, constants)),
	FIELD("ConstMethod", "_name_index", "u2", offsetof(struct const_method, name_index)),
	FIELD("ConstantPool", "_pool_holder", "InstanceKlass*", offsetof(struct constant_pool, pool_holder)),
	FIELD("Klass", "_name", "Symbol*", offsetof(struct klass, name)),
	FIELD("Symbol", "_length", "u2", offsetof(struct symbol, length)),
	FIELD("Symbol", "_body", "u1", offsetof(struct symbol, body)),
	FIELD("HeapBlock::Header", "_length", "size_t", 0), /* for tests/unit/hotspot_probe */
	FIELD("HeapBlock::Header", "_used", "bool", 8),
	STATIC("CodeCache", "_heaps", "GrowableArray<CodeHeap*>*", &code_heaps),
	STATIC("CodeCache", "_low_bound", "address", &code_low_bound),
	STATIC("CodeCache", "_high_bound", "address", &code_high_bound),
	STATIC("AbstractInterpreter", "_code", "StubQueue*", &interp_code),
	STATIC("Abstract_VM_Version", "_vm_major_version", "int", &vm_major_version),
};

static const struct vm_type_entry good_types[] = {
	{ "HeapBlock", NULL, 0, 0, 0, HEAPBLOCK },
	{ "ConstMethod", NULL, 0, 0, 0, 48 },
	{ "ConstantPool", NULL, 0, 0, 0, 64 },
	{ "CodeBlob", NULL, 0, 0, 0, sizeof(struct code_blob) },
};

#define NGOOD_STRUCTS (sizeof(good_structs) / sizeof(good_structs[0]))
#define NGOOD_TYPES   (sizeof(good_types) / sizeof(good_types[0]))

static struct code_blob *blob_at(long i)
{
	return (struct code_blob *)(code + (size_t)i * BLOB_BYTES + HEAPBLOCK);
}

/* The code cache: one heap of opt.frames stub blobs, its segment map, and
 * the interpreter's (empty) buffer after the heap. */
static void code_cache_setup(void)
{
	size_t page = 4096, nseg;
	unsigned char *segmap;
	struct code_heap *heap;
	heap_bytes = ((size_t)opt.frames * BLOB_BYTES + page - 1) / page * page;
	code = map(heap_bytes + page, PROT_READ | PROT_WRITE);
	names = map(((size_t)opt.frames * NAME_BYTES + page - 1) / page * page, PROT_READ | PROT_WRITE);
	nseg = heap_bytes >> SEG_SHIFT;
	segmap = map((nseg + page - 1) / page * page, PROT_READ | PROT_WRITE);
	memset(segmap, 0xff, nseg);
	for (long i = 0; i < opt.frames; i++) {
		struct code_blob *b = blob_at(i);
		uint64_t *hb = (uint64_t *)(code + (size_t)i * BLOB_BYTES);
		hb[0] = BLOB_BYTES >> SEG_SHIFT; /* HeapBlock: its length in segments, used */
		hb[1] = 1;
		for (int s = 0; s < BLOB_BYTES >> SEG_SHIFT; s++)
			segmap[((size_t)i * BLOB_BYTES >> SEG_SHIFT) + (size_t)s] = (unsigned char)s;
		b->name = names + (size_t)i * NAME_BYTES;
		snprintf(b->name, NAME_BYTES, NAME_PREFIX "%ld)", i);
		b->frame_size = 0; /* StubRoutines: no frame size, a frame pointer */
		b->frame_complete_offset = -1;
		b->code_begin = (char *)b + 64;
		b->code_end = code + (size_t)(i + 1) * BLOB_BYTES;
		b->compile_id = 0;
	}
	heap = calloc(1, sizeof(*heap));
	code_heaps = calloc(1, sizeof(*code_heaps));
	interp_code = calloc(1, sizeof(*interp_code));
	if (!heap || !code_heaps || !interp_code)
		die("calloc");
	heap->memory = (struct virtual_space){ code, code + heap_bytes };
	heap->segmap = (struct virtual_space){ (char *)segmap, (char *)segmap + nseg };
	heap->log2_segment_size = SEG_SHIFT;
	code_heaps->len = code_heaps->max = 1;
	code_heaps->data = calloc(1, sizeof(*code_heaps->data));
	if (!code_heaps->data)
		die("calloc");
	code_heaps->data[0] = heap;
	code_low_bound = code;
	code_high_bound = code + heap_bytes + page;
	interp_code->stub_buffer = code + heap_bytes;
	interp_code->buffer_limit = (int32_t)page;
}

static uint64_t stub_pc(long i)
{
	return (uint64_t)(uintptr_t)(code + (size_t)i * BLOB_BYTES + PC_IN_BLOB);
}

/* ---- the tables, and their crafted variants
 * --------------------------------------- */

static void tables_point(size_t struct_stride, size_t type_stride)
{
	fake_jvm_set(V_STRUCT_STRIDE, struct_stride);
	fake_jvm_set(V_STRUCT_TYPE, offsetof(struct vm_struct_entry, type_name));
	fake_jvm_set(V_STRUCT_FIELD, offsetof(struct vm_struct_entry, field_name));
	fake_jvm_set(V_STRUCT_TSTRING, offsetof(struct vm_struct_entry, type_string));
	fake_jvm_set(V_STRUCT_STATIC, offsetof(struct vm_struct_entry, is_static));
	fake_jvm_set(V_STRUCT_OFFSET, offsetof(struct vm_struct_entry, offset));
	fake_jvm_set(V_STRUCT_ADDRESS, offsetof(struct vm_struct_entry, address));
	fake_jvm_set(V_TYPE_STRIDE, type_stride);
	fake_jvm_set(V_TYPE_TYPE, offsetof(struct vm_type_entry, type_name));
	fake_jvm_set(V_TYPE_SIZE, offsetof(struct vm_type_entry, size));
	fake_jvm_set(V_STRUCTS, (uint64_t)(uintptr_t)structs);
	fake_jvm_set(V_TYPES, (uint64_t)(uintptr_t)types);
}

/* The good tables, with n entries (n > the good ones: repeated) and a NULL
 * terminator unless none. */
static void tables_fill(size_t n, int terminated)
{
	size_t sb = (n + 1) * sizeof(*structs), tb = (n + 1) * sizeof(*types);
	structs = map(sb, PROT_READ | PROT_WRITE);
	types = map(tb, PROT_READ | PROT_WRITE);
	nstructs = ntypes = n;
	for (size_t i = 0; i < n + !terminated; i++) {
		structs[i] = good_structs[i % NGOOD_STRUCTS];
		types[i] = good_types[i % NGOOD_TYPES];
	}
	if (!terminated) { /* the last page too: reads run off the mapping's end */
		for (char *p = (char *)(structs + n + 1);
		     p + sizeof(*structs) <= (char *)structs + ((sb + 4095) & ~4095UL); p += sizeof(*structs))
			memcpy(p, &good_structs[0], sizeof(*structs));
	}
}

static void no_nul_setup(void)
{
	char *p = map(2 * 4096, PROT_READ | PROT_WRITE);
	memset(p, 'A', 4096);
	if (mprotect(p + 4096, 4096, PROT_NONE) != 0)
		die("mprotect");
	no_nul = p;
	unmapped = map(4096, PROT_READ);
	if (munmap(unmapped, 4096) != 0)
		die("munmap");
}

/* A thread that keeps changing the tables and the code cache's structures
 * under a reader (-t flip). */
static void *flipper(void *arg)
{
	uint64_t r = 1;
	(void)arg;
	for (;;) {
		r = r * 6364136223846793005ULL + 1442695040888963407ULL;
		size_t i = (size_t)(r >> 33) % NGOOD_STRUCTS;
		switch ((r >> 20) % 6) {
		case 0:
			fake_jvm_set(V_STRUCT_STRIDE, (r >> 40) & 1 ? sizeof(*structs) : (r >> 41) % 512);
			break;
		case 1:
			structs[i].type_name = (r >> 40) & 1 ? good_structs[i].type_name : no_nul;
			break;
		case 2:
			structs[i].field_name = (r >> 40) & 1 ? good_structs[i].field_name : unmapped;
			break;
		case 3:
			structs[i].offset = (r >> 40) & 1 ? good_structs[i].offset : r >> 44;
			break;
		case 4:
			code_heaps->len = (r >> 40) & 1 ? 1 : (int32_t)(r >> 32);
			break;
		default:
			structs[i].address = (r >> 40) & 1 ? good_structs[i].address : (void *)(uintptr_t)(r >> 16);
			break;
		}
	}
	return NULL;
}

static void tables_setup(void)
{
	const char *t = opt.tables;
	no_nul_setup();
	if (!strcmp(t, "no-terminator")) {
		tables_fill(40000, 0);
	} else {
		tables_fill(NGOOD_STRUCTS > NGOOD_TYPES ? NGOOD_STRUCTS : NGOOD_TYPES, 1);
		/* the types table ends where its own entries do */
		memset(&types[NGOOD_TYPES], 0, sizeof(*types));
	}
	tables_point(sizeof(*structs), sizeof(*types));
	if (!strcmp(t, "good") || !strcmp(t, "no-terminator") || !strcmp(t, "flip")) {
		return;
	} else if (!strcmp(t, "zero-stride")) {
		fake_jvm_set(V_STRUCT_STRIDE, 0);
		fake_jvm_set(V_TYPE_STRIDE, 0);
	} else if (!strcmp(t, "huge-stride")) {
		fake_jvm_set(V_STRUCT_STRIDE, 1ULL << 40);
		fake_jvm_set(V_TYPE_STRIDE, 1ULL << 40);
	} else if (!strcmp(t, "no-nul")) {
		/* every third name, and every blob's name, runs into an unreadable page */
		for (size_t i = 0; i < nstructs; i += 3)
			structs[i].field_name = no_nul + (i % 64);
		for (size_t i = 1; i < ntypes; i += 3)
			types[i].type_name = no_nul;
		for (long i = 0; i < opt.frames; i++)
			blob_at(i)->name = no_nul + 4096 - 8;
	} else if (!strcmp(t, "cycle")) {
		/* names that are the tables' own bytes, a heap array that is its own
     * heap, segment maps whose every byte says "one back" */
		for (size_t i = 0; i < nstructs; i += 2)
			structs[i].type_name = (const char *)&structs[i];
		code_heaps->data[0] = (struct code_heap *)code_heaps;
		for (long i = 0; i < opt.frames; i++)
			blob_at(i)->name = (char *)&blob_at(i)->name;
	} else if (!strcmp(t, "unmapped")) {
		for (size_t i = 0; i < nstructs; i += 4)
			structs[i].field_name = unmapped;
		for (size_t i = 0; i < nstructs; i += 5)
			structs[i].address = unmapped + 64;
		for (long i = 0; i < opt.frames; i++)
			blob_at(i)->name = unmapped + 128;
		code_heaps->data[0]->segmap.low_boundary = unmapped;
	} else {
		fprintf(stderr, "fake-jvm: unknown --tables %s\n", t);
		exit(2);
	}
}

/* ---- the threads
 * ------------------------------------------------------------------ */

/* Switches to a stack of opt.frames frame records (each: the next record,
 * then a return address inside the next stub) and spins in libjvm's text on
 * top of them. Never returns. */
static void *spinner(void *arg)
{
	long n = opt.frames;
	size_t bytes = STACK_BELOW + (size_t)(n + 1) * 16;
	char *area = map((bytes + 4095) & ~4095UL, PROT_READ | PROT_WRITE);
	uint64_t *rec = (uint64_t *)(area + STACK_BELOW); /* 16-byte aligned */
	char name[16];
	snprintf(name, sizeof(name), "fake-spin-%ld", (long)(intptr_t)arg);
	pthread_setname_np(pthread_self(), name);
	/* record k, for stub k's frame: the saved frame pointer (record k + 1)
   * and the return address into stub k + 1; the last one ends the stack */
	for (long k = 0; k + 1 < n; k++) {
		rec[2 * k] = (uint64_t)(uintptr_t)&rec[2 * (k + 1)];
		rec[2 * k + 1] = stub_pc(k + 1);
	}
	rec[2 * (n - 1)] = 0;
	rec[2 * (n - 1) + 1] = 0;
	chains[(intptr_t)arg % MAX_SPINNERS] = rec;
	/* the spin's own record (pushed by its prologue) lands just below rec:
   * it returns into stub 0 with rbp = rec */
	__asm__ volatile("mov %0, %%rsp\n\t"
			 "mov %1, %%rbp\n\t"
			 "push %2\n\t"
			 "jmp *%3\n\t"
			 :
			 : "r"(rec), "r"(rec), "r"(stub_pc(0)), "r"(fake_jvm_spin_addr())
			 : "memory");
	__builtin_unreachable();
}

/* Gives every stub a new name each round: a counter, escape sequences, bytes
 * that are not UTF-8, mostly padded to 255 characters (a reader that reads a
 * name in pieces reads many), sometimes no NUL (runs into the next blob's
 * name), sometimes short. Every name begins with NAME_PREFIX. */
static void *rewriter(void *arg)
{
	char buf[NAME_BYTES];
	(void)arg;
	for (unsigned long round = 1;; round++) {
		for (long i = 0; i < opt.frames; i++) {
			char *dst = blob_at(i)->name;
			size_t n;
			if (dst < names || dst >= names + (size_t)opt.frames * NAME_BYTES)
				continue; /* a variant's name: left as it is */
			switch ((round + (unsigned long)i) % 6) {
			case 0:
			case 1: /* no NUL: the next name goes on */
				n = (size_t)snprintf(buf, sizeof(buf), NAME_PREFIX "%ld) round %lu ", i, round);
				break;
			case 2:
				n = (size_t)snprintf(buf, sizeof(buf), NAME_PREFIX "%ld) \x1b[31m;\n\x07 round %lu ", i,
						     round);
				break;
			case 3:
				n = (size_t)snprintf(buf, sizeof(buf), NAME_PREFIX "%ld) \xff\xfe\xc0 round %lu ", i,
						     round);
				break;
			default: /* short */
				n = (size_t)snprintf(buf, sizeof(buf), NAME_PREFIX "%ld) round %lu", i, round);
				buf[n] = '\0';
				memcpy(dst, buf, sizeof(buf));
				continue;
			}
			memset(buf + n, 'L', sizeof(buf) - n);
			if ((round + (unsigned long)i) % 6 != 1)
				buf[sizeof(buf) - 1] = '\0';
			memcpy(dst, buf, sizeof(buf));
		}
	}
	return NULL;
}

/* --shuffle: every millisecond, return addresses of the spinners' stacks
 * point into other stubs (a xorshift's choice): every sample a stack never
 * seen before, each frame still a stub with a name. */
static void *shuffler(void *arg)
{
	uint64_t x = 88172645463325252ULL;
	struct timespec ms = { 0, 1000000L };
	(void)arg;
	for (;;) {
		for (long t = 0; t < opt.threads && t < MAX_SPINNERS; t++) {
			uint64_t *rec = chains[t];
			for (long k = 0; rec && k + 1 < opt.frames; k += 1 + (long)(x % 7)) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				rec[2 * k + 1] = stub_pc((long)(x % (uint64_t)opt.frames));
			}
		}
		nanosleep(&ms, NULL);
	}
	return NULL;
}

static void start(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	int rc = pthread_create(&t, NULL, fn, arg);
	if (rc != 0) {
		errno = rc;
		die("pthread_create");
	}
}

static void usage(void)
{
	fprintf(stderr, "usage: jflame_fake_jvm [--frames N] [--threads N] "
			"[--no-rewrite] [--shuffle] [--stay-root]\n"
			"                       [--tables "
			"good|zero-stride|huge-stride|no-terminator|no-nul|cycle|"
			"unmapped|flip]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--frames") && v)
			opt.frames = strtol(v, NULL, 10), i++;
		else if (!strcmp(a, "--threads") && v)
			opt.threads = strtol(v, NULL, 10), i++;
		else if (!strcmp(a, "--tables") && v)
			opt.tables = v, i++;
		else if (!strcmp(a, "--no-rewrite"))
			opt.rewrite = 0;
		else if (!strcmp(a, "--shuffle"))
			opt.shuffle = 1;
		else if (!strcmp(a, "--stay-root"))
			opt.stay_root = 1;
		else
			usage();
	}
	if (opt.frames < 2 || opt.frames > 100000 || opt.threads < 0 || opt.threads > 256)
		usage();
	/* an unprivileged attacker: nobody, still readable by root (setuid
   * clears the dumpable flag) */
	if (getuid() == 0 && !opt.stay_root) {
		if (setgroups(0, NULL) != 0 || setgid(NOBODY) != 0 || setuid(NOBODY) != 0)
			die("dropping to nobody");
	}
	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) != 0)
		die("PR_SET_DUMPABLE");
	code_cache_setup();
	tables_setup();
	for (long i = 0; i < opt.threads; i++)
		start(spinner, (void *)(intptr_t)i);
	if (opt.rewrite)
		start(rewriter, NULL);
	if (opt.shuffle)
		start(shuffler, NULL);
	if (!strcmp(opt.tables, "flip"))
		start(flipper, NULL);
	printf("fake-jvm: ready pid=%d\n", (int)getpid());
	fflush(stdout);
	for (;;)
		pause();
}
