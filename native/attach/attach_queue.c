/* attach_queue.c - one forked child per attach (credentials are per process,
 * and a stuck JVM must not stall sampling); results come back through a pipe. */
#include "attach_queue.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "grow.h"

#define MAX_RUNNING	64
#define RECENT_CHILDREN 256 /* children remembered after they exit (their samples come later) */
/* An attach child running longer than attach_agent's own bound (4 waits of
 * the timeout each) plus this is stuck where no wait is (a blocking open or
 * read of a target's file): it is killed, whatever holds it. */
#define CHILD_SLACK_MS 2000

struct job {
	pid_t pid, child;
	int fd;
	bool stopped; /* told to stop (SIGTERM) */
	uint64_t start_ms;
	char buf[sizeof(struct attach_info) + 1200];
	size_t len;
};

struct attach_queue {
	const struct attach_opts *opts;
	attach_done_fn fn;
	void *ctx;
	struct job jobs[MAX_RUNNING];
	size_t njobs;
	pid_t *tried;
	size_t ntried, tcap;
	pid_t recent[RECENT_CHILDREN]; /* the latest children, a ring */
	size_t nrecent;
};

struct attach_queue *attach_queue_new(const struct attach_opts *opts, attach_done_fn fn, void *ctx)
{
	struct attach_queue *q = calloc(1, sizeof(*q));
	if (!q)
		return NULL;
	q->opts = opts;
	q->fn = fn;
	q->ctx = ctx;
	return q;
}

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static bool tried(const struct attach_queue *q, pid_t pid)
{
	for (size_t i = 0; i < q->ntried; i++)
		if (q->tried[i] == pid)
			return true;
	return false;
}

static volatile sig_atomic_t child_stop;

static void on_child_stop(int sig)
{
	(void)sig;
	child_stop = 1;
}

/* The child's report: outcome, then the attach_info, then the message. The
 * parent decides when it stops: SIGINT and SIGHUP (a terminal's Ctrl-C reaches
 * the whole group) are ignored, SIGTERM ends its waits (attach_queue_stop). */
static void child_main(const struct attach_opts *o, pid_t pid, int fd, const sigset_t *old)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, term = { .sa_handler = on_child_stop };
	struct attach_opts co = *o;
	struct attach_info info;
	char err[1024] = "";
	sigemptyset(&ign.sa_mask);
	sigemptyset(&term.sa_mask);
	sigaction(SIGINT, &ign, NULL);
	sigaction(SIGHUP, &ign, NULL);
	sigaction(SIGTERM, &term, NULL);
	sigprocmask(SIG_SETMASK, old, NULL);
	co.cancel = &child_stop;
	int outcome = attach_agent(pid, &co, &info, err, sizeof(err));
	char out[sizeof(int) + sizeof(info) + sizeof(err)];
	memcpy(out, &outcome, sizeof(int));
	memcpy(out + sizeof(int), &info, sizeof(info));
	memcpy(out + sizeof(int) + sizeof(info), err, strlen(err) + 1);
	size_t n = sizeof(int) + sizeof(info) + strlen(err) + 1, off = 0;
	while (off < n) {
		ssize_t w = write(fd, out + off, n - off);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	_exit(outcome == ATTACH_FAILED ? 1 : 0);
}

