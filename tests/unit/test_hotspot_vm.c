/* test_hotspot_vm.c - the Method*, nmethod and code blob names read from a
 * JVM's memory, over a hand-built memory image: names, line numbers, cookies,
 * hidden classes, and names around class unloading. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hotspot_vm.h"

#define BASE 0x10000ULL

struct image {
	uint8_t m[0x1000];
	unsigned reads; /* reads asked for */
};

static int image_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct image *im = ctx;
	im->reads++;
	if (addr < BASE || addr - BASE > sizeof(im->m) || len > sizeof(im->m) - (addr - BASE))
		return -1;
	memcpy(buf, im->m + (addr - BASE), len);
	return 0;
}

static void put64(struct image *im, uint64_t off, uint64_t v)
{
	memcpy(im->m + off, &v, 8);
}

static void put16(struct image *im, uint64_t off, uint16_t v)
{
	memcpy(im->m + off, &v, 2);
}

static void put_symbol(struct image *im, uint64_t off, const char *s)
{
	put16(im, off + 4, (uint16_t)strlen(s));
	memcpy(im->m + off + 6, s, strlen(s));
}

static const struct hotspot_layout layout = {
	.jdk = 17,
	.method_const_method = 8,
	.cm_constants = 8,
	.cm_name_index = 16,
	.cm_code_size = 18,
	.cm_flags = 20,
	.cm_flags_size = 2,
	.cm_size = 48,
	.cp_pool_holder = 16,
	.cp_size = 64,
	.cp_source_file = 24,
	.klass_name = 16,
	.symbol_length = 4,
	.symbol_body = 6,
	.blob_name = 8,
	.nm_method = 16,
	.nm_compile_id = 24,
};

/* Method at 0, its ConstMethod at 0x100 (4 bytecodes, a line table), pool at
 * 0x200, holder Klass at 0x300, the method's name at 0x400, the class's at
 * 0x500, an nmethod at 0x600 compiled from it. */
static void build(struct image *im, const char *klass, const char *method)
{
	memset(im, 0, sizeof(*im));
	put64(im, 0x008, BASE + 0x100);
	put64(im, 0x108, BASE + 0x200);
	put16(im, 0x110, 2);
	put16(im, 0x112, 4);
	put16(im, 0x114, 1); /* has a line number table */
	/* after the bytecodes: bci 0 line 7, bci 2 line 10 (short deltas: bci << 3 | line) */
	static const uint8_t lines[] = { 0x07, 0x13, 0x00 };
	memcpy(im->m + 0x134, lines, sizeof(lines));
	put64(im, 0x210, BASE + 0x300);
	put16(im, 0x218, 3); /* the SourceFile attribute: pool entry 3 */
	put64(im, 0x258, BASE + 0x480);
	put_symbol(im, 0x480, "Bar.java");
	put64(im, 0x250, (BASE + 0x400) | 1); /* a pool entry's low bit is a tag */
	put64(im, 0x310, BASE + 0x500);
	put_symbol(im, 0x400, method);
	put_symbol(im, 0x500, klass);
	put64(im, 0x608, BASE + 0x700);
	put64(im, 0x610, BASE + 0);
	put64(im, 0x618, 42);
	memcpy(im->m + 0x700, "nmethod", 8);
}

static void test_names(void)
{
	struct image im;
	struct str_intern *si = str_intern_new();
	build(&im, "foo/Bar", "baz");
	struct hotspot_vm *vm = hotspot_vm_new(&layout, image_read, &im, si);
	struct hotspot_names *names = hotspot_vm_names(vm);
	uint32_t cookie = (uint32_t)((BASE + 0x100) >> 3);

	CHECK_EQ_STR(hotspot_names_method(names, BASE, 0, 1), "Lfoo/Bar;::baz");
	CHECK_EQ_STR(hotspot_names_method(names, BASE, cookie, 1), "Lfoo/Bar;::baz");
	CHECK_EQ_STR(hotspot_names_source(names, BASE, cookie, 1), "Bar.java");
	CHECK(hotspot_names_method(names, BASE, cookie + 1, 1) == NULL); /* not what was sampled */
	CHECK(hotspot_names_method(names, BASE + 4, 0, 1) == NULL);	 /* not aligned */
	CHECK(hotspot_names_method(names, BASE + 0x2000, 0, 1) == NULL); /* unreadable */
	CHECK_EQ_INT(hotspot_names_line(names, BASE, cookie, 0), 7);
	CHECK_EQ_INT(hotspot_names_line(names, BASE, cookie, 1), 7);
	CHECK_EQ_INT(hotspot_names_line(names, BASE, cookie, 2), 10);
	CHECK_EQ_INT(hotspot_names_line(names, BASE, cookie + 1, 2), -1);
	CHECK_EQ_STR(hotspot_names_nmethod(names, BASE + 0x600, 42, 1), "Lfoo/Bar;::baz");
	CHECK(hotspot_names_nmethod(names, BASE + 0x600, 41, 1) == NULL); /* another compilation */
	CHECK_EQ_STR(hotspot_names_blob(names, BASE + 0x600), "nmethod");
	/* without a line table (bci 3 was not looked up before: lines are cached) */
	put16(&im, 0x114, 0);
	CHECK_EQ_INT(hotspot_names_line(names, BASE, cookie, 3), -1);
	hotspot_vm_free(vm);
	str_intern_free(si);
}

