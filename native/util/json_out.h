/* json_out.h - writing JSON text into an HTML page: strings escaped so the
 * page stays valid (no "</script>", no invalid UTF-8), streamed to a FILE. */
#ifndef JFLAME_JSON_OUT_H
#define JFLAME_JSON_OUT_H

#include <stddef.h>
#include <stdio.h>

/* Writes s[0..n) as a quoted JSON string: '"', '\\' and control characters
 * escaped, '<', '>' and '&' as \u003c, \u003e, \u0026 (so the text can sit
 * inside a <script> element), U+2028/U+2029 escaped, and bytes that are not
 * valid UTF-8 replaced by U+FFFD. (Not json-c: it builds the whole document
 * in memory first - a heat map can carry millions of numbers - and leaves '<'
 * as it is.) */
void json_out_str(FILE *out, const char *s, size_t n);

#endif
