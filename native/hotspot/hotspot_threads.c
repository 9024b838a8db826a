/* hotspot_threads.c - java.lang.Thread names of a HotSpot JVM's threads read from
 * outside: thread list, each JavaThread's Thread object, its name String's bytes. */
#include "hotspot_threads.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "hotspot_flags.h"
#include "hotspot_scopes.h" /* hotspot_stream_int */
#include "hotspot_zgc.h"
#include "utf8.h"

#define MAX_OFFSET	     0xffff	/* a field offset past this is no offset this code uses */
#define MAX_THREADS	     (1u << 16) /* threads of one list read at most */
#define PTR_CHUNK	     512	/* thread pointers read at once */
#define MAX_SPAN	     512	/* bytes of one object or JavaThread read at once */
#define MAX_SUPERS	     64		/* Klass::_super steps from a Thread subclass up to Thread */
#define SUBCLASSES	     32		/* Thread subclasses remembered */
#define MAX_FIELDS	     4096	/* Java fields of a class */
#define MAX_STREAM	     65536	/* bytes of a field info stream */
#define MAX_POOL	     65536	/* constant pool entries */
#define MAX_SYMBOL	     64		/* length of a symbol compared at most */
#define MAX_ATTEMPTS	     64		/* layout searches before giving up */
#define MAX_LIST_TRIES	     3		/* thread list reads when it changes under the reader */
#define OPTIMISTIC	     64		/* bytes of a name read with its array's header */
#define ACC_STATIC	     0x0008
#define FIELDINFO_TAG_OFFSET 1 /* JDK 17 FieldInfo: the packed field holds the offset */
#define FIELDINFO_TAG_SIZE   2
#define FIELD_SLOTS	     6	   /* JDK 17 FieldInfo: u2s a field */
#define FF_KNOWN	     0x1fu /* JDK 21+ FieldFlags: initialized, injected, generic, stable, contended */
#define FF_OPTIONALS	     0x15u /* ... the ones followed by one more number each */

/* What the names need from the tables. */
enum field {
	F_LIST_LENGTH,
	F_LIST_THREADS,
	F_JT_NEXT,
	F_THREAD_OBJ,
	F_JT_OSTHREAD,
	F_T_OSTHREAD,
	F_HANDLE_OBJ,
	F_OS_TID,
	F_NARROW_KLASS,
	F_WIDE_KLASS,
	F_KLASS_NAME,
	F_KLASS_SUPER,
	F_IK_CONSTANTS,
	F_IK_FIELDS,
	F_IK_JAVA_FIELDS,
	F_IK_STREAM,
	F_CP_LENGTH,
	F_SYM_LENGTH,
	F_SYM_BODY,
	F_U1_DATA,
	F_U2_DATA,
	F_FLAG_NAME,
	F_FLAG_ADDR,
	T_OOP,
	T_CONSTANTPOOL,
	T_JVMFLAG,
	NFIELDS
};
enum statics {
	A_LIST,
	A_LINKED,
	A_NTHREADS,
	A_OOP_BASE,
	A_OOP_SHIFT,
	A_KLASS_BASE,
	A_KLASS_SHIFT,
	A_THREAD_KLASS,
	A_STRING_KLASS,
	A_FLAGS,
	A_NFLAGS,
	NSTATICS
};

static const struct {
	const char *type, *field;
	int id;
} wanted[] = {
	{ "ThreadsList", "_length", F_LIST_LENGTH },
	{ "ThreadsList", "_threads", F_LIST_THREADS },
	{ "JavaThread", "_next", F_JT_NEXT }, /* JDK 11: the threads linked */
	{ "JavaThread", "_threadObj", F_THREAD_OBJ },
	{ "JavaThread", "_osthread", F_JT_OSTHREAD }, /* JDK 17 */
	{ "Thread", "_osthread", F_T_OSTHREAD },      /* JDK 25 */
	{ "OopHandle", "_obj", F_HANDLE_OBJ },
	{ "OSThread", "_thread_id", F_OS_TID },
	{ "oopDesc", "_metadata._compressed_klass", F_NARROW_KLASS },
	{ "oopDesc", "_metadata._klass", F_WIDE_KLASS },
	{ "Klass", "_name", F_KLASS_NAME },
	{ "Klass", "_super", F_KLASS_SUPER },
	{ "InstanceKlass", "_constants", F_IK_CONSTANTS },
	{ "InstanceKlass", "_fields", F_IK_FIELDS }, /* before JDK 21: Array<u2> */
	{ "InstanceKlass", "_java_fields_count", F_IK_JAVA_FIELDS },
	{ "InstanceKlass", "_fieldinfo_stream", F_IK_STREAM }, /* JDK 21+: Array<u1> */
	{ "ConstantPool", "_length", F_CP_LENGTH },
	{ "Symbol", "_length", F_SYM_LENGTH },
	{ "Symbol", "_body", F_SYM_BODY },
	{ "Array<u1>", "_data", F_U1_DATA },
	{ "Array<u2>", "_data", F_U2_DATA },
	{ "JVMFlag", "_name", F_FLAG_NAME },
	{ "JVMFlag", "_addr", F_FLAG_ADDR },
};

