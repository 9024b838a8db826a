/* palette.c - frame colours: the java palette's rules from a frame's name and
 * place to its hue, and flamegraph.pl's other palettes. */
#include "palette.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "frame_mark.h"

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool has_suffix(const char *s, size_t len, const char *suffix)
{
	size_t n = strlen(suffix);
	return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

static bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* word occurs in s at the start of an identifier; with upper, followed by an
 * upper-case letter ("PS" in "PSScavenge::invoke", not in "EPSILON"). */
static bool has_word(const char *s, const char *word, bool upper)
{
	size_t n = strlen(word);
	for (const char *p = strstr(s, word); p; p = strstr(p + 1, word)) {
		if (p > s && is_ident(p[-1]))
			continue;
		if (upper && !(p[n] >= 'A' && p[n] <= 'Z'))
			continue;
		return true;
	}
	return false;
}

static bool has_any(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strstr(s, *list))
			return true;
	return false;
}

static bool has_any_prefix(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (has_prefix(s, *list))
			return true;
	return false;
}

enum fg_hue palette_kind_hue(const char *s, size_t len)
{
	static const enum fg_hue hues[] = { FG_HUE_JIT,	   FG_HUE_INLINED, FG_HUE_INTERP, /* FRAME_MARK_KINDS */
					    FG_HUE_KERNEL, FG_HUE_ALLOC,   FG_HUE_LOCK };
	char k = frame_mark_kind(s, len);
	return k ? hues[strchr(FRAME_MARK_KINDS, k) - FRAME_MARK_KINDS] : FG_HUE_COUNT;
}

static bool is_pod_or_con(const char *s)
{
	return has_prefix(s, "[Pod]") || has_prefix(s, "[Con]");
}

/* "[1234] java", and "[*] java" (jflame diff matches runs by process name) */
static bool is_process(const char *s)
{
	size_t i = 1;
	if (s[0] != '[')
		return false;
	if (s[1] == '*')
		return s[2] == ']' && s[3] == ' ';
	while (s[i] >= '0' && s[i] <= '9')
		i++;
	return i > 1 && s[i] == ']' && s[i + 1] == ' ';
}

static const char *const gc_threads[] = {
	"GC Thread", "G1 ",	  "Shenandoah", "Parallel GC", "ZDirector", "ZDriver", "ZStat",
	"ZUnmapper", "ZUncommit", "ZWorker",	"ZRuntime",    "ZMark",	    "CMS ",    NULL,
};
static const char *const compiler_threads[] = {
	"C1 Compiler", "C2 Compiler", "JVMCI", "Sweeper thread", NULL,
};
/* C++ names that look like GC work but are the compilers emitting barriers */
static const char *const compiler_first[] = {
	"BarrierSetC1",
	"BarrierSetC2",
	"BarrierSetAssembler",
	NULL,
};
static const char *const gc_cxx[] = {
	"Parallel",	     "Scavenge",	   "Shenandoah",    "MarkSweep",  "ConcurrentMark",
	"MarkBitMap",	     "MarkStack",	   "MarkAndPush",   "GC",	  "WorkerThread",
	"WorkGang",	     "GangWorker",	   "Evacuat",	    "BarrierSet", "CollectedHeap",
	"CardTable",	     "ReferenceProcessor", "WeakProcessor", "OopStorage", "StringDedup",
	"TenuredGeneration", "DefNewGeneration",   "SerialHeap",    NULL,
};
static const char *const compiler_cxx[] = {
	"Compiler::",
	"Compile::",
	"Compilation",
	"CompileBroker",
	"CompileTask",
	"CompileQueue",
	"ThresholdPolicy",
	"Matcher",
	"GraphKit",
	"LibraryCallKit",
	"ConnectionGraph",
	"IdealLoopTree",
	"SuperWord",
	"Node::",
	"Type::",
	"TypeInt::",
	"TypeLong::",
	"TypeTuple::",
	"TypeFunc::",
	"TypePtr::",
	"TypeOopPtr::",
	"TypeInstPtr::",
	"TypeAryPtr::",
	"TypeKlassPtr::",
	"RegMask",
	"IndexSet",
	"JVMState",
	"InlineTree",
	"BCEscapeAnalyzer",
	"CallGenerator",
	"LinearScan",
	"GraphBuilder",
	"ValueStack",
	"Canonicalizer",
	"RangeCheckElimination",
	"BlockBegin",
	"Instruction::",
	"GlobalValueNumbering",
	"FrameMap",
	"BlockListBuilder",
	"IRScope",
	"Assembler::",
	"CodeBuffer",
	"CodeInstaller",
	NULL,
};
static const char *const compiler_words[] = { "Phase", "Parse", "LIR", "IR::", "C1_", "Block::", NULL };
static const char *const jvm_c[] = {
	"JVM_", "jni_", "JNI_", "jvmti_", "Unsafe_", "thread_native_entry", "StubRoutines", NULL,
};

