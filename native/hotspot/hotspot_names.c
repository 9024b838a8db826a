/* hotspot_names.c - names of a HotSpot JVM's methods (Method*, nmethods, code
 * blobs) and their line numbers, read from its memory through any reader. */
#include "hotspot_names.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "grow.h"
#include "msg.h"
#include "text_escape.h"
#include "u64_map.h"

#define MAX_NAME	 256  /* code blob and source file names */
#define MAX_CLASS	 2048 /* class names longer than this are cut */
#define MAX_METHOD_NAME	 (MAX_CLASS + 1024)
#define MAX_LINE_TABLE	 65536	       /* bytes of a line number table read at most */
#define MAX_CACHED	 (1u << 18)    /* entries of a name cache before it starts over */
#define CLOSED_KEEP_NS	 5000000000ULL /* closed names serve samples this much older */
#define OPEN		 ((uint64_t)-1)
#define LINE_CACHE	 4096	       /* direct-mapped */
#define INLINE_CACHE	 8192	       /* direct-mapped: (nmethod, pc) -> inline chain */
#define MAX_CHAIN	 8192	       /* bytes of an inline chain's name */
#define BLOB_CACHE_MAX	 (1u << 17)    /* blobs kept at most before the table starts over */
#define BLOB_RECHECK_NS	 1000000000ULL /* a blob's name is read again after this long */
#define BLOB_RENAMES_MAX 64	       /* names found changed before they are read no more */

/* What every JVM's names hold in all (hotspot_names_charged), for the cap. */
static size_t names_all_bytes;

/* A Method*'s name, for samples taken in [from_ns, until_ns) (CLOCK_MONOTONIC):
 * a class's memory may be another class's after it is unloaded, so entries
 * are closed when the JVM reports unloading, and kept a while for the samples
 * taken before it. A Method* may have several, one open: the table keeps
 * them all under the one key (open addressing of their own). */
struct name_entry {
	uint64_t key;	 /* Method* (0: empty) */
	uint32_t cookie; /* ConstMethod* >> 3 it was named from */
	const char *name;
	const char *source; /* "Foo.java", NULL when the class has none */
	uint64_t from_ns, until_ns;
};

struct line_entry {
	uint64_t method;
	uint32_t cookie, gen;
	int32_t bci, line;
};

/* An nmethod's method's name, for the compile id it had (nms, by nm_ids). */
struct nm_entry {
	uint32_t compile_id;
	const char *name;
};

/* A code blob's name, read at checked_ns; raw_hash: of the bytes read, so
 * that a name read again unchanged is not escaped and interned again. */
struct blob_entry {
	uint64_t blob, name_ptr, checked_ns, raw_hash;
	const char *name; /* NULL: unnamed */
};

struct inline_entry {
	uint64_t nmethod, pc;
	uint32_t compile_id, gen;
	bool lines;
	enum hotspot_inline rc;
	const char *name, *line_text;
};

struct hotspot_names {
	struct hotspot_layout l;
	struct remote_mem mem;
	struct str_intern *si;
	struct name_entry *names; /* open addressing, cap a power of two */
	size_t nnames, cap;
	/* nmethod -> the name of its method, for the compile id it had: ids are
	 * never reused, so an entry never goes stale */
	struct nm_entry *nms;
	size_t nnms, nmcap;
	struct u64_map nm_ids; /* nmethod -> nms index */
	/* (Method*, bci) -> source line, for the class unloadings seen so far */
	struct line_entry *lines;
	/* (nmethod, pc) -> its inline chain, for the class unloadings seen so far */
	struct inline_entry *chains;
	struct blob_entry *blobs; /* nblobs of blobcap */
	size_t nblobs, blobcap;
	struct u64_map blob_ids; /* blob -> blobs index */
	uint32_t unload_gen;
	/* the last unloading happened in [window_ns, open_from_ns): samples from
	 * then cannot be told from the classes that replaced the unloaded ones */
	uint64_t window_ns, open_from_ns;
	size_t charged;	  /* bytes its names added to si (counted in names_all_bytes) */
	size_t max_bytes; /* HOTSPOT_NAMES_MAX_BYTES, or a test's */
	bool capped;	  /* a name was refused: the caps were reached */
	unsigned renames; /* blob names found changed when read again */
	bool say;	  /* the caps and renames said once each, as pid's (hotspot_names_say) */
	bool said_renames;
	pid_t pid;
};