static const struct {
	const char *type, *field;
	int id;
} wanted_static[] = {
	{ "ThreadsSMRSupport", "_java_thread_list", A_LIST },
	{ "Threads", "_thread_list", A_LINKED }, /* JDK 11: no ThreadsList in the tables */
	{ "Threads", "_number_of_threads", A_NTHREADS },
	{ "Universe", "_narrow_oop._base", A_OOP_BASE }, /* JDK 11 */
	{ "Universe", "_narrow_oop._shift", A_OOP_SHIFT },
	{ "Universe", "_narrow_klass._base", A_KLASS_BASE },
	{ "Universe", "_narrow_klass._shift", A_KLASS_SHIFT },
	{ "CompressedOops", "_narrow_oop._base", A_OOP_BASE }, /* JDK 17 */
	{ "CompressedOops", "_narrow_oop._shift", A_OOP_SHIFT },
	{ "CompressedOops", "_base", A_OOP_BASE }, /* JDK 25 */
	{ "CompressedOops", "_shift", A_OOP_SHIFT },
	{ "CompressedKlassPointers", "_narrow_klass._base", A_KLASS_BASE },
	{ "CompressedKlassPointers", "_narrow_klass._shift", A_KLASS_SHIFT },
	{ "CompressedKlassPointers", "_base", A_KLASS_BASE },
	{ "CompressedKlassPointers", "_shift", A_KLASS_SHIFT },
	{ "vmClasses", "_klasses[static_cast<int>(vmClassID::Thread_klass_knum)]", A_THREAD_KLASS },
	{ "vmClasses", "_klasses[static_cast<int>(vmClassID::String_klass_knum)]", A_STRING_KLASS },
	{ "SystemDictionary", "_well_known_klasses[SystemDictionary::Thread_klass_knum]", A_THREAD_KLASS }, /* JDK 11 */
	{ "SystemDictionary", "_well_known_klasses[SystemDictionary::String_klass_knum]", A_STRING_KLASS },
	{ "JVMFlag", "flags", A_FLAGS },
	{ "JVMFlag", "numFlags", A_NFLAGS },
};

static const struct {
	const char *type;
	int id;
} wanted_types[] = {
	{ "oopDesc", T_OOP },
	{ "ConstantPool", T_CONSTANTPOOL },
	{ "JVMFlag", T_JVMFLAG },
};

/* A Java thread of the list last read. */
struct thread_entry {
	pid_t tid;
	uint64_t jt;   /* its JavaThread */
	uint64_t slot; /* where its Thread object's oop is (the OopHandle's oop*); 0 not yet */
};

enum state { LAYOUT_FIND, LAYOUT_FOUND, LAYOUT_NEVER };

struct hotspot_threads {
	struct remote_mem mem;
	int jdk;
	long f[NFIELDS];
	uint64_t a[NSTATICS];
	bool tid_int; /* OSThread::_thread_id is a 4-byte pid_t */
	bool obj_oop; /* JavaThread::_threadObj is the oop itself (JDK 11), not an OopHandle */
	bool linked;  /* the threads are Threads::_thread_list's, linked by JavaThread::_next (JDK 11) */
	/* the heap's layout, found at the first name */
	enum state state;
	int attempts;
	uint64_t tried_list; /* the thread list when the layout was last not found */
	bool narrow_oops, narrow_klass;
	bool zpointers;		 /* generational ZGC: oops are colored pointers */
	struct hotspot_zgc *zgc; /* where ZGC moved an object a stale pointer names; NULL: not read */
	uint64_t oop_base, klass_base;
	unsigned oop_shift, klass_shift;
	long klass_off, len_off, data_off; /* data_off -1: not known until a name is read */
	long name_off, value_off, coder_off;
	uint64_t thread_klass, string_klass, bytes_klass; /* bytes_klass 0: not checked yet */
	uint64_t subclasses[SUBCLASSES];
	unsigned nsub;
	/* the thread list last read (ThreadsList*: a new one whenever a thread
	 * starts or ends; JDK 11: the first JavaThread, and the count) */
	uint64_t list;
	uint32_t count;
	struct thread_entry *threads;
	size_t n, cap;
};

/* ---- the tables --------------------------------------------------------------- */

void hotspot_threads_jdk(struct hotspot_threads *t, int jdk_major)
{
	t->jdk = jdk_major;
}

struct hotspot_threads *hotspot_threads_new(const struct remote_mem *mem, int jdk_major)
{
	struct hotspot_threads *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->mem = *mem;
	t->jdk = jdk_major;
	for (size_t i = 0; i < NFIELDS; i++)
		t->f[i] = -1;
	t->data_off = -1;
	t->state = LAYOUT_NEVER; /* until hotspot_threads_ready */
	if (!(t->zgc = hotspot_zgc_new(mem))) {
		free(t);
		return NULL;
	}
	return t;
}