/* Code the JVM generates, by the names HotSpot gives it (JVMTI's
 * DynamicCodeGenerated, its StubCodeDesc list, its code blobs): the call stub
 * every Java thread starts in, adapters and dispatch stubs, runtime stubs of
 * C1 ("new_instance Runtime1 stub") and C2 ("_new_array_Java"), and the
 * intrinsics' stubs that take CPU time (array copies and fills, CRCs, crypto,
 * digests, big integers, libm; JDK 21-25's Base64, ChaCha20, Poly1305, SHA-3,
 * ML-KEM and ML-DSA, math, Loom's continuation stubs). */
static const char *const jvm_stubs[] = {
	/* sorted by strcmp() for bsearch() */
	"DeoptimizationBlob",
	"ExceptionBlob",
	"I2C/C2I adapters",
	"MethodHandles adapters",
	"SafepointBlob",
	"UncommonTrapBlob",
	"aescrypt_decryptBlock",
	"aescrypt_encryptBlock",
	"arrayof_jbyte_fill",
	"arrayof_jint_fill",
	"arrayof_jshort_fill",
	"base64_decodeBlock",
	"base64_encodeBlock",
	"bigIntegerLeftShiftWorker",
	"bigIntegerRightShiftWorker",
	"call_stub",
	"catch_exception",
	"chacha20Block",
	"checkcast_arraycopy",
	"checkcast_arraycopy_uninit",
	"cipherBlockChaining_decryptAESCrypt",
	"cipherBlockChaining_encryptAESCrypt",
	"cont_preempt",
	"cont_returnBarrier",
	"cont_returnBarrierExc",
	"cont_thaw",
	"counterMode_AESCrypt",
	"d2i_fixup",
	"d2l_fixup",
	"dcbrt",
	"dcos",
	"dexp",
	"dilithiumAlmostInverseNtt",
	"dilithiumAlmostNtt",
	"dilithiumDecomposePoly",
	"dilithiumMontMulByConstant",
	"dilithiumNttMult",
	"dlog",
	"dlog10",
	"double_keccak",
	"dpow",
	"dsin",
	"dtan",
	"dtanh",
	"electronicCodeBook_decryptAESCrypt",
	"electronicCodeBook_encryptAESCrypt",
	"f2hf",
	"f2i_fixup",
	"f2l_fixup",
	"fmod",
	"forward exception",
	"forward_exception",
	"galoisCounterMode_AESCrypt",
	"generic_arraycopy",
	"ghash_processBlocks",
	"ghash_processBlocks_wide",
	"hf2f",
	"ic_miss_stub",
	"implDecode",
	"implEncode",
	"intpoly_assign",
	"intpoly_montgomeryMult_P256",
	"itable stub",
	"jbyte_fill",
	"jint_fill",
	"jshort_fill",
	"kyber12To16",
	"kyberAddPoly_2",
	"kyberAddPoly_3",
	"kyberBarrettReduce",
	"kyberInverseNtt",
	"kyberNtt",
	"kyberNttMult",
	"libmCos",
	"libmExp",
	"libmLog",
	"libmLog10",
	"libmPow",
	"libmSin",
	"libmTan",
	"lookup_secondary_supers_table_slow_path",
	"md5_implCompress",
	"md5_implCompressMB",
	"method_entry_barrier",
	"montgomery_multiply",
	"montgomery_square",
	"mulAdd",
	"multiplyToLen",
	"native signature handlers",
	"oop_arraycopy",
	"oop_arraycopy_uninit",
	"oop_disjoint_arraycopy",
	"oop_disjoint_arraycopy_uninit",
	"poly1305_processBlocks",
	"resolve_opt_virtual_call",
	"resolve_static_call",
	"resolve_virtual_call",
	"sha1_implCompress",
	"sha1_implCompressMB",
	"sha256_implCompress",
	"sha256_implCompressMB",
	"sha3_implCompress",
	"sha3_implCompressMB",
	"sha512_implCompress",
	"sha512_implCompressMB",
	"squareToLen",
	"unsafe_arraycopy",
	"unsafe_setmemory",
	"upcall_stub_exception_handler",
	"upcall_stub_load_target",
	"updateBytesAdler32",
	"updateBytesCRC32",
	"updateBytesCRC32C",
	"vectorizedMismatch",
	"vtable chunks",
	"vtable stub",
	"wrong_method_abstract_stub",
	"wrong_method_stub",
};

