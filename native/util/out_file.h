/* out_file.h - writing an output file safely: into a temporary file beside it,
 * renamed over the target only when complete. */
#ifndef JFLAME_OUT_FILE_H
#define JFLAME_OUT_FILE_H

#include <stddef.h>
#include <stdio.h>

struct out_file {
	char path[4096], tmp[4096 + 16];
	FILE *f;
};

/* Opens "<path>.XXXXXX" for writing; a device or pipe is written in place;
 * a NULL path or "-" is standard output. A new file gets 0666 less the umask,
 * a replaced file keeps its permission bits. 0, or -1 with one line in err
 * (a missing directory is named as such). */
int out_file_open(struct out_file *o, const char *path, char *err, size_t errlen);
/* Flushes, closes and renames onto path. 0, or -1 with one line in err (the
 * temporary file is removed). */
int out_file_commit(struct out_file *o, char *err, size_t errlen);
/* Removes the temporary file (on any failure). */
void out_file_abort(struct out_file *o);

/* Makes SIGINT, SIGTERM, SIGHUP and SIGPIPE (those not ignored) remove the
 * temporary files open at that moment, then end the process as the signal
 * would have. For commands without their own signal handling. */
void out_file_clean_on_signals(void);
/* Removes every temporary file open now (async-signal-safe). */
void out_file_remove_temps(void);

#endif
