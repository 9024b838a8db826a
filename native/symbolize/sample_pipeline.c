/* sample_pipeline.c - one sampler sample at a time: its frames named (JIT code its agent has
 * not logged yet waits a while in the late queue), folded under its roots, handed to a sink. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "proc_info.h"
#include "sample_pipeline.h"
#include "stack_cache.h"
#include "msg.h"

#define MAX_LATE    2048       /* ~10 MiB */
#define CACHE_BYTES (2u << 20) /* folded stacks kept by raw stack: starts over when full */
#define MEMO_SLOTS  4096       /* named frames kept (~0.5 MiB: its pages are all touched) */

/* Frame j's folded text, kept in p->frag_text: where, how long (-1: none,
 * folded from its frame), and the line marks in it. */
struct frag {
	size_t at;
	ssize_t len;
	unsigned lines;
};

struct sample_pipeline {
	struct sample_pipeline_opts o;
	int max_user, max_kernel;
	struct fold_buf fold;
	struct fold_buf plain; /* with lines: the fold without its lines */
	struct frame *frames;
	struct sample_queue late, late_spare; /* samples waiting for their JIT code's name */
	struct stack_cache *cache;	      /* NULL: every sample named and folded */
	struct frame_memo *memo;	      /* with the cache: frames named before */
	struct frag *frag;		      /* per frame of the sample at hand: its folded text in frag_text */
	struct fold_buf frag_text, scratch;
	bool verify; /* hits named and folded again and compared (JFLAME_STACK_CACHE=verify) */
	uint64_t mismatches;
	/* JFLAME_AGENTLESS_CHECK=1: samples of JVMs with the agent named from
	 * their memory too, and compared (no caches then) */
	bool check;
	struct fold_buf check_agent, check_memory;
	struct sample_pipeline_check check_stats;
};

struct sample_pipeline *sample_pipeline_new(const struct sample_pipeline_opts *o)
{
	struct sample_pipeline *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->o = *o;
	p->frames = calloc(PROFILE_MAX_USER_FRAMES + PROFILE_MAX_KERNEL_FRAMES, sizeof(*p->frames));
	p->frag = calloc(PROFILE_MAX_USER_FRAMES + PROFILE_MAX_KERNEL_FRAMES, sizeof(*p->frag));
	if (!p->frames || !p->frag) {
		free(p->frames);
		free(p->frag);
		free(p);
		return NULL;
	}
	p->max_user = PROFILE_MAX_USER_FRAMES;
	p->max_kernel = PROFILE_MAX_KERNEL_FRAMES;
	p->fold.no_inline = p->scratch.no_inline = o->no_inline;
	p->fold.lines = p->scratch.lines = o->lines;
	symbolizer_lines(o->sy, o->lines);
	const char *env = getenv("JFLAME_STACK_CACHE"), *check = getenv("JFLAME_AGENTLESS_CHECK");
	p->verify = env && strcmp(env, "verify") == 0;
	p->check = check && strcmp(check, "1") == 0;
	p->check_agent.no_inline = p->check_memory.no_inline = o->no_inline;
	if (o->cache && !(env && strcmp(env, "off") == 0) && !p->check) {
		p->cache = stack_cache_new(CACHE_BYTES);
		p->memo = frame_memo_new(MEMO_SLOTS);
		if (!p->cache || !p->memo) {
			sample_pipeline_free(p);
			return NULL;
		}
	}
	return p;
}

void sample_pipeline_set_depth(struct sample_pipeline *p, int max_user, int max_kernel)
{
	p->max_user = max_user;
	p->max_kernel = max_kernel;
}

size_t sample_pipeline_nlate(const struct sample_pipeline *p)
{
	return p ? p->late.n : 0;
}

void sample_pipeline_free(struct sample_pipeline *p)
{
	if (!p)
		return;
	fold_free(&p->check_agent);
	fold_free(&p->check_memory);
	sample_queue_free(&p->late);
	sample_queue_free(&p->late_spare);
	fold_free(&p->fold);
	fold_free(&p->plain);
	free(p->frames);
	stack_cache_free(p->cache);
	frame_memo_free(p->memo);
	free(p->frag);
	fold_free(&p->frag_text);
	fold_free(&p->scratch);
	free(p);
}

