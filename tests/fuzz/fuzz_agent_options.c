/* fuzz_agent_options.c - libFuzzer target for the agent option parser: checks
 * it against a simple tokenizer and that format then parse gives the same flags. */
/* module: jvmagent/agent_options.c */
#include "agent_options.h"

#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *input; /* the option text under test, for failure reports */

/* Prints the message and the input (escaped), then aborts. */
static __attribute__((noreturn, format(printf, 1, 2))) void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fuzz_agent_options: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\ninput: \"");
	for (const unsigned char *c = (const unsigned char *)input; *c; c++) {
		if (*c >= 0x20 && *c < 0x7f)
			fputc(*c, stderr);
		else
			fprintf(stderr, "\\x%02x", *c);
	}
	fprintf(stderr, "\"\n");
	abort();
}

static const char *const names[] = { "unfold", "msig", "dottedclass", "sourcepos", "quiet", "help", "nounfold" };
#define NNAMES 7

static bool *field(struct agent_options *o, int i)
{
	bool *f[] = { &o->unfold, &o->msig, &o->dottedclass, &o->sourcepos, &o->quiet, &o->help, &o->nounfold };
	return f[i];
}

/* The same flags in effect (nounfold is how unfold is turned off). */
static int same(struct agent_options *a, struct agent_options *b)
{
	for (int i = 0; i < 6; i++)
		if (*field(a, i) != *field(b, i))
			return 0;
	return 1;
}

/* The documented grammar, independently: single-comma-separated known flags
 * without values; unfold unless nounfold, and not both. Returns 0 and sets
 * want, or -1. */
static int reference(const char *text, struct agent_options *want)
{
	bool unfold_given = false;
	memset(want, 0, sizeof(*want));
	want->unfold = true;
	if (!*text)
		return 0;
	for (const char *p = text;;) {
		size_t len = strcspn(p, ",");
		int found = -1;
		for (int i = 0; i < NNAMES; i++)
			if (strlen(names[i]) == len && memcmp(names[i], p, len) == 0)
				found = i;
		if (found < 0)
			return -1;
		*field(want, found) = true;
		unfold_given |= found == 0;
		if (!p[len])
			break;
		p += len + 1;
	}
	if (unfold_given && want->nounfold)
		return -1;
	want->unfold = !want->nounfold;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	struct agent_options o, want, back;
	char err[512], canon[128], again[128];

	memcpy(text, data, size);
	text[size] = '\0';
	input = text;
	memset(err, 'E', sizeof(err));
	int rc = agent_options_parse(text, &o, err, sizeof(err));
	int ref = reference(text, &want);
	if (rc != ref)
		fail("parse returned %d, the grammar says %d", rc, ref);
	if (rc == 0) {
		if (!same(&o, &want))
			fail("flags differ from the grammar");
		agent_options_format(&o, canon, sizeof(canon));
		if (agent_options_parse(canon, &back, err, sizeof(err)) != 0)
			fail("canonical '%s' does not parse: %s", canon, err);
		if (!same(&o, &back))
			fail("canonical '%s' parses to other flags", canon);
		agent_options_format(&back, again, sizeof(again));
		if (strcmp(canon, again) != 0)
			fail("canonical form not stable: '%s' then '%s'", canon, again);
		/* into every short exact-size buffer: a NUL-terminated prefix */
		for (size_t len = 1; len <= strlen(canon) + 1; len++) {
			char *b = malloc(len);
			agent_options_format(&o, b, len);
			if (!memchr(b, '\0', len) || strncmp(b, canon, strlen(b)) != 0)
				fail("format into %zu bytes is not a prefix of '%s'", len, canon);
			free(b);
		}
	} else {
		if (!memchr(err, '\0', sizeof(err)) || !err[0])
			fail("error is empty or not NUL-terminated");
		/* one line, whatever the input held */
		if (err[strcspn(err, "\r\n")])
			fail("error is not one line: %s", err);
		/* the error fits an exact-size short buffer */
		size_t len = 1 + size % 40;
		char *e = malloc(len);
		if (agent_options_parse(text, &o, e, len) != -1 || !memchr(e, '\0', len))
			fail("error into %zu bytes", len);
		free(e);
	}
	free(text);
	return 0;
}