/* ---- the names' memory ------------------------------------------------------- */

/* The interned copy of target text s[0..len) (escaped when raw), within the
 * caps: a name this JVM has not had yet is refused (NULL) once its names hold
 * HOTSPOT_NAMES_MAX_BYTES or every JVM's HOTSPOT_NAMES_ALL_MAX_BYTES. */
static const char *names_intern(struct hotspot_names *n, const char *s, size_t len, bool raw)
{
	const char *r = str_intern_find(n->si, s, len);
	if (r)
		return r;
	if (n->charged >= n->max_bytes || names_all_bytes >= HOTSPOT_NAMES_ALL_MAX_BYTES) {
		if (n->say && !n->capped)
			msg_warn("pid %d: the names read from its memory reached their cap (%u MiB for one JVM, %u MiB "
				 "for all): frames with names not seen before are left unnamed\n",
				 (int)n->pid, HOTSPOT_NAMES_MAX_BYTES >> 20, HOTSPOT_NAMES_ALL_MAX_BYTES >> 20);
		n->capped = true;
		return NULL;
	}
	size_t before = str_intern_bytes(n->si);
	r = raw ? text_intern(n->si, s, len) : str_intern_n(n->si, s, len);
	size_t grew = str_intern_bytes(n->si) - before;
	n->charged += grew;
	names_all_bytes += grew;
	return r;
}

void hotspot_names_set_cap(struct hotspot_names *n, size_t bytes)
{
	n->max_bytes = bytes;
}

size_t hotspot_names_charged(const struct hotspot_names *n)
{
	return n->charged;
}

bool hotspot_names_capped(const struct hotspot_names *n)
{
	return n->capped;
}

bool hotspot_names_renamed(const struct hotspot_names *n)
{
	return n->renames >= BLOB_RENAMES_MAX;
}

void hotspot_names_say(struct hotspot_names *n, pid_t pid)
{
	n->say = true;
	n->pid = pid;
}

static uint64_t coarse_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---- memory ---------------------------------------------------------------------- */

/* addr + off for a layout offset; 0 (unreadable) when the field is unknown. */
static uint64_t at(uint64_t addr, long off)
{
	return addr && off >= 0 ? addr + (uint64_t)off : 0;
}

/* ---- caches ---------------------------------------------------------------------- */

static size_t slot_of(uint64_t key, size_t cap)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 32) & (cap - 1);
}

static void table_insert(struct name_entry *t, size_t cap, const struct name_entry *e)
{
	size_t i = slot_of(e->key, cap);
	while (t[i].key)
		i = (i + 1) & (cap - 1);
	t[i] = *e;
}

/* Rebuilds the name table into cap slots without the entries closed before
 * drop_before (0 keeps all). */
static int names_rebuild(struct hotspot_names *n, size_t cap, uint64_t drop_before)
{
	struct name_entry *t = calloc(cap, sizeof(*t));
	if (!t)
		return -1;
	size_t kept = 0;
	for (size_t i = 0; i < n->cap; i++)
		if (n->names[i].key && n->names[i].until_ns >= drop_before) {
			table_insert(t, cap, &n->names[i]);
			kept++;
		}
	free(n->names);
	n->names = t;
	n->cap = cap;
	n->nnames = kept;
	return 0;
}

/* The entry of key for a sample taken at t_ns: the one whose time range holds
 * it, or with until != 0 the one closed at until (OPEN: the open one). */
static struct name_entry *names_find(struct hotspot_names *n, uint64_t key, uint64_t t_ns, uint64_t until)
{
	for (size_t i = slot_of(key, n->cap); n->names[i].key; i = (i + 1) & (n->cap - 1)) {
		struct name_entry *e = &n->names[i];
		if (e->key == key && (until ? e->until_ns == until : e->from_ns <= t_ns && t_ns < e->until_ns))
			return e;
	}
	return NULL;
}

static void names_put(struct hotspot_names *n, uint64_t key, uint32_t cookie, const char *name, const char *source)
{
	if (n->nnames >= MAX_CACHED) { /* a bound for any memory: start over */
		memset(n->names, 0, n->cap * sizeof(*n->names));
		n->nnames = 0;
	}
	if ((n->nnames + 1) * 2 > n->cap && names_rebuild(n, n->cap * 2, 0) != 0)
		return;
	struct name_entry e = { key, cookie, name, source, n->open_from_ns, OPEN };
	table_insert(n->names, n->cap, &e);
	n->nnames++;
}

