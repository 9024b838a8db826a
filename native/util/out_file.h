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
 * a NULL path is standard output. 0, or -1 with one line in err. */
int out_file_open(struct out_file *o, const char *path, char *err, size_t errlen);
/* Flushes, closes and renames onto path. 0, or -1 with one line in err (the
 * temporary file is removed). */
int out_file_commit(struct out_file *o, char *err, size_t errlen);
/* Removes the temporary file (on any failure). */
void out_file_abort(struct out_file *o);

#endif
