/* msg.h - the lines the stages below the commands say on standard error while
 * they run (warnings, a window's line): the one place "jflame: " is put before them. */
#ifndef JFLAME_MSG_H
#define JFLAME_MSG_H

#include <stdio.h>

/* "jflame: " then fmt's text (which ends its own line), in one write: lines of
 * two threads, or of jflame and its forked children, do not mix. */
void msg_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "jflame: warning: " then fmt's text. */
void msg_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "jflame: " then fmt's text, to out (a line a command prints on its standard
 * output, as diff --baseline's regressions). */
void msg_to(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
