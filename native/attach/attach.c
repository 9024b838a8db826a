/* attach.c - HotSpot's dynamic attach on Linux, in C: the .attach_pid trigger
 * file and SIGQUIT start the JVM's listener; a `load` request over its socket. */
#include "attach.h"
#include "target_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "agent_files.h"
#include "hsperf.h"
#include "proc_info.h"
#include "text_escape.h"

#define REPLY_MAX 65536
#define AGENT_MAX (64u << 20)

struct target {
	struct proc_info pi;
	int tmp_fd; /* the JVM's /tmp (O_PATH) */
	bool switched;
	char tmp[64];			     /* "/proc/PID/root/tmp" */
	const volatile sig_atomic_t *cancel; /* a stop signal came: every wait ends */
};

/* Each wait sleeps or polls at most this long between looks at t->cancel. */
#define WAIT_SLICE_MS 100

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

static bool cancelled(const struct target *t)
{
	return t->cancel && *t->cancel;
}

static void interrupted(pid_t pid, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "interrupted while waiting for pid %d to %s", (int)pid, what);
}

/* ---- credentials: the JVM trusts only its own user (and root on JDK 11+) ------ */

static int become_target(struct target *t, pid_t pid, char *err, size_t errlen)
{
	if (geteuid() == t->pi.euid && getegid() == t->pi.egid)
		return 0;
	if (setresgid((gid_t)-1, t->pi.egid, (gid_t)-1) != 0 || setresuid((uid_t)-1, t->pi.euid, (uid_t)-1) != 0) {
		int e = errno;
		setresgid((gid_t)-1, getgid(), (gid_t)-1);
		snprintf(err, errlen,
			 "cannot switch to pid %d's user (uid %u, gid %u): %s; run jflame as root "
			 "or as that user (in a container it needs CAP_SETUID and CAP_SETGID)",
			 (int)pid, (unsigned)t->pi.euid, (unsigned)t->pi.egid, strerror(e));
		return -1;
	}
	t->switched = true;
	return 0;
}

static void become_self(struct target *t)
{
	if (!t->switched)
		return;
	/* the saved ids kept who we were */
	if (setresuid((uid_t)-1, getuid(), (uid_t)-1) != 0 || setresgid((gid_t)-1, getgid(), (gid_t)-1) != 0)
		abort(); /* cannot happen: the saved set-user-ID is ours */
	t->switched = false;
}

/* ---- the agent library as the JVM sees it ----------------------------------- */

int attach_find_agent(char *out, size_t len, char *err, size_t errlen)
{
	static const char *const rel[] = { "libjflame-agent.so", "../lib/libjflame-agent.so",
					   "../lib/jflame/libjflame-agent.so", "../jvmagent/libjflame-agent.so" };
	char exe[PATH_MAX];
	const char *env = getenv("JFLAME_AGENT");
	if (env && *env) {
		if (access(env, R_OK) != 0) {
			snprintf(err, errlen, "JFLAME_AGENT=%s: %s; point it at libjflame-agent.so", env,
				 strerror(errno));
			return -1;
		}
		snprintf(out, len, "%s", env);
		return 0;
	}
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash)
			*slash = '\0';
		for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			char path[PATH_MAX + 64], real[PATH_MAX];
			snprintf(path, sizeof(path), "%s/%s", exe, rel[i]);
			if (access(path, R_OK) == 0 && realpath(path, real)) {
				snprintf(out, len, "%s", real);
				return 0;
			}
		}
	}
	snprintf(err, errlen,
		 "cannot find libjflame-agent.so next to jflame or in ../lib; "
		 "give its path with --agent or JFLAME_AGENT");
	return -1;
}

