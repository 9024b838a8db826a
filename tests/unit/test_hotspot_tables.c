/* test_hotspot_tables.c - hotspot_vm over hand-built gHotSpotVMStructs tables shaped like
 * JDK 17's and 25's; `--write-seeds DIR` writes them as fuzz_hotspot_names seeds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hotspot_vm.h"

#define BASE	 0x10000ULL /* as in fuzz_hotspot_names.c */
#define IMAGE	 4000	    /* a seed fits the regression runner's 4 KiB */
#define STRIDE	 44	    /* type 0, field 8, type string 16, is_static 24 (4), offset 28, address 36 */
#define TSTRIDE	 16	    /* type name 0, size 8 */
#define CODE_LOW 0x7f0000000000ULL
#define SEGMAP	 0x7f1000000000ULL

struct image {
	uint8_t m[IMAGE];
	size_t used;
	uint64_t strings[64];
	size_t nstrings;
};

/* Memory ends where the image does, rounded up to 32 bytes as a page would
 * be (strings are read in pieces up to 32-byte boundaries). */
static size_t image_end(const struct image *im)
{
	return (im->used + 31) & ~(size_t)31;
}

static int image_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct image *im = ctx;
	if (addr < BASE || addr - BASE > image_end(im) || len > image_end(im) - (addr - BASE))
		return -1;
	memcpy(buf, im->m + (addr - BASE), len);
	return 0;
}

static uint64_t alloc(struct image *im, size_t n)
{
	size_t at = (im->used + 7) & ~(size_t)7;
	if (((at + n + 31) & ~(size_t)31) > IMAGE) {
		fprintf(stderr, "test_hotspot_tables: the image is full\n");
		exit(1);
	}
	im->used = at + n;
	return BASE + at;
}

static void put(struct image *im, uint64_t addr, const void *v, size_t n)
{
	memcpy(im->m + (addr - BASE), v, n);
}

static void put64(struct image *im, uint64_t addr, uint64_t v)
{
	put(im, addr, &v, 8);
}

static void put32(struct image *im, uint64_t addr, uint32_t v)
{
	put(im, addr, &v, 4);
}

static void put16(struct image *im, uint64_t addr, uint16_t v)
{
	put(im, addr, &v, 2);
}

/* A C string, stored once. */
static uint64_t str(struct image *im, const char *s)
{
	for (size_t i = 0; i < im->nstrings; i++)
		if (strcmp((const char *)im->m + (im->strings[i] - BASE), s) == 0)
			return im->strings[i];
	uint64_t a = alloc(im, strlen(s) + 1);
	put(im, a, s, strlen(s) + 1);
	if (im->nstrings < 64)
		im->strings[im->nstrings++] = a;
	return a;
}

/* The two shapes: offsets as the synthetic tables give them. */
struct shape {
	int jdk;
	const char *ga_len_type, *symbol_length_field, *nm_method_type, *complete_type;
	long symbol_length, heapblock, cm_size, cm_flags, nm_method, nm_compile_id, code_begin, code_end, frame_size,
		frame_complete;
	bool offsets, flags_u4;
};

static const struct shape jdk17 = {
	17,
	"GenericGrowableArray",
	"_length_and_refcount",
	"CompiledMethod",
	"int",
	2,
	16,
	48,
	28,
	40,
	48,
	24,
	32,
	16,
	20,
	false,
	false,
};
static const struct shape jdk25 = {
	25, "GrowableArrayBase", "_length", "nmethod", "int16_t", 4, 8, 56, 28, 32, 40, 16, 20, 24, 28, true, true,
};

struct built {
	uint64_t sym[HOTSPOT_NSYMS];
	uint64_t method, nmethod, interp, heaps_var, ga;
	uint32_t cookie;
};

static void field(struct image *im, uint64_t *e, const char *type, const char *name, const char *tstring,
		  uint64_t value, bool is_static)
{
	put64(im, *e, str(im, type));
	put64(im, *e + 8, str(im, name));
	put64(im, *e + 16, str(im, tstring));
	put32(im, *e + 24, is_static);
	put64(im, *e + (is_static ? 36 : 28), value);
	*e += STRIDE;
}

static void type(struct image *im, uint64_t *e, const char *name, uint64_t size)
{
	put64(im, *e, str(im, name));
	put64(im, *e + 8, size);
	*e += TSTRIDE;
}

static uint64_t symbol(struct image *im, const struct shape *s, const char *text)
{
	uint64_t a = alloc(im, 6 + strlen(text));
	put16(im, a + (uint64_t)s->symbol_length, (uint16_t)strlen(text));
	put(im, a + 6, text, strlen(text));
	return a;
}

