/* test_agent_files.c - reading the agent's status file from outside the JVM:
 * fields, escapes, and files left by an earlier process with the same pid. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_files.h"
#include "check.h"
#include "proc_info.h"

static void write_status(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

int main(void)
{
	char path[128], text[1024];
	struct agent_status st;
	pid_t pid = getpid();
	uint64_t start = proc_info_start_time(pid);

	CHECK(start > 0);
	agent_file_path(path, sizeof(path), pid, pid, "jflame-", ".status");
	snprintf(text, sizeof(text), "%s", "");
	CHECK(strstr(path, "/proc/") == path && strstr(path, "/root/tmp/jflame-") != NULL);

	/* no file: nothing */
	unlink(path);
	CHECK(agent_status_read(pid, pid, start, &st) == -1);

	snprintf(text, sizeof(text),
		 "format=1\nagent_version=0.4.0\npid=%d\nprocess_start=%llu\nmode=attach\nstate=running\n"
		 "options=unfold\nmap_lines=1234\npreserve_frame_pointer=off\n"
		 "error=bad \\\\ thing\\nsecond line \\x41\\x00z\n",
		 (int)pid, (unsigned long long)start);
	write_status(path, text);
	CHECK(agent_status_read(pid, pid, start, &st) == 1);
	CHECK_EQ_STR(st.state, "running");
	CHECK_EQ_STR(st.mode, "attach");
	CHECK_EQ_STR(st.options, "unfold");
	CHECK_EQ_STR(st.version, "0.4.0");
	CHECK_EQ_INT(st.frame_pointers, 0);
	CHECK_EQ_INT((int)st.map_lines, 1234);
	/* escapes decoded, then escaped as all target text is: one line, no control byte */
	CHECK_EQ_STR(st.error, "bad \\ thing\\x0asecond line A");
	CHECK(agent_status_live(&st));

	/* a target's control characters in every value, escaped in the file or
	 * raw: shown escaped, never raw */
	snprintf(text, sizeof(text),
		 "pid=%d\nprocess_start=%llu\nstate=running\\x1b[2J\nmode=\\x07\n"
		 "options=\x1b]0;pwned\x07;x\nagent_version=\xc2\x9b"
		 "1m\xff\n"
		 "error=\\x1b[31mred\\x1b[0m \\\\x41 \xe4\xb8\xbb\n",
		 (int)pid, (unsigned long long)start);
	write_status(path, text);
	CHECK(agent_status_read(pid, pid, start, &st) == 1);
	CHECK_EQ_STR(st.state, "running\\x1b[2J");
	CHECK_EQ_STR(st.mode, "\\x07");
	CHECK_EQ_STR(st.options, "\\x1b]0;pwned\\x07;x");
	CHECK_EQ_STR(st.version, "\\xc2\\x9b"
				 "1m\\xff");
	CHECK_EQ_STR(st.error, "\\x1b[31mred\\x1b[0m \\\\x41 \xe4\xb8\xbb");
	CHECK(!agent_status_live(&st));

	/* left by an earlier process: another start time, or another pid */
	CHECK(agent_status_read(pid, pid, start + 1, &st) == 0);
	snprintf(text, sizeof(text), "pid=%d\nprocess_start=%llu\nstate=running\n", (int)pid + 1,
		 (unsigned long long)start);
	write_status(path, text);
	CHECK(agent_status_read(pid, pid, start, &st) == 0);

	/* exited agents are not live; unknown frame pointers stay -1 */
	snprintf(text, sizeof(text), "pid=%d\nprocess_start=%llu\nstate=exited\npreserve_frame_pointer=unknown\n",
		 (int)pid, (unsigned long long)start);
	write_status(path, text);
	CHECK(agent_status_read(pid, pid, start, &st) == 1);
	CHECK(!agent_status_live(&st));
	CHECK_EQ_INT(st.frame_pointers, -1);

	/* not the process's own file: another user's saying running, a FIFO
	 * (opening it used to block for good), a symbolic link: none is read */
	snprintf(text, sizeof(text), "pid=%d\nprocess_start=%llu\nstate=running\n", (int)pid,
		 (unsigned long long)start);
	write_status(path, text);
	if (geteuid() == 0) {
		CHECK(chown(path, 12345, 12345) == 0);
		CHECK(agent_status_read(pid, pid, start, &st) == -1);
		CHECK(!agent_status_live(&st));
	}
	char real[300];
	snprintf(real, sizeof(real), "%s.real", path);
	CHECK(rename(path, real) == 0 && symlink(real, path) == 0);
	CHECK(agent_status_read(pid, pid, start, &st) == -1);
	unlink(path);
	unlink(real);
	CHECK(mkfifo(path, 0600) == 0);
	CHECK(agent_status_read(pid, pid, start, &st) == -1);
	unlink(path);

	/* the parser alone */
	const char *parsed = "state=running\npid=7\nerror=a\\x1bb";
	agent_status_parse(parsed, strlen(parsed), &st);
	CHECK_EQ_STR(st.state, "running");
	CHECK_EQ_INT(st.pid, 7);
	unlink(path);
	return check_report("agent_files");
}