static int read_whole(const char *path, unsigned char **buf, size_t *len, char *err, size_t errlen)
{
	struct stat st;
	int rc = -1, fd = open(path, O_RDONLY | O_CLOEXEC);
	*buf = NULL;
	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(err, errlen, "failed to open %s: %s", path, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t)st.st_size > AGENT_MAX) {
		snprintf(err, errlen, "%s is not the agent library (not a regular file of sane size)", path);
		goto out;
	}
	*buf = malloc((size_t)st.st_size);
	if (!*buf) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	*len = 0;
	while (*len < (size_t)st.st_size) {
		ssize_t got = read(fd, *buf + *len, (size_t)st.st_size - *len);
		if (got <= 0) {
			snprintf(err, errlen, "failed to read %s: %s", path, got ? strerror(errno) : "short file");
			free(*buf);
			*buf = NULL;
			goto out;
		}
		*len += (size_t)got;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

/* 1 when the open file fd holds exactly buf[0..len). */
static int same_content(int fd, const unsigned char *buf, size_t len)
{
	unsigned char chunk[65536];
	size_t off = 0;
	for (;;) {
		ssize_t got = pread(fd, chunk, sizeof(chunk), (off_t)off);
		if (got < 0)
			return 0;
		if (got == 0)
			return off == len;
		if ((size_t)got > len - off || memcmp(chunk, buf + off, (size_t)got) != 0)
			return 0;
		off += (size_t)got;
	}
}

/* The JVM cannot see the agent at jflame's path (another mount namespace, a
 * private /tmp...): put a copy into its /tmp, owned by its user, written to a
 * temporary name and renamed, and reused while the content is the same. */
static int copy_agent(struct target *t, pid_t pid, const char *agent, struct attach_info *info, char *err,
		      size_t errlen)
{
	unsigned char *buf;
	size_t len;
	char name[64], tmpname[96];
	int rc = -1, fd = -1;
	if (read_whole(agent, &buf, &len, err, errlen) != 0)
		return -1;
	snprintf(name, sizeof(name), "libjflame-agent-%08lx.so", (unsigned long)crc32(0L, buf, (uInt)len));
	snprintf(info->agent_path, sizeof(info->agent_path), "/tmp/%s", name);
	if (become_target(t, pid, err, errlen) != 0)
		goto out;
	fd = openat(t->tmp_fd, name,
		    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC); /* a FIFO never blocks */
	if (fd >= 0) {
		struct stat st;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 &&
		    (st.st_uid == t->pi.euid || st.st_uid == 0) && !(st.st_mode & 022) && same_content(fd, buf, len)) {
			info->copied = true;
			rc = 0;
			goto out;
		}
		close(fd);
		fd = -1;
	}
	for (int attempt = 0; fd < 0 && attempt < 16; attempt++) {
		snprintf(tmpname, sizeof(tmpname), ".%s.%d.%d", name, (int)getpid(), attempt);
		fd = openat(t->tmp_fd, tmpname, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		snprintf(err, errlen, "failed to create %s/%s for pid %d: %s", t->tmp, name, (int)pid, strerror(errno));
		goto out;
	}
	for (size_t off = 0; off < len;) {
		ssize_t w = write(fd, buf + off, len - off);
		if (w <= 0) {
			snprintf(err, errlen, "failed to write %s/%s: %s", t->tmp, tmpname,
				 w ? strerror(errno) : "no space");
			unlinkat(t->tmp_fd, tmpname, 0);
			goto out;
		}
		off += (size_t)w;
	}
	if (fchmod(fd, 0644) != 0 || renameat(t->tmp_fd, tmpname, t->tmp_fd, name) != 0) {
		snprintf(err, errlen,
			 "failed to put the agent at %s/%s: %s; remove that file if another "
			 "user owns it",
			 t->tmp, name, strerror(errno));
		unlinkat(t->tmp_fd, tmpname, 0);
		goto out;
	}
	info->copied = true;
	rc = 0;
out:
	become_self(t);
	if (fd >= 0)
		close(fd);
	free(buf);
	return rc;
}

static int agent_path_for(struct target *t, pid_t pid, const char *agent, struct attach_info *info, char *err,
			  size_t errlen)
{
	char real[PATH_MAX], inside[PATH_MAX + 64];
	struct stat host, seen;
	if (!realpath(agent, real) || stat(real, &host) != 0) {
		snprintf(err, errlen, "failed to open %s: %s; give the agent's path with --agent", agent,
			 strerror(errno));
		return -1;
	}
	snprintf(inside, sizeof(inside), "/proc/%d/root%s", (int)pid, real);
	int fd = target_file_open(inside, TARGET_FILE_READABLE | TARGET_FILE_QUIET, 0, &seen, NULL, 0);
	if (fd >= 0)
		close(fd);
	if (fd >= 0 && seen.st_dev == host.st_dev && seen.st_ino == host.st_ino) {
		snprintf(info->agent_path, sizeof(info->agent_path), "%s", real);
		return 0;
	}
	return copy_agent(t, pid, real, info, err, errlen);
}

/* ---- the listener ------------------------------------------------------------- */

static bool socket_ready(const struct target *t, const char *sock)
{
	struct stat st;
	return fstatat(t->tmp_fd, sock, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(st.st_mode);
}

/* Creates the trigger file the JVM's SIGQUIT handler looks for: in its working
 * directory, else in its /tmp; as the JVM's user. *dirfd and name say where it
 * is, so it can be removed even after the JVM (and its /proc entry) is gone. */
static int create_trigger(struct target *t, pid_t pid, int *dirfd, char *name, size_t namelen, char *err, size_t errlen)
{
	char cwd[64];
	int fd = -1, e = 0;
	snprintf(name, namelen, ".attach_pid%d", (int)t->pi.nspid);
	snprintf(cwd, sizeof(cwd), "/proc/%d/cwd", (int)pid);
	*dirfd = open(cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (become_target(t, pid, err, errlen) != 0) {
		if (*dirfd >= 0)
			close(*dirfd);
		*dirfd = -1;
		return -1;
	}
	if (*dirfd >= 0)
		fd = openat(*dirfd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0660);
	if (fd < 0) {
		if (*dirfd >= 0)
			close(*dirfd);
		*dirfd = dup(t->tmp_fd);
		fd = *dirfd >= 0 ? openat(*dirfd, name,
					  O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0660) :
				   -1;
	}
	e = errno;
	become_self(t);
	if (fd < 0) {
		snprintf(err, errlen,
			 "failed to create the attach trigger %s in pid %d's working directory or "
			 "/tmp: %s",
			 name, (int)pid, strerror(e));
		if (*dirfd >= 0)
			close(*dirfd);
		*dirfd = -1;
		return -1;
	}
	close(fd);
	return 0;
}

static void remove_trigger(int dirfd, const char *name)
{
	unlinkat(dirfd, name, 0);
	close(dirfd);
}

/* Why a JVM does not answer: gone, stopped, or just slow. */
static void stalled(pid_t pid, const char *what, int timeout_ms, char *err, size_t errlen)
{
	struct proc_info now;
	if (!proc_info_alive(pid))
		snprintf(err, errlen, "pid %d exited while jflame was attaching (it %s)", (int)pid, what);
	else if (proc_info_read(pid, &now) == 0 && (now.state == 'T' || now.state == 't'))
		snprintf(err, errlen,
			 "pid %d is stopped (by SIGSTOP or a debugger) and cannot answer; resume it "
			 "with kill -CONT %d and try again",
			 (int)pid, (int)pid);
	else
		snprintf(err, errlen,
			 "pid %d %s within %.1f s (is it very busy?); try again with a longer "
			 "--timeout",
			 (int)pid, what, timeout_ms / 1000.0);
}

/* Agents can be attached in the live phase only: a JVM still starting up
 * (sun.rt.createVmEndTime not yet set) is given the time to finish. A JVM so
 * young that it has no hsperfdata yet (or one run with -XX:-UsePerfData) is
 * ready once it catches SIGQUIT; one without either is waited for only until
 * it is timeout_ms old (a JVM installs its SIGQUIT handler as it starts: an
 * older process without one runs with -Xrs, or is no JVM that can attach). */
static int wait_live(struct target *t, pid_t pid, int timeout_ms, char *err, size_t errlen)
{
	uint64_t start = mono_ms();
	uint64_t age = proc_info_age_ms(t->pi.start_time);
	for (;;) {
		int64_t end = 0;
		struct proc_info now;
		bool perf = hsperf_read_long(pid, t->pi.nspid, "sun.rt.createVmEndTime", &end) == 0;
		bool quit = proc_info_read(pid, &now) == 0 && (now.sig_caught & (1ULL << (SIGQUIT - 1)));
		if (quit)
			t->pi.sig_caught = now.sig_caught;
		if (perf ? end != 0 : quit)
			return 0;
		if (!proc_info_alive(pid)) {
			snprintf(err, errlen, "pid %d exited while jflame was attaching", (int)pid);
			return -1;
		}
		if (cancelled(t)) {
			interrupted(pid, "finish starting up", err, errlen);
			return -1;
		}
		if (!perf && age + (mono_ms() - start) >= (uint64_t)timeout_ms)
			return 0;				 /* start_listener says what is missing */
		if (mono_ms() - start >= (uint64_t)timeout_ms) { /* bound: timeout_ms */
			snprintf(err, errlen,
				 "pid %d is still starting up after %.1f s (agents load once its VM "
				 "is initialised); try again, or with a longer --timeout",
				 (int)pid, timeout_ms / 1000.0);
			return -1;
		}
		sleep_ms(20);
	}
}

/* A socket left by a JVM that died (SIGKILL) refuses connections: the JVM
 * now holding this pid makes a new one when asked. */
static bool socket_stale(const struct target *t, const char *sock)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	bool stale = false;
	/* non-blocking: a full backlog (a stopped JVM) says EAGAIN at once */
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return false;
	if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", t->tmp, sock) >= (int)sizeof(sa.sun_path)) {
		close(fd);
		return false;
	}
	stale = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 && errno == ECONNREFUSED;
	close(fd);
	return stale;
}

static int start_listener(struct target *t, pid_t pid, const char *sock, int timeout_ms, char *err, size_t errlen)
{
	char trigger[64];
	int trigger_dir;
	uint64_t start = mono_ms();
	bool resent = false;
	int delay = 10;
	if (socket_ready(t, sock)) {
		if (!socket_stale(t, sock))
			return 0;
		unlinkat(t->tmp_fd, sock, 0); /* as root: sticky /tmp lets the owner or root remove it */
	}
	if (!(t->pi.sig_caught & (1ULL << (SIGQUIT - 1)))) {
		snprintf(err, errlen,
			 "pid %d does not handle SIGQUIT (started with -Xrs?), so its attach "
			 "listener cannot be started; restart it with the agent: -agentpath:libjflame-agent.so",
			 (int)pid);
		return -1;
	}
	if (create_trigger(t, pid, &trigger_dir, trigger, sizeof(trigger), err, errlen) != 0)
		return -1;
	if (kill(pid, SIGQUIT) != 0) {
		snprintf(err, errlen, "failed to signal pid %d: %s%s", (int)pid, strerror(errno),
			 errno == EPERM ? "; run jflame as root or as the JVM's user (in a container: CAP_KILL)" : "");
		remove_trigger(trigger_dir, trigger);
		return -1;
	}
	while (!socket_ready(t, sock)) { /* bound: timeout_ms */
		uint64_t spent = mono_ms() - start;
		if (spent >= (uint64_t)timeout_ms || cancelled(t))
			break;
		/* like the JDK: one more SIGQUIT half way, in case the first came too early */
		if (!resent && spent > (uint64_t)timeout_ms / 2) {
			kill(pid, SIGQUIT);
			resent = true;
		}
		if (!proc_info_alive(pid))
			break;
		sleep_ms(delay);
		delay = delay * 2 < WAIT_SLICE_MS ? delay * 2 : WAIT_SLICE_MS;
	}
	remove_trigger(trigger_dir, trigger);
	if (socket_ready(t, sock))
		return 0;
	if (cancelled(t)) {
		interrupted(pid, "start its attach listener", err, errlen);
		return -1;
	}
	stalled(pid, "did not start its attach listener", timeout_ms, err, errlen);
	return -1;
}

/* Waits until fd is ready for events, the deadline passes (0) or a stop
 * signal comes (-1); 1 when ready. Polls in slices of WAIT_SLICE_MS. */
static int wait_fd(const struct target *t, int fd, short events, uint64_t deadline)
{
	for (;;) {
		uint64_t now = mono_ms();
		struct pollfd p = { .fd = fd, .events = events };
		if (cancelled(t))
			return -1;
		if (now >= deadline)
			return 0;
		int n = poll(&p, 1, deadline - now < WAIT_SLICE_MS ? (int)(deadline - now) : WAIT_SLICE_MS);
		if (n > 0)
			return 1;
		if (n < 0 && errno != EINTR)
			return 1; /* the read or write that follows says what is wrong */
	}
}

/* One request: connect as the JVM's user, send, read the whole reply; all
 * three within timeout_ms (the socket is non-blocking: a stopped JVM's full
 * backlog or unread socket cannot hold jflame). */
static int request(struct target *t, pid_t pid, const char *sock, const char *req, size_t reqlen, int timeout_ms,
		   char *reply, size_t *replylen, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int rc = -1, fd = -1;
	uint64_t deadline = mono_ms() + (uint64_t)timeout_ms; /* bound: timeout_ms */
	size_t got = 0;

	if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", t->tmp, sock) >= (int)sizeof(sa.sun_path)) {
		snprintf(err, errlen, "socket path of pid %d too long", (int)pid);
		return -1;
	}
	/* the JDK's own check: the socket is the JVM user's, not planted by another */
	if (fstatat(t->tmp_fd, sock, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISSOCK(st.st_mode) ||
	    st.st_uid != t->pi.euid || (st.st_mode & 077)) {
		snprintf(err, errlen,
			 "%s is not pid %d's attach socket (owner or mode wrong); remove it and "
			 "try again",
			 sa.sun_path, (int)pid);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	for (;;) {
		if (become_target(t, pid, err, errlen) != 0)
			goto out;
		int c = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
		int e = errno;
		become_self(t);
		if (c == 0)
			break;
		if (e != EAGAIN && e != EINTR) { /* EAGAIN: its backlog is full, it does not accept */
			snprintf(err, errlen, "failed to connect to %s: %s", sa.sun_path, strerror(e));
			goto out;
		}
		if (cancelled(t) || mono_ms() >= deadline)
			goto late;
		sleep_ms(20);
	}
	for (size_t off = 0; off < reqlen;) {
		ssize_t n = send(fd, req + off, reqlen - off, MSG_NOSIGNAL);
		if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (wait_fd(t, fd, POLLOUT, deadline) <= 0)
				goto late;
			continue;
		}
		if (n <= 0) {
			snprintf(err, errlen, "failed to send to pid %d: %s", (int)pid, strerror(errno));
			goto out;
		}
		off += (size_t)n;
	}
	for (;;) {
		if (wait_fd(t, fd, POLLIN, deadline) <= 0)
			goto late;
		ssize_t r = read(fd, reply + got, REPLY_MAX - 1 - got);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
		if (got == REPLY_MAX - 1)
			break;
	}
	reply[got] = '\0';
	*replylen = got;
	rc = 0;
	goto out;
late:
	if (cancelled(t))
		interrupted(pid, "answer", err, errlen);
	else
		stalled(pid, "did not answer", timeout_ms, err, errlen);
out:
	close(fd);
	return rc;
}

/* Appends one NUL-terminated string to a request. */
static void put(char *req, size_t *len, size_t cap, const char *s)
{
	size_t n = strlen(s) + 1;
	if (*len + n <= cap)
		memcpy(req + *len, s, n);
	*len += n;
}

/* Protocol 1: "1\0cmd\0a\0b\0c\0" (always three arguments). Protocol 2 (JDK 24+):
 * "2\0<size>\0cmd\0args...\0", size counting the command and its arguments. */
static size_t build_request(char *req, size_t cap, int version, const char *cmd, const char *const *args, size_t nargs)
{
	size_t len = 0;
	put(req, &len, cap, version == 2 ? "2" : "1");
	if (version == 2) {
		char size[32];
		size_t body = strlen(cmd) + 1;
		for (size_t i = 0; i < nargs; i++)
			body += strlen(args[i]) + 1;
		snprintf(size, sizeof(size), "%zu", body);
		put(req, &len, cap, size);
	}
	put(req, &len, cap, cmd);
	for (size_t i = 0; i < (version == 2 ? nargs : 3); i++)
		put(req, &len, cap, i < nargs ? args[i] : "");
	return len;
}

/* Text after the first line, lines joined by spaces, trimmed. */
static void rest_of_reply(const char *p, char *msg, size_t msglen)
{
	size_t o = 0;
	while (*p == '\n' || *p == ' ')
		p++;
	for (; *p && o + 1 < msglen; p++)
		msg[o++] = *p == '\n' ? ' ' : *p;
	while (o > 0 && msg[o - 1] == ' ')
		o--;
	msg[o] = '\0';
	text_escape_inplace(msg, msglen); /* the JVM's text */
}

int attach_parse_load_reply(const char *reply, size_t len, int *agent_rc, char *msg, size_t msglen)
{
	char buf[4096];
	char *end;
	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, reply, len);
	buf[len] = '\0';
	for (size_t i = 0; i < len; i++)
		if (buf[i] == '\0' || buf[i] == '\r')
			buf[i] = ' ';
	*agent_rc = INT_MIN;
	msg[0] = '\0';
	errno = 0;
	long status = strtol(buf, &end, 10);
	if (end == buf || (*end && *end != '\n')) {
		char shown[256];
		text_escape(shown, sizeof(shown), buf, len < 60 ? len : 60);
		snprintf(msg, msglen, "the JVM's reply makes no sense: '%s'", shown);
		return -1;
	}
	const char *rest = *end ? end + 1 : end;
	if (status != 0) {
		rest_of_reply(rest, msg, msglen);
		if (!msg[0])
			snprintf(msg, msglen, "the JVM reported error %ld", status);
		return -1;
	}
	/* JDK 21+: "return code: N"; JDK 9-20: "N" */
	if (strncmp(rest, "return code: ", 13) == 0)
		rest += 13;
	long rc = strtol(rest, &end, 10);
	if (end == rest) {
		rest_of_reply(rest, msg, msglen);
		if (!msg[0])
			snprintf(msg, msglen, "the JVM did not say whether the agent started");
		return -1;
	}
	*agent_rc = (int)rc;
	if (rc != 0) {
		rest_of_reply(end, msg, msglen);
		return -1;
	}
	return 0;
}

