/* agent.c - libjflame-agent.so: the JVMTI agent. Writes /tmp/perf-<pid>.map for JIT
 * and VM-generated code, a timestamped events log, and a status file (docs/agent.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <jvmti.h>
#include <jvmticmlr.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "agent_alloc.h"
#include "agent_lock.h"
#include "agent_options.h"
#include "agent_sampler.h"
#include "agent_status.h"
#include "code_table.h"
#include "deadline.h"
#include "inline_ranges.h"
#include "java_names.h"
#include "prologue_check.h"
#include "tmp_file.h"
#include "vm_structs.h"

#ifndef JFLAME_VERSION
#define JFLAME_VERSION "0.0.0"
#endif
#define NAME_MAX_LEN 4096
#define ERR_LEN	     512
#define FLUSH_MS     100
/* Every prologue of the first PROLOGUE_ALL compiled methods is checked, then
 * one in PROLOGUE_EVERY: capstone costs ~2.5 us a method. */
#define PROLOGUE_ALL   128
#define PROLOGUE_EVERY 32

struct sbuf {
	char *p;
	size_t len, cap;
	bool oom;
};

static struct agent {
	jvmtiEnv *jvmti;
	JavaVM *vm;
	struct agent_options opts;
	char opts_text[128], jvm[128], mode[8];
	const char *state;
	char map_path[64], events_path[64], status_path[64];
	int map_fd, events_fd;
	pid_t pid;
	uint64_t process_start, started_ns;
	bool loaded, status_thread_started, status_dirty, stopping;
	atomic_bool stood_down; /* read without the lock by every callback */
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t status_thread;
	struct prologue_checker *prologue;
	struct code_table code;
	struct sbuf map_out, events_out; /* lines not yet written */
	int pfp;
	int dns; /* DebugNonSafepoints: 1 on, 0 off, -1 unknown */
	uint64_t prologues_fp, prologues_no_fp, prologues_unknown, prologues_skipped;
	uint64_t compiled_loads, compiled_unloads, dynamic_code, map_lines, map_bytes;
	uint64_t threads_unnamed, write_errors;
	struct agent_thread *threads;
	size_t nthreads, threads_cap;
	char error[ERR_LEN];
} g = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.map_fd = -1,
	.events_fd = -1,
	.pfp = -1,
	.dns = -1,
	.state = "starting",
};

