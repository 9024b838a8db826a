/* fuzz_target_file.c - any path a target's maps or files could name, under a
 * process's root: the opener never crashes, and what it opens is a regular file.
 * module: native/util/target_file.c native/util/msg.c native/util/text_escape.c native/util/str_intern.c */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "target_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const prefixes[] = { "/proc/self/root/", "/proc/self/map_files/", "/tmp/",
						"/proc/1/root/tmp/" };
	char path[600];
	struct stat st;
	if (size < 1)
		return 0;
	size_t n = size - 1 < 500 ? size - 1 : 500;
	int len = snprintf(path, sizeof(path), "%s", prefixes[data[0] % 4]);
	memcpy(path + len, data + 1, n);
	path[len + n] = '\0'; /* a NUL inside cuts the path, as in C */
	unsigned flags = TARGET_FILE_QUIET | ((data[0] >> 2) & 1 ? TARGET_FILE_READABLE : 0) |
			 ((data[0] >> 3) & 1 ? TARGET_FILE_DIR : 0);
	char why[256];
	int fd = target_file_open(path, flags, 1 << 20, &st, why, sizeof(why));
	if (fd >= 0) {
		if (!(flags & TARGET_FILE_DIR) && !S_ISREG(st.st_mode))
			abort();
		close(fd);
	} else if (fd == -2 && !why[0]) {
		abort(); /* a refusal always says why */
	}
	target_file_warn(path, "fuzz"); /* once per path; escapes control bytes */
	return 0;
}
