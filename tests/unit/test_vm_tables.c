/* test_vm_tables.c - the gHotSpotVMStructs/Types reader shared by jflame and the agent, over
 * tables laid out as HotSpot's VMStructEntry and VMTypeEntry in this process's memory. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "vm_tables.h"

struct struct_entry { /* HotSpot's VMStructEntry */
	const char *type, *field, *type_string;
	int32_t is_static;
	uint64_t offset;
	void *address;
};

struct type_entry { /* HotSpot's VMTypeEntry */
	const char *type, *superclass;
	int32_t is_oop, is_int, is_unsigned;
	uint64_t size;
};

static int flags_var;

/* The names, each in 32 aligned bytes: read in 32-byte pieces (as from
 * another process) they are not read past. */
enum { CODEBLOB, NAME, CHARP, COMPLETE, INT16, JVMFLAG, FLAGS, CONSTMETHOD };
static const char names[][32] __attribute__((aligned(32))) = {
	"CodeBlob", "_name", "const char*", "_frame_complete_offset", "int16_t", "JVMFlag", "flags", "ConstMethod",
};

static const struct struct_entry structs[] = {
	{ names[CODEBLOB], names[NAME], names[CHARP], 0, 24, NULL },
	{ names[CODEBLOB], NULL, NULL, 0, 99, NULL }, /* no field name: skipped */
	{ names[CODEBLOB], names[COMPLETE], names[INT16], 0, 36, NULL },
	{ names[JVMFLAG], names[FLAGS], NULL, 1, 0, &flags_var },
	{ NULL, NULL, NULL, 0, 0, NULL },
};

static const struct type_entry types[] = {
	{ names[CONSTMETHOD], NULL, 0, 0, 0, 56 },
	{ names[JVMFLAG], NULL, 0, 0, 0, 32 },
	{ NULL, NULL, 0, 0, 0, 0 },
};

/* Memory is this process's (as the agent reads it); addresses in
 * [refuse_lo, refuse_hi) cannot be read. */
static uint64_t refuse_lo, refuse_hi;

static int self_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (!addr || (addr < refuse_hi && addr + len > refuse_lo))
		return -1;
	memcpy(buf, (const void *)(uintptr_t)addr, len);
	return 0;
}

/* Names read in 32-byte pieces through self_read (as jflame reads another process's). */
static const struct vm_tables_mem pieces = { self_read, NULL, NULL };

static struct vm_tables_layout layout(void)
{
	return (struct vm_tables_layout){
		.structs = (uint64_t)(uintptr_t)structs,
		.struct_stride = sizeof(struct struct_entry),
		.struct_type = offsetof(struct struct_entry, type),
		.struct_field = offsetof(struct struct_entry, field),
		.struct_type_string = offsetof(struct struct_entry, type_string),
		.struct_is_static = offsetof(struct struct_entry, is_static),
		.struct_offset = offsetof(struct struct_entry, offset),
		.struct_address = offsetof(struct struct_entry, address),
		.types = (uint64_t)(uintptr_t)types,
		.type_stride = sizeof(struct type_entry),
		.type_type = offsetof(struct type_entry, type),
		.type_size = offsetof(struct type_entry, size),
	};
}

struct seen {
	int n;
	char text[8][128];
};

static void note(void *ctx, const struct hotspot_entry *e)
{
	struct seen *s = ctx;
	if (s->n < 8)
		snprintf(s->text[s->n], sizeof(s->text[0]), "%s.%s [%s]%s %llu", e->type, e->field ? e->field : "-",
			 e->type_string ? e->type_string : "-", e->is_static ? " static" : "",
			 (unsigned long long)e->value);
	s->n++;
}

static void test_structs(const struct vm_tables_mem *mem)
{
	struct vm_tables_layout l = layout();
	struct seen s = { 0 };
	char addr[64];
	CHECK_EQ_INT(vm_tables_each(&l, false, mem, note, &s), 0);
	CHECK_EQ_INT(s.n, 3);
	CHECK_EQ_STR(s.text[0], "CodeBlob._name [const char*] 24");
	CHECK_EQ_STR(s.text[1], "CodeBlob._frame_complete_offset [int16_t] 36");
	snprintf(addr, sizeof(addr), "JVMFlag.flags [] static %llu", (unsigned long long)(uintptr_t)&flags_var);
	CHECK_EQ_STR(s.text[2], addr); /* a static field: its address; no type string: "" */
}