/* JDK 24+ answers "getversion" with "2 option,..."; older JVMs reject it (1).
 * A JVM that does not answer at all within timeout_ms (or a stop signal): -1
 * with err, the load would wait for it in vain. */
static int protocol_version(struct target *t, pid_t pid, const char *sock, int timeout_ms, char *err, size_t errlen)
{
	static const char *const args[] = { "options" };
	char req[128], *reply = malloc(REPLY_MAX);
	size_t len = build_request(req, sizeof(req), 1, "getversion", args, 1), got = 0;
	int version = 1;
	if (!reply) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (request(t, pid, sock, req, len, timeout_ms, reply, &got, err, errlen) != 0)
		version = -1;
	else if (strncmp(reply, "0\n", 2) == 0 && atoi(reply + 2) == 2)
		version = 2;
	free(reply);
	return version;
}

/* ---- checks before anything is sent ------------------------------------------------ */

static int check_target(struct target *t, pid_t pid, char *err, size_t errlen)
{
	char caps[80];
	if (proc_info_read(pid, &t->pi) != 0) {
		if (errno == ENOENT)
			snprintf(err, errlen, "no process with pid %d; check the pid with ps or jps", (int)pid);
		else
			snprintf(err, errlen, "failed to read /proc/%d/status: %s", (int)pid, strerror(errno));
		return -1;
	}
	if (t->pi.state == 'Z' || t->pi.state == 'X') {
		snprintf(err, errlen, "pid %d has exited", (int)pid);
		return -1;
	}
	if (geteuid() != 0 && geteuid() != t->pi.euid) {
		snprintf(err, errlen,
			 "not permitted to attach to pid %d (it runs as uid %u); run jflame as "
			 "root or as that user",
			 (int)pid, (unsigned)t->pi.euid);
		return -1;
	}
	int hs = proc_info_is_hotspot(pid);
	if (hs < 0) {
		snprintf(err, errlen,
			 "not permitted to read /proc/%d/maps: %s; run jflame as root (in a "
			 "container it needs CAP_SYS_PTRACE)",
			 (int)pid, strerror(errno));
		return -1;
	}
	if (hs == 0) {
		snprintf(err, errlen,
			 "pid %d is not a Java process (%s has no libjvm.so); give the pid of a "
			 "HotSpot JVM",
			 (int)pid, t->pi.comm);
		return -1;
	}
	snprintf(t->tmp, sizeof(t->tmp), "/proc/%d/root/tmp", (int)pid);
	/* its /tmp resolved inside its root (a link there never leads to the host's) */
	char why[256];
	t->tmp_fd = target_file_open(t->tmp, TARGET_FILE_DIR | TARGET_FILE_QUIET, 0, NULL, why, sizeof(why));
	if (t->tmp_fd == -2) {
		t->tmp_fd = -1;
		snprintf(err, errlen, "refused %s: %s", t->tmp, why);
		return -1;
	}
	if (t->tmp_fd < 0) {
		snprintf(err, errlen, "failed to open %s: %s%s", t->tmp, strerror(errno),
			 errno == EACCES ? "; run jflame as root (in a container it needs CAP_SYS_PTRACE)" : "");
		return -1;
	}
	/* the JVM publishes its attach capability in hsperfdata (unless -XX:-UsePerfData) */
	if (hsperf_read_string(pid, t->pi.nspid, "sun.rt.jvmCapabilities", caps, sizeof(caps)) == 0 && caps[0] == '0') {
		snprintf(err, errlen,
			 "attach is disabled in pid %d (-XX:+DisableAttachMechanism); restart it "
			 "without that flag, or with the agent: -agentpath:libjflame-agent.so",
			 (int)pid);
		return -1;
	}
	return 0;
}

