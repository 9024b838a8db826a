/* builtin-record.c - `jflame record`: its options (a table, one row each) and the main loop,
 * which steps the recording session of native/session/ (record_session.c) until it is over. */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_options.h"
#include "attach.h"
#include "builtin.h"
#include "caps.h"
#include "cli_io.h"
#include "cli_opts.h"
#include "cli_num.h"
#include "diff_graph.h"
#include "out_name.h"
#include "record_launch.h"
#include "record_outputs.h"
#include "record_session.h"
#include "regress_cli.h"
#include "sample_ring.h"
#include "window_regress.h"
#include "msg.h"

/* The options, and --baseline's, which the command's regression check takes. */
struct record_cli {
	struct record_opts o;
	const char *baseline;		 /* --baseline: first, previous:N or a profile file */
	bool confirm_given, alpha_given; /* --confirm, --alpha (they need --baseline) */
	struct window_regress_opts regress;
};

static const struct record_cli defaults = { .o = {
	.freq = 99,
	.min_block_ns = 1000, /* 1 us, offcputime's default */
	.alloc_interval = SAMPLE_RING_DEFAULT_ALLOC_INTERVAL,
	/* 100 us: a contended enter that waits less mostly spun and got the
	 * monitor; the agent walks the waiter's stack only for longer waits, so
	 * its cost (a few us a wait) stays a small part of the time blocked */
	.lock_min_ns = 100000,
	.agent_options = "",
	.attach_timeout_ms = ATTACH_DEFAULT_TIMEOUT_MS, },
	.regress = { .b = { .alpha = 0.01, .confirm = 2 } },
};

/* SIGINT, SIGTERM (SIGHUP without --window) counted: the first stops the
 * recording and writes it (attaches under way get ATTACH_GRACE_NS), the
 * second ends every wait at once; the outputs are written either way. */
static volatile sig_atomic_t stop_requested;
static volatile sig_atomic_t hup_closes_window, hup_requested; /* --window: SIGHUP closes the window early */
static volatile pid_t launched;				       /* launch mode: signals are passed on to the command */

static void on_signal(int sig)
{
	if (sig == SIGHUP && hup_closes_window) {
		hup_requested = 1;
		return;
	}
	if (stop_requested < 2)
		stop_requested++;
	if (launched > 0)
		kill(launched, sig);
}

static const char usage[] = "usage: jflame record (-p PID[,PID...] | -a) [-F HZ] [-d SECONDS] [-o FILE]...\n"
			    "       jflame record [-F HZ] [-d SECONDS] [-o FILE]... -- java ARGS...\n"
			    "\n"
			    "Samples on-CPU stacks with eBPF and writes a mixed-mode flame graph: Java\n"
			    "(interpreted, JIT-compiled and inlined, read from the JVM's own memory: nothing\n"
			    "is loaded into it), JVM, native and kernel frames in one stack per sample.\n"
			    "\n";

static const char usage_tail[] = "\n"
				 "JVM stacks are walked through HotSpot's own frame layout: whole stacks with\n"
				 "or without -XX:+PreserveFramePointer; interpreted (_[0]), compiled (_[j]) and\n"
				 "inlined (_[i]) methods named from the JVM's memory and its compiled code's\n"
				 "debug info (exact with -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints,\n"
				 "else inlining is placed at the nearest safepoint, said in the subtitle). The\n"
				 "agent is loaded only for -e alloc, -e lock, --attach, and a launched command\n"
				 "(-- java ...); a JVM started with -agentpath:libjflame-agent.so is read as is.\n"
				 "\n"
				 "Examples:\n"
				 "  jflame record -p 4242 -d 30 -o cpu.svg\n"
				 "  jflame record -a -d 10 -o host.svg -o host.folded\n"
				 "  jflame record -p 4242 -o run.stacks        # until Ctrl-C\n"
				 "  jflame record -p 4242 -d 30 -o cpu.pb.gz   # go tool pprof -http=: cpu.pb.gz\n"
				 "  jflame record -o app.svg -- java -jar app.jar\n"
				 "  jflame record -e offcpu -p 4242 -d 30 -o blocked.svg   # where threads wait\n"
				 "  jflame record -e wall --min-block 1ms -p 4242 -d 30 -o wall.svg\n"
				 "  jflame record -e alloc -p 4242 -d 30 -o alloc.svg       # bytes allocated\n"
				 "  jflame record -e cpu,lock -p 4242 -d 30 -o cpu.svg -o lock.svg\n"
				 "  jflame record -a --window 30s -o /out/cpu-%t.pb.gz --keep 120   # always on\n"
				 "  jflame record -p 4242 --window 30s --baseline previous:5 --diff-out diff-%t.svg\n";