static const jvmtiEvent all_events[] = {
	JVMTI_EVENT_VM_INIT,
	JVMTI_EVENT_VM_DEATH,
	JVMTI_EVENT_COMPILED_METHOD_LOAD,
	JVMTI_EVENT_COMPILED_METHOD_UNLOAD,
	JVMTI_EVENT_DYNAMIC_CODE_GENERATED,
	JVMTI_EVENT_THREAD_START,
	JVMTI_EVENT_THREAD_END,
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void agent_log(const char *fmt, ...)
{
	char line[ERR_LEN + 64];
	va_list ap;
	int n = snprintf(line, sizeof(line), "jflame-agent: ");
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	strcat(line, "\n");
	/* one write: the line reaches stderr whole even with other threads logging */
	if (write(STDERR_FILENO, line, strlen(line)) < 0)
		return;
}

static void info(const char *fmt, ...)
{
	char msg[ERR_LEN];
	va_list ap;
	if (g.opts.quiet)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	agent_log("%s", msg);
}

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n + 1)
			cap *= 2;
		char *p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	char tmp[96];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		sb_add(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* ---- status ------------------------------------------------------------ */

static uint64_t read_process_start(void)
{
	char buf[1024];
	FILE *f = fopen("/proc/self/stat", "re");
	uint64_t start = 0;
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	/* fields after the command: state is field 3, starttime field 22 */
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		start = strtoull(p + 1, NULL, 10);
	return start;
}

/* Renders the status under the lock; the caller writes it. */
static char *render_status_locked(size_t *len)
{
	struct agent_status st = {
		.version = JFLAME_VERSION,
		.mode = g.mode,
		.state = g.state,
		.options = g.opts_text,
		.jvm = g.jvm,
		.map_path = g.map_path,
		.events_path = g.events_path,
		.samples_path = agent_sampler_path(),
		.pid = g.pid,
		.process_start = g.process_start,
		.started_ns = g.started_ns,
		.updated_ns = now_ns(),
		.preserve_frame_pointer = g.pfp,
		.debug_non_safepoints = g.dns,
		.lock_events = agent_lock_events_state(),
		.park_hook = agent_lock_park_state(),
		.prologues_fp = g.prologues_fp,
		.prologues_no_fp = g.prologues_no_fp,
		.prologues_unknown = g.prologues_unknown,
		.prologues_skipped = g.prologues_skipped,
		.compiled_loads = g.compiled_loads,
		.compiled_unloads = g.compiled_unloads,
		.dynamic_code = g.dynamic_code,
		.map_lines = g.map_lines,
		.map_bytes = g.map_bytes,
		.threads_unnamed = g.threads_unnamed,
		.write_errors = g.write_errors,
		.threads = g.threads,
		.nthreads = g.nthreads,
		.error = g.error,
	};
	size_t need = agent_status_render(&st, NULL, 0) + 1;
	char *buf = malloc(need);
	if (buf)
		*len = agent_status_render(&st, buf, need);
	g.status_dirty = false;
	return buf;
}

static void write_status(void)
{
	char err[ERR_LEN];
	size_t len = 0;
	pthread_mutex_lock(&g.lock);
	char *text = render_status_locked(&len);
	pthread_mutex_unlock(&g.lock);
	if (text && tmp_file_replace(g.status_path, text, len, err, sizeof(err)) != 0) {
		static bool told;
		if (!told)
			agent_log("%s", err);
		told = true;
	}
	free(text);
}

/* For the samples (agent_host): the status file's error, and that it changed. */
static void status_error(const char *fmt, ...)
{
	va_list ap;
	pthread_mutex_lock(&g.lock);
	va_start(ap, fmt);
	vsnprintf(g.error, sizeof(g.error), fmt, ap);
	va_end(ap);
	g.status_dirty = true;
	pthread_mutex_unlock(&g.lock);
}

static void status_changed(void)
{
	pthread_mutex_lock(&g.lock);
	g.status_dirty = true;
	pthread_mutex_unlock(&g.lock);
}

static void flush_locked(void);

/* Flushes gathered lines every FLUSH_MS; rewrites the status once a second
 * when something changed. */
static void *status_loop(void *arg)
{
	uint64_t last_status = now_ns();
	(void)arg;
	pthread_mutex_lock(&g.lock);
	while (!g.stopping) {
		struct timespec ts = deadline_after_ms(FLUSH_MS);
		pthread_cond_timedwait(&g.wake, &g.lock, &ts);
		if (g.stopping)
			break;
		flush_locked();
		if (g.status_dirty && now_ns() - last_status >= 1000000000ULL) {
			pthread_mutex_unlock(&g.lock);
			write_status();
			last_status = now_ns();
			pthread_mutex_lock(&g.lock);
		}
	}
	pthread_mutex_unlock(&g.lock);
	return NULL;
}

static int start_status_thread(void)
{
	pthread_condattr_t attr;
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&g.wake, &attr);
	pthread_condattr_destroy(&attr);
	if (pthread_create(&g.status_thread, NULL, status_loop, NULL) != 0)
		return -1;
	pthread_setname_np(g.status_thread, "jflame-status");
	g.status_thread_started = true;
	return 0;
}

static void stop_status_thread(void)
{
	if (!g.status_thread_started)
		return;
	pthread_mutex_lock(&g.lock);
	g.stopping = true;
	pthread_cond_signal(&g.wake);
	pthread_mutex_unlock(&g.lock);
	pthread_join(g.status_thread, NULL);
	g.status_thread_started = false;
}

/* ---- standing down ----------------------------------------------------- */

static void disable_events(void)
{
	for (size_t i = 0; i < sizeof(all_events) / sizeof(all_events[0]); i++)
		(*g.jvmti)->SetEventNotificationMode(g.jvmti, JVMTI_DISABLE, all_events[i], NULL);
}

/* Logs why, stops all callbacks; the JVM runs on without jflame. */
static void stand_down(const char *fmt, ...)
{
	char msg[ERR_LEN];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	pthread_mutex_lock(&g.lock);
	bool first = !g.stood_down;
	g.stood_down = true;
	g.state = "stood_down";
	flush_locked();
	snprintf(g.error, sizeof(g.error), "%s", msg);
	g.status_dirty = true;
	pthread_mutex_unlock(&g.lock);
	if (!first)
		return;
	agent_log("%s; standing down, the JVM continues without jflame", msg);
	if (g.jvmti)
		disable_events();
	agent_sampler_off(g.jvmti);
	agent_sampler_stop(0);
	write_status();
}

