/* msg.c - the lines the stages below the commands say on standard error while
 * they run: "jflame: " (or "jflame: warning: ") put before them here, once. */
#include "msg.h"

#include <stdarg.h>
#include <stdio.h>

static void say(FILE *out, const char *prefix, const char *fmt, va_list ap)
{
	flockfile(out);
	fputs(prefix, out);
	vfprintf(out, fmt, ap);
	funlockfile(out);
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