static void build(struct image *im, const struct shape *s, struct built *b)
{
	memset(im, 0, sizeof(*im));
	uint64_t vars = alloc(im, 8 * HOTSPOT_NSYMS);
	for (int i = 0; i < HOTSPOT_NSYMS; i++)
		b->sym[i] = vars + 8 * (uint64_t)i;
	uint64_t entries = alloc(im, 40 * STRIDE), types = alloc(im, 4 * TSTRIDE);
	static const uint64_t values[HOTSPOT_NSYMS] = { 0, STRIDE, 0, 8, 16, 24, 28, 36, 0, TSTRIDE, 0, 8 };
	for (int i = 0; i < HOTSPOT_NSYMS; i++)
		put64(im, b->sym[i], values[i]);
	put64(im, b->sym[HOTSPOT_SYM_STRUCTS], entries);
	put64(im, b->sym[HOTSPOT_SYM_TYPES], types);

	/* the JVM's objects: statics, the code cache, a method and an nmethod */
	uint64_t heaps_var = alloc(im, 8), low_var = alloc(im, 8), high_var = alloc(im, 8);
	uint64_t interp_var = alloc(im, 8), major_var = alloc(im, 4);
	uint64_t ga = alloc(im, 16), data = alloc(im, 8), heap = alloc(im, 40), stubq = alloc(im, 24);
	b->heaps_var = heaps_var;
	b->ga = ga;
	put32(im, major_var, (uint32_t)s->jdk);
	put64(im, heaps_var, ga);
	put64(im, low_var, CODE_LOW);
	put64(im, high_var, CODE_LOW + 0x100000);
	put64(im, interp_var, stubq);
	put32(im, ga, 1);
	put64(im, ga + 8, data);
	put64(im, data, heap);
	put64(im, heap, CODE_LOW);
	put64(im, heap + 8, CODE_LOW + 0x100000);
	put64(im, heap + 16, SEGMAP);
	put64(im, heap + 24, SEGMAP + 0x2000);
	put32(im, heap + 32, 7);
	b->interp = CODE_LOW + 0x1000;
	put64(im, stubq + 8, b->interp);
	put32(im, stubq + 20, 0x8000);

	uint64_t method = alloc(im, 16), cm = alloc(im, (size_t)s->cm_size + 8), cp = alloc(im, 72 + 32);
	uint64_t klass = alloc(im, 32), nm = alloc(im, 56);
	b->method = method;
	b->nmethod = nm;
	b->cookie = (uint32_t)(cm >> 3);
	put64(im, method + 8, cm);
	put64(im, cm + 8, cp);
	put32(im, cm + 24, (uint32_t)((s->cm_size + 8) / 8)); /* _constMethod_size, words */
	put32(im, cm + (uint64_t)s->cm_flags, 1);	      /* has a line number table */
	put16(im, cm + 32 + (s->flags_u4 ? 2 : 0), 4);	      /* code size */
	put16(im, cm + 34 + (s->flags_u4 ? 2 : 0), 2);	      /* name index */
	static const uint8_t lines[] = { 0x07, 0x13, 0x00 };  /* bci 0 line 7, bci 2 line 10 */
	put(im, cm + (uint64_t)s->cm_size + 4, lines, sizeof(lines));
	put64(im, cp + 24, klass);
	put16(im, cp + 54, 3);
	put64(im, cp + 72 + 16, symbol(im, s, "baz"));
	put64(im, cp + 72 + 24, symbol(im, s, "Bar.java"));
	put64(im, klass + 24, symbol(im, s, "foo/Bar"));
	put64(im, nm + 8, str(im, "nmethod"));
	put64(im, nm + (uint64_t)s->nm_method, method);
	put32(im, nm + (uint64_t)s->nm_compile_id, 42);

	uint64_t e = entries;
	field(im, &e, "CodeCache", "_heaps", "GrowableArray<CodeHeap*>*", heaps_var, true);
	field(im, &e, "CodeCache", "_low_bound", "address", low_var, true);
	field(im, &e, "CodeCache", "_high_bound", "address", high_var, true);
	field(im, &e, "AbstractInterpreter", "_code", "StubQueue*", interp_var, true);
	field(im, &e, "Abstract_VM_Version", "_vm_major_version", "int", major_var, true);
	field(im, &e, s->ga_len_type, "_len", "int", 0, false);
	field(im, &e, "GrowableArray<int>", "_data", "int*", 8, false);
	field(im, &e, "CodeHeap", "_memory", "VirtualSpace", 0, false);
	field(im, &e, "CodeHeap", "_segmap", "VirtualSpace", 16, false);
	field(im, &e, "CodeHeap", "_log2_segment_size", "int", 32, false);
	field(im, &e, "VirtualSpace", "_low_boundary", "char*", 0, false);
	field(im, &e, "VirtualSpace", "_high_boundary", "char*", 8, false);
	field(im, &e, "StubQueue", "_stub_buffer", "address", 8, false);
	field(im, &e, "StubQueue", "_buffer_limit", "int", 20, false);
	field(im, &e, "CodeBlob", "_name", "const char*", 8, false);
	field(im, &e, "CodeBlob", "_frame_size", "int", (uint64_t)s->frame_size, false);
	field(im, &e, "CodeBlob", "_frame_complete_offset", s->complete_type, (uint64_t)s->frame_complete, false);
	field(im, &e, "CodeBlob", s->offsets ? "_code_offset" : "_code_begin", s->offsets ? "int" : "address",
	      (uint64_t)s->code_begin, false);
	field(im, &e, "CodeBlob", s->offsets ? "_data_offset" : "_code_end", s->offsets ? "int" : "address",
	      (uint64_t)s->code_end, false);
	field(im, &e, s->nm_method_type, "_method", "Method*", (uint64_t)s->nm_method, false);
	field(im, &e, "nmethod", "_compile_id", "int", (uint64_t)s->nm_compile_id, false);
	field(im, &e, "Method", "_constMethod", "ConstMethod*", 8, false);
	field(im, &e, "ConstMethod", "_constants", "ConstantPool*", 8, false);
	field(im, &e, "ConstMethod", "_constMethod_size", "int", 24, false);
	field(im, &e, "ConstMethod", s->flags_u4 ? "_flags._flags" : "_flags", s->flags_u4 ? "u4" : "u2",
	      (uint64_t)s->cm_flags, false);
	field(im, &e, "ConstMethod", "_code_size", "u2", 32 + (s->flags_u4 ? 2 : 0), false);
	field(im, &e, "ConstMethod", "_name_index", "u2", 34 + (s->flags_u4 ? 2 : 0), false);
	field(im, &e, "ConstantPool", "_pool_holder", "InstanceKlass*", 24, false);
	field(im, &e, "ConstantPool", "_source_file_name_index", "u2", 54, false);
	field(im, &e, "Klass", "_name", "Symbol*", 24, false);
	field(im, &e, "Symbol", s->symbol_length_field, s->jdk < 20 ? "int" : "u2",
	      (uint64_t)(s->jdk < 20 ? s->symbol_length - 2 : s->symbol_length), false);
	field(im, &e, "Symbol", "_body", "u1", 6, false);
	uint64_t t = types;
	type(im, &t, "HeapBlock", (uint64_t)s->heapblock);
	type(im, &t, "ConstMethod", (uint64_t)s->cm_size);
	type(im, &t, "ConstantPool", 72);
}

