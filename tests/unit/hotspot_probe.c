/* hotspot_probe.c - prints what hotspot_vm reads from a live JVM (walker layout, every
 * nmethod of the code heaps and its name, line numbers; or its threads' names) for tests. */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hotspot_stubs.h"
#include "hotspot_threads.h"
#include "hotspot_vm.h"
#include "remote_mem.h"
#include "stub_cfa.h"
#include "text_escape.h"

#define MAX_METHODS 16
#define MAX_BLOCKS  10000000 /* blocks of one heap walked at most */

static pid_t pid;

static int peek(uint64_t addr, void *buf, size_t len)
{
	return remote_mem_pid_read((void *)(intptr_t)pid, addr, buf, len);
}

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* HeapBlock::Header as the tables give it (not part of the walker's layout). */
struct block_layout {
	long length, used;
	int length_size;
	bool print;
};

static void entry_seen(void *ctx, const struct hotspot_entry *e)
{
	struct block_layout *b = ctx;
	if (b->print)
		printf("entry %s %s %s %s %#" PRIx64 "\n", e->type, e->field ? e->field : "-",
		       e->type_string && e->type_string[0] ? e->type_string : "-", e->is_static ? "static" : "-",
		       e->value);
	if (!e->field || strcmp(e->type, "HeapBlock::Header") != 0)
		return;
	if (strcmp(e->field, "_length") == 0) {
		b->length = (long)e->value;
		b->length_size = strcmp(e->type_string, "size_t") == 0 ? 8 : 4;
	} else if (strcmp(e->field, "_used") == 0) {
		b->used = (long)e->value;
	}
}

struct wanted {
	const char *name;
	uint64_t method;
};

/* Every used block of heap [low, high): an nmethod's code begin, compile id
 * and name; Method*s of the wanted names remembered. */
static void heap_walk(struct hotspot_vm *vm, const struct hotspot_proc *hp, const struct block_layout *b, uint64_t low,
		      uint64_t high, struct wanted *want, int nwant, long *found, long *named)
{
	struct hotspot_names *names = hotspot_vm_names(vm);
	const struct hotspot_layout *l = hotspot_names_layout(names);
	uint64_t p = low;
	for (long i = 0; i < MAX_BLOCKS && p < high; i++) {
		uint64_t length = 0, code_begin = 0, method = 0;
		uint8_t used = 0;
		int32_t compile_id = 0, code_offset = 0;
		if (peek(p + (uint64_t)b->length, &length, (size_t)b->length_size) != 0 ||
		    peek(p + (uint64_t)b->used, &used, 1) != 0 || length == 0)
			break; /* past what the heap has committed or allocated */
		uint64_t blob = p + hp->heapblock_size;
		p += length << hp->segment_shift;
		const char *name = used ? hotspot_names_blob(names, blob) : NULL;
		if (!name || strcmp(name, "nmethod") != 0)
			continue;
		if (peek(blob + hp->nmethod_compile_id, &compile_id, 4) != 0)
			continue;
		if (hp->blob_code_offsets) /* JDK 23+: an int offset from the blob */
			code_begin = peek(blob + hp->blob_code_begin, &code_offset, 4) == 0 ?
					     blob + (uint64_t)code_offset :
					     0;
		else
			peek(blob + hp->blob_code_begin, &code_begin, 8);
		const char *java = hotspot_names_nmethod(names, blob, (uint32_t)compile_id, now_ns());
		(*found)++;
		*named += java != NULL;
		printf("nmethod %" PRIx64 " %d %s\n", code_begin, compile_id, java ? java : "-");
		for (int k = 0; java && k < nwant; k++)
			if (!want[k].method && strcmp(java, want[k].name) == 0 && l->nm_method >= 0 &&
			    peek(blob + (uint64_t)l->nm_method, &method, 8) == 0)
				want[k].method = method;
	}
}

/* The line of every bytecode index of a method. */
static void method_lines(struct hotspot_vm *vm, const struct wanted *w)
{
	struct hotspot_names *names = hotspot_vm_names(vm);
	const struct hotspot_layout *l = hotspot_names_layout(names);
	uint64_t cm = 0;
	uint16_t code_size = 0;
	if (!w->method || peek(w->method + (uint64_t)l->method_const_method, &cm, 8) != 0 ||
	    peek(cm + (uint64_t)l->cm_code_size, &code_size, 2) != 0) {
		printf("method %s not found\n", w->name);
		return;
	}
	const char *source = hotspot_names_source(names, w->method, 0, now_ns());
	printf("method %s %" PRIx64 " code_size %u source %s\n", w->name, w->method, code_size, source ? source : "-");
	for (int bci = 0; bci < code_size; bci++)
		printf("line %s %d %d\n", w->name, bci, hotspot_names_line(names, w->method, 0, bci));
}

static long reads; /* process_vm_readv calls of the thread names */

static int counted_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	reads++;
	return remote_mem_pid_read(ctx, addr, buf, len);
}

