/* text_escape.h - decodes the escaping of the agent's text files (status,
 * events log): \\, \n and \xHH, in place. */
#ifndef JFLAME_TEXT_ESCAPE_H
#define JFLAME_TEXT_ESCAPE_H

/* Decodes the status/events escaping (\\, \n, \xHH) of s in place: the
 * text never grows. A lone backslash at the end is kept, and so are a
 * malformed \x escape's characters. */
void text_unescape(char *s);

#endif