int attach_queue_start(struct attach_queue *q, pid_t pid)
{
	struct attach_info none = { 0 };
	int fds[2];
	if (tried(q, pid))
		return 0;
	if (ARRAY_GROW(q->tried, q->tcap, q->ntried + 1) != 0)
		return -1;
	q->tried[q->ntried++] = pid;
	if (q->njobs == MAX_RUNNING) {
		q->fn(q->ctx, pid, ATTACH_FAILED, &none, "too many attaches at once; this JVM is skipped");
		return -1;
	}
	if (pipe2(fds, O_CLOEXEC) != 0) {
		q->fn(q->ctx, pid, ATTACH_FAILED, &none, "pipe failed; this JVM is skipped");
		return -1;
	}
	sigset_t all, old;
	sigfillset(&all);
	fflush(NULL);
	sigprocmask(SIG_BLOCK, &all, &old); /* the child's handlers are its own before a signal reaches it */
	pid_t child = fork();
	if (child == 0) {
		close(fds[0]);
		child_main(q->opts, pid, fds[1], &old);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(fds[1]);
	if (child < 0) {
		close(fds[0]);
		q->fn(q->ctx, pid, ATTACH_FAILED, &none, "fork failed; this JVM is skipped");
		return -1;
	}
	q->recent[q->nrecent++ % RECENT_CHILDREN] = child;
	struct job *j = &q->jobs[q->njobs++];
	memset(j, 0, sizeof(*j));
	j->pid = pid;
	j->child = child;
	j->fd = fds[0];
	j->start_ms = mono_ms();
	return 0;
}

bool attach_queue_is_child(const struct attach_queue *q, pid_t pid)
{
	size_t n = q->nrecent < RECENT_CHILDREN ? q->nrecent : RECENT_CHILDREN;
	for (size_t i = 0; i < n; i++)
		if (q->recent[i] == pid)
			return true;
	return false;
}

bool attach_queue_pending(const struct attach_queue *q, pid_t pid)
{
	for (size_t i = 0; q && i < q->njobs; i++)
		if (q->jobs[i].pid == pid)
			return true;
	return false;
}

size_t attach_queue_npending(const struct attach_queue *q)
{
	return q ? q->njobs : 0;
}

static void finish(struct attach_queue *q, size_t i, bool killed, const char *why)
{
	struct job j = q->jobs[i];
	struct attach_info info = { 0 };
	int outcome = ATTACH_FAILED;
	char msg[sizeof(j.buf)];
	snprintf(msg, sizeof(msg), "%s", why ? why : "the attach was stopped before it finished");
	q->jobs[i] = q->jobs[--q->njobs];
	close(j.fd);
	if (killed)
		kill(j.child, SIGKILL);
	while (waitpid(j.child, NULL, 0) < 0 && errno == EINTR)
		;
	if (!killed && j.len > sizeof(int) + sizeof(info)) {
		memcpy(&outcome, j.buf, sizeof(int));
		memcpy(&info, j.buf + sizeof(int), sizeof(info));
		j.buf[j.len < sizeof(j.buf) ? j.len : sizeof(j.buf) - 1] = '\0';
		snprintf(msg, sizeof(msg), "%s", j.buf + sizeof(int) + sizeof(info));
	} else if (!killed) {
		snprintf(msg, sizeof(msg), "the attach to pid %d ended without a result", (int)j.pid);
	}
	q->fn(q->ctx, j.pid, (enum attach_outcome)outcome, &info, msg);
}

/* Kills the attach children that outlived their bound (see CHILD_SLACK_MS). */
static void kill_overdue(struct attach_queue *q)
{
	int timeout = q->opts->timeout_ms > 0 ? q->opts->timeout_ms : ATTACH_DEFAULT_TIMEOUT_MS;
	uint64_t limit = 4 * (uint64_t)timeout + CHILD_SLACK_MS, now = mono_ms();
	for (size_t i = q->njobs; i-- > 0;) {
		char why[160];
		if (now - q->jobs[i].start_ms < limit)
			continue;
		snprintf(why, sizeof(why),
			 "the attach to pid %d was stopped after %.1f s, longer than its "
			 "waits may take (4 x --attach-timeout)",
			 (int)q->jobs[i].pid, (double)(now - q->jobs[i].start_ms) / 1000.0);
		finish(q, i, true, why);
	}
}

void attach_queue_poll(struct attach_queue *q, int wait_ms)
{
	struct pollfd p[MAX_RUNNING];
	if (!q)
		return;
	kill_overdue(q);
	if (q->njobs == 0)
		return;
	for (size_t i = 0; i < q->njobs; i++)
		p[i] = (struct pollfd){ .fd = q->jobs[i].fd, .events = POLLIN };
	if (poll(p, q->njobs, wait_ms) <= 0)
		return;
	for (size_t i = q->njobs; i-- > 0;) {
		if (!p[i].revents)
			continue;
		struct job *j = &q->jobs[i];
		ssize_t r = read(j->fd, j->buf + j->len, sizeof(j->buf) - 1 - j->len);
		if (r > 0 && j->len + (size_t)r < sizeof(j->buf) - 1) {
			j->len += (size_t)r;
			continue;
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r > 0)
			j->len += (size_t)r;
		finish(q, i, false, NULL); /* EOF: the child is done */
	}
}

void attach_queue_stop(struct attach_queue *q)
{
	for (size_t i = 0; q && i < q->njobs; i++) {
		if (!q->jobs[i].stopped)
			kill(q->jobs[i].child, SIGTERM);
		q->jobs[i].stopped = true;
	}
}

void attach_queue_free(struct attach_queue *q)
{
	if (!q)
		return;
	while (q->njobs)
		finish(q, q->njobs - 1, true, NULL);
	free(q->tried);
	free(q);
}
