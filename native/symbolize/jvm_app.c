/* jvm_app.c - a JVM's application name from its command line and environment
 * (pyroscope.application.name, the -jar file, the main class). */
#include "jvm_app.h"

#include <stdbool.h>
#include <string.h>

/* java's options that take the next argument as their value. */
static const char *const with_value[] = {
	"-cp",
	"-classpath",
	"--class-path",
	"-p",
	"--module-path",
	"--upgrade-module-path",
	"--add-modules",
	"--limit-modules",
	"--add-reads",
	"--add-exports",
	"--add-opens",
	"--patch-module",
	"--enable-native-access",
	"--source",
	"-splash",
};

static size_t copy(const char *s, size_t n, char *out, size_t outlen)
{
	if (!outlen)
		return 0;
	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, s, n);
	out[n] = '\0';
	return n;
}

/* The NUL-separated strings of buf[0..len) one by one: *at is the next one's
 * offset. NULL at the end; *n its length (a last one may lack its NUL). */
static const char *next_arg(const char *buf, size_t len, size_t *at, size_t *n)
{
	if (*at >= len)
		return NULL;
	const char *s = buf + *at;
	const char *nul = memchr(s, '\0', len - *at);
	*n = nul ? (size_t)(nul - s) : len - *at;
	*at += *n + 1;
	return s;
}

static bool arg_is(const char *s, size_t n, const char *what)
{
	return n == strlen(what) && memcmp(s, what, n) == 0;
}

static bool has_prefix(const char *s, size_t n, const char *p)
{
	size_t k = strlen(p);
	return n >= k && memcmp(s, p, k) == 0;
}

size_t jvm_app_name(const char *cmdline, size_t clen, const char *environ, size_t elen, char *out, size_t outlen)
{
	static const char prop[] = "-Dpyroscope.application.name=", env[] = "PYROSCOPE_APPLICATION_NAME=";
	const char *s;
	size_t at = 0, n;
	if (outlen)
		out[0] = '\0';
	/* the Pyroscope agent's own settings first */
	while ((s = next_arg(cmdline, clen, &at, &n)) != NULL)
		if (has_prefix(s, n, prop) && n > sizeof(prop) - 1)
			return copy(s + sizeof(prop) - 1, n - (sizeof(prop) - 1), out, outlen);
	at = 0;
	while ((s = next_arg(environ, elen, &at, &n)) != NULL)
		if (has_prefix(s, n, env) && n > sizeof(env) - 1)
			return copy(s + sizeof(env) - 1, n - (sizeof(env) - 1), out, outlen);
	/* then what java runs: skip the launcher itself and the options */
	at = 0;
	if (!next_arg(cmdline, clen, &at, &n))
		return 0;
	while ((s = next_arg(cmdline, clen, &at, &n)) != NULL) {
		if (arg_is(s, n, "-jar") || arg_is(s, n, "-m") || arg_is(s, n, "--module")) {
			bool jar = arg_is(s, n, "-jar");
			if (!(s = next_arg(cmdline, clen, &at, &n)) || !n)
				return 0;
			if (jar) {
				const char *slash = memrchr(s, '/', n);
				if (slash) {
					n -= (size_t)(slash + 1 - s);
					s = slash + 1;
				}
				if (n > 4 && memcmp(s + n - 4, ".jar", 4) == 0)
					n -= 4;
			} else {
				const char *slash = memchr(s, '/', n); /* module/class: the class */
				if (slash && (size_t)(slash + 1 - s) < n) {
					n -= (size_t)(slash + 1 - s);
					s = slash + 1;
				}
			}
			return copy(s, n, out, outlen);
		}
		if (n && s[0] == '-') {
			for (size_t i = 0; i < sizeof(with_value) / sizeof(with_value[0]); i++)
				if (arg_is(s, n, with_value[i])) {
					next_arg(cmdline, clen, &at, &n);
					break;
				}
			continue;
		}
		if (n)
			return copy(s, n, out, outlen);
	}
	return 0;
}