static const char *nms_find(const struct hotspot_names *n, uint64_t key, uint32_t compile_id)
{
	uint32_t i = u64_map_find(&n->nm_ids, key);
	return i != U64_MAP_NONE && n->nms[i].compile_id == compile_id ? n->nms[i].name : NULL;
}

static void nms_put(struct hotspot_names *n, uint64_t key, uint32_t compile_id, const char *name)
{
	uint32_t i;
	if (n->nnms >= MAX_CACHED) { /* a bound for any memory: start over */
		n->nnms = 0;
		u64_map_clear(&n->nm_ids);
	}
	if (ARRAY_GROW(n->nms, n->nmcap, n->nnms + 1) != 0 ||
	    (i = u64_map_add(&n->nm_ids, key, (uint32_t)n->nnms)) == U64_MAP_NONE)
		return;
	n->nnms += i == n->nnms;
	n->nms[i] = (struct nm_entry){ compile_id, name }; /* a freed nmethod's address reused: replaced */
}

struct hotspot_names *hotspot_names_new(const struct hotspot_layout *l, hotspot_read_fn read, void *ctx,
					struct str_intern *si)
{
	struct hotspot_names *n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->l = *l;
	n->mem = (struct remote_mem){ read, ctx };
	n->si = si;
	n->cap = 1024;
	n->max_bytes = HOTSPOT_NAMES_MAX_BYTES;
	n->names = calloc(n->cap, sizeof(*n->names));
	n->lines = calloc(LINE_CACHE, sizeof(*n->lines));
	n->chains = calloc(INLINE_CACHE, sizeof(*n->chains));
	if (!n->names || !n->lines || !n->chains) {
		hotspot_names_free(n);
		return NULL;
	}
	return n;
}

void hotspot_names_free(struct hotspot_names *n)
{
	if (!n)
		return;
	free(n->names);
	free(n->nms);
	u64_map_free(&n->nm_ids);
	free(n->lines);
	free(n->chains);
	free(n->blobs);
	u64_map_free(&n->blob_ids);
	names_all_bytes -= n->charged < names_all_bytes ? n->charged : names_all_bytes;
	free(n);
}

const struct hotspot_layout *hotspot_names_layout(const struct hotspot_names *n)
{
	return &n->l;
}

bool hotspot_names_inline_supported(const struct hotspot_names *n)
{
	return hotspot_scopes_supported(&n->l.scopes);
}

void hotspot_names_unloaded(struct hotspot_names *n, uint64_t last_seen_ns, uint64_t now_ns)
{
	for (size_t i = 0; i < n->cap; i++)
		if (n->names[i].key && n->names[i].until_ns == OPEN)
			n->names[i].until_ns = last_seen_ns;
	n->window_ns = last_seen_ns;
	n->open_from_ns = now_ns;
	n->unload_gen++; /* cached line numbers may be of replaced classes */
	if (now_ns > CLOSED_KEEP_NS)
		names_rebuild(n, n->cap, now_ns - CLOSED_KEEP_NS);
}

/* ---- names ---------------------------------------------------------------------- */

/* A Symbol's text appended to out[*pos..len) (cut to fit): 0, or -1 when
 * unreadable, empty or not a name (control characters). */
static int symbol_append(const struct hotspot_names *n, uint64_t sym, char *out, size_t len, size_t *pos)
{
	uint16_t length = 0; /* a u2: a symbol is at most 64 KiB */
	char buf[512];
	if (remote_mem_read(&n->mem, at(sym, n->l.symbol_length), &length, 2) != 0 || length == 0)
		return -1;
	for (size_t done = 0; done < length;) {
		size_t chunk = length - done < sizeof(buf) ? length - done : sizeof(buf);
		if (remote_mem_read(&n->mem, at(sym, n->l.symbol_body) + done, buf, chunk) != 0)
			return -1;
		for (size_t i = 0; i < chunk; i++) {
			unsigned char c = (unsigned char)buf[i];
			if (c < 0x20 || c == 0x7f)
				return -1;
			if (*pos + 1 < len)
				out[(*pos)++] = (char)c;
		}
		done += chunk;
	}
	out[*pos] = '\0';
	return 0;
}

/* A constant pool's Symbol* entry (entries follow the ConstantPool, 8 bytes
 * each; a low tag bit in some JDKs). */