/* ---- writing map and events lines ------------------------------------- */

/* Output is gathered in memory and written in whole lines: when FLUSH_BYTES
 * have gathered, every FLUSH_MS by the status thread, on attach and at exit.
 * One write(2) per callback would cost more than everything else we do. */
#define FLUSH_BYTES (64 * 1024)

static void write_failed_locked(const char *path)
{
	g.write_errors++;
	if (g.write_errors == 1) {
		snprintf(g.error, sizeof(g.error), "failed to write %s: %s", path, strerror(errno));
		agent_log("%s", g.error);
	}
}

static void flush_locked(void)
{
	if (g.map_fd >= 0 && g.map_out.len && tmp_file_write_all(g.map_fd, g.map_out.p, g.map_out.len) != 0)
		write_failed_locked(g.map_path);
	if (g.events_fd >= 0 && g.events_out.len &&
	    tmp_file_write_all(g.events_fd, g.events_out.p, g.events_out.len) != 0)
		write_failed_locked(g.events_path);
	if (g.map_out.oom || g.events_out.oom)
		g.write_errors++;
	g.map_out.len = g.events_out.len = 0;
	g.map_out.oom = g.events_out.oom = false;
}

static void flush(void)
{
	pthread_mutex_lock(&g.lock);
	flush_locked();
	pthread_mutex_unlock(&g.lock);
}

static void maybe_flush_locked(void)
{
	if (g.map_out.len + g.events_out.len >= FLUSH_BYTES)
		flush_locked();
}

/* Adds map lines and, for each, its events line "<ns> load <map line>". */
static void emit_code(const struct sbuf *map, uint64_t nlines)
{
	if (map->oom)
		return;
	pthread_mutex_lock(&g.lock);
	if (!g.stood_down) {
		uint64_t ts = now_ns();
		const char *p = map->p, *end = map->p + map->len;
		sb_add(&g.map_out, map->p, map->len);
		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
			sb_printf(&g.events_out, "%" PRIu64 " load ", ts);
			sb_add(&g.events_out, p, n);
			p += n;
		}
		g.map_lines += nlines;
		g.map_bytes += map->len;
		g.status_dirty = true;
		maybe_flush_locked();
	}
	pthread_mutex_unlock(&g.lock);
}

/* ---- naming methods ----------------------------------------------------- */

static int first_line(jvmtiEnv *jvmti, jmethodID m)
{
	jint count = 0;
	jvmtiLineNumberEntry *table = NULL;
	int line = -1;
	if ((*jvmti)->GetLineNumberTable(jvmti, m, &count, &table) != JVMTI_ERROR_NONE)
		return -1;
	for (jint i = 0; i < count; i++)
		if (line < 0 || table[i].line_number < line)
			line = table[i].line_number;
	(*jvmti)->Deallocate(jvmti, (unsigned char *)table);
	return line;
}

static void method_name(jvmtiEnv *jvmti, jmethodID m, char *out, size_t len)
{
	char *name = NULL, *sig = NULL, *csig = NULL, *src = NULL;
	jclass cls = NULL;
	struct java_method_desc d = { .line = -1 };

	if ((*jvmti)->GetMethodName(jvmti, m, &name, &sig, NULL) == JVMTI_ERROR_NONE) {
		d.name = name;
		d.sig = sig;
	}
	if ((*jvmti)->GetMethodDeclaringClass(jvmti, m, &cls) == JVMTI_ERROR_NONE &&
	    (*jvmti)->GetClassSignature(jvmti, cls, &csig, NULL) == JVMTI_ERROR_NONE)
		d.class_sig = csig;
	if (g.opts.sourcepos && cls) {
		if ((*jvmti)->GetSourceFileName(jvmti, cls, &src) == JVMTI_ERROR_NONE)
			d.source_file = src;
		d.line = first_line(jvmti, m);
	}
	java_name_append(out, len, 0, &d, &g.opts);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)name);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)csig);
	(*jvmti)->Deallocate(jvmti, (unsigned char *)src);
}

/* Names of the methods in one compiled method's inline records, looked up once. */
struct name_cache {
	jmethodID ids[64];
	char *names[64];
	int n;
};

