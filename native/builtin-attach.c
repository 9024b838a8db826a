/* builtin-attach.c - `jflame attach PID [AGENT_OPTIONS]`: loads the jflame agent
 * into a running HotSpot JVM (also in a container) without any JDK tool. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_files.h"
#include "agent_options.h"
#include "attach.h"
#include "builtin.h"
#include "caps.h"
#include "cli_io.h"
#include "cli_opts.h"
#include "cli_num.h"
#include "proc_info.h"
#include "msg.h"

struct attach_cmd_opts {
	pid_t pid;
	const char *agent_options;
	const char *agent;
	int timeout_ms;
	bool quiet;
};

static const struct attach_cmd_opts defaults = {
	.agent_options = "",
	.timeout_ms = ATTACH_DEFAULT_TIMEOUT_MS,
};

/* SIGINT or SIGTERM: the attach's waits end (within 100 ms) and jflame exits 128+N. */
static volatile sig_atomic_t interrupted_by;

static void on_signal(int sig)
{
	interrupted_by = sig;
}

static const char usage[] = "usage: jflame attach [--timeout SECONDS] [--agent PATH] PID [AGENT_OPTIONS]\n"
			    "\n"
			    "Loads libjflame-agent.so into the running HotSpot JVM PID through its attach\n"
			    "mechanism (no JDK tools needed). The agent replays the code compiled so far, so\n"
			    "the JVM's perf map (/tmp/perf-<pid>.map, in the JVM's own /tmp) is complete when\n"
			    "this returns. Works on JVMs of other users (as root) and in containers: the\n"
			    "agent is copied into the container's /tmp when its path is not visible there.\n"
			    "Loading it twice is harmless: the second time says it is already there.\n"
			    "Ctrl-C or SIGTERM ends the wait for the JVM (exit 128+N).\n"
			    "\n";

static const char usage_tail[] = "\n"
				 "Examples:\n"
				 "  jflame attach 4242\n"
				 "  jflame attach 4242 msig,sourcepos\n"
				 "  jflame attach --timeout 20 $(pgrep -f kafka.Kafka)\n";

static const struct cli_cmd attach_cli = { "attach", usage, NULL, usage_tail, 27, CLI_IN_ORDER };

static int parse_options(struct attach_cmd_opts *o, int argc, char **argv)
{
	const struct cli_opt rows[] = {
		ROW_TEXT("AGENT_OPTIONS", "comma-separated, as after -agentpath:...=\n"
					  "(nounfold, msig, dottedclass, sourcepos, quiet;\n"
					  "'help' lists them; inline chains are unfolded by\n"
					  "default)"),
		ROW_NUM("timeout", 't', OPT_SECONDS_MS, &o->timeout_ms, NULL, 0.1, 3600,
			"--timeout takes seconds from 0.1 to 3600, not '%s'", "SECONDS",
			"wait this long for the JVM to answer (default 5)"),
		ROW("agent", 0, OPT_STRING, &o->agent, "PATH",
		    "the agent library (default: found next to jflame,\n"
		    "or $JFLAME_AGENT)"),
		ROW("quiet", 'q', OPT_FLAG, &o->quiet, NULL, "no message on success"),
		ROW_HELP("help", 'h', "this text"),
	};
	int next;
	*o = defaults;
	int rc = cli_opts_parse(&attach_cli, rows, sizeof(rows) / sizeof(rows[0]), argc, argv, &next);
	if (rc != 0)
		return rc;
	if (next >= argc) {
		msg_say("give the pid of the JVM: jflame attach PID [AGENT_OPTIONS]\n");
		return -1;
	}
	long pid;
	if (cli_parse_long(argv[next], 1, 4194304, &pid) != 0) {
		msg_say("'%s' is not a pid; give the pid of the JVM, e.g. jflame attach 4242\n", argv[next]);
		return -1;
	}
	o->pid = (pid_t)pid;
	if (next + 1 < argc)
		o->agent_options = argv[next + 1];
	if (next + 2 < argc) {
		msg_say("unexpected argument '%s'; agent options are one comma-separated word\n", argv[next + 2]);
		return -1;
	}
	return 0;
}

int cmd_attach(int argc, char **argv)
{
	struct attach_cmd_opts o;
	struct attach_info info;
	struct agent_options ao;
	char err[1024] = "", agent[4096];

	int p = parse_options(&o, argc, argv);
	if (p != 0)
		return p > 0 ? 0 : 2;
	/* the agent's own parser: a bad option is caught here, not in the JVM */
	if (agent_options_parse(o.agent_options, &ao, err, sizeof(err)) != 0) {
		msg_say("bad agent option: %s\n", err);
		return 2;
	}
	if (ao.help) {
		fputs(agent_options_help(), stdout);
		return 0;
	}
	if (o.agent)
		snprintf(agent, sizeof(agent), "%s", o.agent);
	else if (attach_find_agent(agent, sizeof(agent), err, sizeof(err)) != 0)
		goto fail;
	if (caps_check_attach(o.pid, err, sizeof(err)) != 0)
		goto fail;
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	struct attach_opts ato = {
		.agent = agent, .options = o.agent_options, .timeout_ms = o.timeout_ms, .cancel = &interrupted_by
	};
	enum attach_outcome r = attach_agent(o.pid, &ato, &info, err, sizeof(err));
	if (r == ATTACH_FAILED && interrupted_by) {
		msg_say("%s\n", err);
		return 128 + interrupted_by;
	}
	if (r == ATTACH_FAILED)
		goto fail;
	if (r == ATTACH_ALREADY) {
		if (!o.quiet)
			msg_say("the agent is already loaded in pid %d (options '%s'); nothing to do\n", (int)o.pid,
				info.options);
		return 0;
	}
	if (!o.quiet) {
		struct proc_info pi;
		struct agent_status st;
		char map[128];
		if (proc_info_read(o.pid, &pi) != 0)
			pi.nspid = o.pid, pi.start_time = 0;
		agent_file_path(map, sizeof(map), o.pid, pi.nspid, "perf-", ".map");
		int have = agent_status_read(o.pid, pi.nspid, pi.start_time, &st) == 1;
		char entries[48] = "";
		if (have)
			snprintf(entries, sizeof(entries), " (%llu entries)", (unsigned long long)st.map_lines);
		msg_say("loaded the agent into pid %d in %.2f s (attach protocol %d%s); map %s%s\n", (int)o.pid,
			info.seconds, info.protocol, info.copied ? ", agent copied into its /tmp" : "", map, entries);
		if (have && st.frame_pointers == 0)
			msg_say("pid %d runs without -XX:+PreserveFramePointer: perf and other frame-pointer "
				"walkers lose the callers of JIT-compiled code (jflame record walks HotSpot's frames "
				"and does not need it); for those, restart it with -XX:+PreserveFramePointer\n",
				(int)o.pid);
	}
	return 0;
fail:
	msg_say("%s\n", err);
	return 1;
}
