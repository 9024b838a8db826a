/* out_file.c - temporary-file-then-rename output: readers never see a
 * half-written file, and a failed run leaves the old file as it was. */
#include "out_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int out_file_open(struct out_file *o, const char *path, char *err, size_t errlen)
{
	memset(o, 0, sizeof(*o));
	if (!path) {
		snprintf(o->path, sizeof(o->path), "standard output");
		o->f = stdout;
		return 0;
	}
	if (strlen(path) >= sizeof(o->path)) {
		snprintf(err, errlen, "jflame: output path too long: %.64s...", path);
		return -1;
	}
	snprintf(o->path, sizeof(o->path), "%s", path);
	/* a device or pipe (/dev/null, /dev/stdout, a fifo) is written as it is:
	 * renaming a file onto it would replace the device node */
	struct stat st;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "jflame: %s is a directory; give a file name", path);
			return -1;
		}
		o->f = fopen(path, "we");
		if (!o->f) {
			snprintf(err, errlen, "jflame: failed to open %s: %s", path, strerror(errno));
			return -1;
		}
		return 0;
	}
	snprintf(o->tmp, sizeof(o->tmp), "%s.XXXXXX", path);
	int fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "jflame: failed to create %s: %s", o->tmp, strerror(errno));
		o->tmp[0] = '\0';
		return -1;
	}
	fchmod(fd, 0644);
	o->f = fdopen(fd, "w");
	if (!o->f) {
		snprintf(err, errlen, "jflame: failed to open %s: %s", o->tmp, strerror(errno));
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
			snprintf(err, errlen, "jflame: failed to write standard output: %s", strerror(errno ? errno : EIO));
			return -1;
		}
		return 0;
	}
	int bad = ferror(o->f);
	if (fclose(o->f) != 0 || bad) {
		o->f = NULL;
		snprintf(err, errlen, "jflame: failed to write %s: %s", o->path, strerror(errno ? errno : EIO));
		out_file_abort(o);
		return -1;
	}
	o->f = NULL;
	if (!o->tmp[0])
		return 0; /* written in place (a device or pipe) */
	if (rename(o->tmp, o->path) != 0) {
		snprintf(err, errlen, "jflame: failed to rename %s to %s: %s", o->tmp, o->path, strerror(errno));
		out_file_abort(o);
		return -1;
	}
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
	o->tmp[0] = '\0';
}