void hotspot_threads_take(void *ctx, const struct hotspot_entry *e)
{
	struct hotspot_threads *t = ctx;
	long v = e->value <= MAX_OFFSET ? (long)e->value : -1;
	size_t k;
	hotspot_zgc_take(t->zgc, e);
	if (!e->field) {
		for (k = 0; k < sizeof(wanted_types) / sizeof(wanted_types[0]); k++)
			if (strcmp(e->type, wanted_types[k].type) == 0)
				t->f[wanted_types[k].id] = v;
		return;
	}
	if (e->is_static) {
		for (k = 0; k < sizeof(wanted_static) / sizeof(wanted_static[0]); k++)
			if (strcmp(e->type, wanted_static[k].type) == 0 &&
			    strcmp(e->field, wanted_static[k].field) == 0)
				t->a[wanted_static[k].id] = e->value;
		return;
	}
	for (k = 0; k < sizeof(wanted) / sizeof(wanted[0]); k++)
		if (strcmp(e->type, wanted[k].type) == 0 && strcmp(e->field, wanted[k].field) == 0) {
			t->f[wanted[k].id] = v;
			if (wanted[k].id == F_THREAD_OBJ)
				t->obj_oop = e->type_string && strcmp(e->type_string, "oop") == 0;
			if (wanted[k].id == F_OS_TID) /* pid_t on Linux ("OSThread::thread_id_t" or "pid_t") */
				t->tid_int = e->type_string && (strcmp(e->type_string, "pid_t") == 0 ||
								strcmp(e->type_string, "OSThread::thread_id_t") == 0 ||
								strcmp(e->type_string, "int") == 0);
		}
}

int hotspot_threads_ready(struct hotspot_threads *t)
{
	static const int need[] = { F_THREAD_OBJ, F_OS_TID,	  F_KLASS_NAME, F_KLASS_SUPER, F_IK_CONSTANTS,
				    F_CP_LENGTH,  F_SYM_LENGTH,	  F_SYM_BODY,	F_FLAG_NAME,   F_FLAG_ADDR,
				    T_OOP,	  T_CONSTANTPOOL, T_JVMFLAG };
	static const int need_static[] = { A_OOP_BASE,	   A_OOP_SHIFT,	   A_KLASS_BASE, A_KLASS_SHIFT,
					   A_THREAD_KLASS, A_STRING_KLASS, A_FLAGS,	 A_NFLAGS };
	/* the list: ThreadsSMRSupport's (JDK 17 on), else Threads' linked one (JDK 11) */
	t->linked = !t->a[A_LIST] && t->a[A_LINKED] && t->a[A_NTHREADS] && t->f[F_JT_NEXT] >= 0;
	bool ok = t->tid_int && (t->f[F_JT_OSTHREAD] >= 0 || t->f[F_T_OSTHREAD] >= 0) &&
		  (t->linked || (t->a[A_LIST] && t->f[F_LIST_LENGTH] >= 0 && t->f[F_LIST_THREADS] >= 0)) &&
		  (t->obj_oop || t->f[F_HANDLE_OBJ] >= 0) && (t->f[F_NARROW_KLASS] >= 0 || t->f[F_WIDE_KLASS] >= 0) &&
		  ((t->f[F_IK_FIELDS] >= 0 && t->f[F_IK_JAVA_FIELDS] >= 0 && t->f[F_U2_DATA] >= 0) ||
		   (t->f[F_IK_STREAM] >= 0 && t->f[F_U1_DATA] >= 0));
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++)
		ok = ok && t->f[need[i]] >= 0;
	for (size_t i = 0; i < sizeof(need_static) / sizeof(need_static[0]); i++)
		ok = ok && t->a[need_static[i]] != 0;
	t->state = ok ? LAYOUT_FIND : LAYOUT_NEVER;
	hotspot_zgc_ready(t->zgc); /* -1: a JVM without ZGC, or one whose tables lack it */
	return ok ? 0 : -1;
}

void hotspot_threads_free(struct hotspot_threads *t)
{
	if (!t)
		return;
	free(t->threads);
	hotspot_zgc_free(t->zgc);
	free(t);
}

/* ---- memory -------------------------------------------------------------------- */

static int mem_read(const struct hotspot_threads *t, uint64_t addr, void *buf, size_t len)
{
	return remote_mem_read(&t->mem, addr, buf, len);
}

static uint64_t mem_u64(const struct hotspot_threads *t, uint64_t addr)
{
	return remote_mem_u64(&t->mem, addr);
}

/* addr + off for a table offset; 0 (unreadable) when either is unknown. */
static uint64_t at(uint64_t addr, long off)
{
	return addr && off >= 0 ? addr + (uint64_t)off : 0;
}

/* The values of boolean -XX flags names[0..n) into values (-1: no such flag):
 * 0, or -1 when the flag table cannot be read. */
static int flags_read(const struct hotspot_threads *t, const char *const *names, int *values, size_t n)
{
	struct vm_flag_table ft = { t->a[A_FLAGS], t->a[A_NFLAGS], t->f[T_JVMFLAG], t->f[F_FLAG_NAME],
				    t->f[F_FLAG_ADDR] };
	return hotspot_flags_read(&t->mem, &ft, names, values, n);
}

/* ---- classes ------------------------------------------------------------------- */

