/* builtin-record.c - `jflame record`: its options (a table, one row each) and the main loop,
 * which steps the recording session of native/session/ (record_session.c) until it is over. */
#include <errno.h>
#include <getopt.h>
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
#include "cli_num.h"
#include "diff_graph.h"
#include "out_name.h"
#include "record_launch.h"
#include "record_outputs.h"
#include "record_session.h"
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
			    "\n"
			    "  -p, --pid PID[,PID...]  record these processes (JVMs as they run)\n"
			    "  -a, --all-cpus          record every process on the host\n"
			    "  -- COMMAND...           launch COMMAND (java ... gets the agent,\n"
			    "                          -XX:+PreserveFramePointer and -XX:+DebugNonSafepoints;\n"
			    "                          another command passes them in JAVA_TOOL_OPTIONS),\n"
			    "                          record it and its children until it exits or -d,\n"
			    "                          and exit with its exit code\n"
			    "  -F, --freq HZ           samples per second per CPU (default 99)\n"
			    "  -d, --duration SECONDS  stop after this long (default: at Ctrl-C, SIGTERM,\n"
			    "                          or when every -p target has exited)\n"
			    "  -o, --output FILE       write FILE, format by extension; may repeat; %t in\n"
			    "                          the name is the (window's) start in UTC as\n"
			    "                          20261125T015823Z, %p the pid, %h the host, %n the\n"
			    "                          window's number, %e the event, %% a percent sign:\n"
			    "                          .svg flame graph (default jflame.svg; none with --push),\n"
			    "                          .folded/.collapsed folded stacks,\n"
			    "                          .stacks timestamped samples (perf script text),\n"
			    "                          .pb.gz pprof, .json speedscope,\n"
			    "                          .jfr JDK Flight Recorder (JMC, IntelliJ, jfr print),\n"
			    "                          .html subsecond-offset heat map (FlameScope);\n"
			    "                          '-' the flame graph on standard output (one event,\n"
			    "                          no --window, no launched command); each name once\n"
			    "  -e, --event EVENT[,EVENT]  what to record (default cpu): one of the sampler's\n"
			    "                          events and/or alloc and lock (Events below);\n"
			    "                          with several events each -o holds one: an output\n"
			    "                          named with an event as a word (cpu.svg, x/alloc.svg)\n"
			    "                          holds it, %e in a name is each event in turn, any\n"
			    "                          other is written per event as NAME-EVENT.EXT\n"
			    "  -c, --period N          a counted perf event (page-faults, cache-misses, ...):\n"
			    "                          a sample every N events (default: the event's, in\n"
			    "                          Events below)\n"
			    "      --alloc-interval SIZE  alloc: bytes between samples, on average (default\n"
			    "                          512k; 64k, 2m; from 1k to 1g)\n"
			    "      --lock-min DURATION  lock: record waits at least this long (default\n"
			    "                          100us; a bare number is us); shorter ones are counted\n"
			    "      --count             alloc, lock: folded, SVG and speedscope weigh stacks\n"
			    "                          by samples, not bytes or time (pprof has both)\n"
			    "      --min-block DURATION  offcpu, wall: record blocks at least this long\n"
			    "                          (500us, 1ms, 2ms; a bare number is us; default 1us);\n"
			    "                          shorter ones are counted in the subtitle\n"
			    "      --include-idle      also sample the idle task\n"
			    "      --attach            load the jflame agent into the JVMs recorded (the\n"
			    "                          attach mechanism; -a: every JVM seen): compiled\n"
			    "                          code named by JVMTI; -e alloc and -e lock load it\n"
			    "                          themselves, nothing else needs it\n"
			    "      --no-attach         never load the agent, not even for -e alloc or lock\n"
			    "      --agent PATH        the agent library (default: next to jflame)\n"
			    "      --agent-options OPTS  options for the agents jflame loads (e.g. msig)\n"
			    "      --no-inline         compiled Java frames without their inlined callees\n"
			    "      --no-walker         walk JVM stacks by frame pointers only (as perf)\n"
			    "      --attach-timeout SECONDS  how long a JVM may take to answer (default 5)\n"
			    "      --window DURATION   continuous mode: cut the recording into windows this\n"
			    "                          long (30, 30s, 5m); each window's outputs are written\n"
			    "                          when it closes; SIGHUP closes one early\n"
			    "      --baseline first|previous:N|FILE  with --window: compare each window with\n"
			    "                          the first window, the previous N (as replicates) or\n"
			    "                          a saved profile; a frame that grew beyond sampling\n"
			    "                          noise is said in a 'regression in window' line (the\n"
			    "                          test of jflame diff --report; names normalized) once\n"
			    "                          it has grown in --confirm windows in a row\n"
			    "      --diff-out FILE     with --baseline: a differential graph (.svg, .html\n"
			    "                          or .folded; %t %n as in -o) for each window with a\n"
			    "                          regression\n"
			    "      --on-regression CMD\n"
			    "                          with --baseline: run CMD (sh -c) for such a window,\n"
			    "                          with JFLAME_WINDOW, JFLAME_WINDOW_START, JFLAME_FRAME,\n"
			    "                          JFLAME_BEFORE, JFLAME_AFTER, JFLAME_CHANGE (points),\n"
			    "                          JFLAME_REGRESSIONS, JFLAME_FILES, JFLAME_DIFF set\n"
			    "      --confirm N         --baseline: windows in a row a frame must grow in\n"
			    "                          (default 2: a one-window burst is not a regression;\n"
			    "                          1: every window on its own)\n"
			    "      --alpha A           --baseline's error rate over all frames (default 0.01)\n"
			    "      --no-normalize      --baseline: compare names as recorded\n"
			    "      --keep N            keep the newest N files of each -o (with --window)\n"
			    "      --keep-bytes SIZE   keep at most SIZE bytes of each -o's files (500M, 2G)\n"
			    "      --push URL          send each window to a Pyroscope server (pprof), one\n"
			    "                          series per JVM (others together as jflame-host)\n"
			    "      --app NAME          the series' application name (default: each JVM's\n"
			    "                          -Dpyroscope.application.name, jar or main class)\n"
			    "      --label KEY=VALUE   a label on every series; may repeat\n"
			    "      --push-token T      bearer token (or JFLAME_PUSH_TOKEN)\n"
			    "      --push-basic-auth USER:PASSWORD  (or JFLAME_PUSH_BASIC_AUTH)\n"
			    "      --push-tenant ID    X-Scope-OrgID (or JFLAME_PUSH_TENANT)\n"
			    "      --push-ca FILE      CA certificates for an https server\n"
			    "      --push-timeout DURATION  per request (default 10s); failed pushes are\n"
			    "                          retried 3 times with backoff (1 s, 2 s, 4 s)\n"
			    "  -v, --verbose           libbpf's messages, the stack cache's figures\n"
			    "  -h, --help              this text\n";

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

