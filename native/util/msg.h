/* msg.h - the lines the stages below the commands say on standard error while
 * they run (warnings, a window's line): the one place "jflame: " is put before them. */
#ifndef JFLAME_MSG_H
#define JFLAME_MSG_H

/* "jflame: " then fmt's text (which ends its own line), in one piece: lines of
 * two threads do not mix. */
void msg_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "jflame: warning: " then fmt's text. */
void msg_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