enum attach_outcome attach_agent(pid_t pid, const struct attach_opts *o, struct attach_info *info, char *err,
				 size_t errlen)
{
	struct target t = { .tmp_fd = -1 };
	struct agent_status st;
	char sock[64], msg[1024], *req = NULL, *reply = NULL;
	size_t reqcap, reqlen, got;
	enum attach_outcome rc = ATTACH_FAILED;
	int timeout = o->timeout_ms > 0 ? o->timeout_ms : ATTACH_DEFAULT_TIMEOUT_MS, agent_rc;
	uint64_t start = mono_ms();

	memset(info, 0, sizeof(*info));
	err[0] = '\0';
	t.cancel = o->cancel;
	if (check_target(&t, pid, err, errlen) != 0)
		goto out;
	if (agent_status_read(pid, t.pi.nspid, t.pi.start_time, &st) == 1 && agent_status_live(&st)) {
		snprintf(info->options, sizeof(info->options), "%s", st.options);
		rc = ATTACH_ALREADY;
		goto out;
	}
	if (agent_path_for(&t, pid, o->agent, info, err, errlen) != 0)
		goto out;
	snprintf(sock, sizeof(sock), ".java_pid%d", (int)t.pi.nspid);
	if (wait_live(&t, pid, timeout, err, errlen) != 0)
		goto out;
	if (start_listener(&t, pid, sock, timeout, err, errlen) != 0)
		goto out;
	info->protocol = protocol_version(&t, pid, sock, timeout, err, errlen);
	if (info->protocol < 0)
		goto out;
	const char *args[] = { info->agent_path, "true", o->options ? o->options : "" };
	reqcap = strlen(info->agent_path) + strlen(args[2]) + 64;
	req = malloc(reqcap);
	reply = malloc(REPLY_MAX);
	if (!req || !reply) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	reqlen = build_request(req, reqcap, info->protocol, "load", args, 3);
	if (request(&t, pid, sock, req, reqlen, timeout, reply, &got, err, errlen) != 0) {
		if (cancelled(&t)) /* the request is sent: the JVM may still act on it */
			snprintf(err, errlen,
				 "interrupted while waiting for pid %d to answer the load request; "
				 "it may still load the agent when it does",
				 (int)pid);
		goto out;
	}
	info->seconds = (double)(mono_ms() - start) / 1000.0;
	if (attach_parse_load_reply(reply, got, &agent_rc, msg, sizeof(msg)) != 0) {
		if (agent_rc != INT_MIN)
			snprintf(err, errlen,
				 "the agent failed to start in pid %d (Agent_OnAttach returned "
				 "%d)%s%s; the JVM's output says why",
				 (int)pid, agent_rc, msg[0] ? ": " : "", msg);
		else
			snprintf(err, errlen, "pid %d could not load the agent %s: %s", (int)pid, info->agent_path,
				 msg);
		goto out;
	}
	snprintf(info->options, sizeof(info->options), "%s", args[2]);
	rc = ATTACH_LOADED;
out:
	if (t.tmp_fd >= 0)
		close(t.tmp_fd);
	free(req);
	free(reply);
	return rc;
}
