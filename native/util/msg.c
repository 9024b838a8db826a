/* msg.c - the lines the stages below the commands say on standard error while
 * they run: "jflame: " (or "jflame: warning: ") put before them here, once. */
#include "msg.h"

#include <stdarg.h>
#include <stdio.h>

static void say(const char *prefix, const char *fmt, va_list ap)
{
	flockfile(stderr);
	fputs(prefix, stderr);
	vfprintf(stderr, fmt, ap);
	funlockfile(stderr);
}

void msg_say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say("jflame: ", fmt, ap);
	va_end(ap);
}

void msg_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say("jflame: warning: ", fmt, ap);
	va_end(ap);
}