/* The bytes of a sample record: its header, kernel stack and user frames. */
static size_t sample_size(const struct profile_sample *s)
{
	size_t n = offsetof(struct profile_sample, user);
	if (s->walk == PROFILE_WALK_HOTSPOT)
		n += (size_t)s->nframes * sizeof(struct profile_frame);
	else if (s->ustack_bytes > 0)
		n += (size_t)s->ustack_bytes;
	return n;
}

bool sample_queue_push(struct sample_queue *q, size_t max, const struct profile_sample *s)
{
	size_t n = sample_size(s);
	if (!q->v)
		q->v = calloc(max, sizeof(*q->v));
	if (!q->v || q->n == max || !(q->v[q->n] = malloc(n)))
		return false;
	memcpy(q->v[q->n++], s, n);
	return true;
}

void sample_queue_free(struct sample_queue *q)
{
	for (size_t i = 0; i < q->n; i++)
		free(q->v[i]);
	free(q->v);
	q->v = NULL;
	q->n = 0;
}

/* The kernel and user frames a sample holds. */
static void sample_depth(const struct profile_sample *s, int *nk, int *nu)
{
	int kn = s->kstack_bytes > 0 ? s->kstack_bytes / 8 : 0;
	int un = s->walk == PROFILE_WALK_HOTSPOT ? s->nframes : s->ustack_bytes > 0 ? s->ustack_bytes / 8 : 0;
	if (kn > PROFILE_MAX_KERNEL_FRAMES)
		kn = PROFILE_MAX_KERNEL_FRAMES;
	if (un > (s->walk == PROFILE_WALK_HOTSPOT ? PROFILE_MAX_USER_FRAMES : PROFILE_MAX_FP_FRAMES))
		un = s->walk == PROFILE_WALK_HOTSPOT ? PROFILE_MAX_USER_FRAMES : PROFILE_MAX_FP_FRAMES;
	*nk = kn;
	*nu = un;
}

/* Whether f, the name of raw frame pf (NULL: a pc), is the one its code keeps
 * (see fully_named). */
static bool frame_final(struct sample_pipeline *p, pid_t pid, const struct profile_frame *pf, const struct frame *f)
{
	if (!symbolizer_name_final(p->o.sy, pid, f))
		return false;
	if (!pf)
		return true;
	return !(
		(pf->kind == PROFILE_FRAME_INTERP && f->kind != FRAME_JAVA_INTERP) ||
		((pf->kind == PROFILE_FRAME_JIT || pf->kind == PROFILE_FRAME_NATIVE_WRAPPER) && f->kind != FRAME_JAVA));
}

static bool same_frame(const struct frame *a, const struct frame *b)
{
	return a->name == b->name && a->dso == b->dso && a->kind == b->kind && a->line == b->line && a->file == b->file;
}

static void frag_keep(struct sample_pipeline *p, size_t j, const char *text, size_t len, unsigned lines)
{
	p->frag[j].len = -1;
	fold_add_raw(&p->frag_text, text, len);
	if (p->frag_text.oom)
		return;
	p->frag[j] = (struct frag){ p->frag_text.len - len, (ssize_t)len, lines };
}

/* verify: a sample of a process that has exited since cannot be named again
 * from its memory (agentless: gone, or going: an inline chain may no longer
 * decode): what was kept is what it was, and the check is not made. */
static bool named_after_exit(bool kernel, pid_t pid)
{
	return !kernel && pid && !proc_info_alive(pid);
}

/* One frame named (into p->frames[j]), and its folded text kept where it can
 * be: from the memo when its process's names generation (gen, 0: none) has
 * it, else looked up (and kept in the memo when final). */
