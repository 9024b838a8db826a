/* record_launch.c - record's launch mode: the command started stopped, with the agent and
 * the JVM flags, let go once sampling runs, reaped, and its exit code handed on. */
#include "record_launch.h"
#include "msg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static bool is_java(const char *cmd)
{
	const char *base = strrchr(cmd, '/');
	return strcmp(base ? base + 1 : cmd, "java") == 0;
}

/* Forks the command, stopped until sampling has started (launch_go). A java
 * command gets the agent and the flags on its command line; anything else (a
 * wrapper script) gets them in JAVA_TOOL_OPTIONS. */
int record_launch_start(struct record *r, char *err, size_t errlen)
{
	static const char *const flags[] = { "-XX:+PreserveFramePointer", "-XX:+UnlockDiagnosticVMOptions",
					     "-XX:+DebugNonSafepoints" };
	char agentpath[4400];
	int go[2], status[2];
	snprintf(agentpath, sizeof(agentpath), "-agentpath:%s%s%s", r->agent, r->o.agent_options[0] ? "=" : "",
		 r->o.agent_options);
	if (pipe2(go, O_CLOEXEC) != 0 || pipe2(status, O_CLOEXEC) != 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	fflush(NULL);
	r->child = fork();
	if (r->child < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -1;
	}
	if (r->child == 0) {
		char c, **argv = calloc((size_t)r->o.ncommand + 6, sizeof(*argv));
		int n = 0, e;
		close(go[1]);
		close(status[0]);
		if (read(go[0], &c, 1) != 1) /* jflame went away before sampling began */
			_exit(127);
		if (!argv)
			_exit(127);
		argv[n++] = r->o.command[0];
		if (is_java(r->o.command[0])) {
			argv[n++] = agentpath;
			for (size_t i = 0; i < 3; i++)
				argv[n++] = (char *)flags[i];
		} else {
			const char *old = getenv("JAVA_TOOL_OPTIONS");
			char *tool = NULL;
			if (asprintf(&tool, "%s%s%s %s %s %s", old ? old : "", old ? " " : "", agentpath, flags[0],
				     flags[1], flags[2]) < 0 ||
			    setenv("JAVA_TOOL_OPTIONS", tool, 1) != 0)
				_exit(127);
		}
		for (int i = 1; i < r->o.ncommand; i++)
			argv[n++] = r->o.command[i];
		execvp(argv[0], argv);
		e = errno;
		if (write(status[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(status[1]);
	r->go_fd = go[1];
	*r->launched = r->child;
	/* the status pipe closes on a successful exec, or carries errno */
	r->launch_status_fd = status[0];
	return 0;
}

int record_launch_go(struct record *r, char *err, size_t errlen)
{
	int e = 0;
	if (write(r->go_fd, "g", 1) != 1) {
		snprintf(err, errlen, "failed to start %s: %s", r->o.command[0], strerror(errno));
		return -1;
	}
	close(r->go_fd);
	r->go_fd = -1;
	ssize_t got = read(r->launch_status_fd, &e, sizeof(e));
	close(r->launch_status_fd);
	r->launch_status_fd = -1;
	if (got == (ssize_t)sizeof(e)) {
		snprintf(err, errlen, "cannot run '%s': %s", r->o.command[0], strerror(e));
		return -1;
	}
	return 0;
}

void record_launch_reap(struct record *r, bool block)
{
	int st;
	if (r->child <= 0 || r->child_exited)
		return;
	pid_t w;
	do
		w = waitpid(r->child, &st, block ? 0 : WNOHANG);
	while (w < 0 && errno == EINTR);
	if (w == r->child) {
		r->child_exited = true;
		r->child_status = st;
		*r->launched = 0;
	}
}

/* After the recording, whose exit code is rc: a command never started exits at
 * once, a running one is waited for (said), and its own exit code becomes the
 * command's when the recording succeeded. */
int record_launch_end(struct record *r, int rc)
{
	if (r->child > 0) {
		if (r->go_fd >= 0) { /* never started: it exits at once */
			close(r->go_fd);
			r->go_fd = -1;
		} else if (!r->child_exited && rc == 0) {
			msg_say("recording done; waiting for %s (pid %d) to exit\n", r->o.command[0], (int)r->child);
		}
		if (r->launch_status_fd >= 0)
			close(r->launch_status_fd);
		record_launch_reap(r, true);
		/* the command's own exit code, once jflame's outputs are written */
		if (rc == 0 && WIFEXITED(r->child_status))
			rc = WEXITSTATUS(r->child_status);
		else if (rc == 0 && WIFSIGNALED(r->child_status))
			rc = 128 + WTERMSIG(r->child_status);
	}
	return rc;
}
