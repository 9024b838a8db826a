/* out_file.c - temporary-file-then-rename output: readers never see a
 * half-written file, and a failed or interrupted run leaves the old file as it was. */
#include "out_file.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The temporary files open now, for a signal handler to remove: a slot holds
 * an out_file's tmp while that file exists under its temporary name. */
#define LIVE_MAX 64
static char *volatile live[LIVE_MAX];

static const int clean_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };

static void live_add(char *tmp)
{
	for (size_t i = 0; i < LIVE_MAX; i++)
		if (!live[i]) {
			live[i] = tmp;
			return;
		}
	/* more than LIVE_MAX outputs at once: this one is not removed by a signal */
}

static void live_del(const char *tmp)
{
	for (size_t i = 0; i < LIVE_MAX; i++)
		if (live[i] == tmp)
			live[i] = NULL;
}

void out_file_remove_temps(void)
{
	for (size_t i = 0; i < LIVE_MAX; i++) {
		char *t = live[i];
		if (t && t[0])
			unlink(t);
	}
}

static void on_signal(int sig)
{
	out_file_remove_temps();
	signal(sig, SIG_DFL);
	raise(sig); /* delivered when the handler returns: the process ends by sig */
}

void out_file_clean_on_signals(void)
{
	struct sigaction sa, old;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(clean_signals) / sizeof(clean_signals[0]); i++) {
		/* an ignored signal (nohup's SIGHUP) stays ignored */
		if (sigaction(clean_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
			continue;
		sigaction(clean_signals[i], &sa, NULL);
	}
}

/* The process's umask, without changing it (umask() can only set it, and
 * setting it back races with other threads creating files). */
static mode_t current_umask(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	unsigned m;
	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "Umask: %o", &m) == 1) {
				fclose(f);
				return (mode_t)(m & 0777);
			}
		fclose(f);
	}
	mode_t old = umask(022); /* kernels before 4.7 say no Umask: line */
	umask(old);
	return old;
}

/* Says why the temporary file beside path could not be made: the directory
 * named, not the temporary file. */
static void create_error(const char *path, int e, char *err, size_t errlen)
{
	const char *slash = strrchr(path, '/');
	int dn = slash ? (int)(slash - path) : 1;
	const char *dir = slash ? path : ".";
	if (slash == path)
		dn = 1; /* "/x" is in "/" */
	if (e == ENOENT)
		snprintf(err, errlen,
			 "failed to write %s: directory %.*s does not exist; create it first (mkdir -p %.*s)", path, dn,
			 dir, dn, dir);
	else if (e == ENOTDIR)
		snprintf(err, errlen, "failed to write %s: %.*s is not a directory", path, dn, dir);
	else
		snprintf(err, errlen, "failed to write %s: cannot create a file in %.*s: %s", path, dn, dir,
			 strerror(e));
}

int out_file_open(struct out_file *o, const char *path, char *err, size_t errlen)
{
	memset(o, 0, sizeof(*o));
	if (!path || strcmp(path, "-") == 0) {
		snprintf(o->path, sizeof(o->path), "standard output");
		o->f = stdout;
		return 0;
	}
	if (strlen(path) >= sizeof(o->path)) {
		snprintf(err, errlen, "output path too long: %.64s...", path);
		return -1;
	}
	snprintf(o->path, sizeof(o->path), "%s", path);
	/* a device or pipe (/dev/null, /dev/stdout, a fifo) is written as it is:
	 * renaming a file onto it would replace the device node */
	struct stat st;
	bool exists = stat(path, &st) == 0;
	if (exists && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "%s is a directory; give a file name", path);
			return -1;
		}
		o->f = fopen(path, "we");
		if (!o->f) {
			snprintf(err, errlen, "failed to open %s: %s", path, strerror(errno));
			return -1;
		}
		return 0;
	}
	/* a replaced file keeps its permissions; a new one gets what the umask leaves */
	mode_t mode = exists ? (st.st_mode & 0777) : (0666 & ~current_umask());
	snprintf(o->tmp, sizeof(o->tmp), "%s.XXXXXX", path);
	/* no signal between creating the file and listing it for the handler */
	sigset_t block, saved;
	sigemptyset(&block);
	for (size_t i = 0; i < sizeof(clean_signals) / sizeof(clean_signals[0]); i++)
		sigaddset(&block, clean_signals[i]);
	pthread_sigmask(SIG_BLOCK, &block, &saved);
	int fd = mkostemp(o->tmp, O_CLOEXEC);
	int e = errno;
	if (fd >= 0)
		live_add(o->tmp);
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	if (fd < 0) {
		create_error(path, e, err, errlen);
		o->tmp[0] = '\0';
		return -1;
	}
	if (fchmod(fd, mode) != 0) {
		snprintf(err, errlen, "failed to write %s: cannot set its mode: %s", path, strerror(errno));
		close(fd);
		out_file_abort(o);
		return -1;
	}
	o->f = fdopen(fd, "w");
	if (!o->f) {
		snprintf(err, errlen, "failed to open %s: %s", o->tmp, strerror(errno));
		close(fd);
		out_file_abort(o);
		return -1;
	}
	return 0;
}

int out_file_commit(struct out_file *o, char *err, size_t errlen)
{
	if (o->f == stdout) {
		o->f = NULL;
		if (fflush(stdout) != 0 || ferror(stdout)) {
			snprintf(err, errlen, "failed to write standard output: %s", strerror(errno ? errno : EIO));
			return -1;
		}
		return 0;
	}
	int bad = ferror(o->f);
	if (fclose(o->f) != 0 || bad) {
		o->f = NULL;
		snprintf(err, errlen, "failed to write %s: %s", o->path, strerror(errno ? errno : EIO));
		out_file_abort(o);
		return -1;
	}
	o->f = NULL;
	if (!o->tmp[0])
		return 0; /* written in place (a device or pipe) */
	if (rename(o->tmp, o->path) != 0) {
		snprintf(err, errlen, "failed to rename %s to %s: %s", o->tmp, o->path, strerror(errno));
		out_file_abort(o);
		return -1;
	}
	/* a signal before this finds the name gone: unlink fails harmlessly */
	live_del(o->tmp);
	o->tmp[0] = '\0';
	return 0;
}

void out_file_abort(struct out_file *o)
{
	if (o->f && o->f != stdout)
		fclose(o->f);
	o->f = NULL;
	if (o->tmp[0])
		unlink(o->tmp);
	live_del(o->tmp);
	o->tmp[0] = '\0';
}