/* True when Symbol sym's text is s. */
static bool symbol_is(const struct hotspot_threads *t, uint64_t sym, const char *s)
{
	unsigned char buf[2 + MAX_SYMBOL];
	size_t n = strlen(s);
	uint16_t len = 0;
	if (!sym || n > MAX_SYMBOL)
		return false;
	/* the length and the text at once when the text follows the u2 length */
	if (t->f[F_SYM_BODY] == t->f[F_SYM_LENGTH] + 2 && mem_read(t, at(sym, t->f[F_SYM_LENGTH]), buf, 2 + n) == 0) {
		memcpy(&len, buf, 2);
		return len == n && memcmp(buf + 2, s, n) == 0;
	}
	if (mem_read(t, at(sym, t->f[F_SYM_LENGTH]), &len, 2) != 0 || len != n ||
	    mem_read(t, at(sym, t->f[F_SYM_BODY]), buf, n) != 0)
		return false;
	return memcmp(buf, s, n) == 0;
}

static bool klass_is(const struct hotspot_threads *t, uint64_t klass, const char *name)
{
	return symbol_is(t, mem_u64(t, at(klass, t->f[F_KLASS_NAME])), name);
}

/* One Java field of a class (static ones too). */
struct field_info {
	uint32_t access, name, sig, offset;
	bool has_offset;
};

/* JDK 17 to 20: InstanceKlass::_fields, six u2 a field (access flags, name,
 * signature, initial value, low and high packed offset), the Java fields first. */
static int fields_array(const struct hotspot_threads *t, uint64_t klass, struct field_info *out, size_t *n)
{
	uint64_t arr = mem_u64(t, at(klass, t->f[F_IK_FIELDS]));
	uint16_t count = 0, *s = NULL;
	int32_t length = 0;
	int rc = -1;
	if (!arr || mem_read(t, at(klass, t->f[F_IK_JAVA_FIELDS]), &count, 2) != 0 || count > MAX_FIELDS ||
	    mem_read(t, arr, &length, 4) != 0 || length < 0 || (uint32_t)length < (uint32_t)count * FIELD_SLOTS)
		return -1;
	if (count && (!(s = malloc((size_t)count * FIELD_SLOTS * 2)) ||
		      mem_read(t, at(arr, t->f[F_U2_DATA]), s, (size_t)count * FIELD_SLOTS * 2) != 0))
		goto out;
	for (size_t i = 0; i < count; i++) {
		const uint16_t *u = s + i * FIELD_SLOTS;
		uint32_t packed = (uint32_t)u[5] << 16 | u[4];
		out[i] = (struct field_info){ u[0], u[1], u[2], packed >> FIELDINFO_TAG_SIZE,
					      (packed & FIELDINFO_TAG_OFFSET) != 0 };
	}
	*n = count;
	rc = 0;
out:
	free(s);
	return rc;
}

/* JDK 21+: InstanceKlass::_fieldinfo_stream, UNSIGNED5 numbers: the count of
 * Java and of injected fields, then for each field its name, signature,
 * offset, access flags, field flags and one number for each optional item
 * the flags announce (initial value, generic signature, contention group). */
static int fields_stream(const struct hotspot_threads *t, uint64_t klass, struct field_info *out, size_t *n)
{
	uint64_t arr = mem_u64(t, at(klass, t->f[F_IK_STREAM]));
	uint32_t java = 0, injected = 0;
	int32_t length = 0;
	uint8_t *s = NULL;
	size_t pos = 0;
	int rc = -1;
	if (!arr || mem_read(t, arr, &length, 4) != 0 || length <= 0 || length > MAX_STREAM ||
	    !(s = malloc((size_t)length)) || mem_read(t, at(arr, t->f[F_U1_DATA]), s, (size_t)length) != 0 ||
	    hotspot_stream_int(s, (size_t)length, &pos, 1, &java) != 0 ||
	    hotspot_stream_int(s, (size_t)length, &pos, 1, &injected) != 0 || java > MAX_FIELDS)
		goto out;
	for (uint32_t i = 0; i < java; i++) {
		uint32_t v[5], skip, item; /* name, signature, offset, access flags, field flags */
		for (int k = 0; k < 5; k++)
			if (hotspot_stream_int(s, (size_t)length, &pos, 1, &v[k]) != 0)
				goto out;
		if (v[4] & ~FF_KNOWN) /* a flag this code does not know: maybe one more item */
			goto out;
		skip = (uint32_t)__builtin_popcount(v[4] & FF_OPTIONALS);
		for (uint32_t k = 0; k < skip; k++)
			if (hotspot_stream_int(s, (size_t)length, &pos, 1, &item) != 0)
				goto out;
		out[i] = (struct field_info){
			.access = v[3], .name = v[0], .sig = v[1], .offset = v[2], .has_offset = true
		};
	}
	*n = java;
	rc = 0;
out:
	free(s);
	return rc;
}

/* A field this code looks for: its name, signature and where its offset goes. */
struct field_want {
	const char *name, *sig;
	long *off;
};

