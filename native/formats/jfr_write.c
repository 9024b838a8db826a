/* jfr_write.c - the JFR writer: one chunk (header, metadata, events, one checkpoint of constant
 * pools) built in memory with a byte buffer and varints, then written out in one go. */
#include "jfr_write.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "event_table.h"
#include "frame_mark.h"
#include "grow.h"
#include "str_index.h"
#include "utf8.h"

/* ---- the byte buffer ---------------------------------------------------------------- */

struct jbuf {
	unsigned char *p;
	size_t n, cap;
	bool oom;
};

static void jb_bytes(struct jbuf *b, const void *s, size_t n)
{
	if (b->oom)
		return;
	if (ARRAY_GROW(b->p, b->cap, b->n + n) != 0) {
		b->oom = true;
		return;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
}

static void jb_u8(struct jbuf *b, unsigned v)
{
	unsigned char c = (unsigned char)v;
	jb_bytes(b, &c, 1);
}

/* big-endian, as the chunk header's fields */
static void jb_be_at(struct jbuf *b, size_t at, uint64_t v, int bytes)
{
	if (b->oom || at + (size_t)bytes > b->n)
		return;
	for (int i = bytes - 1; i >= 0; i--, v >>= 8)
		b->p[at + (size_t)i] = (unsigned char)v;
}

/* JFR's compressed integers: 7 bits a byte, low first, the high bit set when
 * more follow; the ninth byte holds 8 bits. */
static void jb_var(struct jbuf *b, uint64_t v)
{
	unsigned char out[9];
	size_t k = 0;
	for (; k < 8 && v >= 0x80; k++, v >>= 7)
		out[k] = (unsigned char)(v | 0x80);
	out[k++] = (unsigned char)v;
	jb_bytes(b, out, k);
}

static size_t var_len(uint64_t v)
{
	size_t k = 1;
	for (; k < 9 && v >= 0x80; k++)
		v >>= 7;
	return k;
}

/* A string as UTF-8 (encoding 3): bytes that are not valid UTF-8 become U+FFFD. */
static void jb_str(struct jbuf *b, const char *s, size_t n)
{
	static const char repl[] = "\xef\xbf\xbd";
	const unsigned char *u = (const unsigned char *)s;
	size_t len = 0;
	uint32_t cp;
	for (size_t i = 0; i < n;) {
		size_t k = utf8_decode(u + i, n - i, &cp);
		len += k ? k : 3;
		i += k ? k : 1;
	}
	jb_u8(b, 3);
	jb_var(b, len);
	if (len == n) {
		jb_bytes(b, s, n);
		return;
	}
	for (size_t i = 0; i < n;) {
		size_t k = utf8_decode(u + i, n - i, &cp);
		jb_bytes(b, k ? s + i : repl, k ? k : 3);
		i += k ? k : 1;
	}
}

static void jb_cstr(struct jbuf *b, const char *s)
{
	jb_str(b, s, strlen(s));
}

/* Appends the event body ev (type and fields) to b with its size in front
 * (the size counts itself). */
static void jb_event(struct jbuf *b, const struct jbuf *ev)
{
	size_t k = 1;
	while (var_len(ev->n + k) != k)
		k++;
	jb_var(b, ev->n + k);
	jb_bytes(b, ev->p, ev->n);
	if (ev->oom)
		b->oom = true;
}

/* ---- the metadata ------------------------------------------------------------------- */

enum {
	T_METADATA = 0,
	T_CHECKPOINT = 1,
	T_BOOLEAN = 4,
	T_INT = 8,
	T_LONG = 9,
	T_STRING = 10,
	T_CLASS = 20,
	T_THREAD,
	T_CLASS_LOADER,
	T_FRAME_TYPE,
	T_THREAD_STATE,
	T_STACK_TRACE,
	T_STACK_FRAME,
	T_METHOD,
	T_PACKAGE,
	T_SYMBOL,
	T_EXECUTION_SAMPLE = 100,
	T_ALLOC_SAMPLE,
	T_MONITOR_ENTER,
	T_WALL_SAMPLE,
	T_LABEL = 200,
	T_CATEGORY,
	T_CONTENT_TYPE,
	T_TIMESTAMP,
	T_TIMESPAN,
	T_DATA_AMOUNT,
	T_UNSIGNED,
};

enum {
	F_CPOOL = 1 << 0,   /* a constant pool reference */
	F_ARRAY = 1 << 1,   /* dimension 1 */
	F_TICKS = 1 << 2,   /* @Timestamp("TICKS") */
	F_SPAN = 1 << 3,    /* @Timespan("TICKS") */
	F_BYTES = 1 << 4,   /* @DataAmount("BYTES") */
	F_UNSIGNED = 1 << 5 /* @Unsigned */
};

struct jfield {
	const char *name;
	int type;
	unsigned flags;
	const char *label;
};

enum { TY_SIMPLE = 1, TY_EVENT = 2, TY_ANNOTATION = 4, TY_CONTENT = 8 };

struct jtype {
	const char *name;
	int id;
	unsigned kind; /* TY_* */
	const char *label;
	const char *category[2];
	struct jfield fields[8]; /* up to the first without a name */
};

#define EVENT_HEAD                                         \
	{                                                  \
		"startTime", T_LONG, F_TICKS, "Start Time" \
	}
static const struct jtype jfr_types[] = {
	{ "boolean", T_BOOLEAN, 0, NULL, { NULL }, { { 0 } } },
	{ "int", T_INT, 0, NULL, { NULL }, { { 0 } } },
	{ "long", T_LONG, 0, NULL, { NULL }, { { 0 } } },
	{ "java.lang.String", T_STRING, 0, NULL, { NULL }, { { 0 } } },
	{ "java.lang.Class",
	  T_CLASS,
	  0,
	  "Java Class",
	  { NULL },
	  { { "classLoader", T_CLASS_LOADER, F_CPOOL, "Class Loader" },
	    { "name", T_SYMBOL, F_CPOOL, "Name" },
	    { "package", T_PACKAGE, F_CPOOL, "Package" },
	    { "modifiers", T_INT, 0, "Access Modifiers" } } },
	{ "java.lang.Thread",
	  T_THREAD,
	  0,
	  "Thread",
	  { NULL },
	  { { "osName", T_STRING, 0, "OS Thread Name" },
	    { "osThreadId", T_LONG, 0, "OS Thread Id" },
	    { "javaName", T_STRING, 0, "Java Thread Name" },
	    { "javaThreadId", T_LONG, 0, "Java Thread Id" } } },
	{ "jdk.types.ClassLoader",
	  T_CLASS_LOADER,
	  0,
	  "Java Class Loader",
	  { NULL },
	  { { "type", T_CLASS, F_CPOOL, "Type" }, { "name", T_SYMBOL, F_CPOOL, "Name" } } },
	{ "jdk.types.FrameType",
	  T_FRAME_TYPE,
	  TY_SIMPLE,
	  "Frame type",
	  { NULL },
	  { { "description", T_STRING, 0, "Description" } } },
	{ "jdk.types.ThreadState",
	  T_THREAD_STATE,
	  TY_SIMPLE,
	  "Java Thread State",
	  { NULL },
	  { { "name", T_STRING, 0, "Name" } } },
	{ "jdk.types.StackTrace",
	  T_STACK_TRACE,
	  0,
	  "Stacktrace",
	  { NULL },
	  { { "truncated", T_BOOLEAN, 0, "Truncated" }, { "frames", T_STACK_FRAME, F_ARRAY, "Stack Frames" } } },
	{ "jdk.types.StackFrame",
	  T_STACK_FRAME,
	  0,
	  NULL,
	  { NULL },
	  { { "method", T_METHOD, F_CPOOL, "Java Method" },
	    { "lineNumber", T_INT, 0, "Line Number" },
	    { "bytecodeIndex", T_INT, 0, "Bytecode Index" },
	    { "type", T_FRAME_TYPE, F_CPOOL, "Frame Type" } } },
	{ "jdk.types.Method",
	  T_METHOD,
	  0,
	  "Java Method",
	  { NULL },
	  { { "type", T_CLASS, F_CPOOL, "Type" },
	    { "name", T_SYMBOL, F_CPOOL, "Name" },
	    { "descriptor", T_SYMBOL, F_CPOOL, "Descriptor" },
	    { "modifiers", T_INT, 0, "Access Modifiers" },
	    { "hidden", T_BOOLEAN, 0, "Hidden" } } },
	{ "jdk.types.Package", T_PACKAGE, 0, "Package", { NULL }, { { "name", T_SYMBOL, F_CPOOL, "Name" } } },
	{ "jdk.types.Symbol", T_SYMBOL, TY_SIMPLE, "Symbol", { NULL }, { { "string", T_STRING, 0, "String" } } },
	{ "jdk.ExecutionSample",
	  T_EXECUTION_SAMPLE,
	  TY_EVENT,
	  "Method Profiling Sample",
	  { "Java Virtual Machine", "Profiling" },
	  { EVENT_HEAD,
	    { "sampledThread", T_THREAD, F_CPOOL, "Thread" },
	    { "stackTrace", T_STACK_TRACE, F_CPOOL, "Stack Trace" },
	    { "state", T_THREAD_STATE, F_CPOOL, "Thread State" } } },
	{ "jdk.ObjectAllocationSample",
	  T_ALLOC_SAMPLE,
	  TY_EVENT,
	  "Object Allocation Sample",
	  { "Java Application", NULL },
	  { EVENT_HEAD,
	    { "eventThread", T_THREAD, F_CPOOL, "Event Thread" },
	    { "stackTrace", T_STACK_TRACE, F_CPOOL, "Stack Trace" },
	    { "objectClass", T_CLASS, F_CPOOL, "Object Class" },
	    { "weight", T_LONG, F_BYTES, "Sample Weight" } } },
	{ "jdk.JavaMonitorEnter",
	  T_MONITOR_ENTER,
	  TY_EVENT,
	  "Java Monitor Blocked",
	  { "Java Application", NULL },
	  { EVENT_HEAD,
	    { "duration", T_LONG, F_SPAN, "Duration" },
	    { "eventThread", T_THREAD, F_CPOOL, "Event Thread" },
	    { "stackTrace", T_STACK_TRACE, F_CPOOL, "Stack Trace" },
	    { "monitorClass", T_CLASS, F_CPOOL, "Monitor Class" },
	    { "previousOwner", T_THREAD, F_CPOOL, "Previous Monitor Owner" },
	    { "address", T_LONG, F_UNSIGNED, "Monitor Address" } } },
	{ "profiler.WallClockSample",
	  T_WALL_SAMPLE,
	  TY_EVENT,
	  "Wall Clock Sample",
	  { "Java Virtual Machine", "Profiling" },
	  { EVENT_HEAD,
	    { "sampledThread", T_THREAD, F_CPOOL, "Thread" },
	    { "stackTrace", T_STACK_TRACE, F_CPOOL, "Stack Trace" },
	    { "state", T_THREAD_STATE, F_CPOOL, "Thread State" },
	    { "samples", T_INT, F_UNSIGNED, "Samples" },
	    { "timeSpan", T_LONG, F_SPAN, "Time Span" } } },
	{ "jdk.jfr.Label", T_LABEL, TY_ANNOTATION, NULL, { NULL }, { { "value", T_STRING, 0, NULL } } },
	{ "jdk.jfr.Category", T_CATEGORY, TY_ANNOTATION, NULL, { NULL }, { { "value", T_STRING, F_ARRAY, NULL } } },
	{ "jdk.jfr.ContentType", T_CONTENT_TYPE, TY_ANNOTATION, "Content Type", { NULL }, { { 0 } } },
	{ "jdk.jfr.Timestamp",
	  T_TIMESTAMP,
	  TY_ANNOTATION | TY_CONTENT,
	  "Timestamp",
	  { NULL },
	  { { "value", T_STRING, 0, NULL } } },
	{ "jdk.jfr.Timespan",
	  T_TIMESPAN,
	  TY_ANNOTATION | TY_CONTENT,
	  "Timespan",
	  { NULL },
	  { { "value", T_STRING, 0, NULL } } },
	{ "jdk.jfr.DataAmount",
	  T_DATA_AMOUNT,
	  TY_ANNOTATION | TY_CONTENT,
	  "Data Amount",
	  { NULL },
	  { { "value", T_STRING, 0, NULL } } },
	{ "jdk.jfr.Unsigned", T_UNSIGNED, TY_ANNOTATION | TY_CONTENT, "Unsigned Value", { NULL }, { { 0 } } },
};
#undef EVENT_HEAD

/* The metadata event's element tree, its strings numbered as they come. */
struct meta_writer {
	struct str_index strings;
	struct jbuf tree;
};

static void mw_str(struct meta_writer *m, const char *s)
{
	long i = str_index_add(&m->strings, s, strlen(s));
	if (i < 0)
		m->tree.oom = true;
	jb_var(&m->tree, i < 0 ? 0 : (uint64_t)i);
}

/* An element: its name, its attributes (nattrs key, value pairs), then the
 * number of its children (which follow). */
static void mw_element(struct meta_writer *m, const char *name, size_t nattrs, const char *const *attrs,
		       size_t nchildren)
{
	mw_str(m, name);
	jb_var(&m->tree, nattrs);
	for (size_t i = 0; i < 2 * nattrs; i++)
		mw_str(m, attrs[i]);
	jb_var(&m->tree, nchildren);
}

/* An annotation of type type with up to two values ("value", or a Category's
 * "value-0" and "value-1"; NULL for none). */
static void mw_annotation(struct meta_writer *m, int type, const char *key, const char *value, const char *value1)
{
	char id[16];
	snprintf(id, sizeof(id), "%d", type);
	const char *a[] = { "class", id, key, value, "value-1", value1 };
	mw_element(m, "annotation", value ? value1 ? 3 : 2 : 1, a, 0);
}

static void mw_field(struct meta_writer *m, const struct jfield *f)
{
	char id[16];
	const char *a[8];
	size_t na = 0;
	snprintf(id, sizeof(id), "%d", f->type);
	a[na++] = "name", a[na++] = f->name, a[na++] = "class", a[na++] = id;
	if (f->flags & F_CPOOL)
		a[na++] = "constantPool", a[na++] = "true";
	if (f->flags & F_ARRAY)
		a[na++] = "dimension", a[na++] = "1";
	unsigned content = f->flags & (F_TICKS | F_SPAN | F_BYTES | F_UNSIGNED);
	mw_element(m, "field", na / 2, a, (f->label != NULL) + (content != 0));
	if (f->label)
		mw_annotation(m, T_LABEL, "value", f->label, NULL);
	if (f->flags & F_TICKS)
		mw_annotation(m, T_TIMESTAMP, "value", "TICKS", NULL);
	else if (f->flags & F_SPAN)
		mw_annotation(m, T_TIMESPAN, "value", "TICKS", NULL);
	else if (f->flags & F_BYTES)
		mw_annotation(m, T_DATA_AMOUNT, "value", "BYTES", NULL);
	else if (f->flags & F_UNSIGNED)
		mw_annotation(m, T_UNSIGNED, NULL, NULL, NULL);
}

static void mw_type(struct meta_writer *m, const struct jtype *t)
{
	char id[16];
	const char *a[6];
	size_t na = 0, nfields = 0;
	snprintf(id, sizeof(id), "%d", t->id);
	while (nfields < 8 && t->fields[nfields].name)
		nfields++;
	a[na++] = "name", a[na++] = t->name, a[na++] = "id", a[na++] = id;
	if (t->kind & TY_SIMPLE)
		a[na++] = "simpleType", a[na++] = "true";
	else if (t->kind & (TY_EVENT | TY_ANNOTATION))
		a[na++] = "superType",
		a[na++] = t->kind & TY_EVENT ? "jdk.jfr.Event" : "java.lang.annotation.Annotation";
	size_t nchildren = nfields + (t->label != NULL) + (t->category[0] != NULL) + ((t->kind & TY_CONTENT) != 0);
	mw_element(m, "class", na / 2, a, nchildren);
	if (t->label)
		mw_annotation(m, T_LABEL, "value", t->label, NULL);
	if (t->category[0])
		mw_annotation(m, T_CATEGORY, "value-0", t->category[0], t->category[1]);
	if (t->kind & TY_CONTENT)
		mw_annotation(m, T_CONTENT_TYPE, NULL, NULL, NULL);
	for (size_t i = 0; i < nfields; i++)
		mw_field(m, &t->fields[i]);
}

/* The metadata event: type 0, start, duration, its id, the strings, the tree. */
static void write_metadata(struct jbuf *out)
{
	struct meta_writer m = { 0 };
	struct jbuf ev = { 0 };
	size_t ntypes = sizeof(jfr_types) / sizeof(jfr_types[0]);
	str_index_init(&m.strings);
	mw_element(&m, "root", 0, NULL, 2);
	mw_element(&m, "metadata", 0, NULL, ntypes);
	for (size_t i = 0; i < ntypes; i++)
		mw_type(&m, &jfr_types[i]);
	static const char *const region[] = { "locale", "en_US", "gmtOffset", "0" };
	mw_element(&m, "region", 2, region, 0);
	jb_var(&ev, T_METADATA);
	jb_var(&ev, 0);
	jb_var(&ev, 0);
	jb_var(&ev, 0x6a666c6d); /* the metadata's id ("jflm"), apart from the JDK's own */
	jb_var(&ev, m.strings.n);
	for (size_t i = 0; i < m.strings.n; i++)
		jb_str(&ev, m.strings.strs[i], m.strings.lens[i]);
	jb_bytes(&ev, m.tree.p, m.tree.n);
	if (m.tree.oom)
		ev.oom = true;
	jb_event(out, &ev);
	free(ev.p);
	free(m.tree.p);
	str_index_free(&m.strings);
}

/* ---- the constant pools ------------------------------------------------------------- */

/* the frame types, as async-profiler numbers them */
enum { FT_INTERPRETED, FT_JIT, FT_INLINED, FT_NATIVE, FT_CPP, FT_KERNEL, FT_C1, FT_N };
static const char *const frame_type_names[FT_N] = { "Interpreted", "JIT compiled", "Inlined",	 "Native",
						    "C++",	   "Kernel",	   "C1 compiled" };

enum { TS_RUNNABLE = 1, TS_SLEEPING, TS_DEFAULT };

/* A numbered set of keys with per-key fields: id = index + 1 (0 is null). */
struct pool {
	struct str_index keys;
	uint64_t *a, *b, *c; /* per entry: fields */
	size_t cap;
};

struct jfr_writer {
	const struct stack_table *t;
	enum event_jfr view;  /* the event written, by the table's row (event_table.c) */
	struct pool symbols;  /* a: - */
	struct pool packages; /* a: name symbol */
	struct pool classes;  /* a: name symbol, b: package */
	struct pool methods;  /* a: class, b: name symbol, c: descriptor symbol */
	struct pool threads;  /* a: where its name starts in the key, b: its length */
	struct jbuf stacks;   /* the stack trace pool's entries */
	struct jbuf *events;  /* where the events go: the chunk */
	struct jbuf ev;	      /* one event's body */
	bool oom;
};

static void pool_free(struct pool *p)
{
	str_index_free(&p->keys);
	free(p->a);
	free(p->b);
	free(p->c);
}

/* The id of key[0..n) in p (added when new, its fields then a, b, c). 0 when out of memory. */
static uint64_t pool_id(struct jfr_writer *w, struct pool *p, const char *key, size_t n, uint64_t a, uint64_t b,
			uint64_t c)
{
	size_t had = p->keys.n;
	long i = str_index_add(&p->keys, key, n);
	if (i < 0)
		goto oom;
	if ((size_t)i == had) {
		size_t need = (size_t)i + 1, acap = p->cap, bcap = p->cap,
		       ccap = p->cap; /* one cap: set when all grew */
		if (ARRAY_GROW(p->a, acap, need) != 0 || ARRAY_GROW(p->b, bcap, need) != 0 ||
		    ARRAY_GROW(p->c, ccap, need) != 0)
			goto oom;
		p->cap = acap;
		p->a[i] = a, p->b[i] = b, p->c[i] = c;
	}
	return (uint64_t)i + 1;
oom:
	w->oom = true;
	return 0;
}

static uint64_t symbol_id(struct jfr_writer *w, const char *s, size_t n)
{
	return pool_id(w, &w->symbols, s, n, 0, 0, 0);
}

/* The class name[0..n) ('/' between packages, as the JVM writes them). */
static uint64_t class_id(struct jfr_writer *w, const char *name, size_t n)
{
	long had = str_index_find(&w->classes.keys, name, n);
	if (had >= 0)
		return (uint64_t)had + 1;
	const char *slash = NULL;
	for (size_t i = 0; i < n; i++)
		if (name[i] == '/')
			slash = name + i;
	uint64_t pkg = 0;
	if (slash)
		pkg = pool_id(w, &w->packages, name, (size_t)(slash - name), symbol_id(w, name, (size_t)(slash - name)),
			      0, 0);
	return pool_id(w, &w->classes, name, n, symbol_id(w, name, n), pkg, 0);
}

/* A frame's method and type: Java frames (marked _[j], _[i], _[0]) split at the
 * last '.' into class and method, the mark left out; kernel frames without
 * their mark; any other name whole, of the class "". */
static uint64_t method_id(struct jfr_writer *w, const char *name, size_t n, int *type)
{
	char kind = frame_mark_kind(name, n);
	size_t base = kind && kind != 'a' && kind != 'l' ? n - FRAME_MARK_LEN : n;
	*type = kind == 'j'		    ? FT_JIT :
		kind == 'i'		    ? FT_INLINED :
		kind == '0'		    ? FT_INTERPRETED :
		kind == 'k'		    ? FT_KERNEL :
		memmem(name, base, "::", 2) ? FT_CPP :
					      FT_NATIVE;
	long had = str_index_find(&w->methods.keys, name, n);
	if (had >= 0)
		return (uint64_t)had + 1;
	size_t dot = 0;
	if (*type == FT_JIT || *type == FT_INLINED || *type == FT_INTERPRETED)
		for (size_t i = 1; i < base; i++)
			if (name[i] == '.')
				dot = i;
	uint64_t cls = class_id(w, name, dot);
	uint64_t meth = dot ? symbol_id(w, name + dot + 1, base - dot - 1) : symbol_id(w, name, base);
	uint64_t desc = *type == FT_KERNEL ? symbol_id(w, "(Lk;)L;", 7) : symbol_id(w, "()L;", 4);
	return pool_id(w, &w->methods, name, n, cls, meth, desc);
}

/* ---- the stacks --------------------------------------------------------------------- */

struct frame_ref {
	const char *p;
	size_t n;
};

struct frame_list {
	struct frame_ref *v;
	size_t n, cap;
};

static int collect_frame(void *ctx, const char *frame, size_t len)
{
	struct frame_list *l = ctx;
	if (ARRAY_GROW(l->v, l->cap, l->n + 1) != 0)
		return -1;
	l->v[l->n++] = (struct frame_ref){ frame, len };
	return 0;
}

static bool is_container_root(const struct frame_ref *f)
{
	return f->n >= 5 && (memcmp(f->p, "[Pod]", 5) == 0 || memcmp(f->p, "[Con]", 5) == 0);
}

/* "[PID] name" */
static bool is_process_root(const struct frame_ref *f)
{
	size_t i = 1;
	if (f->n < 4 || f->p[0] != '[')
		return false;
	while (i < f->n && f->p[i] >= '0' && f->p[i] <= '9')
		i++;
	return i > 1 && i + 1 < f->n && f->p[i] == ']' && f->p[i + 1] == ' ';
}

/* What one stack becomes: its stack trace's id, its thread (0: none of its
 * own), the allocated or monitor class (0 none). */
struct stack_info {
	uint64_t trace, thread, cls;
};

/* Adds stack s (frames in l) to the stack trace pool. */
static void add_stack(struct jfr_writer *w, uint32_t s, struct frame_list *l, struct stack_info *out)
{
	const char *text = w->t->stacks.strs[s];
	size_t nf = l->n, ti = (size_t)-1, leaf_cls = (size_t)-1;
	*out = (struct stack_info){ s + 1, 0, 0 };
	size_t i = 0;
	while (i < nf && is_container_root(&l->v[i]))
		i++;
	/* the roots stay frames; the thread's frame also names the event's thread */
	if (i + 1 < nf && is_process_root(&l->v[i])) {
		ti = i + 1;
		struct frame_ref *th = &l->v[ti];
		out->thread = pool_id(w, &w->threads, text, (size_t)(th->p + th->n - text), (uint64_t)(th->p - text),
				      th->n, 0);
	}
	char want = w->view == EVENT_JFR_ALLOCATION ? 'a' : w->view == EVENT_JFR_MONITOR ? 'l' : 0;
	if (want && nf && nf - 1 != ti && frame_mark_kind(l->v[nf - 1].p, l->v[nf - 1].n) == want) {
		leaf_cls = nf - 1;
		out->cls = class_id(w, l->v[nf - 1].p, l->v[nf - 1].n - FRAME_MARK_LEN);
	}
	size_t depth = nf - (leaf_cls != (size_t)-1);
	jb_var(&w->stacks, s + 1);
	jb_u8(&w->stacks, 0); /* not truncated */
	jb_var(&w->stacks, depth);
	for (size_t k = nf; k-- > 0;) { /* leaf first */
		if (k == leaf_cls)
			continue;
		const char *name = l->v[k].p, *file;
		size_t n = l->v[k].n, file_len;
		int64_t line = 0;
		int type;
		if (w->t->meta.lines)
			n = stack_frame_line(name, n, &file, &file_len, &line);
		jb_var(&w->stacks, method_id(w, name, n, &type));
		jb_var(&w->stacks, line > 0 && line <= INT32_MAX ? (uint64_t)line : 0);
		jb_var(&w->stacks, 0); /* bytecode index */
		jb_var(&w->stacks, (uint64_t)type);
	}
}

/* ---- the events --------------------------------------------------------------------- */

/* One event of stack info at ticks, of weight share (bytes, ns). */
static void put_event(struct jfr_writer *w, const struct stack_info *si, uint64_t thread, uint64_t ticks,
		      uint64_t share)
{
	struct jbuf *e = &w->ev;
	e->n = 0;
	switch (w->view) {
	case EVENT_JFR_EXECUTION:
		jb_var(e, T_EXECUTION_SAMPLE);
		jb_var(e, ticks);
		jb_var(e, thread);
		jb_var(e, si->trace);
		jb_var(e, TS_RUNNABLE);
		break;
	case EVENT_JFR_WALL:
	case EVENT_JFR_WALL_OFFCPU:
		jb_var(e, T_WALL_SAMPLE);
		jb_var(e, ticks);
		jb_var(e, thread);
		jb_var(e, si->trace);
		jb_var(e, w->view == EVENT_JFR_WALL_OFFCPU ? TS_SLEEPING : TS_RUNNABLE);
		jb_var(e, 1);
		jb_var(e, share);
		break;
	case EVENT_JFR_ALLOCATION:
		jb_var(e, T_ALLOC_SAMPLE);
		jb_var(e, ticks);
		jb_var(e, thread);
		jb_var(e, si->trace);
		jb_var(e, si->cls);
		jb_var(e, share);
		break;
	case EVENT_JFR_MONITOR:
		jb_var(e, T_MONITOR_ENTER);
		jb_var(e, ticks);
		jb_var(e, share);
		jb_var(e, thread);
		jb_var(e, si->trace);
		jb_var(e, si->cls);
		jb_var(e, 0); /* previous owner */
		jb_var(e, 0); /* address */
		break;
	}
	jb_event(w->events, e);
}

/* The timeline's samples, when they are the table's counts stack by stack. */
static bool timeline_whole(const struct stack_table *t)
{
	uint64_t *seen;
	bool ok = t->ntimeline > 0;
	if (!ok || !(seen = calloc(t->stacks.n, sizeof(*seen))))
		return false;
	for (size_t i = 0; i < t->ntimeline && ok; i++) {
		const struct timed_sample *s = &t->timeline[i];
		ok = s->stack < t->stacks.n && s->thread < t->threads.n && isfinite(s->time);
		if (ok)
			seen[s->stack]++;
	}
	for (size_t i = 0; i < t->stacks.n && ok; i++)
		ok = seen[i] == t->counts[i];
	free(seen);
	return ok;
}

static uint64_t weight_share(const struct stack_table *t, uint32_t s, uint64_t i)
{
	if (!t->meta.has_weight || !t->weights || !t->counts[s])
		return 0;
	uint64_t w = t->weights[s], n = t->counts[s];
	return w / n + (i < w % n);
}

/* ---- the chunk ---------------------------------------------------------------------- */

static void write_pools(struct jfr_writer *w, struct jbuf *out, const struct stack_table *t)
{
	struct jbuf *b = &w->ev;
	size_t npools = 2;
	b->n = 0;
	jb_var(b, T_CHECKPOINT);
	jb_var(b, 0);
	jb_var(b, 0);
	jb_var(b, 0); /* delta to the previous checkpoint: none */
	jb_u8(b, 1);  /* flush */
	struct pool *pools[] = { &w->threads, &w->methods, &w->classes, &w->packages, &w->symbols };
	for (size_t i = 0; i < 5; i++)
		npools += pools[i]->keys.n > 0;
	npools += t->stacks.n > 0;
	jb_var(b, npools);
	jb_var(b, T_FRAME_TYPE);
	jb_var(b, FT_N);
	for (int i = 0; i < FT_N; i++) {
		jb_var(b, (uint64_t)i);
		jb_cstr(b, frame_type_names[i]);
	}
	static const char *const states[] = { "STATE_RUNNABLE", "STATE_SLEEPING", "STATE_DEFAULT" };
	jb_var(b, T_THREAD_STATE);
	jb_var(b, 3);
	for (int i = 0; i < 3; i++) {
		jb_var(b, TS_RUNNABLE + (uint64_t)i);
		jb_cstr(b, states[i]);
	}
	if (w->threads.keys.n) {
		jb_var(b, T_THREAD);
		jb_var(b, w->threads.keys.n);
		for (size_t i = 0; i < w->threads.keys.n; i++) {
			const char *name = w->threads.keys.strs[i] + w->threads.a[i];
			size_t n = w->threads.b[i];
			jb_var(b, i + 1);
			jb_str(b, name, n);
			jb_var(b, i + 1);
			jb_str(b, name, n);
			jb_var(b, i + 1);
		}
	}
	if (t->stacks.n) {
		jb_var(b, T_STACK_TRACE);
		jb_var(b, t->stacks.n);
		jb_bytes(b, w->stacks.p, w->stacks.n);
	}
	if (w->methods.keys.n) {
		jb_var(b, T_METHOD);
		jb_var(b, w->methods.keys.n);
		for (size_t i = 0; i < w->methods.keys.n; i++) {
			int type;
			const char *k = w->methods.keys.strs[i];
			(void)method_id(w, k, w->methods.keys.lens[i], &type);
			jb_var(b, i + 1);
			jb_var(b, w->methods.a[i]);
			jb_var(b, w->methods.b[i]);
			jb_var(b, w->methods.c[i]);
			jb_var(b,
			       type == FT_NATIVE || type == FT_CPP || type == FT_KERNEL ? 0x100 : 0); /* ACC_NATIVE */
			jb_u8(b, 0);								      /* not hidden */
		}
	}
	if (w->classes.keys.n) {
		jb_var(b, T_CLASS);
		jb_var(b, w->classes.keys.n);
		for (size_t i = 0; i < w->classes.keys.n; i++) {
			jb_var(b, i + 1);
			jb_var(b, 0); /* class loader */
			jb_var(b, w->classes.a[i]);
			jb_var(b, w->classes.b[i]);
			jb_var(b, 0); /* modifiers */
		}
	}
	if (w->packages.keys.n) {
		jb_var(b, T_PACKAGE);
		jb_var(b, w->packages.keys.n);
		for (size_t i = 0; i < w->packages.keys.n; i++) {
			jb_var(b, i + 1);
			jb_var(b, w->packages.a[i]);
		}
	}
	if (w->symbols.keys.n) {
		jb_var(b, T_SYMBOL);
		jb_var(b, w->symbols.keys.n);
		for (size_t i = 0; i < w->symbols.keys.n; i++) {
			jb_var(b, i + 1);
			jb_str(b, w->symbols.keys.strs[i], w->symbols.keys.lens[i]);
		}
	}
	jb_event(out, b);
}

/* The chunk's start (ns since the epoch) and duration, and the timeline's
 * first time (perf script seconds), for total events. */
static void chunk_times(const struct stack_table *t, bool timeline, uint64_t total, int64_t now_ns, int64_t *start,
			int64_t *dur, double *t0)
{
	*start = t->meta.time_ns, *dur = t->meta.duration_ns, *t0 = 0;
	if (timeline) {
		double t1 = t->timeline[0].time;
		*t0 = t1;
		for (size_t i = 1; i < t->ntimeline; i++) {
			*t0 = t->timeline[i].time < *t0 ? t->timeline[i].time : *t0;
			t1 = t->timeline[i].time > t1 ? t->timeline[i].time : t1;
		}
		*dur = (int64_t)((t1 - *t0) * 1e9) + 1;
	}
	if (*dur <= 0)
		*dur = (int64_t)(total ? total : 1) * 10000000; /* 10 ms a sample */
	if (*start <= 0) {
		if (!now_ns) {
			/* reproducible files (the tests' stored referee outputs): the time the
			   reproducible-builds convention gives, else the clock */
			const char *epoch = getenv("SOURCE_DATE_EPOCH");
			char *end;
			long long sec = epoch ? strtoll(epoch, &end, 10) : -1;
			struct timespec ts;
			if (epoch && *epoch && !*end && sec > 0 && sec < 4000000000LL) {
				now_ns = (int64_t)sec * 1000000000;
			} else {
				clock_gettime(CLOCK_REALTIME, &ts);
				now_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
			}
		}
		*start = now_ns > *dur ? now_ns - *dur : 0;
	}
}

/* The events: the timeline's samples at their times, else each stack's
 * samples spread evenly over dur. 0, or -1 out of memory. */
static int write_events(struct jfr_writer *w, const struct stack_info *info, const uint32_t *order, bool timeline,
			int64_t dur, double t0)
{
	const struct stack_table *t = w->t;
	if (!timeline) {
		for (size_t i = 0; i < t->stacks.n; i++) {
			uint32_t s = order[i];
			uint64_t n = t->counts[s];
			for (uint64_t k = 0; k < n; k++) {
				uint64_t at = (uint64_t)((unsigned __int128)(uint64_t)dur * (2 * k + 1) / (2 * n));
				put_event(w, &info[s], info[s].thread, at, weight_share(t, s, k));
			}
		}
		return 0;
	}
	/* per timeline thread its pool id; per stack its samples so far */
	uint64_t *tl_thread = calloc(t->threads.n ? t->threads.n : 1, sizeof(*tl_thread));
	uint64_t *done = calloc(t->stacks.n ? t->stacks.n : 1, sizeof(*done));
	int rc = tl_thread && done ? 0 : -1;
	for (size_t i = 0; i < t->ntimeline && rc == 0; i++) {
		const struct timed_sample *x = &t->timeline[i];
		const struct stack_info *si = &info[x->stack];
		uint64_t th = si->thread;
		/* a stack without a thread of its own: the timeline's */
		if (!th && !tl_thread[x->thread])
			tl_thread[x->thread] = pool_id(w, &w->threads, t->threads.strs[x->thread],
						       t->threads.lens[x->thread], 0, t->threads.lens[x->thread], 0);
		if (!th)
			th = tl_thread[x->thread];
		put_event(w, si, th, (uint64_t)((x->time - t0) * 1e9), weight_share(t, x->stack, done[x->stack]));
		done[x->stack]++;
	}
	free(tl_thread);
	free(done);
	return rc;
}

int jfr_write(FILE *out, const struct stack_table *t, int64_t now_ns, char *err, size_t errlen)
{
	struct jbuf chunk = { 0 };
	struct jfr_writer w = { .t = t, .view = event_kind_of_meta(&t->meta)->jfr, .events = &chunk };
	struct frame_list l = { 0 };
	struct stack_info *info = NULL;
	uint32_t *order = NULL;
	uint64_t total = 0;
	int64_t start, dur;
	double t0;
	int rc = -1;
	bool timeline = timeline_whole(t);
	struct pool *pools[] = { &w.symbols, &w.packages, &w.classes, &w.methods, &w.threads };
	for (size_t i = 0; i < 5; i++)
		str_index_init(&pools[i]->keys);

	for (size_t i = 0; i < t->stacks.n; i++) {
		if (t->counts[i] > JFR_MAX_EVENTS - total) {
			snprintf(err, errlen,
				 "more than %llu samples, one JFR event each: too many for one file "
				 "(counts that are times or bytes are not samples: write .pb.gz, or scale them down)",
				 (unsigned long long)JFR_MAX_EVENTS);
			goto out;
		}
		total += t->counts[i];
	}
	order = stack_table_sorted(t);
	info = malloc((t->stacks.n ? t->stacks.n : 1) * sizeof(*info));
	if (!order || !info)
		goto oom;
	chunk_times(t, timeline, total, now_ns, &start, &dur, &t0);

	/* the header (ticks are nanoseconds from the chunk's start); sizes and
	 * offsets patched at the end */
	jb_bytes(&chunk, "FLR\0", 4);
	jb_bytes(&chunk, (const unsigned char[]){ 0, 2, 0, 0 }, 4); /* version 2.0 */
	jb_bytes(&chunk, (const unsigned char[60]){ 0 }, 60);
	jb_be_at(&chunk, 32, (uint64_t)start, 8);
	jb_be_at(&chunk, 40, (uint64_t)dur, 8);
	jb_be_at(&chunk, 48, 0, 8);	     /* start ticks */
	jb_be_at(&chunk, 56, 1000000000, 8); /* ticks a second */
	jb_be_at(&chunk, 64, 1, 4);	     /* compressed integers */
	size_t meta_at = chunk.n;
	write_metadata(&chunk);

	for (size_t i = 0; i < t->stacks.n; i++) {
		l.n = 0;
		if (stack_table_frames(t->stacks.strs[order[i]], collect_frame, &l) != 0)
			goto oom;
		add_stack(&w, order[i], &l, &info[order[i]]);
	}
	if (write_events(&w, info, order, timeline, dur, t0) != 0)
		goto oom;
	size_t pools_at = chunk.n;
	write_pools(&w, &chunk, t);
	if (w.oom || chunk.oom || w.stacks.oom || w.ev.oom)
		goto oom;
	jb_be_at(&chunk, 8, chunk.n, 8);
	jb_be_at(&chunk, 16, pools_at, 8);
	jb_be_at(&chunk, 24, meta_at, 8);
	if (fwrite(chunk.p, 1, chunk.n, out) != chunk.n || fflush(out) != 0) {
		snprintf(err, errlen, "cannot write the JFR file: %s", strerror(errno));
		goto out;
	}
	rc = 0;
	goto out;
oom:
	snprintf(err, errlen, "out of memory writing JFR");
out:
	for (size_t i = 0; i < 5; i++)
		pool_free(pools[i]);
	free(w.stacks.p);
	free(w.ev.p);
	free(chunk.p);
	free(l.v);
	free(info);
	free(order);
	return rc;
}
