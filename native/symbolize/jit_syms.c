/* jit_syms.c - a growing, time-stamped table of JIT code ranges: appended from
 * the agent's events log, indexed by start address, looked up by (address, time). */
#include "jit_syms.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grow.h"
#include "target_file.h"
#include "text_escape.h"
#include "u64_map.h"

struct jit_entry {
	uint64_t start, end, load_ns, unload_ns; /* unload_ns 0: still loaded */
	const char *name;
};

/* An unload waiting for the next reindex: it ends the entries inside
 * [start, end) that came before it in the file (index < nbefore). */
struct jit_unload {
	uint64_t start, end, ts;
	size_t nbefore;
};

/* No code blob is this large: a line claiming more is garbage. */
#define MAX_CODE_SIZE (256ULL << 20)
#define HEAD_LEN      256

struct thread_name {
	pid_t tid;
	const char *name;
};

struct jit_syms {
	char path[512];
	bool has_times;
	FILE *f;
	uint64_t offset;
	struct str_intern *si;
	struct jit_entry *e;
	size_t n, cap;
	uint32_t *idx; /* entries sorted by (start, order) */
	size_t nidx, idx_cap;
	bool dirty;
	uint64_t max_size;
	struct thread_name *threads; /* in the order first named */
	size_t nthreads, threads_cap;
	struct u64_map thread_ids; /* tid -> threads index */
	struct jit_unload *unloads;
	size_t nunloads, unloadcap;
	char head[HEAD_LEN]; /* the file's first bytes: a rewrite changes them */
	size_t headlen;
	char *line;		   /* JIT_SYMS_MAX_LINE + 2 bytes */
	time_t mtime;		   /* when opened */
	uint64_t changes;	   /* reset, unload, or (without times) any load: see jit_syms_changes */
	struct timespec seen_mtim; /* the file's mtime when it was last read to its end; 0 unknown */
	bool over;		   /* grown past the cap: no longer read */
};

struct jit_syms *jit_syms_open(const char *events_path, const char *map_path, struct str_intern *si)
{
	struct jit_syms *js;
	const char *path = NULL;
	bool times = false;
	struct stat st;
	FILE *f = NULL;

	/* files of the target's: through the one opener (no FIFO, link or foreign file) */
	if (events_path && (f = target_file_fopen(events_path, 0, JIT_SYMS_MAX_FILE, &st, NULL))) {
		path = events_path;
		times = true;
	} else if (map_path && (f = target_file_fopen(map_path, 0, JIT_SYMS_MAX_FILE, &st, NULL))) {
		path = map_path;
	}
	if (!f)
		return NULL;
	js = calloc(1, sizeof(*js));
	if (!js) {
		fclose(f);
		return NULL;
	}
	snprintf(js->path, sizeof(js->path), "%s", path);
	js->has_times = times;
	js->si = si;
	js->f = f;
	js->mtime = st.st_mtime;
	return js;
}

time_t jit_syms_mtime(const struct jit_syms *js)
{
	return js ? js->mtime : 0;
}

void jit_syms_free(struct jit_syms *js)
{
	if (!js)
		return;
	if (js->f)
		fclose(js->f);
	free(js->e);
	free(js->idx);
	free(js->threads);
	u64_map_free(&js->thread_ids);
	free(js->unloads);
	free(js->line);
	free(js);
}

static void reset(struct jit_syms *js)
{
	js->changes++;
	js->n = js->nidx = js->nthreads = js->nunloads = js->headlen = 0;
	js->max_size = 0;
	js->offset = 0;
	js->dirty = false;
	u64_map_clear(&js->thread_ids);
}

static int add_entry(struct jit_syms *js, uint64_t start, uint64_t size, uint64_t ts, const char *name)
{
	if (size == 0 || size > MAX_CODE_SIZE || start + size < start)
		return 0;
	if (!js->has_times)
		js->changes++; /* a plain map's later line wins over an earlier one at the same address */
	if (ARRAY_GROW(js->e, js->cap, js->n + 1) != 0)
		return -1;
	const char *nm = text_intern(js->si, name, strlen(name)); /* the target's text, escaped once */
	if (!nm)
		return -1;
	js->e[js->n++] = (struct jit_entry){ start, start + size, ts, 0, nm };
	if (size > js->max_size)
		js->max_size = size;
	js->dirty = true;
	return 0;
}

static const struct jit_syms *sort_ctx;

