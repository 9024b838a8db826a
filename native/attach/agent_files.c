/* agent_files.c - finds and reads a JVM's jflame agent files from outside the
 * JVM: the status file's key=value lines (format 1, \\ \n \xHH escapes). */
#include "agent_files.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "target_file.h"
#include "text_escape.h"

void agent_file_path(char *out, size_t len, pid_t pid, pid_t nspid, const char *prefix, const char *suffix)
{
	snprintf(out, len, "/proc/%d/root/tmp/%s%d%s", (int)pid, prefix, (int)nspid, suffix);
}

/* Copies an escaped status value (up to its newline), decodes it and escapes
 * it again as all target text is (text_escape: no control byte, UTF-8), cut
 * to len. A decoded NUL ends the value. */
static void unescape(char *out, size_t len, const char *in)
{
	char buf[1024];
	size_t n = strcspn(in, "\n");
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, in, n);
	buf[n] = '\0';
	text_unescape(buf);
	text_escape(out, len, buf, strlen(buf));
}

static bool value(const char *line, const char *key, const char **v)
{
	size_t n = strlen(key);
	if (strncmp(line, key, n) != 0 || line[n] != '=')
		return false;
	*v = line + n + 1;
	return true;
}

void agent_status_parse(const char *text, size_t len, struct agent_status *st)
{
	const char *v;
	memset(st, 0, sizeof(*st));
	st->frame_pointers = -1;
	st->pid = -1;
	for (size_t at = 0; at < len;) {
		char line[1024];
		const char *nl = memchr(text + at, '\n', len - at);
		size_t n = (nl ? (size_t)(nl - (text + at)) + 1 : len - at);
		size_t keep = n < sizeof(line) - 1 ? n : sizeof(line) - 1; /* a longer line is cut, as fgets did */
		memcpy(line, text + at, keep);
		line[keep] = '\0';
		at += n;
		if (value(line, "state", &v))
			unescape(st->state, sizeof(st->state), v);
		else if (value(line, "mode", &v))
			unescape(st->mode, sizeof(st->mode), v);
		else if (value(line, "options", &v))
			unescape(st->options, sizeof(st->options), v);
		else if (value(line, "agent_version", &v))
			unescape(st->version, sizeof(st->version), v);
		else if (value(line, "error", &v))
			unescape(st->error, sizeof(st->error), v);
		else if (value(line, "preserve_frame_pointer", &v))
			st->frame_pointers = strncmp(v, "on", 2) == 0 ? 1 : strncmp(v, "off", 3) == 0 ? 0 : -1;
		else if (value(line, "map_lines", &v))
			st->map_lines = strtoull(v, NULL, 10);
		else if (value(line, "process_start", &v))
			st->process_start = strtoull(v, NULL, 10);
		else if (value(line, "pid", &v))
			st->pid = atoi(v);
	}
}

int agent_status_read(pid_t pid, pid_t nspid, uint64_t start_time, struct agent_status *st)
{
	char path[128], *text = NULL;
	ssize_t got;
	memset(st, 0, sizeof(*st));
	st->frame_pointers = -1;
	st->pid = -1;
	agent_file_path(path, sizeof(path), pid, nspid, "jflame-", ".status");
	int fd = target_file_open(path, 0, AGENT_STATUS_MAX, NULL, NULL, 0);
	if (fd < 0)
		return -1;
	text = malloc(AGENT_STATUS_MAX);
	got = text ? pread(fd, text, AGENT_STATUS_MAX, 0) : -1;
	close(fd);
	if (got < 0) {
		free(text);
		return -1;
	}
	agent_status_parse(text, (size_t)got, st);
	free(text);
	/* left by an earlier process with this pid */
	if ((st->pid >= 0 && st->pid != (int)nspid) ||
	    (st->process_start && start_time && st->process_start != start_time))
		return 0;
	return 1;
}

bool agent_status_live(const struct agent_status *st)
{
	return strcmp(st->state, "running") == 0 || strcmp(st->state, "starting") == 0;
}
