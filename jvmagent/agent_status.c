/* agent_status.c - renders the agent's status file: key=value lines, thread
 * names escaped so every value stays on one line. */
#include "agent_status.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

size_t status_escape_append(char *buf, size_t len, size_t pos, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		char tmp[8];
		const char *out = tmp;
		if (c == '\\')
			out = "\\\\";
		else if (c == '\n')
			out = "\\n";
		else if (c < 0x20 || c == 0x7f)
			snprintf(tmp, sizeof(tmp), "\\x%02x", c);
		else
			tmp[0] = (char)c, tmp[1] = '\0';
		for (; *out; out++) {
			if (pos + 1 < len)
				buf[pos] = *out;
			pos++;
		}
	}
	if (len)
		buf[pos < len ? pos : len - 1] = '\0';
	return pos;
}

static size_t add(char *buf, size_t len, size_t pos, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(pos < len ? buf + pos : NULL, pos < len ? len - pos : 0, fmt, ap);
	va_end(ap);
	return pos + (n > 0 ? (size_t)n : 0);
}

size_t agent_status_render(const struct agent_status *st, char *buf, size_t len)
{
	const char *pfp = st->preserve_frame_pointer > 0 ? "on" : st->preserve_frame_pointer == 0 ? "off" : "unknown";
	size_t pos = 0;

	pos = add(buf, len, pos, "format=%d\nagent_version=%s\npid=%d\nprocess_start=%" PRIu64 "\n",
		  AGENT_STATUS_FORMAT, st->version, (int)st->pid, st->process_start);
	pos = add(buf, len, pos, "mode=%s\nstate=%s\noptions=%s\njvm=%s\nmap=%s\nevents=%s\n", st->mode, st->state,
		  st->options, st->jvm ? st->jvm : "", st->map_path, st->events_path);
	pos = add(buf, len, pos, "samples_path=%s\n", st->samples_path ? st->samples_path : "");
	pos = add(buf, len, pos, "started_ns=%" PRIu64 "\nupdated_ns=%" PRIu64 "\n", st->started_ns, st->updated_ns);
	pos = add(buf, len, pos, "preserve_frame_pointer=%s\n", pfp);
	pos = add(buf, len, pos, "debug_non_safepoints=%s\n",
		  st->debug_non_safepoints > 0	? "on" :
		  st->debug_non_safepoints == 0 ? "off" :
						  "unknown");
	pos = add(buf, len, pos, "lock_events=%s\npark_hook=%s\n", st->lock_events ? st->lock_events : "off",
		  st->park_hook ? st->park_hook : "off");
	pos = add(buf, len, pos,
		  "prologues_with_fp=%" PRIu64 "\nprologues_without_fp=%" PRIu64 "\nprologues_unknown=%" PRIu64
		  "\nprologues_skipped=%" PRIu64 "\n",
		  st->prologues_fp, st->prologues_no_fp, st->prologues_unknown, st->prologues_skipped);
	pos = add(buf, len, pos,
		  "compiled_loads=%" PRIu64 "\ncompiled_unloads=%" PRIu64 "\ndynamic_code=%" PRIu64
		  "\nmap_lines=%" PRIu64 "\nmap_bytes=%" PRIu64 "\n",
		  st->compiled_loads, st->compiled_unloads, st->dynamic_code, st->map_lines, st->map_bytes);
	pos = add(buf, len, pos,
		  "threads=%zu\nthreads_unnamed=%" PRIu64 "\nwrite_errors=%" PRIu64 "\nerror=", st->nthreads,
		  st->threads_unnamed, st->write_errors);
	pos = status_escape_append(buf, len, pos, st->error);
	pos = add(buf, len, pos, "\n");
	for (size_t i = 0; i < st->nthreads; i++) {
		pos = add(buf, len, pos, "thread.%d=", (int)st->threads[i].tid);
		pos = status_escape_append(buf, len, pos, st->threads[i].name);
		pos = add(buf, len, pos, "\n");
	}
	return pos;
}