static void test_long_line_delta(void)
{
	struct image im;
	struct str_intern *si = str_intern_new();
	build(&im, "foo/Bar", "baz");
	/* bci 0 line 7, then an escaped delta (0xff): bci +3 (zigzag 6, one byte),
	 * line +216 (zigzag 432 = 240 + 3 << 6: two bytes, the first >= 192) */
	static const uint8_t lines[] = { 0x07, 0xff, 0x06, 0xf0, 0x03, 0x00 };
	memcpy(im.m + 0x134, lines, sizeof(lines));
	struct hotspot_vm *vm = hotspot_vm_new(&layout, image_read, &im, si);
	struct hotspot_names *names = hotspot_vm_names(vm);
	CHECK_EQ_INT(hotspot_names_line(names, BASE, 0, 3), 7 + 216);
	CHECK_EQ_INT(hotspot_names_line(names, BASE, 0, 2), 7);
	hotspot_vm_free(vm);
	/* JDK 21+: bytes below 1 are excluded, every byte is one more */
	struct hotspot_layout l21 = layout;
	l21.jdk = 21;
	static const uint8_t lines21[] = { 0x07, 0xff, 0x07, 0xf1, 0x04, 0x00 };
	memcpy(im.m + 0x134, lines21, sizeof(lines21));
	vm = hotspot_vm_new(&l21, image_read, &im, si);
	names = hotspot_vm_names(vm);
	CHECK_EQ_INT(hotspot_names_line(names, BASE, 0, 3), 7 + 216);
	hotspot_vm_free(vm);
	str_intern_free(si);
}

static void test_hidden_class(void)
{
	struct image im;
	struct str_intern *si = str_intern_new();
	build(&im, "pkg/Foo$$Lambda$14+0x0000000800c01234", "run");
	struct hotspot_vm *vm = hotspot_vm_new(&layout, image_read, &im, si);
	struct hotspot_names *names = hotspot_vm_names(vm);
	/* as JVMTI (and so the agent's map) names it */
	CHECK_EQ_STR(hotspot_names_method(names, BASE, 0, 1), "Lpkg/Foo$$Lambda$14.0x0000000800c01234;::run");
	hotspot_vm_free(vm);
	build(&im, "pkg/a+b/C", "x\ny");
	vm = hotspot_vm_new(&layout, image_read, &im, si);
	names = hotspot_vm_names(vm);
	CHECK(hotspot_names_method(names, BASE, 0, 1) == NULL); /* control characters: not a name */
	hotspot_vm_free(vm);
	str_intern_free(si);
}

/* A class unloaded and its memory reused by another at the same addresses:
 * samples after it never get the old name; samples around it only a name
 * both agree on. */