static int cmp_idx(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct jit_entry *ex = &sort_ctx->e[x], *ey = &sort_ctx->e[y];
	if (ex->start != ey->start)
		return ex->start < ey->start ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Index of the first sorted entry with start > addr. */
static size_t upper(const struct jit_syms *js, uint64_t addr)
{
	size_t lo = 0, hi = js->nidx;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (js->e[js->idx[mid]].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void apply_unload(struct jit_syms *js, const struct jit_unload *u)
{
	size_t i = upper(js, u->start);
	while (i > 0 && js->e[js->idx[i - 1]].start >= u->start)
		i--;
	for (; i < js->nidx; i++) {
		struct jit_entry *e = &js->e[js->idx[i]];
		if (e->start >= u->end)
			break;
		if (e->unload_ns == 0 && (size_t)js->idx[i] < u->nbefore)
			e->unload_ns = u->ts ? u->ts : 1;
	}
}

/* Sorts new entries in and applies the unloads read since. */
static int reindex(struct jit_syms *js)
{
	if (js->dirty) {
		if (ARRAY_GROW(js->idx, js->idx_cap, js->n ? js->n : 1) != 0)
			return -1;
		for (size_t i = 0; i < js->n; i++)
			js->idx[i] = (uint32_t)i;
		sort_ctx = js;
		qsort(js->idx, js->n, sizeof(*js->idx), cmp_idx);
		js->nidx = js->n;
		js->dirty = false;
	}
	for (size_t i = 0; i < js->nunloads; i++)
		apply_unload(js, &js->unloads[i]);
	js->nunloads = 0;
	return 0;
}

static void unload(struct jit_syms *js, uint64_t start, uint64_t size, uint64_t ts)
{
	js->changes++;
	if (ARRAY_GROW(js->unloads, js->unloadcap, js->nunloads + 1) != 0)
		return;
	js->unloads[js->nunloads++] = (struct jit_unload){ start, size ? start + size : start + 1, ts, js->n };
}

static void set_thread(struct jit_syms *js, pid_t tid, const char *name)
{
	uint32_t i;
	if (ARRAY_GROW(js->threads, js->threads_cap, js->nthreads + 1) != 0 ||
	    (i = u64_map_add(&js->thread_ids, (uint32_t)tid, (uint32_t)js->nthreads)) == U64_MAP_NONE)
		return;
	if (i == js->nthreads)
		js->threads[js->nthreads++].tid = tid;
	js->threads[i].name = text_intern(js->si, name, strlen(name));
}

const char *jit_syms_thread_name(const struct jit_syms *js, pid_t tid)
{
	uint32_t i = js ? u64_map_find(&js->thread_ids, (uint32_t)tid) : U64_MAP_NONE;
	return i == U64_MAP_NONE ? NULL : js->threads[i].name;
}

/* One events line: "<ns> load <start> <size> <name>" etc.; or one map line. */
static void parse_line(struct jit_syms *js, char *line)
{
	uint64_t ts = 0, start, size;
	int n = 0;
	char *p = line;

	if (!*line || *line == '#')
		return;
	if (js->has_times) {
		char kind[16];
		if (sscanf(p, "%" SCNu64 " %15s %n", &ts, kind, &n) < 2)
			return;
		p += n;
		if (strcmp(kind, "load") != 0) {
			if (strcmp(kind, "unload") == 0 && sscanf(p, "%" SCNx64 " %" SCNx64, &start, &size) == 2) {
				unload(js, start, size, ts);
			} else if (strcmp(kind, "thread") == 0) {
				long tid = strtol(p, &p, 10);
				if (*p == ' ' && tid > 0) {
					text_unescape(++p);
					set_thread(js, (pid_t)tid, p);
				}
			}
			return;
		}
	}
	if (sscanf(p, "%" SCNx64 " %" SCNx64 " %n", &start, &size, &n) < 2 || n == 0)
		return;
	add_entry(js, start, size, ts, p + n);
}

/* Whether the file still starts as it did when we read it first. */
static bool same_head(struct jit_syms *js)
{
	char now[HEAD_LEN];
	if (js->headlen == 0)
		return true;
	ssize_t n = pread(fileno(js->f), now, js->headlen, 0);
	return n == (ssize_t)js->headlen && memcmp(now, js->head, js->headlen) == 0;
}

/* The file, as fstat saw it, has been read to its end. Its mtime is kept only
 * once it is old enough that any later write gives a new one (file systems
 * stamp with a coarse clock: a rewrite within the same tick, to the same
 * size, would look unchanged). */
static void note_read_to_end(struct jit_syms *js, const struct stat *st)
{
	struct timespec now;
	js->seen_mtim = (struct timespec){ 0, 0 };
	if (clock_gettime(CLOCK_REALTIME, &now) != 0)
		return;
	int64_t age_ns =
		((int64_t)now.tv_sec - (int64_t)st->st_mtim.tv_sec) * 1000000000 + now.tv_nsec - st->st_mtim.tv_nsec;
	if (age_ns > 50000000)
		js->seen_mtim = st->st_mtim;
}

int jit_syms_update(struct jit_syms *js)
{
	struct stat st;
	char why[160];
	int lines = 0;

	if (!js || js->over || fstat(fileno(js->f), &st) != 0)
		return -1;
	/* not written since it was last read to its end: nothing to do (the
	 * agent's files are looked at every 100 ms) */
	if ((uint64_t)st.st_size == js->offset && js->seen_mtim.tv_sec && st.st_mtim.tv_sec == js->seen_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == js->seen_mtim.tv_nsec)
		return 0;
	if (target_file_recheck(fileno(js->f), JIT_SYMS_MAX_FILE, why, sizeof(why)) != 0) {
		target_file_warn(js->path, why);
		js->over = true;
		return -1;
	}
	if ((uint64_t)st.st_size < js->offset || !same_head(js))
		reset(js); /* rewritten: a new JVM with this pid, or a new agent */
	if ((uint64_t)st.st_size == js->offset) {
		note_read_to_end(js, &st);
		return 0;
	}
	if (!js->line && !(js->line = malloc(JIT_SYMS_MAX_LINE + 2)))
		return -1;
	if (fseeko(js->f, (off_t)js->offset, SEEK_SET) != 0)
		return -1;
	/* lines of at most JIT_SYMS_MAX_LINE bytes: a longer one is garbage and
	 * skipped, so no line of the target's makes jflame's memory grow */
	bool skipping = false;
	uint64_t at = js->offset;
	while (fgets(js->line, JIT_SYMS_MAX_LINE + 2, js->f)) {
		off_t pos = ftello(js->f);
		if (pos < 0 || (uint64_t)pos <= at)
			break;
		size_t len = (size_t)((uint64_t)pos - at); /* NULs included: garbage, but read past */
		at = (uint64_t)pos;
		bool whole = js->line[len - 1] == '\n';
		if (!whole && len == JIT_SYMS_MAX_LINE + 1) {
			js->offset = at; /* over the limit: dropped up to its newline */
			skipping = true;
			continue;
		}
		if (!whole)
			break; /* being written: read it whole next time */
		js->offset = at;
		if (skipping) {
			skipping = false;
			continue;
		}
		js->line[len - 1] = '\0';
		parse_line(js, js->line);
		lines++;
	}
	clearerr(js->f);
	if (js->headlen == 0 && js->offset > 0) {
		size_t want = js->offset < HEAD_LEN ? (size_t)js->offset : HEAD_LEN;
		ssize_t n = pread(fileno(js->f), js->head, want, 0);
		js->headlen = n > 0 ? (size_t)n : 0;
	}
	if (js->offset == (uint64_t)st.st_size)
		note_read_to_end(js, &st);
	return lines;
}

const char *jit_syms_lookup(struct jit_syms *js, uint64_t addr, uint64_t t_ns, uint64_t *off)
{
	const struct jit_entry *alive = NULL, *later = NULL;

	if (!js || reindex(js) != 0)
		return NULL;
	for (size_t i = upper(js, addr); i > 0; i--) {
		const struct jit_entry *e = &js->e[js->idx[i - 1]];
		if (addr - e->start >= js->max_size)
			break;
		if (addr >= e->end)
			continue;
		/* among the entries alive at t, the latest load wins, then the later line */
		if (!js->has_times || (e->load_ns <= t_ns && (e->unload_ns == 0 || e->unload_ns > t_ns))) {
			if (!alive || e->load_ns > alive->load_ns || (e->load_ns == alive->load_ns && e > alive))
				alive = e;
		} else if (e->load_ns > t_ns && (!later || e->load_ns < later->load_ns)) {
			later = e;
		}
	}
	const struct jit_entry *best = alive ? alive : later;
	if (!best)
		return NULL;
	if (off)
		*off = addr - best->start;
	return best->name;
}

uint64_t jit_syms_changes(const struct jit_syms *js)
{
	return js ? js->changes : 0;
}

int jit_syms_has_times(const struct jit_syms *js)
{
	return js && js->has_times;
}

size_t jit_syms_count(const struct jit_syms *js)
{
	return js ? js->n : 0;
}

const char *jit_syms_path(const struct jit_syms *js)
{
	return js ? js->path : "";
}