static uint64_t pool_symbol(const struct hotspot_names *n, uint64_t cp, uint16_t index)
{
	if (!index || n->l.cp_size <= 0)
		return 0;
	return remote_mem_u64(&n->mem, cp + (uint64_t)n->l.cp_size + 8 * (uint64_t)index) & ~1ULL;
}

/* A hidden class's name "pkg/Foo$$Lambda$14+0x0000000800c01234" (its Symbol)
 * reads "pkg/Foo$$Lambda$14.0x0000000800c01234", as JVMTI (and so the agent)
 * gives it. */
static void hidden_class_dot(char *klass, size_t from, size_t to)
{
	for (size_t i = to; i > from + 2; i--)
		if (klass[i - 2] == '+' && klass[i - 1] == '0' && i < to && klass[i] == 'x') {
			klass[i - 2] = '.';
			return;
		}
}

/* The source file a class's constant pool names (its SourceFile attribute). */
static const char *source_file(struct hotspot_names *n, uint64_t cp)
{
	char file[MAX_NAME];
	uint16_t index = 0;
	size_t pos = 0;
	if (remote_mem_read(&n->mem, at(cp, n->l.cp_source_file), &index, 2) != 0 ||
	    symbol_append(n, pool_symbol(n, cp, index), file, sizeof(file), &pos) != 0)
		return NULL;
	return names_intern(n, file, strlen(file), true);
}

/* "Lpkg/Class;::method" of what the Method holds now, its ConstMethod* in *cm
 * and its constant pool in *cp; NULL when unreadable or cookie differs. */
static const char *method_read(struct hotspot_names *n, uint64_t method, uint32_t cookie, uint64_t *cm, uint64_t *cp)
{
	char name[MAX_METHOD_NAME];
	uint64_t holder;
	uint16_t name_index = 0;
	size_t pos = 0;
	*cm = remote_mem_u64(&n->mem, at(method, n->l.method_const_method));
	if (!*cm || (cookie && (uint32_t)(*cm >> 3) != cookie))
		return NULL;
	*cp = remote_mem_u64(&n->mem, at(*cm, n->l.cm_constants));
	if (!*cp || remote_mem_read(&n->mem, at(*cm, n->l.cm_name_index), &name_index, 2) != 0 || !name_index)
		return NULL;
	holder = remote_mem_u64(&n->mem, at(*cp, n->l.cp_pool_holder));
	name[pos++] = 'L';
	if (symbol_append(n, remote_mem_u64(&n->mem, at(holder, n->l.klass_name)), name, MAX_CLASS, &pos) != 0)
		return NULL;
	hidden_class_dot(name, 1, pos);
	memcpy(name + pos, ";::", 4);
	pos += 3;
	if (symbol_append(n, pool_symbol(n, *cp, name_index), name, sizeof(name), &pos) != 0)
		return NULL;
	return names_intern(n, name, pos, true);
}

const char *hotspot_names_method(struct hotspot_names *n, uint64_t method, uint32_t cookie, uint64_t t_ns)
{
	uint64_t cm, cp;
	if (!method || (method & 7))
		return NULL;
	struct name_entry *e = names_find(n, method, t_ns, 0);
	if (e && (!cookie || e->cookie == cookie))
		return e->name;
	const char *s = method_read(n, method, cookie, &cm, &cp);
	if (!s)
		return NULL;
	if (t_ns >= n->open_from_ns) { /* what memory holds now names samples from then on */
		const char *source = source_file(n, cp);
		e = names_find(n, method, t_ns, OPEN);
		if (e)
			e->cookie = (uint32_t)(cm >> 3), e->name = s, e->source = source;
		else
			names_put(n, method, (uint32_t)(cm >> 3), s, source);
		return s;
	}
	/* a sample from around the last unloading: named only when the method
	 * had this very name before it too (its class may have been replaced) */
	if (t_ns >= n->window_ns) {
		e = names_find(n, method, t_ns, n->window_ns);
		return e && e->name == s ? s : NULL;
	}
	return s; /* older: what memory holds now, uncached */
}

const char *hotspot_names_source(struct hotspot_names *n, uint64_t method, uint32_t cookie, uint64_t t_ns)
{
	if (!hotspot_names_method(n, method, cookie, t_ns))
		return NULL;
	struct name_entry *e = names_find(n, method, t_ns, 0);
	return e && (!cookie || e->cookie == cookie) ? e->source : NULL;
}