/* The offsets of instance fields want[0..n) of class klass: 0 when all were found. */
static int fields_find(const struct hotspot_threads *t, uint64_t klass, struct field_want *want, size_t nwant)
{
	struct field_info *fi = malloc(MAX_FIELDS * sizeof(*fi));
	uint64_t cp = mem_u64(t, at(klass, t->f[F_IK_CONSTANTS])), *pool = NULL;
	uint32_t top = 0;
	int32_t cp_len = 0;
	size_t n = 0, found = 0;
	int rc = -1;
	if (!fi || !cp || mem_read(t, at(cp, t->f[F_CP_LENGTH]), &cp_len, 4) != 0 || cp_len <= 0 || cp_len > MAX_POOL)
		goto out;
	if ((t->f[F_IK_STREAM] >= 0 ? fields_stream(t, klass, fi, &n) : fields_array(t, klass, fi, &n)) != 0)
		goto out;
	for (size_t i = 0; i < n; i++) /* the pool's entries up to the last one named: read at once */
		if (!(fi[i].access & ACC_STATIC) && fi[i].has_offset) {
			top = fi[i].name > top ? fi[i].name : top;
			top = fi[i].sig > top ? fi[i].sig : top;
		}
	if (top == 0 || top >= (uint32_t)cp_len || !(pool = malloc(((size_t)top + 1) * 8)) ||
	    mem_read(t, at(cp, t->f[T_CONSTANTPOOL]), pool, ((size_t)top + 1) * 8) != 0)
		goto out;
	for (size_t i = 0; i < n && found < nwant; i++) {
		if ((fi[i].access & ACC_STATIC) || !fi[i].has_offset || fi[i].offset > MAX_OFFSET || !fi[i].name ||
		    !fi[i].sig)
			continue;
		for (size_t k = 0; k < nwant; k++) /* a pool's Symbol* may carry a tag in its low bit */
			if (*want[k].off < 0 && symbol_is(t, pool[fi[i].name] & ~1ULL, want[k].name) &&
			    symbol_is(t, pool[fi[i].sig] & ~1ULL, want[k].sig)) {
				*want[k].off = (long)fi[i].offset;
				found++;
				break;
			}
	}
	rc = found == nwant ? 0 : -1;
out:
	free(pool);
	free(fi);
	return rc;
}

/* ---- objects ------------------------------------------------------------------- */

static uint64_t klass_decode(const struct hotspot_threads *t, const unsigned char *p)
{
	uint32_t narrow;
	uint64_t wide;
	if (t->narrow_klass) {
		memcpy(&narrow, p, 4);
		return narrow ? t->klass_base + ((uint64_t)narrow << t->klass_shift) : 0;
	}
	memcpy(&wide, p, 8);
	return wide;
}

/* An uncompressed oop as stored (in a field or a root). Generational ZGC
 * stores an address shifted left past 16 bits of color: on x86-64 its
 * remapped bits (12 to 15, one set) tell the shift, 13 to 16 (the load
 * barrier's patched shift); on aarch64 the shift is fixed, 16 (its
 * ZPointerLoadShift is a constant there). The older ZGC's colored addresses
 * are mapped as they are. */
static uint64_t oop_wide(const struct hotspot_threads *t, uint64_t v)
{
	uint64_t addr;
	if (!t->zpointers)
		return v;
#if defined(__aarch64__)
	addr = v >> 16;
#else
	static const int shift[16] = { [1] = 13, [2] = 14, [4] = 15, [8] = 16 };
	addr = shift[(v >> 12) & 0xf] ? v >> shift[(v >> 12) & 0xf] : 0;
#endif
	/* a pointer ZGC has not healed since it moved the object: where it went */
	return t->zgc ? hotspot_zgc_current(t->zgc, v, addr) : addr;
}

static uint64_t oop_decode(const struct hotspot_threads *t, const unsigned char *p)
{
	uint32_t narrow;
	uint64_t wide;
	if (t->narrow_oops) {
		memcpy(&narrow, p, 4);
		return narrow ? t->oop_base + ((uint64_t)narrow << t->oop_shift) : 0;
	}
	memcpy(&wide, p, 8);
	return oop_wide(t, wide);
}

static long oop_size(const struct hotspot_threads *t)
{
	return t->narrow_oops ? 4 : 8;
}

/* Bytes [klass_off, end) of object obj into buf (MAX_SPAN bytes) and its
 * class into *klass: 0, or -1 when unreadable. */
static int object_read(const struct hotspot_threads *t, uint64_t obj, long end, unsigned char *buf, uint64_t *klass)
{
	if (!obj || (obj & 7) || end <= t->klass_off || end - t->klass_off > MAX_SPAN ||
	    mem_read(t, obj + (uint64_t)t->klass_off, buf, (size_t)(end - t->klass_off)) != 0)
		return -1;
	*klass = klass_decode(t, buf);
	return *klass ? 0 : -1;
}

/* True when klass is java.lang.Thread or a subclass of it. */
static bool thread_class(struct hotspot_threads *t, uint64_t klass)
{
	uint64_t k = klass;
	if (klass == t->thread_klass)
		return true;
	for (unsigned i = 0; i < t->nsub && i < SUBCLASSES; i++)
		if (t->subclasses[i] == klass)
			return true;
	for (int i = 0; i < MAX_SUPERS && k && !(k & 7); i++) {
		k = mem_u64(t, at(k, t->f[F_KLASS_SUPER]));
		if (k == t->thread_klass) {
			t->subclasses[t->nsub++ % SUBCLASSES] = klass;
			return true;
		}
	}
	return false;
}

/* ---- text ---------------------------------------------------------------------- */

/* A String's bytes b[0..n) (coder 0 Latin-1, 1 UTF-16LE; cut says they are
 * the first n of more) as UTF-8 into out: its length, or -1 when not UTF-16
 * (a lone surrogate). */