static void test_unloading(void)
{
	struct image im;
	struct str_intern *si = str_intern_new();
	build(&im, "t/TenantOld1", "runOld1");
	struct hotspot_vm *vm = hotspot_vm_new(&layout, image_read, &im, si);
	struct hotspot_names *names = hotspot_vm_names(vm);
	CHECK_EQ_STR(hotspot_names_method(names, BASE, 0, 100), "Lt/TenantOld1;::runOld1");
	/* unloaded in [200, 300); the memory now holds another class */
	hotspot_names_unloaded(names, 200, 300);
	build(&im, "t/TenantNew2", "runNew2");
	CHECK_EQ_STR(hotspot_names_method(names, BASE, 0, 150), "Lt/TenantOld1;::runOld1"); /* taken before */
	CHECK_EQ_STR(hotspot_names_method(names, BASE, 0, 350), "Lt/TenantNew2;::runNew2"); /* after */
	CHECK(hotspot_names_method(names, BASE, 0, 250) == NULL);			    /* around it: cannot tell */
	CHECK_EQ_STR(hotspot_names_method(names, BASE, 0, 150), "Lt/TenantOld1;::runOld1");
	CHECK_EQ_STR(hotspot_names_method(names, BASE, 0, 400), "Lt/TenantNew2;::runNew2");
	/* a method whose name did not change is named around an unloading too */
	hotspot_names_unloaded(names, 500, 600);
	CHECK_EQ_STR(hotspot_names_method(names, BASE, 0, 550), "Lt/TenantNew2;::runNew2");
	hotspot_vm_free(vm);
	str_intern_free(si);
}

/* A stub's name is read once and kept: the same blob again costs no read
 * within a second, whatever its memory says meanwhile (a target rewriting its
 * names cannot make every frame of every sample a read). */
static void test_blob_cache(void)
{
	struct image im;
	struct str_intern *si = str_intern_new();
	build(&im, "foo/Bar", "baz");
	memcpy(im.m + 0x700, "StubRoutines (1)", 17);
	struct hotspot_vm *vm = hotspot_vm_new(&layout, image_read, &im, si);
	struct hotspot_names *names = hotspot_vm_names(vm);
	CHECK_EQ_STR(hotspot_names_blob(names, BASE + 0x600), "StubRoutines (1)");
	unsigned reads = im.reads;
	memcpy(im.m + 0x700, "StubRoutines (2)", 17);
	for (int i = 0; i < 1000; i++)
		CHECK_EQ_STR(hotspot_names_blob(names, BASE + 0x600), "StubRoutines (1)");
	CHECK_EQ_INT((int)(im.reads - reads), 0);
	/* a name with control bytes is escaped once, where it is read */
	memcpy(im.m + 0x720, "esc\033[31m", 9);
	put64(&im, 0x6c8, BASE + 0x720); /* a blob at 0x6c0: its _name at +8 */
	CHECK_EQ_STR(hotspot_names_blob(names, BASE + 0x6c0), "esc\\x1b[31m");
	hotspot_vm_free(vm);
	str_intern_free(si);
}

/* Past its cap a JVM's names not seen before are refused (the frame stays
 * unnamed); the names it has keep being given. */
static void test_names_cap(void)
{
	struct image im;
	char klass[64];
	struct str_intern *si = str_intern_new();
	build(&im, "foo/Bar", "baz");
	struct hotspot_names *n = hotspot_names_new(&layout, image_read, &im, si);
	hotspot_names_set_cap(n, 270 * 1024); /* the arena's first chunk (256 KiB) and a little */
	const char *first = hotspot_names_method(n, BASE, 0, 1);
	CHECK_EQ_STR(first, "Lfoo/Bar;::baz");
	CHECK(!hotspot_names_capped(n));
	int named = 0, refused = 0;
	for (int i = 0; i < 4000; i++) { /* a class renamed under the same Method* after each unloading */
		snprintf(klass, sizeof(klass), "foo/Renamed%06d", i);
		put_symbol(&im, 0x500, klass);
		hotspot_names_unloaded(n, 10 + 2 * (uint64_t)i, 11 + 2 * (uint64_t)i);
		const char *s = hotspot_names_method(n, BASE, 0, 11 + 2 * (uint64_t)i);
		named += s != NULL;
		refused += s == NULL;
	}
	CHECK(hotspot_names_capped(n));
	CHECK(named > 100 && refused > 100);
	CHECK(hotspot_names_charged(n) <= 270 * 1024 + 256 * 1024 + 64 * 1024); /* the cap, a chunk and a table */
	put_symbol(&im, 0x500, "foo/Bar");
	hotspot_names_unloaded(n, 100000, 100001);
	CHECK(hotspot_names_method(n, BASE, 0, 100002) == first); /* seen before: still given */
	hotspot_names_free(n);
	str_intern_free(si);
}

int main(void)
{
	test_blob_cache();
	test_names_cap();
	test_names();
	test_long_line_delta();
	test_hidden_class();
	test_unloading();
	return check_report("hotspot_vm");
}