const char *hotspot_names_nmethod(struct hotspot_names *n, uint64_t nmethod, uint32_t compile_id, uint64_t t_ns)
{
	int32_t id = 0;
	const char *name;
	if (!nmethod || (nmethod & 7))
		return NULL;
	if ((name = nms_find(n, nmethod, compile_id)) != NULL)
		return name;
	if (remote_mem_read(&n->mem, at(nmethod, n->l.nm_compile_id), &id, 4) != 0 || (uint32_t)id != compile_id)
		return NULL;
	name = hotspot_names_method(n, remote_mem_u64(&n->mem, at(nmethod, n->l.nm_method)), 0, t_ns);
	if (name)
		nms_put(n, nmethod, compile_id, name);
	return name;
}

/* A blob's name read from the target: NULL when unreadable or empty. The name
 * pointer in *ptr, a hash of the bytes read in *hash. */
static const char *blob_read(struct hotspot_names *n, uint64_t blob, uint64_t *ptr, uint64_t *hash,
			     const struct blob_entry *old)
{
	char name[MAX_NAME];
	size_t got = 0;
	uint64_t p = remote_mem_u64(&n->mem, at(blob, n->l.blob_name));
	*ptr = p;
	if (!p)
		return NULL;
	/* a C string: read in pieces that stop at 32-byte boundaries, so one
	 * near the end of a mapping is read too */
	for (;;) {
		size_t chunk = 32 - ((p + got) & 31);
		if (chunk > sizeof(name) - 1 - got)
			chunk = sizeof(name) - 1 - got;
		if (!chunk || remote_mem_read(&n->mem, p + got, name + got, chunk) != 0)
			return NULL;
		if (memchr(name + got, '\0', chunk))
			break;
		got += chunk;
	}
	size_t len = strlen(name);
	if (!len)
		return NULL;
	*hash = str_hash(name, len);
	if (old && old->name && old->name_ptr == p && old->raw_hash == *hash)
		return old->name; /* unchanged: not escaped and interned again */
	return names_intern(n, name, len, true);
}

/* The entry of blob in the blob table (started over past BLOB_CACHE_MAX), or NULL. */
static struct blob_entry *blob_find(struct hotspot_names *n, uint64_t blob)
{
	if (n->nblobs >= BLOB_CACHE_MAX) {
		n->nblobs = 0;
		u64_map_clear(&n->blob_ids);
	}
	uint32_t i = u64_map_find(&n->blob_ids, blob);
	return i == U64_MAP_NONE ? NULL : &n->blobs[i];
}

/* A new entry for blob in the blob table; NULL when out of memory. */
static struct blob_entry *blob_add(struct hotspot_names *n, uint64_t blob)
{
	uint32_t i;
	if (ARRAY_GROW(n->blobs, n->blobcap, n->nblobs + 1) != 0 ||
	    (i = u64_map_add(&n->blob_ids, blob, (uint32_t)n->nblobs)) == U64_MAP_NONE)
		return NULL;
	n->nblobs += i == n->nblobs;
	return &n->blobs[i];
}

const char *hotspot_names_blob(struct hotspot_names *n, uint64_t blob)
{
	uint64_t now = coarse_ns(), ptr = 0, hash = 0;
	if (!blob)
		return NULL;
	struct blob_entry *e = blob_find(n, blob);
	/* stubs keep their names for the JVM's life: a name is read again only
	 * every BLOB_RECHECK_NS (a blob freed and another put at its address
	 * meanwhile keeps the old name that long), and no more once the JVM
	 * has changed BLOB_RENAMES_MAX of them (HotSpot never does: a process
	 * that does so wants every sample to be a new stack) */
	if (e && (now - e->checked_ns < BLOB_RECHECK_NS || n->renames >= BLOB_RENAMES_MAX))
		return e->name;
	const char *name = blob_read(n, blob, &ptr, &hash, e);
	if (!name) {
		/* not read (the read budget, an unmapped name, the caps): not kept,
		 * so that it is read when it can be; the name it had, if any */
		if (e)
			e->checked_ns = now;
		return e ? e->name : NULL;
	}
	n->renames += e && e->name && name != e->name;
	if (n->say && !n->said_renames && hotspot_names_renamed(n)) {
		n->said_renames = true;
		msg_warn("pid %d changes the names of its code blobs (stubs), which HotSpot never does: they keep "
			 "the names they had, and are not read again\n",
			 (int)n->pid);
	}
	if (!e && !(e = blob_add(n, blob)))
		return NULL; /* out of memory: not kept */
	*e = (struct blob_entry){ blob, ptr, now, hash, name };
	return name;
}