static void test_shape(const struct shape *s)
{
	struct image im;
	struct built b;
	struct hotspot_proc hp;
	char err[256];
	struct str_intern *si = str_intern_new();
	build(&im, s, &b);
	struct hotspot_vm *vm = hotspot_vm_from_tables(b.sym, image_read, &im, si, err, sizeof(err));
	CHECK_MSG(vm != NULL, "%s", err);
	if (!vm)
		goto out;
	struct hotspot_names *names = hotspot_vm_names(vm);
	CHECK_EQ_INT(hotspot_names_layout(names)->jdk, s->jdk);
	CHECK_EQ_INT(hotspot_names_layout(names)->cm_flags_size, s->flags_u4 ? 4 : 2);
	CHECK_EQ_INT(hotspot_vm_frame_complete_size(vm), s->jdk == 17 ? 4 : 2);
	CHECK_EQ_INT(hotspot_vm_walker_info(vm, &hp), 1);
	CHECK_EQ_U64(hp.code_low, CODE_LOW);
	CHECK_EQ_U64(hp.code_high, CODE_LOW + 0x100000);
	CHECK_EQ_INT(hp.nheaps, 1);
	CHECK_EQ_U64(hp.heap_low[0], CODE_LOW);
	CHECK_EQ_U64(hp.heap_high[0], CODE_LOW + 0x100000);
	CHECK_EQ_U64(hp.heap_segmap[0], SEGMAP);
	CHECK_EQ_INT(hp.segment_shift, 7);
	CHECK_EQ_U64(hp.interp_low, b.interp);
	CHECK_EQ_U64(hp.interp_high, b.interp + 0x8000);
	CHECK_EQ_INT(hp.heapblock_size, s->heapblock);
	CHECK_EQ_INT(hp.blob_name, 8);
	CHECK_EQ_INT(hp.blob_frame_size, s->frame_size);
	CHECK_EQ_INT(hp.blob_frame_complete, s->frame_complete);
	CHECK_EQ_INT(hp.blob_code_begin, s->code_begin);
	CHECK_EQ_INT(hp.blob_code_end, s->code_end);
	CHECK_EQ_INT(hp.blob_code_offsets, s->offsets);
	CHECK_EQ_INT(hp.nmethod_compile_id, s->nm_compile_id);
	CHECK_EQ_INT(hp.method_const_method, 8);
	CHECK_EQ_INT(hp.const_method_size, s->cm_size);
	CHECK_EQ_INT(hp.blob_header, 64);
	CHECK_EQ_STR(hotspot_names_method(names, b.method, b.cookie, 1), "Lfoo/Bar;::baz");
	CHECK_EQ_STR(hotspot_names_source(names, b.method, b.cookie, 1), "Bar.java");
	CHECK_EQ_INT(hotspot_names_line(names, b.method, b.cookie, 3), 10);
	CHECK_EQ_INT(hotspot_names_line(names, b.method, b.cookie, 4), -1); /* past the code */
	CHECK_EQ_STR(hotspot_names_nmethod(names, b.nmethod, 42, 1), "Lfoo/Bar;::baz");
	CHECK_EQ_STR(hotspot_names_blob(names, b.nmethod), "nmethod");
	hotspot_vm_free(vm);

	/* the code cache not set up yet: call again later */
	put64(&im, b.heaps_var, 0);
	vm = hotspot_vm_from_tables(b.sym, image_read, &im, si, err, sizeof(err));
	CHECK(vm && hotspot_vm_walker_info(vm, &hp) == 0);
	hotspot_vm_free(vm);
	put64(&im, b.heaps_var, b.ga);
	/* five code heaps: more than the walker holds */
	put32(&im, b.ga, 5);
	vm = hotspot_vm_from_tables(b.sym, image_read, &im, si, err, sizeof(err));
	CHECK(vm && hotspot_vm_walker_info(vm, &hp) == -1);
	hotspot_vm_free(vm);
	put32(&im, b.ga, 1);

	/* broken tables: a stride past any entry's size, a table without its end */
	uint64_t stride = 300;
	put64(&im, b.sym[HOTSPOT_SYM_STRUCT_STRIDE], stride);
	CHECK(hotspot_vm_from_tables(b.sym, image_read, &im, si, err, sizeof(err)) == NULL);
	CHECK_EQ_STR(err, "memory: failed to read HotSpot's gHotSpotVMStructs tables (a JVM still starting?)");
	put64(&im, b.sym[HOTSPOT_SYM_STRUCT_STRIDE], STRIDE);
	put64(&im, b.sym[HOTSPOT_SYM_TYPES], BASE + image_end(&im) - 8); /* runs off the image */
	CHECK(hotspot_vm_from_tables(b.sym, image_read, &im, si, err, sizeof(err)) == NULL);
out:
	str_intern_free(si);
}