static int text_utf8(const uint8_t *b, size_t n, int coder, bool cut, char *out, size_t len)
{
	size_t pos = 0;
	out[0] = '\0';
	for (size_t i = 0; i < n;) {
		uint32_t c = b[i++];
		if (coder) {
			if (i >= n)
				return -1;
			c |= (uint32_t)b[i++] << 8;
			if (c >= 0xd800 && c < 0xdc00) { /* a high surrogate: its low one follows */
				uint32_t lo;
				if (i + 1 >= n) {
					if (cut) /* cut between the two */
						break;
					return -1;
				}
				lo = b[i] | (uint32_t)b[i + 1] << 8;
				if (lo < 0xdc00 || lo >= 0xe000)
					return -1;
				i += 2;
				c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
			} else if (c >= 0xdc00 && c < 0xe000) {
				return -1;
			}
		}
		/* control characters are text too: whoever shows it escapes it (text_escape) */
		if (!utf8_put(out, len, &pos, c))
			break; /* out is full: cut at a character */
	}
	return (int)pos;
}

/* The text of byte[] arr holding a String of coder coder into out. */
static int array_text(struct hotspot_threads *t, uint64_t arr, int coder, char *out, size_t len)
{
	unsigned char buf[MAX_SPAN], data[2 * HOTSPOT_THREAD_NAME_MAX];
	long head = t->len_off + 4, end = (t->data_off >= 0 ? t->data_off : head + 4) + OPTIMISTIC;
	size_t cap = coder ? 2 * HOTSPOT_THREAD_NAME_MAX : HOTSPOT_THREAD_NAME_MAX, n;
	uint64_t klass;
	int32_t length;
	bool whole = true;
	/* the header and a short name at once; the header alone near the heap's end */
	if (object_read(t, arr, end, buf, &klass) != 0) {
		whole = false;
		if (object_read(t, arr, head, buf, &klass) != 0)
			return -1;
	}
	if (klass != t->bytes_klass) { /* the first array is checked by name */
		if (t->bytes_klass || !klass_is(t, klass, "[B"))
			return -1;
		t->bytes_klass = klass;
	}
	memcpy(&length, buf + (t->len_off - t->klass_off), 4);
	if (length < 0 || (coder && (length & 1)))
		return -1;
	if (length == 0) {
		out[0] = '\0';
		return 0;
	}
	if (t->data_off < 0) {
		/* no compressed class pointers: the elements follow the length
		 * (JDK 25), or start at the next 8 bytes (JDK 17: the 4 between
		 * are cleared), and a name's first character is never 0 */
		uint32_t gap;
		if (whole)
			memcpy(&gap, buf + (head - t->klass_off), 4);
		else if (mem_read(t, arr + (uint64_t)head, &gap, 4) != 0)
			return -1;
		t->data_off = gap ? head : head + 4;
	}
	n = (size_t)length < cap ? (size_t)length : cap;
	if (whole && t->data_off + (long)n <= end) {
		memcpy(data, buf + (t->data_off - t->klass_off), n);
	} else if (mem_read(t, arr + (uint64_t)t->data_off, data, n) != 0) {
		return -1;
	}
	return text_utf8(data, n, coder, n < (size_t)length, out, len);
}

/* The name of the Thread object whose oop is at slot. */
static int thread_name(struct hotspot_threads *t, uint64_t slot, char *out, size_t len)
{
	unsigned char buf[MAX_SPAN];
	long osz = oop_size(t), end;
	uint64_t obj = oop_wide(t, mem_u64(t, slot)), klass, str; /* a root: never compressed */
	int8_t coder;
	/* the Thread object: its class, then its name */
	if (object_read(t, obj, t->name_off + osz, buf, &klass) != 0 || !thread_class(t, klass) ||
	    !(str = oop_decode(t, buf + (t->name_off - t->klass_off))))
		return -1;
	/* the String: its class, value and coder */
	end = t->value_off + osz > t->coder_off + 1 ? t->value_off + osz : t->coder_off + 1;
	if (object_read(t, str, end, buf, &klass) != 0 || klass != t->string_klass)
		return -1;
	memcpy(&coder, buf + (t->coder_off - t->klass_off), 1);
	if (coder != 0 && coder != 1)
		return -1;
	return array_text(t, oop_decode(t, buf + (t->value_off - t->klass_off)), coder, out, len);
}

/* ---- the layout ---------------------------------------------------------------- */

/* The heap's layout and the fields' offsets: 0 found, -1 not yet (a JVM
 * starting), -2 never (an unsupported layout). */