static const char *cached_name(jvmtiEnv *jvmti, struct name_cache *c, jmethodID m, char *scratch)
{
	for (int i = 0; i < c->n; i++)
		if (c->ids[i] == m)
			return c->names[i];
	method_name(jvmti, m, scratch, NAME_MAX_LEN);
	if (c->n < 64) {
		char *copy = strdup(scratch);
		if (copy) {
			c->ids[c->n] = m;
			c->names[c->n++] = copy;
			return copy;
		}
	}
	return scratch;
}

static const jvmtiCompiledMethodLoadInlineRecord *inline_record(const void *compile_info)
{
	for (const jvmtiCompiledMethodLoadRecordHeader *h = compile_info; h; h = h->next)
		if (h->kind == JVMTI_CMLR_INLINE_INFO)
			return (const jvmtiCompiledMethodLoadInlineRecord *)h;
	return NULL;
}

/* unfold: one line per range of the code owned by one inline chain. */
static uint64_t unfold_lines(jvmtiEnv *jvmti, jmethodID method, uint64_t start, uint64_t end,
			     const jvmtiCompiledMethodLoadInlineRecord *rec, const char *root_name, struct sbuf *map)
{
	const void *root = (const void *)method;
	struct inline_pc *pcs = calloc((size_t)rec->numpcs, sizeof(*pcs));
	struct inline_range *ranges = calloc((size_t)rec->numpcs + 1, sizeof(*ranges));
	struct name_cache cache = { .n = 0 };
	char *scratch = malloc(NAME_MAX_LEN);
	uint64_t lines = 0;

	if (!pcs || !ranges || !scratch)
		goto out;
	for (jint i = 0; i < rec->numpcs; i++) {
		const PCStackInfo *pi = &rec->pcinfo[i];
		pcs[i] = (struct inline_pc){ (uint64_t)(uintptr_t)pi->pc, pi->numstackframes,
					     (const void *const *)pi->methods };
	}
	size_t n = inline_ranges_build(start, end, &root, pcs, (size_t)rec->numpcs, ranges, (size_t)rec->numpcs + 1);
	if (n > (size_t)rec->numpcs + 1)
		n = (size_t)rec->numpcs + 1;
	for (size_t i = 0; i < n; i++) {
		const struct inline_range *r = &ranges[i];
		sb_printf(map, "%" PRIx64 " %" PRIx64 " ", r->start, r->end - r->start);
		if (r->depth <= 1) {
			sb_add(map, root_name, strlen(root_name));
		} else {
			for (int d = r->depth - 1; d >= 0; d--) {
				const char *nm = cached_name(jvmti, &cache, (jmethodID)r->methods[d], scratch);
				sb_add(map, nm, strlen(nm));
				if (d > 0)
					sb_add(map, "->", 2);
			}
		}
		sb_add(map, "\n", 1);
		lines++;
	}
out:
	for (int i = 0; i < cache.n; i++)
		free(cache.names[i]);
	free(scratch);
	free(ranges);
	free(pcs);
	return lines;
}

/* ---- JVMTI callbacks -------------------------------------------------- */

static void JNICALL on_compiled_method_load(jvmtiEnv *jvmti, jmethodID method, jint code_size, const void *code_addr,
					    jint map_length, const jvmtiAddrLocationMap *map, const void *compile_info)
{
	char *name = malloc(NAME_MAX_LEN);
	struct sbuf lines = { 0 };
	uint64_t start = (uint64_t)(uintptr_t)code_addr, nlines = 0;
	jboolean is_native = JNI_FALSE;
	(void)map_length;
	(void)map;

	if (g.stood_down || !name || code_size <= 0)
		goto out;
	method_name(jvmti, method, name, NAME_MAX_LEN);
	const jvmtiCompiledMethodLoadInlineRecord *rec = g.opts.unfold ? inline_record(compile_info) : NULL;
	if (rec && rec->numpcs > 0)
		nlines = unfold_lines(jvmti, method, start, start + (uint64_t)code_size, rec, name, &lines);
	if (nlines == 0) {
		sb_printf(&lines, "%" PRIx64 " %x ", start, (unsigned)code_size);
		sb_add(&lines, name, strlen(name));
		sb_add(&lines, "\n", 1);
		nlines = 1;
	}
	(*jvmti)->IsMethodNative(jvmti, method, &is_native);

	pthread_mutex_lock(&g.lock);
	g.compiled_loads++;
	if (code_table_put(&g.code, start, (uint64_t)code_size) != 0)
		g.write_errors++;
	if (!is_native && g.compiled_loads > PROLOGUE_ALL && g.compiled_loads % PROLOGUE_EVERY != 0) {
		g.prologues_skipped++;
	} else if (!is_native) {
		switch (prologue_check(g.prologue, code_addr, (size_t)code_size, start)) {
		case PROLOGUE_FRAME_POINTER:
			g.prologues_fp++;
			break;
		case PROLOGUE_NO_FRAME_POINTER:
			g.prologues_no_fp++;
			break;
		default:
			g.prologues_unknown++;
			break;
		}
	}
	pthread_mutex_unlock(&g.lock);
	emit_code(&lines, nlines);
out:
	free(lines.p);
	free(name);
}