/* The fuzz seeds: fuzz_hotspot_names.c's 32-byte header (table mode; the
 * method, nmethod and blob as offsets from BASE), then the image. */
static int write_seed(const char *dir, const char *name, const struct shape *s)
{
	struct image im;
	struct built b;
	uint8_t h[32] = { 2 };
	char path[4096];
	build(&im, s, &b);
	uint16_t method = (uint16_t)(b.method - BASE), nm = (uint16_t)(b.nmethod - BASE), bci = 2;
	uint32_t compile_id = 42;
	memcpy(h + 16, &method, 2);
	memcpy(h + 18, &b.cookie, 4);
	memcpy(h + 22, &bci, 2);
	memcpy(h + 24, &nm, 2);
	memcpy(h + 26, &compile_id, 4);
	memcpy(h + 30, &nm, 2);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(h, 1, sizeof(h), f) != sizeof(h) || fwrite(im.m, 1, image_end(&im), f) != image_end(&im)) {
		perror(path);
		if (f)
			fclose(f);
		return 1;
	}
	return fclose(f) != 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--write-seeds") == 0)
		return write_seed(argv[2], "tables_jdk17", &jdk17) | write_seed(argv[2], "tables_jdk25", &jdk25);
	test_shape(&jdk17);
	test_shape(&jdk25);
	return check_report("hotspot_tables");
}