static int layout_find(struct hotspot_threads *t)
{
	static const char *const names[] = { "UseCompressedOops", "UseCompressedClassPointers",
					     "UseCompactObjectHeaders", "UseZGC", "ZGenerational" };
	int v[sizeof(names) / sizeof(names[0])];
	int32_t shift = 0;
	long ksize;
	if (flags_read(t, names, v, sizeof(names) / sizeof(names[0])) != 0)
		return -1;
	if (v[0] < 0 || v[1] < 0 || v[2] == 1)
		return -2; /* compact object headers: the class is in the mark word */
	/* ZGC: generational with -XX:+ZGenerational (JDK 21 to 23), the only
	 * one from JDK 24 */
	if (v[3] == 1 && v[4] < 0 && t->jdk <= 0)
		return -2;
	t->zpointers = v[3] == 1 && (v[4] == 1 || (v[4] < 0 && t->jdk >= 24));
	t->narrow_oops = v[0] == 1;
	t->narrow_klass = v[1] == 1;
	if (t->narrow_oops) {
		if (mem_read(t, t->a[A_OOP_BASE], &t->oop_base, 8) != 0 ||
		    mem_read(t, t->a[A_OOP_SHIFT], &shift, 4) != 0)
			return -1;
		if (shift < 0 || shift > 8)
			return -1; /* not set up yet (some JDKs start from -1) */
		t->oop_shift = (unsigned)shift;
	}
	if (t->narrow_klass) {
		if (mem_read(t, t->a[A_KLASS_BASE], &t->klass_base, 8) != 0 ||
		    mem_read(t, t->a[A_KLASS_SHIFT], &shift, 4) != 0)
			return -1;
		if (shift < 0 || shift > 16)
			return -1;
		t->klass_shift = (unsigned)shift;
	}
	/* the class after the mark word; an array's length in the narrow
	 * class pointer's other half, else after the header */
	t->klass_off = t->narrow_klass ? t->f[F_NARROW_KLASS] : t->f[F_WIDE_KLASS];
	ksize = t->narrow_klass ? 4 : 8;
	t->len_off = t->narrow_klass ? t->klass_off + 4 : t->f[T_OOP];
	if (t->klass_off < 0 || t->len_off < t->klass_off + ksize || t->len_off > 64)
		return -2;
	t->data_off = (t->len_off + 4) % 8 == 0 ? t->len_off + 4 : -1; /* else told by the first name */
	t->thread_klass = mem_u64(t, t->a[A_THREAD_KLASS]);
	t->string_klass = mem_u64(t, t->a[A_STRING_KLASS]);
	if (!t->thread_klass || !t->string_klass)
		return -1; /* not loaded yet */
	if (!klass_is(t, t->thread_klass, "java/lang/Thread") || !klass_is(t, t->string_klass, "java/lang/String"))
		return -1;
	t->name_off = t->value_off = t->coder_off = -1;
	struct field_want thread[] = { { "name", "Ljava/lang/String;", &t->name_off } };
	struct field_want string[] = { { "value", "[B", &t->value_off }, { "coder", "B", &t->coder_off } };
	if (fields_find(t, t->thread_klass, thread, 1) != 0 || fields_find(t, t->string_klass, string, 2) != 0)
		return -1;
	long osz = oop_size(t), low = t->klass_off + ksize;
	if (t->name_off < low || t->value_off < low || t->coder_off < low ||
	    t->name_off + osz - t->klass_off > MAX_SPAN || t->value_off + osz - t->klass_off > MAX_SPAN ||
	    t->coder_off + 1 - t->klass_off > MAX_SPAN)
		return -2;
	return 0;
}

/* ---- the thread list ----------------------------------------------------------- */

static int entry_cmp(const void *a, const void *b)
{
	pid_t x = ((const struct thread_entry *)a)->tid, y = ((const struct thread_entry *)b)->tid;
	return (x > y) - (x < y);
}

/* Where a JavaThread's Thread object's oop is: the oop* its _threadObj
 * handle holds (0: none yet), or on JDK 11 the field itself. */
static uint64_t thread_slot(const struct hotspot_threads *t, uint64_t jt)
{
	if (t->obj_oop)
		return at(jt, t->f[F_THREAD_OBJ]);
	return mem_u64(t, at(at(jt, t->f[F_THREAD_OBJ]), t->f[F_HANDLE_OBJ]));
}

/* One JavaThread's kernel thread id and Thread object slot: 0, or -1. */
static int thread_read(const struct hotspot_threads *t, uint64_t jt, struct thread_entry *e)
{
	long os_off = t->f[F_JT_OSTHREAD] >= 0 ? t->f[F_JT_OSTHREAD] : t->f[F_T_OSTHREAD];
	long slot_off = t->f[F_THREAD_OBJ] + (t->obj_oop ? 0 : t->f[F_HANDLE_OBJ]);
	long lo = os_off < slot_off ? os_off : slot_off, hi = (os_off > slot_off ? os_off : slot_off) + 8;
	unsigned char buf[MAX_SPAN];
	uint64_t os, slot;
	int32_t tid = 0;
	if (!jt || (jt & 7))
		return -1;
	if (hi - lo <= MAX_SPAN) { /* both fields at once */
		if (mem_read(t, jt + (uint64_t)lo, buf, (size_t)(hi - lo)) != 0)
			return -1;
		memcpy(&os, buf + (os_off - lo), 8);
		memcpy(&slot, buf + (slot_off - lo), 8);
		if (t->obj_oop)
			slot = jt + (uint64_t)slot_off;
	} else {
		os = mem_u64(t, jt + (uint64_t)os_off);
		slot = thread_slot(t, jt);
	}
	if (!os || mem_read(t, at(os, t->f[F_OS_TID]), &tid, 4) != 0 || tid <= 0)
		return -1;
	*e = (struct thread_entry){ tid, jt, slot };
	return 0;
}