/* ---- line numbers ------------------------------------------------------------- */

/* Method::line_number_from_bci over a CompressedLineNumberReadStream: pairs
 * of (bci, line) deltas, a byte (bci << 3 | line) or 0xff and two zigzag
 * UNSIGNED5 numbers, ended by 0; the line of bci itself, else of the highest
 * bci below it. */
static int line_decode(const unsigned char *t, size_t len, int x, int bci)
{
	uint32_t cur_bci = 0, cur_line = 0, best_bci = 0;
	int best = -1;
	for (size_t i = 0; i < len;) {
		unsigned char b = t[i++];
		if (b == 0)
			break;
		if (b == 0xff) {
			uint32_t db, dl;
			if (hotspot_stream_int(t, len, &i, x, &db) != 0 || hotspot_stream_int(t, len, &i, x, &dl) != 0)
				break;
			cur_bci += (db >> 1) ^ -(db & 1);
			cur_line += (dl >> 1) ^ -(dl & 1);
		} else {
			cur_bci += b >> 3;
			cur_line += b & 7;
		}
		if (cur_bci == (uint32_t)bci)
			return (int)cur_line > 0 ? (int)cur_line : -1;
		if (cur_bci < (uint32_t)bci && cur_bci >= best_bci) {
			best_bci = cur_bci;
			best = (int)cur_line;
		}
	}
	return best > 0 ? best : -1;
}

static int method_line(struct hotspot_names *n, uint64_t method, uint32_t cookie, int bci)
{
	unsigned char *t = NULL;
	uint64_t cm;
	uint32_t flags = 0;
	uint16_t code_size = 0;
	int32_t words = 0;
	size_t len = 4096;
	int line = -1;
	if (!method || bci < 0 || n->l.cm_size <= 0 || (n->l.cm_flags_size != 2 && n->l.cm_flags_size != 4))
		return -1;
	cm = remote_mem_u64(&n->mem, at(method, n->l.method_const_method));
	if (!cm || (cookie && (uint32_t)(cm >> 3) != cookie) ||
	    remote_mem_read(&n->mem, at(cm, n->l.cm_flags), &flags, (size_t)n->l.cm_flags_size) != 0 ||
	    remote_mem_read(&n->mem, at(cm, n->l.cm_code_size), &code_size, 2) != 0)
		return -1;
	if (!(flags & 1) || bci >= code_size) /* has_linenumber_table */
		return -1;
	/* the table follows the bytecodes; the ConstMethod's size bounds it */
	uint64_t table = cm + (uint64_t)n->l.cm_size + code_size;
	if (n->l.cm_method_size > 0 && remote_mem_read(&n->mem, at(cm, n->l.cm_method_size), &words, 4) == 0 &&
	    words > 0) {
		uint64_t end = cm + 8 * (uint64_t)words;
		if (end <= table)
			return -1;
		len = end - table < MAX_LINE_TABLE ? (size_t)(end - table) : MAX_LINE_TABLE;
	}
	if (!(t = malloc(len)))
		return -1;
	if (remote_mem_read(&n->mem, table, t, len) != 0) {
		size_t rest = 4096 - (size_t)(table & 4095); /* what there is up to the end of its page */
		if (rest >= len || remote_mem_read(&n->mem, table, t, rest) != 0)
			goto out;
		len = rest;
	}
	line = line_decode(t, len, n->l.jdk >= 20 ? 1 : 0, bci);
out:
	free(t);
	return line;
}

int hotspot_names_line(struct hotspot_names *n, uint64_t method, uint32_t cookie, int bci)
{
	uint64_t key = method ^ ((uint64_t)(uint32_t)bci << 40);
	struct line_entry *e = &n->lines[(size_t)((key * 0x9e3779b97f4a7c15ULL) >> 52) & (LINE_CACHE - 1)];
	if (method && e->method == method && e->bci == bci && e->cookie == cookie && e->gen == n->unload_gen)
		return e->line;
	int line = method_line(n, method, cookie, bci);
	*e = (struct line_entry){ method, cookie, n->unload_gen, bci, line };
	return line;
}

