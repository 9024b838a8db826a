/* name_normalize.c - folded stacks with the names that differ from one JVM run to
 * the next made alike (lambda and hidden-class addresses, generated accessors, pids, pool numbers). */
#include "name_normalize.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "frame_mark.h"

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static const char *const accessors[] = {
	"GeneratedMethodAccessor",
	"GeneratedConstructorAccessor",
	"GeneratedSerializationConstructorAccessor",
};

/* How many bytes at p (of n) a run of hidden-class addresses takes
 * ("[./+]0x<hex>", one or more); 0 when p starts none. *whole: a '.', '_' or
 * the end follows the run (then it is an address to drop, else text to keep
 * as it is, all of it: dropping a part could make another run of what is left). */
static size_t hidden_address(const char *p, size_t n, bool *whole)
{
	size_t i = 0;
	while (n - i >= 4 && (p[i] == '.' || p[i] == '/' || p[i] == '+') && p[i + 1] == '0' && p[i + 2] == 'x' &&
	       is_hex(p[i + 3])) {
		i += 3;
		while (i < n && is_hex(p[i]))
			i++;
	}
	*whole = i && (i == n || p[i] == '.' || p[i] == '_');
	return i;
}

/* One pass; a pass can uncover what another takes out (Foo_[j]/0x1 -> Foo_[j]). */
static size_t normalize_once(const char *frame, size_t n, int thread, char *out, size_t len)
{
	size_t k = 0;
	if (!len)
		return 0;
	/* how a method ran (interpreted _[0], compiled _[j], inlined _[i]) is
	 * the JIT's choice of the moment, not the program's: a method is itself
	 * in any of them */
	for (char m; !thread && (m = frame_mark_kind(frame, n)) && (m == 'j' || m == 'i' || m == '0');)
		n -= FRAME_MARK_LEN; /* all of them: what is left must be left alone the next time (idempotent) */
	for (size_t i = 0; i < n && k + 1 < len;) {
		size_t skip;
		/* Foo$$Lambda$8 -> Foo$$Lambda (the number a run gave it) */
		if (!thread && n - i > 9 && memcmp(frame + i, "$$Lambda$", 9) == 0 && is_digit(frame[i + 9])) {
			size_t j = i + 8;
			while (j + 1 < n && frame[j] == '$' && is_digit(frame[j + 1])) /* $8, $8$9, ... */
				for (j++; j < n && is_digit(frame[j]); j++)
					;
			for (const char *t = "$$Lambda"; *t && k + 1 < len; t++)
				out[k++] = *t;
			i = j;
			continue;
		}
		bool whole;
		if (!thread && (skip = hidden_address(frame + i, n - i, &whole)) != 0) {
			for (size_t j = 0; !whole && j < skip && k + 1 < len; j++)
				out[k++] = frame[i + j];
			i += skip;
			continue;
		}
		bool acc = false;
		for (size_t a = 0; !thread && a < sizeof(accessors) / sizeof(accessors[0]) && !acc; a++) {
			size_t al = strlen(accessors[a]);
			if (n - i > al && memcmp(frame + i, accessors[a], al) == 0 && is_digit(frame[i + al])) {
				size_t j = i + al;
				while (j < n && is_digit(frame[j]))
					j++;
				for (size_t c = 0; c < al && k + 1 < len; c++)
					out[k++] = accessors[a][c];
				i = j;
				acc = true;
			}
		}
		if (acc)
			continue;
		/* pool-3-thread-7 -> pool-N-thread-N: a number after '-' or '#' that
		 * ends the name or another '-' follows */
		if (thread && (frame[i] == '-' || frame[i] == '#') && i + 1 < n && is_digit(frame[i + 1])) {
			size_t j = i + 1;
			while (j < n && is_digit(frame[j]))
				j++;
			if (j == n || frame[j] == '-') {
				out[k++] = frame[i];
				if (k + 1 < len)
					out[k++] = 'N';
				i = j;
				continue;
			}
		}
		out[k++] = frame[i++];
	}
	out[k] = '\0';
	return k;
}

size_t name_normalize_frame(const char *frame, size_t n, int thread, char *out, size_t len)
{
	size_t k = normalize_once(frame, n, thread, out, len);
	char *prev = len ? malloc(len) : NULL;
	/* again until nothing changes (a pass never lengthens a name): the same
	 * name normalized twice is the name normalized once */
	for (int pass = 0; prev && pass < 16; pass++) {
		memcpy(prev, out, k + 1);
		size_t k2 = normalize_once(prev, k, thread, out, len);
		if (k2 == k && memcmp(prev, out, k) == 0)
			break;
		k = k2;
	}
	free(prev);
	return k;
}

const char *name_normalize_stack(struct str_intern *si, const char *s)
{
	size_t n = strlen(s), k = 0;
	/* a frame grows only from "[Pod]" to "[Pod]*": twice the text is room enough */
	char *buf = malloc(2 * n + 16);
	const char *p = s, *r = NULL;
	bool root = false, thread = false;
	if (!buf)
		return NULL;
	for (bool first = true;; first = false) { /* each ';'-separated frame, empty ones too */
		const char *end = strchr(p, ';');
		size_t fl = end ? (size_t)(end - p) : strlen(p);
		if (!first)
			buf[k++] = ';';
		if (!root && fl >= 5 && (memcmp(p, "[Pod]", 5) == 0 || memcmp(p, "[Con]", 5) == 0)) {
			memcpy(buf + k, p, 5);
			buf[k + 5] = '*';
			k += 6;
		} else if (!root && fl >= 4 && memcmp(p, "[*] ", 4) == 0) { /* normalized before */
			memcpy(buf + k, p, fl);
			k += fl;
			root = true;
		} else if (!root && p[0] == '[' && fl > 2 && is_digit(p[1])) { /* "[1234] comm" */
			size_t i = 1;
			while (i < fl && is_digit(p[i]))
				i++;
			if (i + 1 < fl && p[i] == ']' && p[i + 1] == ' ') {
				memcpy(buf + k, "[*]", 3);
				memcpy(buf + k + 3, p + i + 1, fl - i - 1);
				k += 3 + fl - i - 1;
			} else {
				memcpy(buf + k, p, fl);
				k += fl;
			}
			root = true;
		} else {
			/* the frame after the process's root is its thread (when there is one) */
			bool is_thread = root && !thread;
			thread = thread || root;
			k += name_normalize_frame(p, fl, is_thread, buf + k, 2 * n + 16 - k);
		}
		if (!end)
			break;
		p = end + 1;
	}
	buf[k] = '\0';
	r = k == n && memcmp(buf, s, n) == 0 ? s : str_intern_n(si, buf, k);
	free(buf);
	return r;
}