const char *const *palette_jvm_stubs(size_t *n)
{
	*n = sizeof(jvm_stubs) / sizeof(jvm_stubs[0]);
	return jvm_stubs;
}

static int stub_cmp(const void *key, const void *name)
{
	return strcmp(key, *(const char *const *)name);
}

static bool is_jvm_stub(const char *s, size_t len)
{
	if (bsearch(s, jvm_stubs, sizeof(jvm_stubs) / sizeof(jvm_stubs[0]), sizeof(jvm_stubs[0]), stub_cmp))
		return true;
	/* jint_disjoint_arraycopy_avx3, arrayof_jlong_conjoint_arraycopy */
	if ((has_prefix(s, "j") || has_prefix(s, "arrayof_j")) && strstr(s, "_arraycopy"))
		return true;
	/* C1's "new_instance Runtime1 stub", C2's "_new_instance_Java" */
	return has_suffix(s, len, " Runtime1 stub") || (s[0] == '_' && len > 6 && has_suffix(s, len, "_Java"));
}

static bool cxx_compiler(const char *s)
{
	if (has_any(s, compiler_cxx) || has_word(s, "ci", true))
		return true;
	for (const char *const *w = compiler_words; *w; w++)
		if (has_word(s, *w, false))
			return true;
	return false;
}

static bool cxx_gc(const char *s)
{
	return has_word(s, "G1", false) || has_word(s, "PS", true) || has_word(s, "Z", true) || has_any(s, gc_cxx);
}

/* "java.lang.String::hashCode" (the agent's dottedclass) */
static bool is_dotted_java(const char *s, const char *colons)
{
	bool dot = false;
	for (const char *p = s; p < colons; p++) {
		if (*p == '.')
			dot = true;
		else if (!is_ident(*p) && *p != '$')
			return false;
	}
	return dot;
}

enum fg_hue palette_name_hue(const char *s)
{
	size_t len = strlen(s);
	const char *colons;
	enum fg_hue kind = palette_kind_hue(s, len);

