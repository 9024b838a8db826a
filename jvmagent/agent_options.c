/* agent_options.c - parses the agent's comma-separated key[=value] options.
 * Every option is a flag; an unknown key or a value on a flag is an error.
 * Inline chains are unfolded by default: `nounfold` turns that off. */
#include "agent_options.h"

#include <stdio.h>
#include <string.h>

struct option_def {
	const char *key;
	size_t offset;
	const char *help;
};

#define FLAG(k, field, h)                                   \
	{                                                   \
		k, offsetof(struct agent_options, field), h \
	}
static const struct option_def defs[] = {
	FLAG("unfold", unfold,
	     "split compiled methods into inlined ranges named outer->inner and turn on "
	     "DebugNonSafepoints (the default)"),
	FLAG("nounfold", nounfold,
	     "one map line per compiled method, inlined callees not shown, DebugNonSafepoints "
	     "left as it is"),
	FLAG("msig", msig, "append the method signature: Lpkg/Class;::method(I)V"),
	FLAG("dottedclass", dottedclass, "name classes pkg.Class instead of Lpkg/Class;"),
	FLAG("sourcepos", sourcepos, "append the source position: ...::method(Class.java:42)"),
	FLAG("quiet", quiet, "no informational messages on the JVM's stderr"),
	FLAG("help", help, "print this list and load nothing"),
};
#define NDEFS (sizeof(defs) / sizeof(defs[0]))

/* Copies at most 64 bytes of text for quoting in a one-line message. */
static const char *printable(const char *text, size_t len, char *buf, size_t buflen)
{
	size_t n = 0;
	for (size_t i = 0; i < len && n + 4 < buflen && i < 64; i++) {
		unsigned char c = (unsigned char)text[i];
		buf[n++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
	}
	if (len > 64 && n + 4 < buflen) {
		memcpy(buf + n, "...", 3);
		n += 3;
	}
	buf[n] = '\0';
	return buf;
}

static bool *flag_of(struct agent_options *o, const struct option_def *d)
{
	return (bool *)((char *)o + d->offset);
}

int agent_options_parse(const char *text, struct agent_options *opts, char *err, size_t errlen)
{
	memset(opts, 0, sizeof(*opts));
	opts->unfold = true;
	if (!text)
		return 0;
	opts->unfold = false; /* set again below: the default unless nounfold */
	const char *p = text;
	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		size_t keylen = eq ? (size_t)(eq - p) : len;
		const struct option_def *d = NULL;
		char quoted[80];

		if (len == 0) {
			snprintf(err, errlen, "empty option in '%s'; separate options with single commas",
				 printable(text, strlen(text), quoted, sizeof(quoted)));
			return -1;
		}
		for (size_t i = 0; i < NDEFS; i++) {
			if (strlen(defs[i].key) == keylen && memcmp(defs[i].key, p, keylen) == 0)
				d = &defs[i];
		}
		if (!d) {
			snprintf(err, errlen,
				 "unknown option '%s'; valid options: unfold, nounfold, msig, dottedclass, sourcepos, "
				 "quiet, help",
				 printable(p, keylen, quoted, sizeof(quoted)));
			return -1;
		}
		if (eq) {
			snprintf(err, errlen, "option '%s' takes no value; write '%s' alone", d->key, d->key);
			return -1;
		}
		*flag_of(opts, d) = true;
		if (!end)
			break;
		p = end + 1;
		if (!*p) {
			snprintf(err, errlen, "empty option at the end of '%s'; remove the trailing comma",
				 printable(text, strlen(text), quoted, sizeof(quoted)));
			return -1;
		}
	}
	if (opts->unfold && opts->nounfold) {
		snprintf(err, errlen, "options 'unfold' and 'nounfold' contradict each other; give one");
		return -1;
	}
	opts->unfold = !opts->nounfold;
	return 0;
}

void agent_options_format(const struct agent_options *opts, char *buf, size_t len)
{
	size_t pos = 0;
	if (len == 0)
		return;
	buf[0] = '\0';
	for (size_t i = 0; i < NDEFS; i++) {
		/* unfold is the default: only its absence is written, as nounfold */
		bool on = *flag_of((struct agent_options *)opts, &defs[i]);
		if (defs[i].offset == offsetof(struct agent_options, unfold))
			continue;
		if (defs[i].offset == offsetof(struct agent_options, nounfold))
			on = !opts->unfold;
		if (!on)
			continue;
		int n = snprintf(buf + pos, len - pos, "%s%s", pos ? "," : "", defs[i].key);
		if (n < 0 || (size_t)n >= len - pos)
			return;
		pos += (size_t)n;
	}
}

const char *agent_options_help(void)
{
	static char text[1024];
	if (!text[0]) {
		size_t pos =
			(size_t)snprintf(text, sizeof(text),
					 "libjflame-agent options (-agentpath:/path/libjflame-agent.so=opt1,opt2):\n");
		for (size_t i = 0; i < NDEFS && pos < sizeof(text); i++)
			pos += (size_t)snprintf(text + pos, sizeof(text) - pos, "  %-12s %s\n", defs[i].key,
						defs[i].help);
	}
	return text;
}