static void JNICALL on_compiled_method_unload(jvmtiEnv *jvmti, jmethodID method, const void *code_addr)
{
	uint64_t start = (uint64_t)(uintptr_t)code_addr;
	(void)jvmti;
	(void)method;
	if (g.stood_down)
		return;
	pthread_mutex_lock(&g.lock);
	uint64_t size = code_table_take(&g.code, start);
	g.compiled_unloads++;
	g.status_dirty = true;
	sb_printf(&g.events_out, "%" PRIu64 " unload %" PRIx64 " %" PRIx64 "\n", now_ns(), start, size);
	maybe_flush_locked();
	pthread_mutex_unlock(&g.lock);
}

static void JNICALL on_dynamic_code_generated(jvmtiEnv *jvmti, const char *name, const void *address, jint length)
{
	struct sbuf lines = { 0 };
	char clean[NAME_MAX_LEN];
	(void)jvmti;
	if (g.stood_down || length <= 0)
		return;
	/* VM names ("Interpreter", "StubRoutines (1)") are kept, minus line breaks. */
	snprintf(clean, sizeof(clean), "%s", name ? name : "[vm code]");
	for (char *p = clean; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	sb_printf(&lines, "%" PRIx64 " %x ", (uint64_t)(uintptr_t)address, (unsigned)length);
	sb_add(&lines, clean, strlen(clean));
	sb_add(&lines, "\n", 1);
	pthread_mutex_lock(&g.lock);
	g.dynamic_code++;
	pthread_mutex_unlock(&g.lock);
	emit_code(&lines, 1);
	free(lines.p);
}

/* ---- threads ------------------------------------------------------------ */

static void thread_event_locked(const char *kind, pid_t tid, const char *name)
{
	char esc[NAME_MAX_LEN];
	sb_printf(&g.events_out, "%" PRIu64 " %s %d", now_ns(), kind, (int)tid);
	if (name) {
		status_escape_append(esc, sizeof(esc), 0, name);
		sb_add(&g.events_out, " ", 1);
		sb_add(&g.events_out, esc, strlen(esc));
	}
	sb_add(&g.events_out, "\n", 1);
	maybe_flush_locked();
}

static void add_thread(pid_t tid, const char *name)
{
	pthread_mutex_lock(&g.lock);
	if (g.stood_down)
		goto out;
	for (size_t i = 0; i < g.nthreads; i++) {
		if (g.threads[i].tid == tid) {
			if (strcmp(g.threads[i].name, name) == 0)
				goto out;
			char *copy = strdup(name);
			if (copy) {
				free(g.threads[i].name);
				g.threads[i].name = copy;
			}
			goto logged;
		}
	}
	if (g.nthreads == g.threads_cap) {
		size_t cap = g.threads_cap ? g.threads_cap * 2 : 32;
		struct agent_thread *t = realloc(g.threads, cap * sizeof(*t));
		if (!t)
			goto out;
		g.threads = t;
		g.threads_cap = cap;
	}
	char *copy = strdup(name);
	if (!copy)
		goto out;
	g.threads[g.nthreads++] = (struct agent_thread){ tid, copy };
logged:
	thread_event_locked("thread", tid, name);
	g.status_dirty = true;
out:
	pthread_mutex_unlock(&g.lock);
}

static void JNICALL on_thread_start(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	jvmtiThreadInfo ti = { 0 };
	(void)jni;
	if (g.stood_down || (*jvmti)->GetThreadInfo(jvmti, thread, &ti) != JVMTI_ERROR_NONE)
		return;
	add_thread((pid_t)syscall(SYS_gettid), ti.name ? ti.name : "");
	(*jvmti)->Deallocate(jvmti, (unsigned char *)ti.name);
}

static void JNICALL on_thread_end(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	pid_t tid = (pid_t)syscall(SYS_gettid);
	(void)jvmti;
	(void)jni;
	(void)thread;
	pthread_mutex_lock(&g.lock);
	for (size_t i = 0; i < g.nthreads; i++) {
		if (g.threads[i].tid == tid) {
			free(g.threads[i].name);
			g.threads[i] = g.threads[--g.nthreads];
			thread_event_locked("thread_end", tid, NULL);
			g.status_dirty = true;
			break;
		}
	}
	pthread_mutex_unlock(&g.lock);
}

/* Threads that started before the agent: their tid comes from HotSpot's own
 * tables (java.lang.Thread.eetop -> JavaThread -> OSThread::_thread_id). */
static void scan_threads(jvmtiEnv *jvmti, JNIEnv *jni)
{
	jint count = 0;
	jthread *threads = NULL;
	jfieldID eetop = NULL;
	jclass cls;

	if ((*jvmti)->GetAllThreads(jvmti, &count, &threads) != JVMTI_ERROR_NONE)
		return;
	if (jni && (cls = (*jni)->FindClass(jni, "java/lang/Thread")) != NULL)
		eetop = (*jni)->GetFieldID(jni, cls, "eetop", "J");
	if (jni && (*jni)->ExceptionCheck(jni))
		(*jni)->ExceptionClear(jni);
	for (jint i = 0; i < count; i++) {
		jvmtiThreadInfo ti = { 0 };
		pid_t tid = -1;
		if ((*jvmti)->GetThreadInfo(jvmti, threads[i], &ti) != JVMTI_ERROR_NONE)
			continue;
		if (eetop)
			tid = vm_structs_thread_tid((uintptr_t)(*jni)->GetLongField(jni, threads[i], eetop));
		if (tid > 0) {
			add_thread(tid, ti.name ? ti.name : "");
		} else {
			pthread_mutex_lock(&g.lock);
			g.threads_unnamed++;
			pthread_mutex_unlock(&g.lock);
		}
		(*jvmti)->Deallocate(jvmti, (unsigned char *)ti.name);
		if (jni)
			(*jni)->DeleteLocalRef(jni, threads[i]);
	}
	(*jvmti)->Deallocate(jvmti, (unsigned char *)threads);
}

/* ---- lifecycle ------------------------------------------------------------ */

static void check_frame_pointer(void)
{
	int pfp = vm_structs_init() == 0 ? vm_structs_bool_flag("PreserveFramePointer") : -1;
	pthread_mutex_lock(&g.lock);
	g.pfp = pfp;
	g.status_dirty = true;
	pthread_mutex_unlock(&g.lock);
	if (pfp == 0)
		info("PreserveFramePointer is off: compiled Java code uses rbp as a general register, so "
		     "frame-pointer stack walkers (perf, bcc) lose the Java frames below it; jflame walks "
		     "HotSpot's frames itself and does not need it");
	else if (pfp < 0)
		info("could not read PreserveFramePointer from the JVM; the prologue counts in %s tell "
		     "whether compiled code keeps frame pointers",
		     g.status_path);
}

/* Inline chains between safepoints are recorded only with DebugNonSafepoints:
 * with unfold it is turned on through the flag table (code compiled from then
 * on has exact chains), as async-profiler does; with nounfold only read. */
static void check_debug_non_safepoints(bool turn_on)
{
	int was = vm_structs_init() == 0 ? vm_structs_bool_flag("DebugNonSafepoints") : -1, now = was;
	if (turn_on && was == 0 && vm_structs_set_bool_flag("DebugNonSafepoints") == 0)
		now = vm_structs_bool_flag("DebugNonSafepoints");
	pthread_mutex_lock(&g.lock);
	g.dns = now;
	g.status_dirty = true;
	pthread_mutex_unlock(&g.lock);
	if (turn_on && now != 1)
		agent_log("warning: could not turn on DebugNonSafepoints in this JVM (%s): inlined frames are placed "
			  "at the nearest safepoint; start it with -XX:+UnlockDiagnosticVMOptions "
			  "-XX:+DebugNonSafepoints",
			  was < 0 ? "flag table not found" : "the flag did not change");
	else if (turn_on && was == 0)
		info("turned on DebugNonSafepoints: inlined frames are placed exactly in code compiled from now on");
}

/* The live phase has begun (VMInit, or at once on attach). */
static void go_live(jvmtiEnv *jvmti, JNIEnv *jni)
{
	check_frame_pointer();
	scan_threads(jvmti, jni);
	pthread_mutex_lock(&g.lock);
	if (!g.stood_down)
		g.state = "running";
	flush_locked();
	pthread_mutex_unlock(&g.lock);
	write_status();
	if (start_status_thread() != 0)
		info("failed to start the status thread; %s is written only at exit", g.status_path);
	agent_sampler_start(jvmti, jni);
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	(void)thread;
	if (!g.stood_down)
		go_live(jvmti, jni);
}

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni)
{
	(void)jni;
	agent_sampler_stop(1000);
	agent_sampler_off(jvmti);
	agent_sampler_remove_file();
	stop_status_thread();
	pthread_mutex_lock(&g.lock);
	if (!g.stood_down)
		g.state = "exited";
	flush_locked();
	pthread_mutex_unlock(&g.lock);
	write_status();
}