	if (kind != FG_HUE_COUNT)
		return kind;
	if (is_pod_or_con(s) || is_process(s))
		return FG_HUE_META;
	if (len >= 2 && s[0] == '[' && s[len - 1] == ']') {
		const char *in = s + 1;
		if (has_prefix(in, "kernel"))
			return FG_HUE_KERNEL;
		if (has_prefix(in, "unknown]") || strstr(in, ".so") || in[0] == '/' || in[0] == '[' ||
		    has_prefix(in, "vdso]") || has_prefix(in, "vsyscall]") || has_prefix(in, "anon") ||
		    has_prefix(in, "heap]") || has_prefix(in, "stack]") || has_prefix(in, "JIT") ||
		    has_prefix(in, "perf-"))
			return FG_HUE_NATIVE;
		return FG_HUE_META;
	}
	if (has_any_prefix(s, gc_threads))
		return FG_HUE_GC;
	if (has_any_prefix(s, compiler_threads))
		return FG_HUE_COMPILER;
	colons = strstr(s, "::");
	if (colons) {
		if ((strstr(s, ";::") && strchr(s, '/')) || is_dotted_java(s, colons))
			return FG_HUE_JIT;
		if (has_any(s, compiler_first))
			return FG_HUE_COMPILER;
		if (cxx_gc(s))
			return FG_HUE_GC;
		if (cxx_compiler(s))
			return FG_HUE_COMPILER;
		return FG_HUE_JVM;
	}
	if (strcmp(s, "Interpreter") == 0)
		return FG_HUE_INTERP;
	if (has_any_prefix(s, jvm_c) || is_jvm_stub(s, len))
		return FG_HUE_JVM;
	if (s[0] != '/' && strchr(s, '/'))
		return FG_HUE_JIT;
	return FG_HUE_NATIVE;
}

/* Rule 2's positional part: the frame right after a root process frame is the
 * thread. */
enum fg_hue palette_hue_at(const char *const *frames, size_t depth, enum fg_hue base)
{
	const char *s = frames[depth - 1];
	size_t len = strlen(s);

	if (base == FG_HUE_GC || base == FG_HUE_COMPILER || base == FG_HUE_META)
		return base;
	if (len > 4 && palette_kind_hue(s, len) != FG_HUE_COUNT)
		return base; /* annotated: rule 1 */
	if (depth < 2 || !is_process(frames[depth - 2]))
		return base;
	for (size_t i = 0; i + 2 < depth; i++)
		if (!is_pod_or_con(frames[i]))
			return base;
	return FG_HUE_META;
}

enum fg_hue palette_java_hue(const char *const *frames, size_t depth)
{
	if (!frames || depth == 0 || !frames[depth - 1])
		return FG_HUE_NATIVE;
	return palette_hue_at(frames, depth, palette_name_hue(frames[depth - 1]));
}

static const char *const hue_labels[FG_HUE_COUNT] = {
	[FG_HUE_JIT] = "JIT-compiled Java",
	[FG_HUE_INLINED] = "inlined Java",
	[FG_HUE_INTERP] = "interpreted Java",
	[FG_HUE_JVM] = "JVM (C++)",
	[FG_HUE_GC] = "GC",
	[FG_HUE_COMPILER] = "JIT compiler",
	[FG_HUE_KERNEL] = "kernel",
	[FG_HUE_NATIVE] = "native",
	[FG_HUE_META] = "metadata (pod, container, process, thread)",
	[FG_HUE_ALLOC] = "allocated class",
	[FG_HUE_LOCK] = "lock (monitor class)",
};

/* each channel is base + (int)(span * v), as flamegraph.pl's palettes */
static const uint8_t hue_ranges[FG_HUE_COUNT][6] = {
	[FG_HUE_JIT] = { 50, 60, 200, 55, 50, 60 },	 [FG_HUE_INLINED] = { 50, 60, 165, 55, 165, 55 },
	[FG_HUE_INTERP] = { 160, 45, 215, 35, 160, 45 }, [FG_HUE_JVM] = { 175, 55, 175, 55, 50, 20 },
	[FG_HUE_GC] = { 160, 40, 120, 40, 215, 40 },	 [FG_HUE_COMPILER] = { 195, 40, 150, 35, 95, 35 },
	[FG_HUE_KERNEL] = { 190, 65, 90, 65, 0, 0 },	 [FG_HUE_NATIVE] = { 200, 55, 50, 80, 50, 80 },
	[FG_HUE_META] = { 80, 60, 80, 60, 205, 50 },	 [FG_HUE_ALLOC] = { 175, 40, 50, 40, 110, 40 },
	[FG_HUE_LOCK] = { 120, 40, 85, 30, 45, 25 },
};

