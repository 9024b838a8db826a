/* msg.c - the lines the stages below the commands say on standard error while
 * they run: "jflame: " (or "jflame: warning: ") put before them here, once. */
#include "msg.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* prefix and fmt's text in one buffer, written by one fwrite: a line is one
 * write(2) on unbuffered stderr, so the lines of jflame's forked children (the
 * attach queue's) and its threads do not mix with it */
static void say(FILE *out, const char *prefix, const char *fmt, va_list ap)
{
	char small[2048], *buf = small;
	size_t p = strlen(prefix);
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(small + p, sizeof(small) - p, fmt, ap);
	if (n >= 0 && (size_t)n >= sizeof(small) - p && (buf = malloc(p + (size_t)n + 1)))
		vsnprintf(buf + p, (size_t)n + 1, fmt, aq);
	va_end(aq);
	if (n < 0)
		return;
	if (!buf) { /* out of memory: what fits */
		buf = small;
		n = (int)(sizeof(small) - p - 1);
	}
	memcpy(buf, prefix, p);
	fwrite(buf, 1, p + (size_t)n, out);
	if (buf != small)
		free(buf);
}

void msg_say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say(stderr, "jflame: ", fmt, ap);
	va_end(ap);
}

void msg_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say(stderr, "jflame: warning: ", fmt, ap);
	va_end(ap);
}

void msg_to(FILE *out, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say(out, "jflame: ", fmt, ap);
	va_end(ap);
}