/* "thread TID NAME" (NAME escaped as target text; "-" when not a Java thread) for every thread of
 * /proc/PID/task, then what reading the names cost. */
static int threads_print(struct hotspot_vm *vm)
{
	struct remote_mem mem = { counted_read, (void *)(intptr_t)pid };
	struct hotspot_threads *t = hotspot_threads_new(&mem, hotspot_names_layout(hotspot_vm_names(vm))->jdk);
	char path[64], name[4 * HOTSPOT_THREAD_NAME_MAX + 1];
	long first = -1, named = 0, tids = 0;
	struct dirent *d;
	DIR *dir = NULL;
	int rc = 1;
	if (!t || hotspot_vm_entries(vm, hotspot_threads_take, t) != 0 || hotspot_threads_ready(t) != 0) {
		fprintf(stderr, "hotspot_probe: the tables lack what thread names are read with\n");
		goto out;
	}
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	if (!(dir = opendir(path))) {
		perror(path);
		goto out;
	}
	reads = 0;
	while ((d = readdir(dir)) != NULL) {
		pid_t tid = (pid_t)atoi(d->d_name);
		if (tid <= 0)
			continue;
		char shown[4 * sizeof(name)];
		int n = hotspot_threads_name(t, tid, name, sizeof(name));
		if (n >= 0) /* target text, escaped as every output of jflame does */
			text_escape(shown, sizeof(shown), name, (size_t)n);
		printf("thread %d %s\n", (int)tid, n >= 0 ? shown : "-");
		named += n >= 0;
		tids++;
		if (first < 0 && n >= 0) /* the layout found, the list read, the first name */
			first = reads;
	}
	printf("threads %ld named %ld reads %ld first %ld forwarded %llu stale %llu\n", tids, named, reads, first,
	       hotspot_threads_forwarded(t), hotspot_threads_stale(t));
	rc = 0;
out:
	if (dir)
		closedir(dir);
	hotspot_threads_free(t);
	return rc;
}

struct stubs_seen {
	struct stub_cfa *sc;
	size_t stubs, insns, unknown, conflicts, unreached, failed;
};

/* --stubs: each stub's code analysed (stub_cfa): its instructions and those
 * without a rule, then the totals. */
static void stub_seen(void *ctx, uint64_t begin, uint64_t end, const char *name)
{
	struct stubs_seen *t = ctx;
	size_t len = end - begin, n = 0;
	uint8_t *code = malloc(len);
	struct stub_cfa_row *rows = NULL;
	struct stub_cfa_stats st;
	t->stubs++;
	if (!code || peek(begin, code, len) != 0 || stub_cfa_analyze(t->sc, code, len, begin, &rows, &n, &st) != 0) {
		printf("stub %s %#" PRIx64 " %zu unread\n", name, begin, len);
		t->failed++;
		free(code);
		return;
	}
	printf("stub %s %#" PRIx64 " %zu insns %zu unknown %zu conflicts %zu unreached %zu rows %zu\n", name, begin,
	       len, st.insns, st.unknown, st.conflicts, st.bytes_unreached, n);
	const char *dump = getenv("HOTSPOT_PROBE_DUMP"); /* a stub's code and rows, to look at */
	if (dump && strcmp(dump, name) == 0) {
		printf("code ");
		for (size_t i = 0; i < len; i++)
			printf("%02x", code[i]);
		printf("\n");
		for (size_t i = 0; i < n; i++)
			printf("row +%u base %u fp %u off %d off2 %d fp_off %d\n", rows[i].at, rows[i].base, rows[i].fp,
			       rows[i].off, rows[i].off2, rows[i].fp_off);
	}
	t->insns += st.insns;
	t->unknown += st.unknown;
	t->conflicts += st.conflicts;
	t->unreached += st.bytes_unreached;
	free(rows);
	free(code);
}

static int stubs_print(struct hotspot_vm *vm)
{
	char err[256];
	struct stubs_seen t = { .sc = stub_cfa_new(err, sizeof(err)) };
	if (!t.sc) {
		fprintf(stderr, "hotspot_probe: %s\n", err);
		return 1;
	}
	struct hotspot_stubs *s = hotspot_vm_stubs(vm);
	hotspot_stubs_each(s, now_ns(), stub_seen, &t);
	printf("stubs %zu insns %zu unknown %zu conflicts %zu unreached %zu unread %zu\n", t.stubs, t.insns, t.unknown,
	       t.conflicts, t.unreached, t.failed);
	stub_cfa_free(t.sc);
	return s && t.stubs ? 0 : 1;
}