/* Reads ThreadsList list: 0, or -1 when unreadable. */
static int list_read(struct hotspot_threads *t, uint64_t list)
{
	long hi = t->f[F_LIST_LENGTH] + 4 > t->f[F_LIST_THREADS] + 8 ? t->f[F_LIST_LENGTH] + 4 :
								       t->f[F_LIST_THREADS] + 8;
	unsigned char head[MAX_SPAN];
	uint64_t ptrs[PTR_CHUNK], arr;
	uint32_t length;
	size_t n = 0;
	if (hi > MAX_SPAN || mem_read(t, list, head, (size_t)hi) != 0)
		return -1;
	memcpy(&length, head + t->f[F_LIST_LENGTH], 4);
	memcpy(&arr, head + t->f[F_LIST_THREADS], 8);
	if (length > MAX_THREADS || (length && !arr))
		return -1;
	if (ARRAY_GROW(t->threads, t->cap, length) != 0)
		return -1;
	for (uint32_t i = 0; i < length; i += PTR_CHUNK) {
		uint32_t k = length - i < PTR_CHUNK ? length - i : PTR_CHUNK;
		if (mem_read(t, arr + 8 * (uint64_t)i, ptrs, 8 * (size_t)k) != 0)
			return -1;
		for (uint32_t j = 0; j < k; j++)
			n += thread_read(t, ptrs[j], &t->threads[n]) == 0;
	}
	if (n) /* an empty list (a JVM starting) has no array yet */
		qsort(t->threads, n, sizeof(*t->threads), entry_cmp);
	t->n = n;
	return 0;
}

/* Reads JDK 11's thread list, JavaThreads linked by _next from first:
 * 0, or -1 when unreadable. */
static int linked_read(struct hotspot_threads *t, uint64_t first)
{
	uint64_t jt = first;
	size_t n = 0;
	for (uint32_t i = 0; jt && i < MAX_THREADS; i++) {
		if (ARRAY_GROW(t->threads, t->cap, n + 1) != 0)
			return -1;
		n += thread_read(t, jt, &t->threads[n]) == 0;
		if (remote_mem_read(&t->mem, at(jt, t->f[F_JT_NEXT]), &jt, 8) != 0)
			return -1;
	}
	if (jt) /* longer than any list: not a list */
		return -1;
	if (n)
		qsort(t->threads, n, sizeof(*t->threads), entry_cmp);
	t->n = n;
	return 0;
}

/* The list's identity: the ThreadsList, or JDK 11's first JavaThread and
 * its count of threads (a thread ending mid-list leaves the first as it was). */
static uint64_t list_head(const struct hotspot_threads *t, uint32_t *count)
{
	*count = 0;
	if (!t->linked)
		return mem_u64(t, t->a[A_LIST]);
	if (mem_read(t, t->a[A_NTHREADS], count, 4) != 0)
		return 0;
	return mem_u64(t, t->a[A_LINKED]);
}

/* The thread list as it is now: 0, or -1 when it cannot be read. */
static int list_refresh(struct hotspot_threads *t)
{
	for (int i = 0; i < MAX_LIST_TRIES; i++) {
		uint32_t count, after;
		uint64_t list = list_head(t, &count);
		if (!list)
			break;
		if (list == t->list && count == t->count)
			return 0;
		t->list = 0; /* the entries are being replaced */
		t->n = 0;
		/* a list is freed once replaced: what was read counts only when
		 * it is still the JVM's list after the reading */
		if ((t->linked ? linked_read(t, list) : list_read(t, list)) == 0 && list_head(t, &after) == list &&
		    after == count) {
			t->list = list;
			t->count = count;
			return 0;
		}
	}
	t->list = 0;
	t->n = 0;
	return -1;
}

bool hotspot_threads_moving(const struct hotspot_threads *t)
{
	return t->state == LAYOUT_FOUND && t->zpointers && !hotspot_zgc_usable(t->zgc);
}

unsigned long long hotspot_threads_forwarded(const struct hotspot_threads *t)
{
	return hotspot_zgc_forwarded(t->zgc);
}

unsigned long long hotspot_threads_stale(const struct hotspot_threads *t)
{
	return hotspot_zgc_stale(t->zgc);
}

int hotspot_threads_name(struct hotspot_threads *t, pid_t tid, char *out, size_t len)
{
	struct thread_entry key = { .tid = tid }, *e;
	int rc;
	if (!out || len == 0)
		return -1;
	out[0] = '\0';
	if (t->state == LAYOUT_FIND) {
		/* a JVM starting: searched again once it has started or ended a thread */
		uint32_t count;
		uint64_t list = list_head(t, &count) ^ count;
		if (t->attempts && list == t->tried_list)
			return -1;
		rc = layout_find(t);
		t->tried_list = list;
		if (rc == 0)
			t->state = LAYOUT_FOUND;
		else if (rc == -2 || ++t->attempts >= MAX_ATTEMPTS)
			t->state = LAYOUT_NEVER;
	}
	if (t->state != LAYOUT_FOUND || tid <= 0 || list_refresh(t) != 0 || !t->n ||
	    !(e = bsearch(&key, t->threads, t->n, sizeof(*t->threads), entry_cmp)))
		return -1;
	if (!e->slot) /* a thread attaching: its Thread object comes after it joined the list */
		e->slot = thread_slot(t, e->jt);
	rc = e->slot ? thread_name(t, e->slot, out, len) : -1;
	if (rc < 0)
		out[0] = '\0';
	return rc;
}