const char *palette_hue_label(enum fg_hue hue)
{
	return (unsigned)hue < FG_HUE_COUNT ? hue_labels[hue] : "?";
}

void palette_hue_color(enum fg_hue hue, double v, uint8_t rgb[3])
{
	const uint8_t *r = hue_ranges[(unsigned)hue < FG_HUE_COUNT ? hue : FG_HUE_NATIVE];
	if (!(v >= 0))
		v = 0;
	if (v >= 1)
		v = 0.999999;
	for (int i = 0; i < 3; i++)
		rgb[i] = (uint8_t)(r[2 * i] + (int)(r[2 * i + 1] * v));
}

/* ---- the other palettes (flamegraph.pl's colour functions) --------------- */

static const char *const palette_names[] = {
	[PAL_JAVA] = "java", [PAL_HOT] = "hot",	      [PAL_MEM] = "mem",       [PAL_IO] = "io",
	[PAL_JS] = "js",     [PAL_RED] = "red",	      [PAL_GREEN] = "green",   [PAL_BLUE] = "blue",
	[PAL_AQUA] = "aqua", [PAL_YELLOW] = "yellow", [PAL_PURPLE] = "purple", [PAL_ORANGE] = "orange",
};

enum palette palette_of(const char *name)
{
	if (!name || !*name)
		return PAL_JAVA;
	for (size_t i = 0; i < sizeof(palette_names) / sizeof(palette_names[0]); i++)
		if (strcmp(name, palette_names[i]) == 0)
			return (enum palette)i;
	return PAL_HOT;
}

enum palette palette_js_type(const char *s)
{
	size_t len = strlen(s);
	const char *slash = strchr(s, '/');
	if (has_suffix(s, len, FRAME_MARK_JIT))
		return slash ? PAL_GREEN : PAL_AQUA;
	if (strstr(s, "::"))
		return PAL_YELLOW;
	if (slash && strstr(slash, ".js"))
		return PAL_GREEN;
	if (strchr(s, ':'))
		return PAL_AQUA;
	if (strcmp(s, " ") == 0)
		return PAL_GREEN;
	if (has_suffix(s, len, FRAME_MARK_KERNEL))
		return PAL_ORANGE;
	return PAL_RED;
}

void palette_flat_color(enum palette p, double v1, double v2, double v3, uint8_t rgb[3])
{
	int r = 0, g = 0, b = 0;
	switch (p) {
	case PAL_HOT:
		r = 205 + (int)(50 * v3), g = (int)(230 * v1), b = (int)(55 * v2);
		break;
	case PAL_MEM:
		r = 0, g = 190 + (int)(50 * v2), b = (int)(210 * v1);
		break;
	case PAL_IO:
		r = g = 80 + (int)(60 * v1), b = 190 + (int)(55 * v2);
		break;
	case PAL_RED:
		r = 200 + (int)(55 * v1), g = b = 50 + (int)(80 * v1);
		break;
	case PAL_GREEN:
		g = 200 + (int)(55 * v1), r = b = 50 + (int)(60 * v1);
		break;
	case PAL_BLUE:
		b = 205 + (int)(50 * v1), r = g = 80 + (int)(60 * v1);
		break;
	case PAL_YELLOW:
		r = g = 175 + (int)(55 * v1), b = 50 + (int)(20 * v1);
		break;
	case PAL_PURPLE:
		r = b = 190 + (int)(65 * v1), g = 80 + (int)(60 * v1);
		break;
	case PAL_AQUA:
		r = 50 + (int)(60 * v1), g = b = 165 + (int)(55 * v1);
		break;
	case PAL_ORANGE:
		r = 190 + (int)(65 * v1), g = 90 + (int)(65 * v1), b = 0;
		break;
	default:
		break;
	}
	rgb[0] = (uint8_t)r, rgb[1] = (uint8_t)g, rgb[2] = (uint8_t)b;
}
