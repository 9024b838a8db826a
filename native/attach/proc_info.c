/* proc_info.c - reads the few facts about a process that attaching and
 * symbolizing need from /proc: namespace pid, owner, start time, signals, libjvm. */
#include "proc_info.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "text_escape.h"

#define PROC_PID_INIT_INO 0xEFFFFFFCU /* the initial pid namespace's inode (include/linux/proc_ns.h) */

pid_t proc_info_nspid(const char *status_path, pid_t fallback)
{
	char line[256];
	pid_t ns = fallback;
	FILE *f = fopen(status_path, "re");
	if (!f)
		return fallback;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6) != 0)
			continue;
		char *last = strrchr(line, '\t');
		if (last)
			ns = (pid_t)strtol(last + 1, NULL, 10);
		break;
	}
	fclose(f);
	return ns > 0 ? ns : fallback;
}

int proc_info_self_pidns(uint64_t *dev, uint64_t *ino)
{
	struct stat st;

	*dev = *ino = 0;
	if (stat("/proc/self/ns/pid", &st) != 0)
		return -1;
	if (st.st_ino == PROC_PID_INIT_INO)
		return 0;
	*dev = (uint64_t)st.st_dev;
	*ino = (uint64_t)st.st_ino;
	return 1;
}

/* /proc/PID/stat: the state (field 3) and the start time (field 22). */
static int read_stat(pid_t pid, char *state, uint64_t *start)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2]) {
		errno = EINVAL;
		return -1;
	}
	*state = p[2];
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	*start = p ? strtoull(p + 1, NULL, 10) : 0;
	return 0;
}

uint64_t proc_info_start_time(pid_t pid)
{
	char state;
	uint64_t start = 0;
	return read_stat(pid, &state, &start) == 0 ? start : 0;
}

uint64_t proc_info_age_ms(uint64_t start_ticks)
{
	struct timespec ts;
	long hz = sysconf(_SC_CLK_TCK);
	if (start_ticks == 0 || hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &ts) != 0)
		return 0;
	uint64_t now_ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	uint64_t start_ms = start_ticks / (uint64_t)hz * 1000 + start_ticks % (uint64_t)hz * 1000 / (uint64_t)hz;
	return now_ms > start_ms ? now_ms - start_ms : 0;
}

bool proc_info_alive(pid_t pid)
{
	char state;
	uint64_t start;
	return read_stat(pid, &state, &start) == 0 && state != 'Z' && state != 'X';
}

int proc_info_read(pid_t pid, struct proc_info *out)
{
	char path[64], line[256];
	int found = 0;
	memset(out, 0, sizeof(*out));
	out->pid = out->nspid = pid;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long a, b;
		if (strncmp(line, "Name:\t", 6) == 0) {
			size_t n = strcspn(line + 6, "\n");
			if (n >= sizeof(out->comm))
				n = sizeof(out->comm) - 1;
			memcpy(out->comm, line + 6, n);
			out->comm[n] = '\0';
			/* the kernel writes '\\' and a newline as \\ and \n here: the name
			 * back, then escaped as all target text is */
			text_unescape(out->comm);
			text_escape_inplace(out->comm, sizeof(out->comm));
		} else if (sscanf(line, "Uid:\t%lu\t%lu", &a, &b) == 2) {
			out->euid = (uid_t)b;
			found |= 1;
		} else if (sscanf(line, "Gid:\t%lu\t%lu", &a, &b) == 2) {
			out->egid = (gid_t)b;
			found |= 2;
		} else if (strncmp(line, "SigCgt:\t", 8) == 0) {
			out->sig_caught = strtoull(line + 8, NULL, 16);
		} else if (strncmp(line, "NSpid:", 6) == 0) {
			char *last = strrchr(line, '\t');
			long ns = last ? strtol(last + 1, NULL, 10) : 0;
			if (ns > 0)
				out->nspid = (pid_t)ns;
		}
	}
	fclose(f);
	if (found != 3 || read_stat(pid, &out->state, &out->start_time) != 0) {
		if (found != 3)
			errno = EINVAL;
		return -1;
	}
	return 0;
}

int proc_info_is_hotspot(pid_t pid)
{
	char path[64], line[4096];
	int found = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f)) {
		size_t n = strcspn(line, "\n");
		line[n] = '\0';
		found = n >= 10 && strcmp(line + n - 10, "/libjvm.so") == 0;
	}
	fclose(f);
	return found;
}

double proc_info_ticks_to_epoch(uint64_t ticks)
{
	char line[256];
	double btime = 0;
	long hz = sysconf(_SC_CLK_TCK);
	FILE *f = fopen("/proc/stat", "re");
	if (!f || ticks == 0 || hz <= 0) {
		if (f)
			fclose(f);
		return 0;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %lf", &btime) == 1)
			break;
	fclose(f);
	return btime > 0 ? btime + (double)ticks / (double)hz : 0;
}