/* --help's events: the event table's rows, names and words, wrapped at 79. */
static void usage_events(FILE *out)
{
	size_t n;
	const struct event_kind *e = event_kinds(&n);
	fputs("\nEvents (-e):\n", out);
	for (size_t i = 0; i < n; i++) {
		int col = fprintf(out, "  %-15s", e[i].name);
		if (col > 17) {
			fputs("\n", out);
			col = fprintf(out, "%17s", "");
		}
		for (const char *w = e[i].help; *w;) {
			size_t len = strcspn(w, " ");
			if (col + 1 + (int)len > 79) {
				col = fprintf(out, "\n%17s", "") - 1;
			}
			col += fprintf(out, "%s%.*s", col > 17 ? " " : "", (int)len, w);
			w += len;
			w += *w == ' ';
		}
		fputs("\n", out);
	}
}

/* ---- options --------------------------------------------------------------- */

static int opt_pid(void *to, char *arg)
{
	struct record_opts *o = to;
	char buf[4096];
	snprintf(buf, sizeof(buf), "%s", arg);
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long pid;
		char path[64];
		if (cli_parse_long(tok, 1, 4194304, &pid) != 0) {
			msg_say("-p takes process ids like 1234 or 1234,5678, not '%s'\n", tok);
			return -1;
		}
		snprintf(path, sizeof(path), "/proc/%ld", pid);
		if (access(path, F_OK) != 0) {
			msg_say("no process with pid %ld; check the pid with ps or jps\n", pid);
			return -1;
		}
		if (pid == getpid()) {
			msg_say("pid %ld is jflame itself; give the pid of the process to profile\n", pid);
			return -1;
		}
		if (o->npids == MAX_PIDS) {
			msg_say("at most %d pids with -p; use -a for more\n", MAX_PIDS);
			return -1;
		}
		o->pids[o->npids++] = (pid_t)pid;
	}
	if (o->npids == 0) {
		msg_say("-p needs at least one pid\n");
		return -1;
	}
	return 0;
}

/* -e: a comma list of rows of the event table (event_table.c), at most one
 * of the sampler's and each agent event once; -e may repeat, adding to the list. */