static int opt_pid(struct record_cli *cli, char *arg)
{
	struct record_opts *o = &cli->o;
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
static int opt_event(struct record_cli *cli, char *arg)
{
	struct record_opts *o = &cli->o;
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

static int opt_output(struct record_cli *cli, char *arg)
{
	struct record_opts *o = &cli->o;
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

static int opt_label(struct record_cli *cli, char *arg)
{
	struct record_opts *o = &cli->o;
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

static int opt_basic_auth(struct record_cli *cli, char *arg)
{
	if (!strchr(arg, ':')) {
		msg_say("--push-basic-auth takes USER:PASSWORD\n"); /* never echo a secret */
		return -1;
	}
	cli->o.push_basic_auth = arg;
	return 0;
}

static int opt_push_ca(struct record_cli *cli, char *arg)
{
	if (access(arg, R_OK) != 0) {
		msg_say("--push-ca %s: %s\n", arg, strerror(errno));
		return -1;
	}
	cli->o.push_ca = arg;
	return 0;
}

static int opt_baseline(struct record_cli *cli, char *arg)
{
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

static int opt_diff_out(struct record_cli *cli, char *arg)
{
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
	cli->regress.diff_out = arg;
	return 0;
}

static int opt_confirm(struct record_cli *cli, char *arg)
{
	char e[256];
	if (baseline_parse_confirm(arg, &cli->regress.b.confirm, e, sizeof(e)) != 0) {
		msg_say("%s\n", e);
		return -1;
	}
	cli->confirm_given = true;
	return 0;
}

static int opt_agent_options(struct record_cli *cli, char *arg)
{
	struct agent_options ao;
	char err[256];
	if (agent_options_parse(arg, &ao, err, sizeof(err)) != 0 || ao.help) {
		msg_say("bad --agent-options: %s\n", ao.help ? "help lists: unfold, nounfold, "
							       "msig, dottedclass, sourcepos, quiet" :
							       err);
		return -1;
	}
	cli->o.agent_options = arg;
	return 0;
}

/* How an option's value is taken: the cli_num.h parser, within [min, max],
 * and the type of what it sets. */
enum opt_kind {
	OPT_FLAG,	 /* no value; bool */
	OPT_STRING,	 /* const char * */
	OPT_NONEMPTY,	 /* const char *, not "" */
	OPT_INT,	 /* cli_parse_long; int */
	OPT_COUNT,	 /* cli_parse_long; size_t */
	OPT_SIZE,	 /* cli_parse_size; uint64_t bytes */
	OPT_NANOS,	 /* cli_parse_nanos; uint64_t ns */
	OPT_DURATION,	 /* cli_parse_duration; double s */
	OPT_DURATION_NS, /* cli_parse_duration; uint64_t ns */
	OPT_DURATION_MS, /* cli_parse_duration; int ms */
	OPT_SECONDS,	 /* cli_parse_seconds; double */
	OPT_SECONDS_MS,	 /* cli_parse_seconds; int ms */
	OPT_CALL,	 /* call(cli, value): 0, or -1 said */
	OPT_HELP,
};

/* One row per option, as perf's struct option: its names, how its value is
 * taken and where it goes, and what is said when it is not taken. */
struct record_option {
	const char *name;
	char letter; /* the short option, or 0 */
	enum opt_kind kind;
	void *to;    /* what it sets */
	bool *given; /* also set to true, or NULL */
	double min, max;
	const char *bad; /* said (msg_say) with the value as %s when it is not taken */
	int (*call)(struct record_cli *cli, char *arg);
};

/* Takes option op's value arg: 0, or -1 said. */
static int option_take(struct record_cli *cli, const struct record_option *op, char *arg)
{
	long v = 0;
	double d = 0;
	bool ok = true;
	switch (op->kind) {
	case OPT_FLAG:
		*(bool *)op->to = true;
		break;
	case OPT_NONEMPTY:
		ok = *arg != '\0';
		/* fall through */
	case OPT_STRING:
		*(const char **)op->to = arg;
		break;
	case OPT_INT:
	case OPT_COUNT:
		ok = cli_parse_long(arg, (long)op->min, (long)op->max, &v) == 0;
		if (op->kind == OPT_INT)
			*(int *)op->to = (int)v;
		else
			*(size_t *)op->to = (size_t)v;
		break;
	case OPT_SIZE:
		ok = cli_parse_size(arg, (uint64_t)op->min, (uint64_t)op->max, op->to) == 0;
		break;
	case OPT_NANOS:
		ok = cli_parse_nanos(arg, (uint64_t)op->min, (uint64_t)op->max, op->to) == 0;
		break;
	case OPT_DURATION:
	case OPT_DURATION_NS:
	case OPT_DURATION_MS:
		ok = cli_parse_duration(arg, op->min, op->max, &d) == 0;
		if (op->kind == OPT_DURATION)
			*(double *)op->to = d;
		else if (op->kind == OPT_DURATION_NS)
			*(uint64_t *)op->to = (uint64_t)(d * 1e9);
		else
			*(int *)op->to = (int)(d * 1000);
		break;
	case OPT_SECONDS:
	case OPT_SECONDS_MS:
		ok = cli_parse_seconds(arg, op->min, op->max, &d) == 0;
		if (op->kind == OPT_SECONDS)
			*(double *)op->to = d;
		else
			*(int *)op->to = (int)(d * 1000);
		break;
	case OPT_CALL:
		return op->call(cli, arg);
	case OPT_HELP:
		fputs(usage, stdout);
		usage_events(stdout);
		fputs(usage_tail, stdout);
		return 1;
	}
	if (!ok) {
		char line[512];
		snprintf(line, sizeof(line), op->bad, arg);
		msg_say("%s\n", line); /* one line, one write */
		return -1;
	}
	if (op->given)
		*op->given = true;
	return 0;
}

#define MAX_ROWS 48
#define ROW(n, l, k, v)                                    \
	{                                                  \
		.name = n, .letter = l, .kind = k, .to = v \
	}
#define ROW_NUM(n, l, k, v, g, lo, hi, msg)                                                              \
	{                                                                                                \
		.name = n, .letter = l, .kind = k, .to = v, .given = g, .min = lo, .max = hi, .bad = msg \
	}
#define ROW_CALL(n, l, fn)                                           \
	{                                                            \
		.name = n, .letter = l, .kind = OPT_CALL, .call = fn \
	}
#define ROW_HELP(n, l)                                   \
	{                                                \
		.name = n, .letter = l, .kind = OPT_HELP \
	}

static int parse_options(struct record_cli *cli, int argc, char **argv)
{
	struct record_opts *o = &cli->o;
	const double never = 3600000000000.0; /* ns: an hour */
	const struct record_option rows[] = {
		ROW_CALL("pid", 'p', opt_pid),
		ROW("all-cpus", 'a', OPT_FLAG, &o->all),
		ROW_NUM("freq", 'F', OPT_INT, &o->freq, &o->freq_set, 1, 50000,
			"-F takes samples per second from 1 to 50000, "
			"not '%s'"),
		ROW_NUM("duration", 'd', OPT_DURATION, &o->duration, NULL, 0.001, 1e7,
			"-d takes a duration such as 30, 0.5, "
			"30s, 5m or 2h, not '%s'"),
		ROW_CALL("output", 'o', opt_output),
		ROW_CALL("event", 'e', opt_event),
		ROW("include-idle", 0, OPT_FLAG, &o->include_idle),
		ROW("verbose", 'v', OPT_FLAG, &o->verbose),
		ROW_HELP("help", 'h'),
		ROW("no-attach", 0, OPT_FLAG, &o->no_attach),
		ROW("attach", 0, OPT_FLAG, &o->attach),
		ROW("agent", 0, OPT_STRING, &o->agent),
		ROW_CALL("agent-options", 0, opt_agent_options),
		ROW_NUM("attach-timeout", 0, OPT_SECONDS_MS, &o->attach_timeout_ms, NULL, 0.1, 3600,
			"--attach-timeout takes "
			"seconds from 0.1 to 3600, not '%s'"),
		ROW("no-inline", 0, OPT_FLAG, &o->no_inline),
		ROW("no-walker", 0, OPT_FLAG, &o->no_walker),
		ROW_NUM("window", 0, OPT_DURATION_NS, &o->window_ns, NULL, 1, 86400,
			"--window takes a duration from 1 s to 24 h "
			"such as 30, 30s or 5m, not '%s'"),
		ROW_NUM("keep", 0, OPT_COUNT, &o->keep, NULL, 1, 1000000,
			"--keep takes a number of windows from 1 to 1000000, "
			"not '%s'"),
		ROW_NUM("keep-bytes", 0, OPT_SIZE, &o->keep_bytes, NULL, 1024, (double)((uint64_t)1 << 50),
			"--keep-bytes takes "
			"a size such as 500M or 2G (at least 1k), not '%s'"),
		ROW("push", 0, OPT_STRING, &o->push),
		ROW_NUM("app", 0, OPT_NONEMPTY, &o->app, NULL, 0, 0, "--app needs a name"),
		ROW_CALL("label", 0, opt_label),
		ROW("push-token", 0, OPT_STRING, &o->push_token),
		ROW_CALL("push-basic-auth", 0, opt_basic_auth),
		ROW("push-tenant", 0, OPT_STRING, &o->push_tenant),
		ROW_CALL("push-ca", 0, opt_push_ca),
		ROW_NUM("push-timeout", 0, OPT_DURATION_MS, &o->push_timeout_ms, NULL, 0.1, 600,
			"--push-timeout takes a "
			"duration from 0.1 s to 10 m, not '%s'"),
		ROW_NUM("min-block", 0, OPT_NANOS, &o->min_block_ns, &o->min_block_set, 0, never,
			"--min-block takes a duration "
			"such as 500us, 1ms or 0.5s (a bare number is microseconds), not '%s'"),
		ROW_NUM("alloc-interval", 0, OPT_SIZE, &o->alloc_interval, &o->alloc_interval_set, 1024,
			(double)((uint64_t)1 << 30),
			"--alloc-interval takes a size from 1k to 1g such as 512k or 2m, not '%s'"),
		ROW_NUM("lock-min", 0, OPT_NANOS, &o->lock_min_ns, &o->lock_min_set, 0, never,
			"--lock-min takes a duration such "
			"as 100us, 1ms or 0.5s (a bare number is microseconds), not '%s'"),
		ROW("count", 0, OPT_FLAG, &o->count_view),
		ROW_NUM("period", 'c', OPT_COUNT, &o->period, &o->period_set, 1, 1000000000000L,
			"-c takes a number of events from 1 to 10^12, not '%s'"),
		ROW_CALL("baseline", 0, opt_baseline),
		ROW_CALL("diff-out", 0, opt_diff_out),
		ROW_NUM("on-regression", 0, OPT_NONEMPTY, &cli->regress.on_regression, NULL, 0, 0,
			"--on-regression takes a "
			"shell command; it is empty"),
		ROW_NUM("alpha", 0, OPT_SECONDS, &cli->regress.b.alpha, &cli->alpha_given, 1e-12, 0.5,
			"--alpha %s: give an "
			"error rate between 0 and 0.5 (e.g. 0.01)"),
		ROW("no-normalize", 0, OPT_FLAG, &cli->regress.b.no_normalize),
		ROW_CALL("confirm", 0, opt_confirm),
	};
	const size_t nrows = sizeof(rows) / sizeof(rows[0]);
	struct option longopts[MAX_ROWS + 1] = { { 0 } };
	char shortopts[2 * MAX_ROWS + 2] = "+"; /* the rows' letters, as getopt wants them */
	size_t ns = 1;
	int c;
	_Static_assert(sizeof(rows) / sizeof(rows[0]) <= MAX_ROWS, "MAX_ROWS");
	*cli = defaults;
	for (size_t i = 0; i < nrows; i++)
		longopts[i] = (struct option){ rows[i].name,
					       rows[i].kind == OPT_FLAG || rows[i].kind == OPT_HELP ? no_argument :
												      required_argument,
					       NULL, rows[i].letter ? rows[i].letter : 1000 + (int)i };
	for (size_t i = 0; i < nrows; i++) {
		if (!rows[i].letter)
			continue;
		shortopts[ns++] = (char)rows[i].letter;
		if (longopts[i].has_arg == required_argument)
			shortopts[ns++] = ':';
	}
	shortopts[ns] = '\0';
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const struct record_option *op = NULL;
		for (size_t i = 0; i < nrows && !op; i++)
			if (c == 1000 + (int)i || (c < 1000 && c == rows[i].letter))
				op = &rows[i];
		if (op) {
			int rc = option_take(cli, op, optarg);
			if (rc != 0)
				return rc;
			continue;
		}
		const char *arg = argv[optind - 1];
		bool needs_value = false;
		for (const struct option *lo = longopts; lo->name && strncmp(arg, "--", 2) == 0; lo++)
			needs_value |= lo->has_arg == required_argument && strcmp(arg + 2, lo->name) == 0;
		if (needs_value)
			msg_say("option %s needs a value; see jflame record --help\n", arg);
		else if (optopt && strchr("pFdoe", optopt))
			msg_say("option -%c needs a value; see jflame record --help\n", optopt);
		else
			msg_say("unknown option '%s'; see jflame record --help\n", arg);
		return -1;
	}
	if (optind < argc) {
		o->command = argv + optind;
		o->ncommand = argc - optind;
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