static void test_types(const struct vm_tables_mem *mem)
{
	struct vm_tables_layout l = layout();
	struct seen s = { 0 };
	CHECK_EQ_INT(vm_tables_each(&l, true, mem, note, &s), 0);
	CHECK_EQ_INT(s.n, 2);
	CHECK_EQ_STR(s.text[0], "ConstMethod.- [-] 56");
	CHECK_EQ_STR(s.text[1], "JVMFlag.- [-] 32");
}

/* A layout that is none, or memory that ends, is an error, not a crash. */
static void test_refused(void)
{
	struct vm_tables_layout l = layout();
	struct seen s = { 0 };
	l.struct_stride = 300; /* past what an entry can be */
	CHECK_EQ_INT(vm_tables_each(&l, false, &pieces, note, &s), -1);
	l = layout();
	l.struct_stride = 4;
	CHECK_EQ_INT(vm_tables_each(&l, false, &pieces, note, &s), -1);
	l = layout();
	l.struct_address = l.struct_stride - 4; /* an 8-byte value past the entry */
	CHECK_EQ_INT(vm_tables_each(&l, false, &pieces, note, &s), -1);
	l = layout();
	l.types = 0;
	CHECK_EQ_INT(vm_tables_each(&l, true, &pieces, note, &s), -1);
	CHECK_EQ_INT(s.n, 0);
	/* the table's memory ends at its third entry: two entries, then -1 */
	l = layout();
	refuse_lo = (uint64_t)(uintptr_t)&structs[2];
	refuse_hi = refuse_lo + sizeof(structs[2]);
	CHECK_EQ_INT(vm_tables_each(&l, false, &pieces, note, &s), -1);
	CHECK_EQ_INT(s.n, 1);
	refuse_lo = refuse_hi = 0;
}

static void test_cstr(void)
{
	static const char text[64] __attribute__((aligned(32))) = "gHotSpotVMStructEntryArrayStride";
	char out[64];
	CHECK_EQ_INT(vm_tables_cstr(self_read, NULL, (uint64_t)(uintptr_t)text, out, sizeof(out)), 0);
	CHECK_EQ_STR(out, text);
	CHECK_EQ_INT(vm_tables_cstr(self_read, NULL, (uint64_t)(uintptr_t)text, out, 8), -1); /* longer than 7 */
	CHECK_EQ_INT(vm_tables_cstr(self_read, NULL, 0, out, sizeof(out)), -1);
}

static void test_match(void)
{
	static const struct vm_tables_want want[] = {
		{ "JVMFlag", "_name", 1 },
		{ "Flag", "_name", 1 },
		{ "JVMFlag", NULL, 2 },
		{ "JVMFlag", "_name", 3 }, /* never: the first match wins */
	};
	struct hotspot_entry field = { .type = "Flag", .field = "_name", .type_string = "const char*" };
	struct hotspot_entry type = { .type = "JVMFlag" };
	struct hotspot_entry other = { .type = "JVMFlag", .field = "_addr", .type_string = "void*" };
	CHECK_EQ_INT(vm_tables_match(want, 4, &field), 1);
	field.type = "JVMFlag";
	CHECK_EQ_INT(vm_tables_match(want, 4, &field), 1);
	CHECK_EQ_INT(vm_tables_match(want, 4, &type), 2);
	CHECK_EQ_INT(vm_tables_match(want, 4, &other), -1);
	CHECK_EQ_INT(vm_tables_match(want, 2, &type), -1); /* a type's entry matches no field */
}

int main(void)
{
	test_structs(&pieces);
	test_structs(&vm_tables_own_memory); /* as the agent reads its own */
	test_types(&pieces);
	test_types(&vm_tables_own_memory);
	test_refused();
	test_cstr();
	test_match();
	return check_report("vm_tables");
}