static int opt_event(void *to, char *arg)
{
	struct record_opts *o = to;
	char buf[256], names[256];
	if (!o->ev_given) { /* the first -e replaces the default (cpu) */
		o->ev_given = true;
		o->ev[EV_BPF] = NULL;
	}
	event_kind_list(names, sizeof(names), EVENT_SAMPLER, true);
	if (!*arg || strlen(arg) >= sizeof(buf)) {
		msg_say("-e takes events such as %s (cpu,alloc for more than one), not '%s'\n", names, arg);
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", arg);
	for (char *p = buf, *tok; p; p = tok) {
		tok = strchr(p, ',');
		if (tok)
			*tok++ = '\0';
		const struct event_kind *e = event_kind_named(p);
		if (!e) {
			msg_say("-e takes %s (comma-separated), not '%s'; see jflame record --help\n", names, p);
			return -1;
		}
		enum rec_event slot = e->source == EVENT_AGENT ? (enum rec_event)(EV_AGENT + e->agent) : EV_BPF;
		if (o->ev[slot] == e) {
			msg_say("-e names %s twice\n", p);
			return -1;
		}
		if (o->ev[slot]) {
			msg_say("-e takes at most one of the sampler's events (cpu, offcpu, wall or a perf event; "
				"--help lists them), not '%s' after '%s'\n",
				p, o->ev[slot]->name);
			return -1;
		}
		o->ev[slot] = e;
	}
	return 0;
}

static int opt_output(void *to, char *arg)
{
	struct record_opts *o = to;
	const struct profile_format *f = profile_format_for_record(arg);
	if (!f) {
		char exts[128];
		profile_format_list(exts, sizeof(exts), PF_RECORD, true);
		msg_say("cannot tell the format of '%s'; name it %s\n", arg, exts);
		return -1;
	}
	if (o->nuser_outputs < MAX_OUTPUTS)
		o->user_formats[o->nuser_outputs] = f;
	return cli_output_add("record", o->user_outputs, &o->nuser_outputs, MAX_OUTPUTS, arg) != 0 ? -1 : 0;
}

static int opt_label(void *to, char *arg)
{
	struct record_opts *o = to;
	char *eq = strchr(arg, '=');
	if (!eq || eq == arg || !eq[1]) {
		msg_say("--label takes KEY=VALUE such as env=prod, not '%s'\n", arg);
		return -1;
	}
	if (o->nlabels == MAX_LABELS) {
		msg_say("at most %d --label options\n", MAX_LABELS);
		return -1;
	}
	*eq = '\0';
	o->label_keys[o->nlabels] = arg;
	o->label_values[o->nlabels++] = eq + 1;
	return 0;
}

static int opt_basic_auth(void *to, char *arg)
{
	struct record_opts *o = to;
	if (!strchr(arg, ':')) {
		msg_say("--push-basic-auth takes USER:PASSWORD\n"); /* never echo a secret */
		return -1;
	}
	o->push_basic_auth = arg;
	return 0;
}

static int opt_push_ca(void *to, char *arg)
{
	struct record_opts *o = to;
	if (access(arg, R_OK) != 0) {
		msg_say("--push-ca %s: %s\n", arg, strerror(errno));
		return -1;
	}
	o->push_ca = arg;
	return 0;
}

static int opt_baseline(void *to, char *arg)
{
	struct record_cli *cli = to;
	char e[256];
	if (baseline_parse(arg, &cli->regress.b, &cli->regress.file, e, sizeof(e)) != 0) {
		msg_say("%s\n", e);
		return -1;
	}
	if (cli->regress.file && access(cli->regress.file, R_OK) != 0) {
		msg_say("--baseline %s: %s; give first, previous:N or a saved profile "
			"(.folded, .pb.gz)\n",
			arg, strerror(errno));
		return -1;
	}
	cli->baseline = arg;
	return 0;
}

static int opt_diff_out(void *to, char *arg)
{
	const char **diff_out = to;
	char e[512];
	enum diff_graph_kind k;
	if (out_name_check(arg, e, sizeof(e)) != 0) {
		msg_say("--diff-out: %s\n", e);
		return -1;
	}
	if (strcmp(arg, "-") == 0 || diff_graph_kind_of(arg, &k) != 0) {
		msg_say("--diff-out %s: name it .svg (a differential flame graph), .html (the "
			"compare page) or .folded\n",
			arg);
		return -1;
	}
	*diff_out = arg;
	return 0;
}

static int opt_agent_options(void *to, char *arg)
{
	const char **agent_options = to;
	struct agent_options ao;
	char err[256];
	if (agent_options_parse(arg, &ao, err, sizeof(err)) != 0 || ao.help) {
		msg_say("bad --agent-options: %s\n", ao.help ? "help lists: unfold, nounfold, "
							       "msig, dottedclass, sourcepos, quiet" :
							       err);
		return -1;
	}
	*agent_options = arg;
	return 0;
}

/* The command's --help around its rows; record's events after them. */
static const struct cli_cmd record_cmd = { "record", usage, usage_events, usage_tail, 26, CLI_IN_ORDER };

static int parse_options(struct record_cli *cli, int argc, char **argv)
{
	struct record_opts *o = &cli->o;
	const double never = 3600000000000.0; /* ns: an hour */
	const struct cli_opt rows[] = {
		ROW_CALL("pid", 'p', OPT_CALL, opt_pid, o, "PID[,PID...]", "record these processes (JVMs as they run)"),
		ROW("all-cpus", 'a', OPT_FLAG, &o->all, NULL, "record every process on the host"),
		ROW_TEXT("-- COMMAND...", "launch COMMAND (java ... gets the agent,\n"
					  "-XX:+PreserveFramePointer and\n"
					  "-XX:+DebugNonSafepoints; another command passes them\n"
					  "in JAVA_TOOL_OPTIONS), record it and its children\n"
					  "until it exits or -d, and exit with its exit code"),
		ROW_NUM("freq", 'F', OPT_INT, &o->freq, &o->freq_set, 1, 50000,
			"-F takes samples per second from 1 to 50000, not '%s'", "HZ",
			"samples per second per CPU (default 99)"),
		ROW_NUM("duration", 'd', OPT_DURATION, &o->duration, NULL, 0.001, 1e7,
			"-d takes a duration such as 30, 0.5, 30s, 5m or 2h, not '%s'", "SECONDS",
			"stop after this long (default: at Ctrl-C, SIGTERM,\n"
			"or when every -p target has exited)"),
		ROW_CALL("output", 'o', OPT_CALL, opt_output, o, "FILE",
			 "write FILE, format by extension; may repeat; %t in\n"
			 "the name is the (window's) start in UTC as\n"
			 "20261125T015823Z, %p the pid, %h the host, %n the\n"
			 "window's number, %e the event, %% a percent sign:\n"
			 ".svg flame graph (default jflame.svg;\n"
			 "none with --push),\n"
			 ".folded/.collapsed folded stacks,\n"
			 ".stacks timestamped samples (perf script text),\n"
			 ".pb.gz pprof, .json speedscope,\n"
			 ".jfr JDK Flight Recorder (JMC, IntelliJ, jfr print),\n"
			 ".html subsecond-offset heat map (FlameScope);\n"
			 "'-' the flame graph on standard output (one event,\n"
			 "no --window, no launched command); each name once"),
		ROW_CALL("event", 'e', OPT_CALL, opt_event, o, "EVENT[,EVENT]",
			 "what to record (default cpu): one of the sampler's\n"
			 "events and/or alloc and lock (Events below);\n"
			 "with several events each -o holds one: an output\n"
			 "named with an event as a word (cpu.svg, x/alloc.svg)\n"
			 "holds it, %e in a name is each event in turn, any\n"
			 "other is written per event as NAME-EVENT.EXT"),
		ROW_NUM("period", 'c', OPT_COUNT, &o->period, &o->period_set, 1, 1000000000000L,
			"-c takes a number of events from 1 to 10^12, not '%s'", "N",
			"a counted perf event (page-faults, cache-misses,\n"
			"...): a sample every N events (default: the event's,\n"
			"in Events below)"),
		ROW_NUM("alloc-interval", 0, OPT_SIZE, &o->alloc_interval, &o->alloc_interval_set, 1024,
			(double)((uint64_t)1 << 30),
			"--alloc-interval takes a size from 1k to 1g such as 512k or 2m, not '%s'", "SIZE",
			"alloc: bytes between samples, on average (default\n"
			"512k; 64k, 2m; from 1k to 1g)"),
		ROW_NUM("lock-min", 0, OPT_NANOS, &o->lock_min_ns, &o->lock_min_set, 0, never,
			"--lock-min takes a duration such as 100us, 1ms or 0.5s (a bare number is microseconds), not '%s'",
			"DURATION",
			"lock: record waits at least this long (default\n"
			"100us; a bare number is us); shorter ones are counted"),
		ROW("count", 0, OPT_FLAG, &o->count_view, NULL,
		    "alloc, lock: folded, SVG and speedscope weigh stacks\n"
		    "by samples, not bytes or time (pprof has both)"),
		ROW_NUM("min-block", 0, OPT_NANOS, &o->min_block_ns, &o->min_block_set, 0, never,
			"--min-block takes a duration such as 500us, 1ms or 0.5s (a bare number is microseconds), not '%s'",
			"DURATION",
			"offcpu, wall: record blocks at least this long\n"
			"(500us, 1ms, 2ms; a bare number is us; default 1us);\n"
			"shorter ones are counted in the subtitle"),
		ROW("include-idle", 0, OPT_FLAG, &o->include_idle, NULL, "also sample the idle task"),
		ROW("attach", 0, OPT_FLAG, &o->attach, NULL,
		    "load the jflame agent into the JVMs recorded (the\n"
		    "attach mechanism; -a: every JVM seen): compiled\n"
		    "code named by JVMTI; -e alloc and -e lock load it\n"
		    "themselves, nothing else needs it"),
		ROW("no-attach", 0, OPT_FLAG, &o->no_attach, NULL,
		    "never load the agent, not even for -e alloc or lock"),
		ROW("agent", 0, OPT_STRING, &o->agent, "PATH", "the agent library (default: next to jflame)"),
		ROW_CALL("agent-options", 0, OPT_CALL, opt_agent_options, &o->agent_options, "OPTS",
			 "options for the agents jflame loads (e.g. msig)"),
		ROW("no-inline", 0, OPT_FLAG, &o->no_inline, NULL,
		    "compiled Java frames without their inlined callees"),
		ROW("no-walker", 0, OPT_FLAG, &o->no_walker, NULL, "walk JVM stacks by frame pointers only (as perf)"),
		ROW_NUM("attach-timeout", 0, OPT_SECONDS_MS, &o->attach_timeout_ms, NULL, 0.1, 3600,
			"--attach-timeout takes seconds from 0.1 to 3600, not '%s'", "SECONDS",
			"how long a JVM may take to answer (default 5)"),
		ROW_NUM("window", 0, OPT_DURATION_NS, &o->window_ns, NULL, 1, 86400,
			"--window takes a duration from 1 s to 24 h such as 30, 30s or 5m, not '%s'", "DURATION",
			"continuous mode: cut the recording into windows this\n"
			"long (30, 30s, 5m); each window's outputs are written\n"
			"when it closes; SIGHUP closes one early"),
		ROW_CALL("baseline", 0, OPT_CALL, opt_baseline, cli, "first|previous:N|FILE",
			 "with --window: compare each window with\n"
			 "the first window, the previous N (as replicates) or\n"
			 "a saved profile; a frame that grew beyond sampling\n"
			 "noise is said in a 'regression in window' line (the\n"
			 "test of jflame diff --report; names normalized) once\n"
			 "it has grown in --confirm windows in a row"),
		ROW_CALL("diff-out", 0, OPT_CALL, opt_diff_out, &cli->regress.diff_out, "FILE",
			 "with --baseline: a differential graph (.svg, .html\n"
			 "or .folded; %t %n as in -o) for each window with a\n"
			 "regression"),
		ROW_NUM("on-regression", 0, OPT_NONEMPTY, &cli->regress.on_regression, NULL, 0, 0,
			"--on-regression takes a shell command; it is empty", "CMD",
			"\n"
			"with --baseline: run CMD (sh -c) for such a window,\n"
			"with JFLAME_WINDOW, JFLAME_WINDOW_START,\n"
			"JFLAME_FRAME, JFLAME_BEFORE, JFLAME_AFTER,\n"
			"JFLAME_CHANGE (points), JFLAME_REGRESSIONS,\n"
			"JFLAME_FILES, JFLAME_DIFF set"),
		regress_cli_confirm(&cli->regress.b.confirm, &cli->confirm_given,
				    "--baseline: windows in a row a frame must grow in\n"
				    "(default 2: a one-window burst is not a regression;\n"
				    "1: every window on its own)"),
		regress_cli_alpha(&cli->regress.b.alpha, &cli->alpha_given,
				  "--baseline's error rate over all frames\n"
				  "(default 0.01)"),
		ROW("no-normalize", 0, OPT_FLAG, &cli->regress.b.no_normalize, NULL,
		    "--baseline: compare names as recorded"),
		ROW_NUM("keep", 0, OPT_COUNT, &o->keep, NULL, 1, 1000000,
			"--keep takes a number of windows from 1 to 1000000, not '%s'", "N",
			"keep the newest N files of each -o (with --window)"),
		ROW_NUM("keep-bytes", 0, OPT_SIZE, &o->keep_bytes, NULL, 1024, (double)((uint64_t)1 << 50),
			"--keep-bytes takes a size such as 500M or 2G (at least 1k), not '%s'", "SIZE",
			"keep at most SIZE bytes of each -o's files (500M, 2G)"),
		ROW("push", 0, OPT_STRING, &o->push, "URL",
		    "send each window to a Pyroscope server (pprof), one\n"
		    "series per JVM (others together as jflame-host)"),
		ROW_NUM("app", 0, OPT_NONEMPTY, &o->app, NULL, 0, 0, "--app needs a name", "NAME",
			"the series' application name (default: each JVM's\n"
			"-Dpyroscope.application.name, jar or main class)"),
		ROW_CALL("label", 0, OPT_CALL, opt_label, o, "KEY=VALUE", "a label on every series; may repeat"),
		ROW("push-token", 0, OPT_STRING, &o->push_token, "T", "bearer token (or JFLAME_PUSH_TOKEN)"),
		ROW_CALL("push-basic-auth", 0, OPT_CALL, opt_basic_auth, o, "USER:PASSWORD",
			 "(or JFLAME_PUSH_BASIC_AUTH)"),
		ROW("push-tenant", 0, OPT_STRING, &o->push_tenant, "ID", "X-Scope-OrgID (or JFLAME_PUSH_TENANT)"),
		ROW_CALL("push-ca", 0, OPT_CALL, opt_push_ca, o, "FILE", "CA certificates for an https server"),
		ROW_NUM("push-timeout", 0, OPT_DURATION_MS, &o->push_timeout_ms, NULL, 0.1, 600,
			"--push-timeout takes a duration from 0.1 s to 10 m, not '%s'", "DURATION",
			"per request (default 10s); failed pushes are\n"
			"retried 3 times with backoff (1 s, 2 s, 4 s)"),
		ROW("verbose", 'v', OPT_FLAG, &o->verbose, NULL, "libbpf's messages, the stack cache's figures"),
		ROW_HELP("help", 'h', "this text"),
	};
	int next;
	*cli = defaults;
	int rc = cli_opts_parse(&record_cmd, rows, sizeof(rows) / sizeof(rows[0]), argc, argv, &next);
	if (rc != 0)
		return rc;
	if (next < argc) {
		o->command = argv + next;
		o->ncommand = argc - next;
	}
	if (!o->ev_given)
		o->ev[EV_BPF] = event_kind_named("cpu");
	if (o->min_block_set && !ev_bpf_has(o, EVENT_BLOCKS)) {
		msg_say("--min-block goes with -e offcpu or -e wall\n");
		return -1;
	}
	if (o->period_set && !(ev_on(o, EV_BPF) && o->ev[EV_BPF]->period)) {
		msg_say("-c goes with a perf event sampled every N events (-e page-faults, cache-misses, "
			"...: --help lists them); -F sets the rate of the others\n");
		return -1;
	}
	if (o->alloc_interval_set && !ev_on(o, EV_ALLOC)) {
		msg_say("--alloc-interval goes with -e alloc\n");
		return -1;
	}
	if (o->lock_min_set && !ev_on(o, EV_LOCK)) {
		msg_say("--lock-min goes with -e lock\n");
		return -1;
	}
	if (o->count_view && !ev_on(o, EV_ALLOC) && !ev_on(o, EV_LOCK)) {
		msg_say("--count goes with -e alloc or -e lock (CPU graphs count samples already)\n");
		return -1;
	}
	if (o->push && (ev_on(o, EV_ALLOC) || ev_on(o, EV_LOCK))) {
		msg_say("--push sends CPU, off-CPU or wall profiles only; write alloc and lock to files "
			"(-o alloc.pb.gz) and push those with your tooling\n");
		return -1;
	}

	if (o->attach && o->no_attach) {
		msg_say("--attach loads the agent and --no-attach keeps it out: give one of them\n");
		return -1;
	}
	/* agentless unless asked for, or needed by alloc and lock samples */
	o->load_agent = !o->no_attach && (o->attach || ev_on(o, EV_ALLOC) || ev_on(o, EV_LOCK));
	if (o->all && o->npids > 0) {
		msg_say("give -p PID or -a, not both\n");
		return -1;
	}
	if (o->command && o->npids > 0) {
		msg_say("give -p PID or a command to launch, not both (did you mean -- before '%s'?)\n", o->command[0]);
		return -1;
	}
	if (!o->all && !o->npids && !o->command) {
		msg_say("say what to record: -p PID for processes, -a for the whole host, or -- java ... "
			"to launch a JVM\n");
		return -1;
	}
	if (record_outputs_plan(o, cli_same_file) != 0)
		return -1;
	if (!o->push && (o->app || o->nlabels || o->push_token || o->push_basic_auth || o->push_tenant || o->push_ca ||
			 o->push_timeout_ms)) {
		msg_say("--app, --label and the --push-* options go with --push URL\n");
		return -1;
	}
	if (o->push) {
		const char *e;
		if (!o->push_token && (e = getenv("JFLAME_PUSH_TOKEN")) && *e)
			o->push_token = e;
		if (!o->push_basic_auth && (e = getenv("JFLAME_PUSH_BASIC_AUTH")) && *e)
			o->push_basic_auth = e;
		if (!o->push_tenant && (e = getenv("JFLAME_PUSH_TENANT")) && *e)
			o->push_tenant = e;
		if (o->push_basic_auth && !strchr(o->push_basic_auth, ':')) {
			msg_say("JFLAME_PUSH_BASIC_AUTH takes USER:PASSWORD\n");
			return -1;
		}
	}
	if (cli->baseline && !o->window_ns) {
		msg_say("--baseline compares each window with it; add --window 30s\n");
		return -1;
	}
	if (cli->baseline && !ev_on(o, EV_BPF)) {
		msg_say("--baseline compares the sampled event's windows (cpu, offcpu, wall); record one "
			"(-e cpu,alloc)\n");
		return -1;
	}
	if (!cli->baseline && (cli->confirm_given || cli->alpha_given || cli->regress.b.no_normalize)) {
		msg_say("--confirm, --alpha and --no-normalize tune --baseline; add --baseline first (or "
			"previous:N, or a saved profile)\n");
		return -1;
	}
	if (!cli->baseline && (cli->regress.diff_out || cli->regress.on_regression)) {
		msg_say("--diff-out and --on-regression act on regressions against a baseline; add "
			"--baseline first (or previous:N, or a saved profile)\n");
		return -1;
	}
	if ((o->keep || o->keep_bytes) && !o->window_ns) {
		msg_say("--keep and --keep-bytes rotate the files of --window; add --window 30s\n");
		return -1;
	}
	if ((o->keep || o->keep_bytes)) {
		bool any = false;
		for (size_t i = 0; i < o->noutputs; i++)
			any |= out_name_varies(o->outputs[i]);
		if (!any) {
			msg_say("--keep rotates window files, but no -o names one: put %%t (the window's "
				"start) in the name, e.g. -o cpu-%%t.pb.gz\n");
			return -1;
		}
	}
	return 0;
}

/* --baseline: each window of the sampler's event, compared with the baseline. */
static void on_window_done(void *ctx, const struct recording *rec, const struct record_window_done *wd)
{
	struct window_regress_window rw = { wd->seq, wd->start_real_ns, wd->when, wd->files, wd->pid };
	window_regress_check(ctx, rec, &rw);
}

/* The main loop: the session is stepped until -d, a stop signal or the
 * targets' exit, then ended (its last windows written). */
static int record_run(struct record *r, char *err, size_t errlen)
{
	struct sigaction sa = { 0 };

	sa.sa_handler = on_signal;
	hup_closes_window = r->o.window_ns != 0;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT); /* counted one at a time */
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaddset(&sa.sa_mask, SIGHUP);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	if (record_session_start(r, isatty(STDERR_FILENO), err, errlen) != 0)
		return -1;
	while (!stop_requested) {
		uint64_t now = record_mono_ns();
		if (r->o.duration > 0 && (double)(now - r->start_ns) / 1e9 >= r->o.duration)
			break;
		int step = record_session_step(r, now, err, errlen);
		if (step < 0)
			return -1;
		if (step > 0)
			break;
	}
	return record_session_end(r, err, errlen) != 0 ? -1 : 0;
}