static void frame_named(struct sample_pipeline *p, const struct profile_sample *s, int i, size_t j, bool kernel,
			uint64_t gen, bool wait)
{
	const struct profile_frame *pf = !kernel && s->walk == PROFILE_WALK_HOTSPOT ? &s->user.frames[i] : NULL;
	struct frame_key k = { 0 };
	const struct frame_memo_entry *kept = NULL;
	struct frame f;
	p->frag[j].len = -1;
	if (p->memo && (kernel || gen)) {
		k.pc = kernel ? s->kstack[i] : pf ? pf->pc : s->user.pcs[i];
		k.gen = kernel ? 1 : gen;
		k.pid = kernel ? 0 : s->pid;
		if (pf) {
			k.method = pf->method;
			k.cookie = pf->cookie;
			k.bci = pf->bci;
			k.kind = (uint8_t)(pf->kind + 1);
		}
		k.caller = !kernel && i > 0;
		kept = frame_memo_get(p->memo, &k);
		if (kept && !p->verify) {
			p->frames[j] = kept->f;
			if (kept->fold)
				frag_keep(p, j, kept->fold, kept->fold_len, kept->fold_lines);
			return;
		}
	}
	pid_t pid = (pid_t)s->pid;
	/* every user frame but the leaf is a return address */
	f = kernel ? symbolize_kernel(p->o.sy, s->kstack[i]) :
	    pf	   ? symbolize_hotspot(p->o.sy, pid, pf, s->ts_ns, i > 0, wait) :
		     symbolize_user(p->o.sy, pid, s->user.pcs[i], s->ts_ns, i > 0);
	p->frames[j] = f;
	if (kept) { /* verify: the kept frame and its text are what it is named and folded now */
		fold_reset(&p->scratch);
		fold_add_frame(&p->scratch, &f);
		if ((!same_frame(&kept->f, &f) ||
		     (kept->fold &&
		      (kept->fold_len != p->scratch.len || memcmp(kept->fold, p->scratch.p, kept->fold_len) != 0 ||
		       kept->fold_lines != p->scratch.nlines))) &&
		    !named_after_exit(kernel, pid) && p->mismatches++ < 3)
			msg_say("frame memo mismatch: kept %.200s, now %.200s\n", kept->f.name, f.name);
	} else if (p->memo && (kernel || gen) && frame_final(p, kernel ? 0 : pid, pf, &f) &&
		   (kernel || symbolizer_names_gen(p->o.sy, pid, s->ts_ns) == gen)) {
		fold_reset(&p->scratch);
		fold_add_frame(&p->scratch, &f);
		bool ok = !p->scratch.oom;
		frame_memo_put(p->memo, &k, &f, ok ? p->scratch.p : NULL, p->scratch.len, p->scratch.nlines);
		if (ok)
			frag_keep(p, j, p->scratch.p, p->scratch.len, (unsigned)p->scratch.nlines);
	}
}

/* wait: JIT code its agent has not named yet stays unnamed (the sample may
 * wait for the name); else it is named from the JVM's memory where it can be. */
static const struct frame *sample_frames(struct sample_pipeline *p, const struct profile_sample *s, bool wait,
					 uint64_t gen, size_t *nk, size_t *nu)
{
	int kn, un;
	sample_depth(s, &kn, &un);
	fold_reset(&p->frag_text);
	if (kn > 1)
		symbolizer_kernel_prefetch(p->o.sy, (const uint64_t *)s->kstack, (size_t)kn);
	for (int i = 0; i < kn; i++)
		frame_named(p, s, i, (size_t)i, true, gen, wait);
	for (int i = 0; i < un; i++)
		frame_named(p, s, i, (size_t)(kn + i), false, gen, wait);
	*nk = (size_t)kn;
	*nu = (size_t)un;
	return p->frames;
}

/* Appends frame j's folded text: the one kept, else folded now. */
static void fold_frame(struct sample_pipeline *p, size_t j)
{
	const struct frag *g = &p->frag[j];
	if (g->len < 0 || p->frag_text.oom) {
		fold_add_frame(&p->fold, &p->frames[j]);
		return;
	}
	if (p->fold.len)
		fold_add_raw(&p->fold, ";", 1);
	fold_add_raw(&p->fold, p->frag_text.p + g->at, (size_t)g->len);
	p->fold.nlines += g->lines;
}

/* Whether the sample ran JIT code its agent has not named yet, and is young
 * enough to wait for the name; it is then kept in the late queue. */
static bool wait_for_names(struct sample_pipeline *p, const struct profile_sample *s, const struct frame *user,
			   size_t nu, uint64_t now)
{
	if (s->ts_ns + SAMPLE_LATE_NS <= now)
		return false;
	for (size_t i = 0; i < nu; i++) {
		if (symbolizer_names_later(p->o.sy, (pid_t)s->pid, &user[i]))
			return sample_queue_push(&p->late, MAX_LATE, s);
	}
	return false;
}

