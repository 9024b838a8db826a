/* folded_char.h - the one rule for the characters a frame name cannot hold in a folded
 * stack line, shared by the agent's names and every folded writer and reader of jflame. */
#ifndef JFLAME_FOLDED_CHAR_H
#define JFLAME_FOLDED_CHAR_H

/* ';' would split the frame: it becomes ':' (as stackcollapse-perf.pl makes it); a line
 * break or NUL would end the line: it becomes ' '. Every other byte stays. */
static inline char folded_char(char c)
{
	return c == ';' ? ':' : (c == '\n' || c == '\r' || c == '\0') ? ' ' : c;
}

/* Whether folded_char changes c. */
static inline int folded_char_breaks(char c)
{
	return c == ';' || c == '\n' || c == '\r' || c == '\0';
}

#endif