int cmd_record(int argc, char **argv)
{
	struct record r = { 0 };
	struct record_cli cli;
	struct window_regress *regress = NULL;
	char err[ERR_LEN] = "";
	int rc = 1;

	r.go_fd = r.launch_status_fd = r.child_pidfd = r.epfd = -1;
	int p = parse_options(&cli, argc, argv);
	if (p != 0)
		return p > 0 ? 0 : 2;
	r.o = cli.o;
	r.stop = &stop_requested;
	r.hup = &hup_requested;
	r.launched = &launched;
	int so = caps_check_record(r.o.pids, r.o.npids, r.o.all, err, sizeof(err));
	if (so != 0 || (so = record_session_open(&r, err, sizeof(err))) != 0) {
		rc = so == RECORD_KERNEL_UNSUPPORTED ? 2 : 1;
		goto out;
	}
	if (cli.baseline) {
		if (!(regress = window_regress_new(&cli.regress, err, sizeof(err)))) {
			goto out;
		}
		r.window_done = on_window_done;
		r.window_done_ctx = regress;
	}
	if (cli.baseline && r.o.push) /* the issue asked for them there when the API allows: say why not */
		msg_say("regressions are not pushed: Pyroscope's API takes profiles and labels only, "
			"no annotations; they are said here (--on-regression can post them to Grafana's "
			"/api/annotations)\n");
	if (r.o.command && record_launch_start(&r, err, sizeof(err)) != 0) {
		goto out;
	}
	if (record_run(&r, err, sizeof(err)) != 0)
		goto out;
	rc = record_session_finish(&r, err, sizeof(err));
	if (rc < 0) {
		rc = 1;
	} else {
		err[0] = '\0';
	}
out:
	if (rc != 0 && err[0])
		msg_say("%s\n", err);
	if (r.cache_mismatches) { /* JFLAME_STACK_CACHE=verify: the tests' check that the cache changes nothing */
		msg_say("stack cache: %" PRIu64 " kept stacks folded differently when named again\n",
			r.cache_mismatches);
		if (rc == 0)
			rc = 1;
	}
	rc = record_launch_end(&r, rc);
	record_session_close(&r);
	window_regress_free(regress);
	return rc;
}
