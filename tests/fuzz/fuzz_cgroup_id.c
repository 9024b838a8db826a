/* fuzz_cgroup_id.c - libFuzzer target for cgroup_id_parse: the input as /proc/PID/cgroup text;
 * what it finds must be well-formed ids taken from the input, and a cut last line must not count. */
/* module: native/symbolize/cgroup_id.c */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include "cgroup_id.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prints the message and aborts, which the fuzzer reports as a crash. */
static __attribute__((noreturn, format(printf, 1, 2))) void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fuzz_cgroup_id: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static int hex_only(const char *s)
{
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return 0;
	return 1;
}

static void check_fields(const struct cgroup_id *id, int r, const uint8_t *data, size_t size)
{
	static const char *const runtimes[] = { "docker", "containerd", "cri-o", "podman", "kubepods" };
	int known = 0;

	if (r != 0 && r != 1)
		fail("returned %d", r);
	if (!memchr(id->pod, '\0', sizeof(id->pod)) || !memchr(id->container, '\0', sizeof(id->container)) ||
	    !memchr(id->runtime, '\0', sizeof(id->runtime)))
		fail("a field is not terminated");
	if (r != (id->pod[0] || id->container[0]))
		fail("returned %d with pod \"%s\" container \"%s\"", r, id->pod, id->container);
	if (!r) {
		if (id->runtime[0])
			fail("nothing found, runtime \"%s\"", id->runtime);
		return;
	}
	for (size_t i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++)
		known |= strcmp(id->runtime, runtimes[i]) == 0;
	if (!known)
		fail("runtime \"%s\"", id->runtime);
	if (id->container[0]) {
		if (strlen(id->container) != 64 || !hex_only(id->container))
			fail("container \"%s\" is not 64 hex", id->container);
		if (!memmem(data, size, id->container, 64))
			fail("container \"%s\" not in the input", id->container);
	} else if (strcmp(id->runtime, "kubepods") != 0) {
		fail("no container, runtime \"%s\"", id->runtime);
	}
	if (id->pod[0]) {
		size_t n = strlen(id->pod);
		char under[64];
		if (n == 32) {
			if (!hex_only(id->pod))
				fail("pod \"%s\" is not 32 hex", id->pod);
		} else if (n == 36) {
			for (size_t i = 0; i < n; i++) {
				int dash = i == 8 || i == 13 || i == 18 || i == 23;
				char c = id->pod[i];
				if (dash ? c != '-' : !((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
					fail("pod \"%s\" is not a dashed UUID", id->pod);
			}
		} else {
			fail("pod \"%s\" of %zu characters", id->pod, n);
		}
		memcpy(under, id->pod, n + 1);
		for (size_t i = 0; i < n; i++)
			if (under[i] == '-')
				under[i] = '_';
		if (!memmem(data, size, id->pod, n) && !memmem(data, size, under, n))
			fail("pod \"%s\" not in the input", id->pod);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cgroup_id id, again;
	char shortid[16], tiny[4];
	const char *text = (const char *)data;

	memset(&id, 0x55, sizeof(id));
	int r = cgroup_id_parse(text, size, &id);
	check_fields(&id, r, data, size);

	/* the same answer again, and without an out */
	memset(&again, 0xaa, sizeof(again));
	if (cgroup_id_parse(text, size, &again) != r || strcmp(id.pod, again.pod) != 0 ||
	    strcmp(id.container, again.container) != 0 || strcmp(id.runtime, again.runtime) != 0)
		fail("two parses differ");
	if (cgroup_id_parse(text, size, NULL) != r)
		fail("a NULL out changed the result");

	/* the last line without its newline is cut off: up to the last newline reads the same */
	size_t whole = size;
	while (whole && data[whole - 1] != '\n')
		whole--;
	if (cgroup_id_parse(text, whole, &again) != r || strcmp(id.pod, again.pod) != 0 ||
	    strcmp(id.container, again.container) != 0 || strcmp(id.runtime, again.runtime) != 0)
		fail("the text up to its last newline (%zu of %zu bytes) reads differently", whole, size);

	/* the short id: the container's first 12 characters, or none */
	const char *s = cgroup_id_short(&id, shortid, sizeof(shortid));
	if (s != shortid)
		fail("short id not in buf");
	if (id.container[0] ? strlen(s) != 12 || strncmp(s, id.container, 12) != 0 : s[0] != '\0')
		fail("short id \"%s\" of \"%s\"", s, id.container);
	s = cgroup_id_short(&id, tiny, sizeof(tiny));
	if (strlen(s) >= sizeof(tiny) || strncmp(s, id.container, strlen(s)) != 0)
		fail("short id \"%s\" in %zu bytes", s, sizeof(tiny));
	return 0;
}
