/* flamegraph.h - the interactive SVG flame graph writer: folded stacks in,
 * a self-contained SVG out, as flamegraph.pl draws it, with jflame's palettes. */
#ifndef JFLAME_FLAMEGRAPH_H
#define JFLAME_FLAMEGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stacks.h"

struct fg_options {
	const char *title;    /* NULL: "Flame Graph" ("Icicle Graph" when inverted,
				 "Flame Chart" when flamechart) */
	const char *subtitle; /* a second line under the title; NULL for none. Drawn in
				 a warning colour when it starts with "WARNING" or
				 contains "frame pointers: off" */
	const char *notes;    /* text for the SVG's <desc id="notes"> element; NULL for none */
	const char *colors;   /* palette: "java" (default), "hot", "mem", "io", "js", "red", "green",
				 "blue", "aqua", "yellow", "purple", "orange"; unknown names
				 draw as "hot" */
	const char *countname; /* "samples" when NULL */
	uint64_t count_scale;  /* > 1: titles show counts divided by this, with two
				  decimals ("1,234.56 ms" from microseconds with 1000) */
	bool bytes;            /* counts are bytes: titles read "NAME (1,572,864 bytes =
				  1.5 MiB, 12.34%)" (countname and count_scale unused) */
	const char *nametype;  /* "Function:" when NULL */
	const char *fonttype;  /* "Verdana" when NULL */
	double fontsize;       /* 12 when 0 */
	int width;             /* 1200 when 0 */
	int frameheight;       /* 16 when 0 */
	double minwidth;       /* omit frames narrower than this many pixels (0.1 when 0);
				  their samples still count in their parents */
	bool minwidth_percent; /* minwidth is a percentage of the total instead */
	bool hash;             /* vary colours by a hash of the name (same name, same
				  colour, across graphs); else by a fixed-seed
				  pseudo-random sequence: same input, same bytes out */
	bool inverted;         /* icicle graph: roots at the top */
	bool reverse;          /* reverse each stack before merging */
	bool flamechart;       /* keep input order (time): merge a frame only with the
				  same frame of the stack just before, don't sort by name */
	bool differential;     /* red grew / blue shrank, from count_before (see below) */
	bool negate;           /* differential: swap what counts as grew and shrank */
	bool legend;           /* draw a legend row under the title: the java palette's
				  hues, or grew/shrank for differential graphs; nothing
				  for other palettes */
};

/* Writes the flame graph of the stacks to out. Returns 0, or -1 with a one-line
 * reason in err: "no samples" (n == 0, or every count zero) before anything is
 * written; a write error after.
 *
 * What comes out (the structure of flamegraph.pl 1.0's SVG, so tools and users
 * that know it find their way):
 * - <svg> with an embedded <script> (no network, no external references) and
 *   <text> elements id="title", "subtitle", "details" (the hover line:
 *   "Function: NAME (N samples, P%)"), "unzoom" ("Reset Zoom"), "search",
 *   "ignorecase" ("ic"), "matched" ("Matched: x%"), <g id="legend"> when asked.
 * - <g id="frames">: one <g><title>NAME (N samples, P%)</title><rect/><text/></g>
 *   per drawn frame, parents before their children; the root is
 *   "all (N samples, 100%)". N has thousands separators ("1,234"), P two
 *   decimals. Names are XML-escaped (& < > " '), invalid UTF-8 and control
 *   characters become U+FFFD. The kind annotations "_[j]", "_[i]", "_[0]",
 *   "_[k]", "_[a]" and "_[l]" are dropped from the shown name (flamegraph.pl does the same; the
 *   colour tells the kind). Frames of one parent are merged by name, children
 *   sorted by name (byte order) unless flamechart.
 * - Differential: a frame's change is its share of the after total minus its
 *   share of the before total (its own samples plus its callees', so a new
 *   String.format() subtree is red from String.format() up); the titles read
 *   "NAME (N samples, P%; +D%)" with D that change in percentage points, the
 *   colour is white for no change to full red (grew) or blue (shrank) for the
 *   largest change in the graph. Widths are those of the after counts.
 * - In the browser: click a frame to zoom (its ancestors greyed out and
 *   stretched, other branches hidden), click "Reset Zoom" (or Escape) to
 *   reset; "Search" (or Ctrl-F) asks for a regex and paints matching frames
 *   rgb(230,0,230) with "Matched: x%" of all samples; "ic" (or Ctrl-I) toggles
 *   case-insensitive search. Zoom and search live in the URL query as
 *   flamegraph.pl keeps them: ?x=<rect x>&y=<rect y>&s=<regex>. The page's
 *   functions zoom(g), unzoom(), search(regex), reset_search() and
 *   toggle_ignorecase() are global for scripted use. */
int flamegraph_write(FILE *out, const struct fg_stack *stacks, size_t n, const struct fg_options *opts,
		     char *err, size_t errlen);

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
 *    "thread_native_entry" and "StubRoutines…" are JVM; "Interpreter" (the
 *    perf map's name for the template interpreter) is INTERP;
 * 7. unannotated Java names: "pkg/Class.method" (a '/' not at the start),
 *    perf-map-agent's "Lpkg/Class;::method" and the agent's dottedclass
 *    "pkg.Class::method" are JIT (green), as flamegraph.pl's java palette
 *    colours them (the last two are told from C++ before rules 4-6);
 * 8. everything else is NATIVE.
 * The graph's root, "all", draws in the META hue. */
enum fg_hue {
	FG_HUE_JIT,       /* green: JIT-compiled Java, "_[j]" */
	FG_HUE_INLINED,   /* aqua: inlined Java, "_[i]" */
	FG_HUE_INTERP,    /* pale green: interpreted Java, "_[0]" */
	FG_HUE_JVM,       /* yellow: JVM C++ (libjvm), C++ names with "::" */
	FG_HUE_GC,        /* lavender: GC work in the JVM */
	FG_HUE_COMPILER,  /* tan: JIT-compiler work in the JVM */
	FG_HUE_KERNEL,    /* orange: "_[k]" */
	FG_HUE_NATIVE,    /* red: other native code */
	FG_HUE_META,      /* blue: [Pod], [Con], [pid] process, thread; and marks like [truncated] */
	FG_HUE_ALLOC,     /* raspberry: the allocated class, "_[a]" */
	FG_HUE_LOCK,      /* brown: the class of a contended monitor, "_[l]" */
	FG_HUE_COUNT
};
/* The hues before this one are always in the legend; ALLOC and LOCK only in
 * graphs that have such frames. */
#define FG_HUE_ALWAYS FG_HUE_ALLOC
enum fg_hue flamegraph_java_hue(const char *const *frames, size_t depth);

/* The legend's label of a hue ("JIT-compiled Java", …, "metadata (pod,
 * container, process, thread)"), and its colour at variation v in [0, 1): frames
 * of one hue vary a little around it, the legend shows v = 0.5. */
const char *flamegraph_hue_label(enum fg_hue hue);
void flamegraph_hue_color(enum fg_hue hue, double v, uint8_t rgb[3]);

#endif
