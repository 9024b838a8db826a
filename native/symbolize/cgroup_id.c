/* cgroup_id.c - finds the pod UID and container id in /proc/PID/cgroup text by
 * plain string scanning of each line's path, component by component. */
#include "cgroup_id.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define CGROUP_LINE_MAX 65536 /* longer lines are not the kernel's: skipped */
#define CONTAINER_HEX	64    /* docker, containerd, CRI-O and podman ids */
#define SHORT_HEX	12    /* as docker ps shows them */

/* A piece of the input: not NUL-terminated. */
struct span {
	const char *p;
	size_t n;
};

static struct span span_sub(struct span s, size_t from, size_t n)
{
	return (struct span){ s.p + from, n };
}

static int span_is(struct span s, const char *lit)
{
	size_t n = strlen(lit);
	return s.n == n && memcmp(s.p, lit, n) == 0;
}

static int span_starts(struct span s, const char *lit)
{
	size_t n = strlen(lit);
	return s.n >= n && memcmp(s.p, lit, n) == 0;
}

static int span_ends(struct span s, const char *lit)
{
	size_t n = strlen(lit);
	return s.n >= n && memcmp(s.p + s.n - n, lit, n) == 0;
}

static int hex_digit(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static int hex_is(struct span s)
{
	if (!s.n)
		return 0;
	for (size_t i = 0; i < s.n; i++)
		if (!hex_digit(s.p[i]))
			return 0;
	return 1;
}

/* s is a container id: exactly 64 lowercase hex digits. */
static int container_hex_is(struct span s)
{
	return s.n == CONTAINER_HEX && hex_is(s);
}

/* s is a pod UID: a UUID with '-' or '_' throughout (written dashed to out,
 * which holds 37 bytes), or the 32 hex digits kubelet gives a static pod. */
static int uid_parse(struct span s, char *out)
{
	if (s.n == 32) {
		if (!hex_is(s))
			return 0;
		memcpy(out, s.p, 32);
		out[32] = '\0';
		return 1;
	}
	if (s.n != 36 || (s.p[8] != '-' && s.p[8] != '_'))
		return 0;
	for (size_t i = 0; i < 36; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s.p[i] != s.p[8])
				return 0;
			out[i] = '-';
		} else if (hex_digit(s.p[i])) {
			out[i] = s.p[i];
		} else {
			return 0;
		}
	}
	out[36] = '\0';
	return 1;
}

/* "kubepods" is one of the '-'-separated words of s, less a ".slice" suffix:
 * kubepods, kubepods.slice, kubepods-besteffort.slice, kubelet-kubepods.slice. */
static int kubepods_word_has(struct span s)
{
	size_t start = 0;

	if (span_ends(s, ".slice"))
		s.n -= 6;
	for (size_t i = 0; i <= s.n; i++) {
		if (i < s.n && s.p[i] != '-')
			continue;
		if (span_is(span_sub(s, start, i - start), "kubepods"))
			return 1;
		start = i + 1;
	}
	return 0;
}

/* A pod's cgroup: pod<uid> below a kubepods cgroup (cgroupfs driver), or
 * <...kubepods...>-pod<uid>.slice (systemd driver, '_' for '-' in the uid). */
static int pod_match(struct span c, int in_kubepods, char *pod)
{
	static const size_t uid_lens[] = { 36, 32 };

	if (span_starts(c, "pod"))
		return in_kubepods && uid_parse(span_sub(c, 3, c.n - 3), pod);
	if (!span_ends(c, ".slice"))
		return 0;
	c.n -= 6;
	for (size_t i = 0; i < sizeof(uid_lens) / sizeof(uid_lens[0]); i++) {
		size_t l = uid_lens[i];
		if (c.n < l + 4)
			continue;
		size_t at = c.n - l - 4;
		if (memcmp(c.p + at, "-pod", 4) == 0 && kubepods_word_has(span_sub(c, 0, at)) &&
		    uid_parse(span_sub(c, at + 4, l), pod))
			return 1;
	}
	return 0;
}

static void set_str(char *dst, size_t cap, struct span s)
{
	size_t n = s.n < cap - 1 ? s.n : cap - 1;
	memcpy(dst, s.p, n);
	dst[n] = '\0';
}

static void set_container(struct cgroup_id *id, struct span hex, const char *runtime)
{
	set_str(id->container, sizeof(id->container), hex);
	snprintf(id->runtime, sizeof(id->runtime), "%s", runtime);
}

/* A container's cgroup, given the component before it: <prefix><64 hex>.scope
 * (systemd driver), or bare where the cgroupfs driver puts it. The monitors
 * crio-conmon-<id> and libpod-conmon-<id> fail the hex test. */
static int container_match(struct span c, struct span parent, int parent_pod, struct cgroup_id *id)
{
	static const struct {
		const char *prefix, *runtime;
	} prefixes[] = {
		{ "cri-containerd-", "containerd" },
		{ "crio-", "cri-o" },
		{ "docker-", "docker" },
		{ "libpod-", "podman" },
		{ "nerdctl-", "containerd" },
	};
	int scope = span_ends(c, ".scope");
	/* read in a private cgroup namespace (a sidecar's), a sibling container's
	 * path starts "/../": what is above it is not shown */
	int hidden = span_is(parent, "..");

	if (scope)
		c.n -= 6;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t pl = strlen(prefixes[i].prefix);
		if (!span_starts(c, prefixes[i].prefix) || !container_hex_is(span_sub(c, pl, c.n - pl)))
			continue;
		/* unscoped: CRI-O's cgroupfs driver in a pod, podman's under libpod_parent
		 * (or under a parent the reader's cgroup namespace hides) */
		if (!scope && !(i == 1 && (parent_pod || hidden)) &&
		    !(i == 3 && (span_is(parent, "libpod_parent") || hidden)))
			return 0;
		set_container(id, span_sub(c, pl, c.n - pl), prefixes[i].runtime);
		return 1;
	}
	if (scope || !container_hex_is(c))
		return 0;
	if (span_is(parent, "docker")) {
		set_container(id, c, "docker");
		return 1;
	}
	if (parent_pod || hidden) { /* docker or containerd: cgroupfs does not say which */
		set_container(id, c, "kubepods");
		return 1;
	}
	return 0;
}

