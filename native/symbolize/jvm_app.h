/* jvm_app.h - the application name of a JVM, for its Pyroscope series: what
 * the Pyroscope Java agent would be told, else its main class or jar. */
#ifndef JFLAME_JVM_APP_H
#define JFLAME_JVM_APP_H

#include <stddef.h>

/* From a process's /proc/PID/cmdline and /proc/PID/environ (NUL-separated,
 * either may be empty): -Dpyroscope.application.name=X, else the environment's
 * PYROSCOPE_APPLICATION_NAME, else the jar of -jar (file name without .jar),
 * the class of -m module/class, or the main class (the first argument that is
 * not an option or an option's value). The length written to out (NUL
 * terminated), 0 when none is found. */
size_t jvm_app_name(const char *cmdline, size_t clen, const char *environ, size_t elen, char *out, size_t outlen);

#endif
