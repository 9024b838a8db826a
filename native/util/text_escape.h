/* text_escape.h - target text as data: the one escaping of text a profiled
 * process wrote, and the decoder of the agent's text files (status, events). */
#ifndef JFLAME_TEXT_ESCAPE_H
#define JFLAME_TEXT_ESCAPE_H

#include <stdbool.h>
#include <stddef.h>

#include "str_intern.h"

/* Decodes the status/events escaping (\\, \n, \xHH) of s in place: the
 * text never grows. A backslash that starts none of them (a lone one at the
 * end, a malformed \x escape) is kept with what follows. */
void text_unescape(char *s);

/* Text a target wrote (thread, process, class, method, file names, agent
 * errors, replies) is shown as it is when it is printable UTF-8. Otherwise
 * every byte of a control character (C0 0x00-0x1f, DEL 0x7f, and C1
 * U+0080-U+009F written in UTF-8) and every byte that is not part of valid
 * UTF-8 becomes "\xHH" (lowercase hex), and a backslash that would read as
 * the start of an escape (one followed by a backslash, 'x', 'n' or an escaped
 * byte) becomes "\\". The result holds no control byte and is valid UTF-8;
 * text_unescape gives the original bytes back. */

/* Whether text_escape would change s[0..n): false for almost every name. */
bool text_needs_escape(const char *s, size_t n);

/* Writes s[0..n) escaped to out (len bytes, always NUL-terminated when len
 * > 0, cut before the first escape or character that does not fit). Returns
 * the length of the whole escaped text (at most 4 * n), as snprintf does. */
size_t text_escape(char *out, size_t len, const char *s, size_t n);

/* The escaped form of s in place (s has room for len bytes, NUL included);
 * the text is cut to fit. Returns s. */
char *text_escape_inplace(char *s, size_t len);

/* The interned escaped form of s[0..n): the one interned copy, made once per
 * distinct name; NULL only when out of memory. */
const char *text_intern(struct str_intern *si, const char *s, size_t n);

#endif
