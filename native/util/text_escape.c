/* text_escape.c - decodes the escaping of the agent's text files (status,
 * events log): \\, \n and \xHH, in place. */
#include "text_escape.h"

#include <ctype.h>
#include <stdlib.h>

void text_unescape(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (*r != '\\' || !r[1]) {
			*w++ = *r;
			continue;
		}
		r++;
		if (*r == 'n') {
			*w++ = '\n';
		} else if (*r == 'x' && isxdigit((unsigned char)r[1]) && isxdigit((unsigned char)r[2])) {
			char hex[3] = { r[1], r[2], 0 };
			*w++ = (char)strtoul(hex, NULL, 16);
			r += 2;
		} else if (*r == 'x') {
			*w++ = '\\';
			*w++ = 'x';
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}