/* ---- inlining ------------------------------------------------------------------ */

/* Appends text[0..len) to out[*pos..cap), NUL-terminated: false when it does not fit. */
static bool chain_add(char *out, size_t cap, size_t *pos, const char *text, size_t len)
{
	if (len >= cap - *pos)
		return false;
	memcpy(out + *pos, text, len);
	*pos += len;
	out[*pos] = '\0';
	return true;
}

/* The chain's name (and lines) from its scopes: HOTSPOT_INLINE_CHAIN, or
 * HOTSPOT_INLINE_BAD when a member has no name. */
static enum hotspot_inline chain_text(struct hotspot_names *n, const struct hotspot_scope *sc, int count, uint64_t t_ns,
				      bool lines, const char **name, const char **line_text)
{
	char text[MAX_CHAIN] = "", where[MAX_CHAIN] = "", num[16];
	size_t pos = 0, wpos = 0;
	for (int i = 0; i < count; i++) {
		const char *m = hotspot_names_method(n, sc[i].method, 0, t_ns);
		if (!m || (i && !chain_add(text, sizeof(text), &pos, "->", 2)) ||
		    !chain_add(text, sizeof(text), &pos, m, strlen(m)))
			return HOTSPOT_INLINE_BAD;
		if (!lines)
			continue;
		const char *file = hotspot_names_source(n, sc[i].method, 0, t_ns);
		int line = hotspot_names_line(n, sc[i].method, 0, sc[i].bci < 0 ? 0 : sc[i].bci);
		int w = snprintf(num, sizeof(num), ":%d", line > 0 ? line : 0);
		if ((i && !chain_add(where, sizeof(where), &wpos, "\n", 1)) ||
		    (file && !chain_add(where, sizeof(where), &wpos, file, strlen(file))) ||
		    !chain_add(where, sizeof(where), &wpos, num, (size_t)w))
			return HOTSPOT_INLINE_BAD;
	}
	/* the members' names and files are target text escaped already (text_intern): joined as they are */
	*name = names_intern(n, text, pos, false);
	*line_text = lines ? names_intern(n, where, wpos, false) : NULL;
	return *name && (!lines || *line_text) ? HOTSPOT_INLINE_CHAIN : HOTSPOT_INLINE_BAD;
}

enum hotspot_inline hotspot_names_inline(struct hotspot_names *n, uint64_t nmethod, uint32_t compile_id, uint64_t pc,
					 uint64_t t_ns, bool lines, const char **name, const char **line_text)
{
	struct hotspot_scope sc[HOTSPOT_SCOPES_MAX];
	uint64_t key = nmethod ^ (pc * 0x9e3779b97f4a7c15ULL);
	struct inline_entry *e = &n->chains[(size_t)((key * 0x9e3779b97f4a7c15ULL) >> 51) & (INLINE_CACHE - 1)];
	enum hotspot_inline rc;
	*name = *line_text = NULL;
	if (!nmethod || (nmethod & 7))
		return HOTSPOT_INLINE_GONE;
	if (e->nmethod == nmethod && e->pc == pc && e->compile_id == compile_id && e->gen == n->unload_gen &&
	    e->lines == lines && t_ns >= n->open_from_ns) {
		*name = e->name;
		*line_text = e->line_text;
		return e->rc;
	}
	int count = hotspot_scopes_at(&n->l.scopes, &n->mem, nmethod, compile_id, pc, sc, HOTSPOT_SCOPES_MAX);
	if (count == HOTSPOT_SCOPES_GONE)
		return HOTSPOT_INLINE_GONE;
	rc = count >= 1			 ? chain_text(n, sc, count, t_ns, lines, name, line_text) :
	     count == HOTSPOT_SCOPES_BAD ? HOTSPOT_INLINE_BAD :
					   HOTSPOT_INLINE_NONE;
	if (rc != HOTSPOT_INLINE_CHAIN) { /* the compiled method alone */
		*name = hotspot_names_nmethod(n, nmethod, compile_id, t_ns);
		*line_text = NULL;
		if (!*name)
			return HOTSPOT_INLINE_GONE;
	}
	if (t_ns >= n->open_from_ns) /* names of what memory holds now: cached */
		*e = (struct inline_entry){ nmethod, pc, compile_id, n->unload_gen, lines, rc, *name, *line_text };
	return rc;
}