void sample_roots_fold(struct fold_buf *b, struct symbolizer *sy, pid_t pid, const char *thread)
{
	const char *pod, *con;
	fold_reset(b);
	symbolizer_container(sy, pid, &pod, &con);
	if (pod)
		fold_add(b, pod);
	if (con)
		fold_add(b, con);
	const char *root = symbolizer_process_root(sy, pid);
	if (root) {
		fold_add(b, root);
	} else {
		char buf[128];
		snprintf(buf, sizeof(buf), "[%d] %s", (int)pid, symbolizer_process_name(sy, pid));
		fold_add(b, buf);
	}
	fold_add(b, thread);
}

/* The marker where a HotSpot walk ended before the stack's root. */
static const char *walk_marker(const struct profile_sample *s, unsigned *flags)
{
	if (s->walk != PROFILE_WALK_HOTSPOT || s->walk_end == PROFILE_END_OK)
		return NULL;
	if (s->walk_end == PROFILE_END_TRUNCATED)
		return "[truncated]";
	*flags |= FOLDED_UNWIND_FAILED;
	return "[unwind failed]";
}

/* What a sample's folded text depends on besides its process and thread: how
 * its stacks were walked and ended, and their raw frames (where they lie). */
static void stack_key(const struct profile_sample *s, uint64_t gen, struct stack_cache_key *k)
{
	int kn, un;
	sample_depth(s, &kn, &un);
	k->pid = s->pid;
	k->gen = gen;
	k->head = (uint64_t)s->walk | (uint64_t)s->walk_end << 8 | (uint64_t)s->flags << 16 |
		  (uint64_t)(s->kstack_bytes < 0) << 24 | (uint64_t)(s->ustack_bytes < 0) << 25 | (uint64_t)kn << 32 |
		  (uint64_t)un << 48;
	k->part[0] = s->kstack;
	k->len[0] = (size_t)kn * sizeof(__u64);
	k->part[1] = &s->user;
	k->len[1] = (size_t)un * (s->walk == PROFILE_WALK_HOTSPOT ? sizeof(struct profile_frame) : sizeof(__u64));
	stack_cache_hash(k);
}

/* Whether every frame got its full name, so that the same raw stack, later,
 * folds the same: nothing unknown or named for now (a name may come), no
 * interpreted or compiled Java frame named only by the code it ran (a read of
 * the JVM's memory that failed this time). */
static bool fully_named(struct sample_pipeline *p, const struct profile_sample *s, const struct frame *f, size_t nk,
			size_t nu)
{
	for (size_t i = 0; i < nk; i++)
		if (!frame_final(p, 0, NULL, &f[i]))
			return false;
	for (size_t i = 0; i < nu; i++)
		if (!frame_final(p, (pid_t)s->pid, s->walk == PROFILE_WALK_HOTSPOT ? &s->user.frames[i] : NULL,
				 &f[nk + i]))
			return false;
	return true;
}

/* Hands the folded sample (in p->fold, without lines in p->plain when
 * stripped) to the sink. */
static void sample_emit(struct sample_pipeline *p, struct folded_sample *fs, bool stripped)
{
	const struct fold_buf *plain = stripped ? &p->plain : &p->fold;
	if (p->o.lines) {
		fs->lines = p->fold.p;
		fs->lines_len = p->fold.len;
		fs->lines_oom = p->fold.oom;
	}
	fs->stack = plain->p;
	fs->len = plain->len;
	fs->oom = p->fold.oom || plain->oom;
	/* time modes: a block weighs its time off the CPU, a CPU sample its period */
	/* off-CPU blocks and perf events' samples weigh what the kernel said (ns
	 * blocked, the sample's period); wall's CPU samples 1e9/Hz ns */
	fs->weight = !p->o.weigh					       ? 0 :
		     fs->s->kind == PROFILE_KIND_OFFCPU || !p->o.sample_weight ? fs->s->weight_ns :
										 p->o.sample_weight;
	p->o.sink(p->o.ctx, fs);
}

/* JFLAME_AGENTLESS_CHECK: a walked sample of a JVM with the agent has its
 * compiled and stub frames named from the JVM's memory as well; it counts as
 * equal when every frame folds to the same text both ways. */