/* Another copy of the agent (loaded from another path) already runs here when
 * the status file names this very process and it has not exited. */
static bool other_copy_running(void)
{
	char line[256];
	int pid = -1;
	uint64_t start = 0;
	bool live = false;
	char err[ERR_LEN];
	/* only our user's own regular file: a FIFO there would hold this thread
	 * (the Attach Listener on attach), another user's file is not a copy of ours */
	int fd = tmp_file_open_read(g.status_path, err, sizeof(err));
	FILE *f = fd >= 0 ? fdopen(fd, "re") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "pid=%d", &pid) == 1 || sscanf(line, "process_start=%" SCNu64, &start) == 1)
			continue;
		if (strncmp(line, "state=", 6) == 0)
			live = strcmp(line + 6, "running\n") == 0 || strcmp(line + 6, "starting\n") == 0;
	}
	fclose(f);
	return live && pid == (int)g.pid && start == g.process_start;
}

static void set_property(jvmtiEnv *jvmti, const char *key, char *out, size_t len)
{
	char *v = NULL;
	if ((*jvmti)->GetSystemProperty(jvmti, key, &v) == JVMTI_ERROR_NONE && v) {
		size_t n = strlen(out);
		snprintf(out + n, len - n, "%s%s", n ? " " : "", v);
		(*jvmti)->Deallocate(jvmti, (unsigned char *)v);
	}
}