/* <pod slice>:<prefix>:<id>, the systemd-style cgroupsPath kubelet hands a
 * runtime that then uses it as a literal cgroupfs path. */
static int colon_match(struct span c, struct cgroup_id *id)
{
	size_t a = c.n, b = c.n;
	char pod[64];

	for (size_t i = 0; i < c.n; i++)
		if (c.p[i] == ':') {
			if (a == c.n)
				a = i;
			b = i;
		}
	if (a == b || !pod_match(span_sub(c, 0, a), 0, pod))
		return 0;
	snprintf(id->pod, sizeof(id->pod), "%s", pod);
	id->container[0] = '\0';
	snprintf(id->runtime, sizeof(id->runtime), "kubepods");

	struct span mid = span_sub(c, a + 1, b - a - 1), hex = span_sub(c, b + 1, c.n - b - 1);
	if (!container_hex_is(hex))
		return 1;
	if (span_is(mid, "cri-containerd"))
		set_container(id, hex, "containerd");
	else if (span_is(mid, "crio"))
		set_container(id, hex, "cri-o");
	else if (span_is(mid, "docker"))
		set_container(id, hex, "docker");
	return 1;
}

/* One line "N:controllers:/path" into id; its score: 3 pod and container,
 * 2 container, 1 pod, 0 nothing (or not a cgroup line). */
static int line_parse(struct span line, struct cgroup_id *id)
{
	size_t i = 0;

	memset(id, 0, sizeof(*id));
	while (i < line.n && i < 10 && line.p[i] >= '0' && line.p[i] <= '9')
		i++;
	if (i == 0 || i >= line.n || line.p[i] != ':')
		return 0;
	const char *c2 = memchr(line.p + i + 1, ':', line.n - i - 1);
	if (!c2)
		return 0;
	struct span path = span_sub(line, (size_t)(c2 - line.p) + 1, line.n - (size_t)(c2 - line.p) - 1);
	if (!path.n || path.p[0] != '/')
		return 0;
	if (span_ends(path, " (deleted)")) /* cgroup v2: the process's cgroup was removed */
		path.n -= 10;

	struct span parent = { path.p, 0 };
	int parent_pod = 0, in_kubepods = 0;
	for (size_t start = 1; start <= path.n;) {
		const char *slash = memchr(path.p + start, '/', path.n - start);
		size_t end = slash ? (size_t)(slash - path.p) : path.n;
		struct span c = span_sub(path, start, end - start);
		char pod[64];
		int is_pod = 0;

		if (memchr(c.p, ':', c.n)) {
			is_pod = colon_match(c, id);
		} else if (pod_match(c, in_kubepods, pod)) {
			/* a container above the pod is not the pod's (a kind node) */
			snprintf(id->pod, sizeof(id->pod), "%s", pod);
			id->container[0] = '\0';
			snprintf(id->runtime, sizeof(id->runtime), "kubepods");
			is_pod = 1;
		} else {
			container_match(c, parent, parent_pod, id);
		}
		if (kubepods_word_has(c))
			in_kubepods = 1;
		parent = c;
		parent_pod = is_pod;
		start = end + 1;
	}
	return (id->pod[0] ? 1 : 0) + (id->container[0] ? 2 : 0);
}

int cgroup_id_parse(const char *text, size_t len, struct cgroup_id *out)
{
	struct cgroup_id best, cand;
	int best_score = 0;

	memset(&best, 0, sizeof(best));
	if (!text)
		len = 0;
	for (size_t pos = 0; pos < len;) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		if (!nl)
			break; /* cut off: the kernel ends every line */
		struct span line = { text + pos, (size_t)(nl - (text + pos)) };
		pos += line.n + 1;
		if (line.n > CGROUP_LINE_MAX || memchr(line.p, '\0', line.n))
			continue;
		int score = line_parse(line, &cand);
		if (score > best_score) {
			best = cand;
			best_score = score;
		}
	}
	if (out)
		*out = best;
	return best_score > 0;
}

int cgroup_id_read(int pid, struct cgroup_id *out)
{
	char path[64], buf[32768];
	size_t n = 0;
	int fd;

	if (pid < 0)
		return cgroup_id_parse(NULL, 0, out);
	if (pid == 0)
		snprintf(path, sizeof(path), "/proc/self/cgroup");
	else
		snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return cgroup_id_parse(NULL, 0, out);
	while (n < sizeof(buf)) {
		ssize_t got = read(fd, buf + n, sizeof(buf) - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	/* a file longer than buf ends in a cut line, which the parser skips */
	return cgroup_id_parse(buf, n, out);
}

const char *cgroup_id_short(const struct cgroup_id *id, char *buf, size_t len)
{
	struct span c;

	if (!buf || !len)
		return "";
	buf[0] = '\0';
	if (!id)
		return buf;
	c = (struct span){ id->container, strnlen(id->container, sizeof(id->container)) };
	if (c.n > SHORT_HEX && hex_is(c))
		c.n = SHORT_HEX;
	set_str(buf, len, c);
	return buf;
}
