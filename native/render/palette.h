/* palette.h - frame colours: the java palette (kinds of frame to hues, their
 * legend labels and colour ranges) and flamegraph.pl's other palettes. */
#ifndef JFLAME_PALETTE_H
#define JFLAME_PALETTE_H

#include <stddef.h>
#include <stdint.h>

/* The java palette's hue for one frame, given the frames of its stack up to it
 * (so the root frames can be told by position): frames[0] is the root,
 * frames[depth - 1] the frame to colour (depth >= 1). Public for tests and other
 * writers. The first rule that applies wins:
 * 1. the annotation suffix: "_[j]" JIT, "_[i]" INLINED, "_[0]" INTERP, "_[k]" KERNEL,
 *    "_[a]" ALLOC (an allocated class, the leaf of -e alloc), "_[l]" LOCK (a
 *    monitor's class, the leaf of -e lock);
 * 2. "[Pod]…", "[Con]…", "[<digits>] …" or "[*] …" (the process) are META, and so is the
 *    frame right after a root process frame (the thread), unless it is a GC
 *    thread (rule 4) or a compiler thread (rule 5);
 * 3. names entirely in brackets: "[unknown]" and DSO-like ones ("[libfoo.so]",
 *    "[vdso]", "[/path]", "[anon…]", "[heap]", "[stack]", "[JIT] …",
 *    "[perf-1.map]") are NATIVE, "[kernel.kallsyms]" KERNEL; every other bracketed
 *    name is a marker jflame writes ("[truncated]", "[lost]", "[missing …]") and
 *    META;
 * 4. GC: thread names "GC Thread…", "G1 …", "Shenandoah…", "Parallel GC…",
 *    ZGC's "ZDirector", "ZDriver", "ZWorker…", "ZStat", "ZUnmapper", … ("VM
 *    Thread" is not: it runs every safepoint operation); C++ names ("::") of GC
 *    classes: G1…, PS…, Parallel…, Scavenge, Shenandoah, Z… classes, MarkSweep,
 *    ConcurrentMark, MarkBitMap, MarkStack, WorkerThread, WorkGang, GangWorker,
 *    Evacuat…, BarrierSet, CollectedHeap, CardTable, ReferenceProcessor,
 *    WeakProcessor, OopStorage, StringDedup, TenuredGeneration,
 *    DefNewGeneration, SerialHeap, and "GC" anywhere (GCTask, VM_GC_Operation);
 * 5. COMPILER: thread names "C1 CompilerThre…", "C2 CompilerThre…", "JVMCI …",
 *    "Sweeper thread"; C++ names of C2 (C2Compiler, Compile::, Phase… classes,
 *    Matcher, Parse, GraphKit, LibraryCallKit, ConnectionGraph, IdealLoopTree,
 *    SuperWord, …Node::, Type…), of C1 (Compiler::, Compilation, LinearScan,
 *    GraphBuilder, LIR…, IR…, ValueStack, Canonicalizer) and shared (ci…
 *    classes, CompileBroker, CompileTask, CompilationPolicy, InlineTree,
 *    BCEscapeAnalyzer, …Assembler::, CodeBuffer), and the compilers' GC
 *    barrier code (BarrierSetC1, BarrierSetC2) before rule 4. Runtime1:: and
 *    OptoRuntime:: are not compiler work: compiled code calls them to
 *    allocate, lock or throw, so they stay JVM;
 * 6. other C++ names ("::"), "JVM_…", "jni_…", "JNI_…", "jvmti_…", "Unsafe_…",
 *    "thread_native_entry", "StubRoutines…" and the names of the JVM's
 *    generated stubs ("call_stub", "vtable stub", "I2C/C2I adapters",
 *    "j…_arraycopy…", "… Runtime1 stub", "_…_Java", "sha256_implCompress", …)
 *    are JVM; "Interpreter" (the perf map's name for the template
 *    interpreter) is INTERP;
 * 7. unannotated Java names: "pkg/Class.method" (a '/' not at the start),
 *    perf-map-agent's "Lpkg/Class;::method" and the agent's dottedclass
 *    "pkg.Class::method" are JIT (green), as flamegraph.pl's java palette
 *    colours them (the last two are told from C++ before rules 4-6);
 * 8. everything else is NATIVE.
 * The graph's root, "all", draws in the META hue. */