static void agentless_check(struct sample_pipeline *p, const struct profile_sample *s, size_t nk, size_t nu)
{
	bool same = true;
	char comm[PROFILE_COMM_LEN + 1];
	if (s->walk != PROFILE_WALK_HOTSPOT || !symbolizer_has_agent(p->o.sy, (pid_t)s->pid))
		return;
	memcpy(comm, s->comm, PROFILE_COMM_LEN);
	comm[PROFILE_COMM_LEN] = '\0';
	const char *agent = symbolizer_thread_name(p->o.sy, (pid_t)s->pid, (pid_t)s->tid, comm);
	const char *memory = symbolizer_thread_name_memory(p->o.sy, (pid_t)s->pid, (pid_t)s->tid, comm);
	if (agent != memory) { /* both interned */
		same = false;
		if (p->check_stats.different < 5)
			msg_say("agentless check: pid %u: the agent names thread %d %.300s, the JVM's "
				"memory %.300s\n",
				s->pid, (int)s->tid, agent, memory);
	}
	for (size_t i = 0; i < nu && same; i++) {
		const struct profile_frame *pf = &s->user.frames[i];
		if (pf->kind != PROFILE_FRAME_JIT && pf->kind != PROFILE_FRAME_NATIVE_WRAPPER &&
		    pf->kind != PROFILE_FRAME_STUB)
			continue;
		struct frame m = symbolize_hotspot_memory(p->o.sy, (pid_t)s->pid, pf, s->ts_ns);
		fold_reset(&p->check_agent);
		fold_reset(&p->check_memory);
		fold_add_frame(&p->check_agent, &p->frames[nk + i]);
		fold_add_frame(&p->check_memory, &m);
		same = p->check_agent.len == p->check_memory.len &&
		       memcmp(p->check_agent.p, p->check_memory.p, p->check_agent.len) == 0;
		if (!same && p->check_stats.different < 5)
			msg_say("agentless check: pid %u: the agent names %.300s, the JVM's memory %.300s\n", s->pid,
				p->check_agent.p ? p->check_agent.p : "", p->check_memory.p ? p->check_memory.p : "");
	}
	p->check_stats.samples++;
	p->check_stats.different += !same;
}

const struct sample_pipeline_check *sample_pipeline_check_stats(const struct sample_pipeline *p)
{
	return p->check ? &p->check_stats : NULL;
}

