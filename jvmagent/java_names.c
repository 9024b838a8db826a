/* java_names.c - renders Java methods as perf map symbol names, in
 * perf-map-agent's style by default (Lpkg/Class;::method). */
#include "java_names.h"

#include "folded_char.h"

#include <stdio.h>
#include <string.h>

static size_t put(char *buf, size_t len, size_t pos, const char *s, size_t n)
{
	for (size_t i = 0; i < n && pos + 1 < len; i++) {
		char c = s[i];
		buf[pos++] = (c == '\n' || c == '\r' || c == '\0') ? '?' : c;
	}
	if (pos < len)
		buf[pos] = '\0';
	return pos;
}

static size_t puts_(char *buf, size_t len, size_t pos, const char *s)
{
	return s ? put(buf, len, pos, s, strlen(s)) : pos;
}

size_t java_name_append(char *buf, size_t len, size_t pos, const struct java_method_desc *m,
			const struct agent_options *opts)
{
	const char *cls = m->class_sig ? m->class_sig : "L?;";
	if (len == 0)
		return 0;
	if (pos >= len)
		pos = len - 1;

	if (opts->dottedclass) {
		size_t n = strlen(cls);
		if (n >= 2 && cls[0] == 'L' && cls[n - 1] == ';') {
			cls++;
			n -= 2;
		}
		for (size_t i = 0; i < n && pos + 1 < len; i++) {
			char c = cls[i] == '/' ? '.' : cls[i];
			pos = put(buf, len, pos, &c, 1);
		}
	} else {
		pos = puts_(buf, len, pos, cls);
	}
	pos = puts_(buf, len, pos, "::");
	pos = puts_(buf, len, pos, m->name ? m->name : "?");
	if (opts->msig && m->sig)
		pos = puts_(buf, len, pos, m->sig);
	if (opts->sourcepos && m->source_file) {
		char tail[32];
		pos = puts_(buf, len, pos, "(");
		pos = puts_(buf, len, pos, m->source_file);
		if (m->line > 0) {
			snprintf(tail, sizeof(tail), ":%d", m->line);
			pos = puts_(buf, len, pos, tail);
		}
		pos = puts_(buf, len, pos, ")");
	}
	return pos;
}

/* characters a folded stack line cannot hold inside a frame */
static size_t put_frame(char *buf, size_t len, size_t pos, const char *s, size_t n)
{
	for (size_t i = 0; i < n && pos + 1 < len; i++) {
		char c = s[i];
		buf[pos++] = folded_char(c);
	}
	if (pos < len)
		buf[pos] = '\0';
	return pos;
}

static const char *primitive_name(char c)
{
	switch (c) {
	case 'B':
		return "byte";
	case 'C':
		return "char";
	case 'D':
		return "double";
	case 'F':
		return "float";
	case 'I':
		return "int";
	case 'J':
		return "long";
	case 'S':
		return "short";
	case 'Z':
		return "boolean";
	case 'V':
		return "void";
	default:
		return NULL;
	}
}

size_t java_class_name(char *buf, size_t len, size_t pos, const char *sig)
{
	if (len == 0)
		return 0;
	if (pos >= len)
		pos = len - 1;
	if (!sig || !*sig)
		return put_frame(buf, len, pos, "?", 1);
	size_t dims = strspn(sig, "[");
	const char *e = sig + dims, *prim = NULL;
	size_t n = strlen(e);
	if (n == 1 && (prim = primitive_name(e[0])) != NULL) {
		pos = put_frame(buf, len, pos, prim, strlen(prim));
	} else if (n >= 3 && e[0] == 'L' && e[n - 1] == ';') {
		pos = put_frame(buf, len, pos, e + 1, n - 2);
	} else {
		/* not a signature we know: kept whole */
		return put_frame(buf, len, pos, sig, strlen(sig));
	}
	for (size_t i = 0; i < dims; i++)
		pos = put_frame(buf, len, pos, "[]", 2);
	return pos;
}

size_t java_frame_name(char *buf, size_t len, size_t pos, const char *class_sig, const char *method)
{
	pos = java_class_name(buf, len, pos, class_sig);
	if (len == 0)
		return 0;
	pos = put_frame(buf, len, pos, ".", 1);
	method = method ? method : "?";
	return put_frame(buf, len, pos, method, strlen(method));
}