enum fg_hue {
	FG_HUE_JIT,	 /* green: JIT-compiled Java, "_[j]" */
	FG_HUE_INLINED,	 /* aqua: inlined Java, "_[i]" */
	FG_HUE_INTERP,	 /* pale green: interpreted Java, "_[0]" */
	FG_HUE_JVM,	 /* yellow: JVM C++ (libjvm), C++ names with "::" */
	FG_HUE_GC,	 /* lavender: GC work in the JVM */
	FG_HUE_COMPILER, /* tan: JIT-compiler work in the JVM */
	FG_HUE_KERNEL,	 /* orange: "_[k]" */
	FG_HUE_NATIVE,	 /* red: other native code */
	FG_HUE_META,	 /* blue: [Pod], [Con], [pid] process, thread; and marks like [truncated] */
	FG_HUE_ALLOC,	 /* raspberry: the allocated class, "_[a]" */
	FG_HUE_LOCK,	 /* brown: the class of a contended monitor, "_[l]" */
	FG_HUE_COUNT
};
/* The hues before this one are always in the legend; ALLOC and LOCK only in
 * graphs that have such frames. */
#define FG_HUE_ALWAYS FG_HUE_ALLOC
enum fg_hue palette_java_hue(const char *const *frames, size_t depth);

/* The legend's label of a hue ("JIT-compiled Java", …, "metadata (pod,
 * container, process, thread)"), and its colour at variation v in [0, 1): frames
 * of one hue vary a little around it, the legend shows v = 0.5. */
const char *palette_hue_label(enum fg_hue hue);
void palette_hue_color(enum fg_hue hue, double v, uint8_t rgb[3]);

/* The hue of jflame's kind annotation ending s[0..len) ("_[j]" JIT, "_[i]"
 * INLINED, "_[0]" INTERP, "_[k]" KERNEL, "_[a]" ALLOC, "_[l]" LOCK: rule 1), or
 * FG_HUE_COUNT when it has none. */
enum fg_hue palette_kind_hue(const char *s, size_t len);

/* The hue a name has wherever it stands (rules 1 and 3-8, and the [Pod]/[Con]/
 * process part of rule 2), and the hue of frames[depth - 1] given that one:
 * rule 2's positional part. palette_java_hue() is the two in one; a writer that
 * meets the same name many times keeps the first and calls the second. */
enum fg_hue palette_name_hue(const char *s);
enum fg_hue palette_hue_at(const char *const *frames, size_t depth, enum fg_hue base);

/* The names of the JVM's generated stubs that rule 6 matches whole (n of
 * them, sorted by strcmp() for bsearch()); public for the tests. */
const char *const *palette_jvm_stubs(size_t *n);

/* flamegraph.pl's palettes by --colors name */
enum palette {
	PAL_JAVA,
	PAL_HOT,
	PAL_MEM,
	PAL_IO,
	PAL_JS,
	PAL_RED,
	PAL_GREEN,
	PAL_BLUE,
	PAL_AQUA,
	PAL_YELLOW,
	PAL_PURPLE,
	PAL_ORANGE
};

/* The palette of a name: PAL_JAVA for NULL or "", PAL_HOT for unknown names. */
enum palette palette_of(const char *name);
/* flamegraph.pl's js palette: which flat palette a name takes */
enum palette palette_js_type(const char *s);
/* A colour of a flat (not java) palette from flamegraph.pl's three variations
 * v1, v2, v3 in [0, 1). */
void palette_flat_color(enum palette p, double v1, double v2, double v3, uint8_t rgb[3]);

#endif
