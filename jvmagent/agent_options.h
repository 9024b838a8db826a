/* agent_options.h - the agent's option string (`unfold,msig,...`) and its parser.
 * Pure C, no JVMTI: unit-tested and fuzzed on its own. */
#ifndef JFLAME_AGENT_OPTIONS_H
#define JFLAME_AGENT_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

struct agent_options {
	bool unfold;	  /* one map entry per inlined range, named outer->inner (default) */
	bool nounfold;	  /* given: unfold off */
	bool msig;	  /* append the method signature: method(I)V */
	bool dottedclass; /* pkg.Class::method instead of Lpkg/Class;::method */
	bool sourcepos;	  /* append (File.java:LINE) */
	bool quiet;	  /* no informational lines on the JVM's stderr */
	bool help;	  /* print the option list and do nothing else */
};

/* Parses a comma-separated list of key[=value]. NULL or "" gives the defaults
 * (unfold on, every other flag off).
 * On failure returns -1 and writes one line (no newline) naming the bad option
 * and the fix into err. */
int agent_options_parse(const char *text, struct agent_options *opts, char *err, size_t errlen);

/* Writes the canonical form of opts ("nounfold,msig", or "" for the defaults). */
void agent_options_format(const struct agent_options *opts, char *buf, size_t len);

/* The help text listing every option, one per line. */
const char *agent_options_help(void);

#endif