/* Everything but going live. Returns JNI_OK, or JNI_ERR when the load must fail. */
static jint start(JavaVM *vm, const char *options, bool attach)
{
	char err[ERR_LEN];
	jvmtiCapabilities caps = { 0 };
	jvmtiEventCallbacks cb = { 0 };
	jvmtiEnv *jvmti = NULL;

	if (g.loaded) {
		agent_log("already loaded in this JVM (options '%s'); see %s", g.opts_text, g.status_path);
		return JNI_OK;
	}
	if (agent_options_parse(options, &g.opts, err, sizeof(err)) != 0) {
		agent_log("%s", err);
		return JNI_ERR;
	}
	if (g.opts.help) {
		if (write(STDERR_FILENO, agent_options_help(), strlen(agent_options_help())) < 0)
			return JNI_ERR;
		if (!attach)
			exit(0);
		return JNI_ERR;
	}
	/* The library stays mapped after a failed load (-z nodelete): start afresh. */
	g.stood_down = false;
	g.error[0] = '\0';
	g.state = "starting";
	g.jvm[0] = '\0';
	agent_options_format(&g.opts, g.opts_text, sizeof(g.opts_text));
	snprintf(g.mode, sizeof(g.mode), "%s", attach ? "attach" : "onload");
	g.vm = vm;
	g.pid = getpid();
	g.process_start = read_process_start();
	g.started_ns = now_ns();
	snprintf(g.map_path, sizeof(g.map_path), "/tmp/perf-%d.map", (int)g.pid);
	snprintf(g.events_path, sizeof(g.events_path), "/tmp/jflame-%d.events", (int)g.pid);
	snprintf(g.status_path, sizeof(g.status_path), "/tmp/jflame-%d.status", (int)g.pid);

	if (other_copy_running()) {
		agent_log("already loaded in this JVM by another copy of the agent; see %s", g.status_path);
		return JNI_OK;
	}
	if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK || !jvmti) {
		agent_log("this JVM offers no JVMTI 1.2 environment; jflame needs HotSpot 8 or later");
		return attach ? JNI_ERR : JNI_OK;
	}
	g.jvmti = jvmti;
	set_property(jvmti, "java.vm.name", g.jvm, sizeof(g.jvm));
	set_property(jvmti, "java.vm.version", g.jvm, sizeof(g.jvm));
	code_table_init(&g.code);

	g.map_fd = tmp_file_open_append(g.map_path, 1, err, sizeof(err));
	if (g.map_fd >= 0)
		g.events_fd = tmp_file_open_append(g.events_path, 1, err, sizeof(err));
	if (g.map_fd < 0 || g.events_fd < 0) {
		if (g.map_fd >= 0)
			close(g.map_fd);
		g.map_fd = -1;
		g.jvmti = NULL; /* nothing enabled yet */
		stand_down("%s", err);
		return attach ? JNI_ERR : JNI_OK;
	}
	g.map_out.len = g.events_out.len = 0;
	sb_printf(&g.events_out, "# jflame-events 1 clock=CLOCK_MONOTONIC pid=%d\n", (int)g.pid);
	char cs_err[256];
	g.prologue = prologue_checker_new(cs_err, sizeof(cs_err));
	if (!g.prologue)
		info("capstone unavailable (%s); prologues are not checked", cs_err);

	caps.can_generate_compiled_method_load_events = 1;
	caps.can_get_source_file_name = 1;
	caps.can_get_line_numbers = 1;
	jvmtiError e = (*jvmti)->AddCapabilities(jvmti, &caps);
	if (e != JVMTI_ERROR_NONE) {
		g.jvmti = NULL;
		stand_down("the JVM refused the capability to report compiled methods (JVMTI error %d)", (int)e);
		return attach ? JNI_ERR : JNI_OK;
	}
	struct agent_host host = { &g.stood_down, g.pid, g.process_start, agent_log, status_error, status_changed };
	agent_sampler_init(jvmti, &host);
	cb.VMInit = on_vm_init;
	cb.VMDeath = on_vm_death;
	cb.CompiledMethodLoad = on_compiled_method_load;
	cb.CompiledMethodUnload = on_compiled_method_unload;
	cb.DynamicCodeGenerated = on_dynamic_code_generated;
	cb.ThreadStart = on_thread_start;
	cb.ThreadEnd = on_thread_end;
	agent_alloc_callbacks(&cb);
	agent_lock_callbacks(&cb);
	if ((*jvmti)->SetEventCallbacks(jvmti, &cb, (jint)sizeof(cb)) != JVMTI_ERROR_NONE) {
		stand_down("failed to set JVMTI callbacks");
		return attach ? JNI_ERR : JNI_OK;
	}
	for (size_t i = 0; i < sizeof(all_events) / sizeof(all_events[0]); i++) {
		if (attach && all_events[i] == JVMTI_EVENT_VM_INIT)
			continue;
		e = (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, all_events[i], NULL);
		if (e != JVMTI_ERROR_NONE) {
			stand_down("failed to enable JVMTI event %d (error %d)", (int)all_events[i], (int)e);
			return attach ? JNI_ERR : JNI_OK;
		}
	}
	g.loaded = true;
	check_debug_non_safepoints(g.opts.unfold);
	write_status();
	info("writing %s (options '%s'); status in %s", g.map_path, g.opts_text, g.status_path);
	return JNI_OK;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	(void)reserved;
	return start(vm, options, false);
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
	JNIEnv *jni = NULL;
	bool was_loaded = g.loaded;
	(void)reserved;

	jint rc = start(vm, options, true);
	if (rc != JNI_OK || was_loaded || !g.loaded)
		return rc;
	if ((*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK)
		jni = NULL;
	go_live(g.jvmti, jni);
	/* Replay what was generated and compiled before we came. */
	if ((*g.jvmti)->GenerateEvents(g.jvmti, JVMTI_EVENT_DYNAMIC_CODE_GENERATED) != JVMTI_ERROR_NONE ||
	    (*g.jvmti)->GenerateEvents(g.jvmti, JVMTI_EVENT_COMPILED_METHOD_LOAD) != JVMTI_ERROR_NONE)
		info("the JVM could not replay earlier code; only code compiled from now on is named");
	/* the map is complete when the attach returns */
	flush();
	write_status();
	return JNI_OK;
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
	(void)vm;
	agent_sampler_stop(0);
	stop_status_thread();
	pthread_mutex_lock(&g.lock);
	flush_locked();
	if (g.map_fd >= 0)
		close(g.map_fd);
	if (g.events_fd >= 0)
		close(g.events_fd);
	g.map_fd = g.events_fd = -1;
	g.stood_down = true;
	pthread_mutex_unlock(&g.lock);
}
