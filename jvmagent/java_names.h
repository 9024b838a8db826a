/* java_names.h - how a Java method is named in the perf map: perf-map-agent's
 * Lpkg/Class;::method by default, with the dottedclass/msig/sourcepos variants. */
#ifndef JFLAME_JAVA_NAMES_H
#define JFLAME_JAVA_NAMES_H

#include <stddef.h>
#include "agent_options.h"

struct java_method_desc {
	const char *class_sig;	 /* JVM class signature, "Lpkg/Class;" */
	const char *name;	 /* method name, "run" */
	const char *sig;	 /* method signature, "(I)V"; may be NULL */
	const char *source_file; /* "Class.java"; may be NULL */
	int line;		 /* first line of the method, <= 0 when unknown */
};

/* Appends the method's name as the options ask into buf at *pos (NUL-terminated,
 * truncated if it does not fit). Characters that would break a map line
 * (newline, carriage return, NUL) are replaced by '?'. Returns the new *pos. */
size_t java_name_append(char *buf, size_t len, size_t pos, const struct java_method_desc *m,
			const struct agent_options *opts);

/* The class of a JVM class signature as jflame's folded stacks show it:
 * "Ljava/lang/String;" -> "java/lang/String", "[B" -> "byte[]",
 * "[Ljava/lang/Object;" -> "java/lang/Object[]", "[[I" -> "int[][]", "I" -> "int".
 * A signature of another shape is kept as it is. What would break a folded
 * line goes by folded_char.h's rule (';' -> ':', line breaks -> ' '). Appends into buf at pos
 * (NUL-terminated, truncated if it does not fit); returns the new pos, which
 * stays below len. */
size_t java_class_name(char *buf, size_t len, size_t pos, const char *sig);

/* A Java frame as jflame's folded stacks name it, "pkg/Class.method": the
 * class as java_class_name renders it, '.', the method name (sanitised
 * alike; "?" for a NULL one). Same buffer rules as java_class_name. */
size_t java_frame_name(char *buf, size_t len, size_t pos, const char *class_sig, const char *method);

#endif