void sample_pipeline_add(struct sample_pipeline *p, const struct profile_sample *s, uint64_t now)
{
	char comm[PROFILE_COMM_LEN + 1];
	size_t nk = 0, nu = 0;
	struct stack_cache_key key;
	uint64_t gen = 0;
	struct folded_sample fs = { .s = s };
	const struct stack_cache_value *hit = NULL;

	symbolizer_sample_thread(p->o.sy, (pid_t)s->pid, (pid_t)s->tid);
	if (p->cache)
		gen = symbolizer_names_gen(p->o.sy, (pid_t)s->pid, s->ts_ns);
	if (gen) {
		stack_key(s, gen, &key);
		hit = stack_cache_get(p->cache, &key);
	}
	const struct frame *f = NULL;
	bool wait = now && s->ts_ns + SAMPLE_LATE_NS > now;
	if (!hit || p->verify) {
		f = sample_frames(p, s, wait, gen, &nk, &nu);
		if (wait && wait_for_names(p, s, f + nk, nu, now)) {
			p->mismatches += hit != NULL; /* a kept stack had all its names */
			return;
		}
	}
	memcpy(comm, s->comm, PROFILE_COMM_LEN);
	comm[PROFILE_COMM_LEN] = '\0';
	fs.thread = symbolizer_thread_name(p->o.sy, (pid_t)s->pid, (pid_t)s->tid, comm);

	sample_roots_fold(&p->fold, p->o.sy, (pid_t)s->pid, fs.thread);
	size_t roots = p->fold.len;
	fs.roots_len = roots;
	if (hit && !p->verify) {
		fold_add_raw(&p->fold, hit->text, hit->len);
		if (hit->plain) {
			/* roots hold no line marks (fold_add makes them '_') */
			fold_reset(&p->plain);
			fold_add_raw(&p->plain, p->fold.p, roots);
			fold_add_raw(&p->plain, hit->plain, hit->plain_len);
		}
		fs.flags = hit->flags;
		fs.stack_errors = hit->stack_errors;
		sample_emit(p, &fs, hit->plain != NULL);
		return;
	}
	/* A stack cut at the depth limit has lost its outermost frames; a walk
	 * that could not go on is marked where its lost frames were. */
	const char *marker = walk_marker(s, &fs.flags);
	if ((s->walk != PROFILE_WALK_HOTSPOT && (int)nu >= p->max_user) || (int)nk >= p->max_kernel ||
	    (marker && marker[1] == 't')) {
		fs.flags |= FOLDED_TRUNCATED;
		fold_add(&p->fold, "[truncated]");
	} else if (marker) {
		fold_add(&p->fold, marker);
	}
	if (s->ustack_bytes < 0 && s->pid != 0) {
		fs.stack_errors++;
		fold_add(&p->fold, "[failed to read user stack]");
	}
	if (s->flags & PROFILE_FLAG_NO_USER)
		fold_add(&p->fold, "[no user stack]"); /* an off-CPU block that did not end where it began */
	for (size_t i = nu; i > 0; i--)
		fold_frame(p, nk + i - 1);
	if (s->kstack_bytes < 0 && s->pid != 0) {
		fs.stack_errors++;
		fold_add(&p->fold, "[failed to read kernel stack]");
	}
	for (size_t i = nk; i > 0; i--)
		fold_frame(p, i - 1);
	bool stripped = false;
	if (p->o.lines && p->fold.nlines) {
		fold_reset(&p->plain);
		fold_strip_lines(&p->plain, p->fold.p, p->fold.len);
		stripped = true;
	}
	fs.frames = f;
	fs.nframes = nk + nu;
	if (p->check)
		agentless_check(p, s, nk, nu);
	if (hit) { /* verify: what was kept is what naming and folding it again gives */
		if (hit->len != p->fold.len - roots || memcmp(hit->text, p->fold.p + roots, hit->len) != 0 ||
		    hit->flags != fs.flags || hit->stack_errors != fs.stack_errors ||
		    (hit->plain != NULL) != stripped ||
		    (stripped && (hit->plain_len != p->plain.len - roots ||
				  memcmp(hit->plain, p->plain.p + roots, hit->plain_len) != 0))) {
			if (s->pid && !proc_info_alive((pid_t)s->pid))
				; /* named after it exited: see named_after_exit */
			else if (p->mismatches++ < 3)
				msg_say("stack cache mismatch: kept %.300s, now %.300s\n", hit->text,
					p->fold.p + roots);
		}
	} else if (gen && !p->fold.oom /* kept while the stack's names stay what they are */ &&
		   !(stripped && p->plain.oom) && fully_named(p, s, f, nk, nu) &&
		   symbolizer_names_gen(p->o.sy, (pid_t)s->pid, s->ts_ns) == gen) {
		struct stack_cache_value v = { p->fold.p + roots, p->fold.len - roots, NULL, 0,
					       fs.flags,	  fs.stack_errors };
		if (stripped) {
			/* the roots have no lines: the same length in both */
			v.plain = p->plain.p + roots;
			v.plain_len = p->plain.len - roots;
		}
		stack_cache_put(p->cache, &key, &v);
	}
	sample_emit(p, &fs, stripped);
}

bool sample_pipeline_cache_stats(const struct sample_pipeline *p, struct sample_pipeline_cache_stats *out)
{
	struct stack_cache_stats st;
	if (!p->cache)
		return false;
	stack_cache_stats(p->cache, &st);
	*out = (struct sample_pipeline_cache_stats){ st.hits, st.misses, st.flushes, p->mismatches, p->verify };
	return true;
}

void sample_pipeline_release_before(struct sample_pipeline *p, uint64_t end)
{
	size_t keep = 0;
	for (size_t i = 0; i < p->late.n; i++) {
		if (p->late.v[i]->ts_ns < end) {
			sample_pipeline_add(p, p->late.v[i], 0);
			free(p->late.v[i]);
		} else {
			p->late.v[keep++] = p->late.v[i];
		}
	}
	p->late.n = keep;
}

/* What still waits goes to the other of two buffers. */
void sample_pipeline_release_late(struct sample_pipeline *p, uint64_t now)
{
	struct profile_sample **s = p->late.v;
	size_t n = p->late.n;
	if (!n)
		return;
	p->late.v = p->late_spare.v;
	p->late_spare.v = s;
	p->late.n = 0;
	for (size_t i = 0; i < n; i++) {
		sample_pipeline_add(p, s[i], now);
		free(s[i]);
		s[i] = NULL;
	}
}
