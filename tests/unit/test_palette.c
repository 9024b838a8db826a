/* test_palette.c - the java palette's table of the JVM's stub names: sorted
 * for bsearch(), and every name, and only whole names, still drawn as JVM. */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "check.h"
#include "palette.h"

/* the stubs named whole before the table was sorted (palette.c, #21) */
static const char *const stubs[] = {
	"call_stub",
	"catch_exception",
	"forward exception",
	"forward_exception",
	"vtable chunks",
	"vtable stub",
	"itable stub",
	"I2C/C2I adapters",
	"MethodHandles adapters",
	"native signature handlers",
	"ic_miss_stub",
	"wrong_method_stub",
	"wrong_method_abstract_stub",
	"resolve_virtual_call",
	"resolve_opt_virtual_call",
	"resolve_static_call",
	"SafepointBlob",
	"DeoptimizationBlob",
	"UncommonTrapBlob",
	"ExceptionBlob",
	"generic_arraycopy",
	"unsafe_arraycopy",
	"checkcast_arraycopy",
	"checkcast_arraycopy_uninit",
	"jbyte_fill",
	"jshort_fill",
	"jint_fill",
	"arrayof_jbyte_fill",
	"arrayof_jshort_fill",
	"arrayof_jint_fill",
	"updateBytesCRC32",
	"updateBytesCRC32C",
	"updateBytesAdler32",
	"aescrypt_encryptBlock",
	"aescrypt_decryptBlock",
	"cipherBlockChaining_encryptAESCrypt",
	"cipherBlockChaining_decryptAESCrypt",
	"electronicCodeBook_encryptAESCrypt",
	"electronicCodeBook_decryptAESCrypt",
	"counterMode_AESCrypt",
	"galoisCounterMode_AESCrypt",
	"ghash_processBlocks",
	"md5_implCompress",
	"md5_implCompressMB",
	"sha1_implCompress",
	"sha1_implCompressMB",
	"sha256_implCompress",
	"sha256_implCompressMB",
	"sha512_implCompress",
	"sha512_implCompressMB",
	"vectorizedMismatch",
	"multiplyToLen",
	"squareToLen",
	"mulAdd",
	"montgomery_multiply",
	"montgomery_square",
	"bigIntegerRightShiftWorker",
	"bigIntegerLeftShiftWorker",
	"libmSin",
	"libmCos",
	"libmTan",
	"libmExp",
	"libmLog",
	"libmLog10",
	"libmPow",
	/* JDK 21 and 25's (StubCodeDesc names, #34) */
	"dexp",
	"dlog",
	"dsin",
	"base64_encodeBlock",
	"implEncode",
	"chacha20Block",
	"poly1305_processBlocks",
	"sha3_implCompressMB",
	"kyberNtt",
	"cont_thaw",
	"oop_disjoint_arraycopy",
};

static bool in_table(const char *s)
{
	size_t n;
	const char *const *t = palette_jvm_stubs(&n);
	for (size_t i = 0; i < n; i++)
		if (strcmp(t[i], s) == 0)
			return true;
	return false;
}

static void test_table_sorted(void)
{
	size_t n;
	const char *const *t = palette_jvm_stubs(&n);
	CHECK(n >= sizeof(stubs) / sizeof(stubs[0]));
	for (size_t i = 1; i < n; i++)
		CHECK_MSG(strcmp(t[i - 1], t[i]) < 0, "\"%s\" before \"%s\": not sorted by strcmp()", t[i - 1], t[i]);
	/* bsearch() finds each, the first and the last included */
	for (size_t i = 0; i < n; i++)
		CHECK_MSG(palette_name_hue(t[i]) == FG_HUE_JVM, "%s", t[i]);
}

static void test_every_stub_matches(void)
{
	for (size_t i = 0; i < sizeof(stubs) / sizeof(stubs[0]); i++) {
		CHECK_MSG(in_table(stubs[i]), "%s is not in the table", stubs[i]);
		CHECK_MSG(palette_name_hue(stubs[i]) == FG_HUE_JVM, "%s", stubs[i]);
	}
}

/* whole names only: a stub's prefix, extension or other case is native */
static void test_whole_names_only(void)
{
	static const char *const native[] = {
		"call_stu", "call_stubs",   "Call_stub", "call_stub ",	" call_stub",
		"vtable",   "vtable stubs", "libmSinh",	 "AAA",		"zzz",
		"",	    "_Java",	    "__Java",	 "x_arraycopy", "arraycopy",
	};
	for (size_t i = 0; i < sizeof(native) / sizeof(native[0]); i++)
		CHECK_MSG(palette_name_hue(native[i]) == FG_HUE_NATIVE, "\"%s\"", native[i]);
}

/* the prefix and suffix rules stay what they were */
static void test_patterns(void)
{
	static const char *const jvm[] = {
		"jint_disjoint_arraycopy_avx3",
		"arrayof_jlong_conjoint_arraycopy",
		"jbyte_arraycopy",
		"jlong_arraycopy_uninit",
		"new_instance Runtime1 stub",
		"_new_array_Java",
		"_a_Java",
	};
	for (size_t i = 0; i < sizeof(jvm) / sizeof(jvm[0]); i++)
		CHECK_MSG(palette_name_hue(jvm[i]) == FG_HUE_JVM, "\"%s\"", jvm[i]);
}

int main(void)
{
	test_table_sorted();
	test_every_stub_matches();
	test_whole_names_only();
	test_patterns();
	return check_report("palette");
}