int main(int argc, char **argv)
{
	char err[512];
	struct wanted want[MAX_METHODS];
	struct block_layout b = { -1, -1, 0, false };
	struct hotspot_proc hp;
	int nwant = 0, rc = 1;
	long found = 0, named = 0;
	bool usage = argc < 2, threads = false, stubs = false;

	for (int i = 2; i < argc && !usage; i++) {
		if (strcmp(argv[i], "--method") == 0 && i + 1 < argc && nwant < MAX_METHODS)
			want[nwant++] = (struct wanted){ argv[++i], 0 };
		else if (strcmp(argv[i], "--tables") == 0)
			b.print = true;
		else if (strcmp(argv[i], "--threads") == 0)
			threads = true;
		else if (strcmp(argv[i], "--stubs") == 0)
			stubs = true;
		else
			usage = true;
	}
	if (usage) {
		fprintf(stderr,
			"usage: hotspot_probe PID [--method Lpkg/Class;::name]... [--tables] [--threads] [--stubs]\n"
			"  --threads: the java.lang.Thread name of every thread of PID instead\n"
			"  --stubs: each stub's code analysed for unwinding (stub_cfa) instead\n"
			"           (HOTSPOT_PROBE_DUMP=NAME: that stub's code in hex and its rows too)\n");
		return 2;
	}
	pid = (pid_t)atoi(argv[1]);
	struct str_intern *si = str_intern_new();
	struct hotspot_vm *vm = si ? hotspot_vm_open(pid, err, sizeof(err)) : NULL;
	if (!vm) {
		fprintf(stderr, "jflame: %s\n", si ? err : "out of memory");
		goto out;
	}
	hotspot_vm_budget(vm, false); /* every nmethod read whole, not a sample's frames */
	if (hotspot_vm_entries(vm, entry_seen, &b) != 0 || b.length < 0 || b.used < 0) {
		fprintf(stderr, "hotspot_probe: no HeapBlock::Header in the tables\n");
		goto out;
	}
	const struct hotspot_layout *l = hotspot_names_layout(hotspot_vm_names(vm));
	printf("jdk %d\n", l->jdk);
	if (threads) {
		rc = threads_print(vm);
		goto out;
	}
	if (stubs) {
		rc = stubs_print(vm);
		goto out;
	}
	printf("frame_complete_size %d\n", hotspot_vm_frame_complete_size(vm));
	int w = hotspot_vm_walker_info(vm, &hp);
	printf("walker %d\n", w);
	if (w != 1)
		goto out;
	printf("code %" PRIx64 " %" PRIx64 "\n", (uint64_t)hp.code_low, (uint64_t)hp.code_high);
	printf("interp %" PRIx64 " %" PRIx64 "\n", (uint64_t)hp.interp_low, (uint64_t)hp.interp_high);
	for (__u32 i = 0; i < hp.nheaps; i++)
		printf("heap %u %" PRIx64 " %" PRIx64 " %" PRIx64 "\n", i, (uint64_t)hp.heap_low[i],
		       (uint64_t)hp.heap_high[i], (uint64_t)hp.heap_segmap[i]);
	printf("layout segment_shift=%u heapblock_size=%u blob_name=%u blob_frame_size=%u blob_frame_complete=%u "
	       "blob_code_begin=%u blob_code_end=%u blob_code_offsets=%u nmethod_compile_id=%u method_const_method=%u "
	       "const_method_size=%u blob_header=%u\n",
	       hp.segment_shift, hp.heapblock_size, hp.blob_name, hp.blob_frame_size, hp.blob_frame_complete,
	       hp.blob_code_begin, hp.blob_code_end, hp.blob_code_offsets, hp.nmethod_compile_id,
	       hp.method_const_method, hp.const_method_size, hp.blob_header);
	for (__u32 i = 0; i < hp.nheaps; i++)
		heap_walk(vm, &hp, &b, hp.heap_low[i], hp.heap_high[i], want, nwant, &found, &named);
	printf("nmethods %ld named %ld\n", found, named);
	for (int k = 0; k < nwant; k++)
		method_lines(vm, &want[k]);
	rc = 0;
out:
	hotspot_vm_free(vm);
	str_intern_free(si);
	return rc;
}
