/* attach.h - loads the jflame agent into a running HotSpot JVM through its
 * dynamic attach mechanism: trigger file, SIGQUIT, .java_pid socket, request, reply. */
#ifndef JFLAME_ATTACH_H
#define JFLAME_ATTACH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define ATTACH_DEFAULT_TIMEOUT_MS 5000

struct attach_opts {
	const char *agent;   /* libjflame-agent.so as jflame sees it */
	const char *options; /* agent options, "" for none */
	int timeout_ms;	     /* bounds each wait: the JVM's startup, its listener, each reply */
	/* nonzero (a stop signal): every wait ends within 100 ms and the attach
	 * fails with "interrupted"; NULL: never */
	const volatile sig_atomic_t *cancel;
};

enum attach_outcome {
	ATTACH_FAILED = -1,
	ATTACH_LOADED = 0,  /* the JVM loaded the agent and Agent_OnAttach returned 0 */
	ATTACH_ALREADY = 1, /* the agent already runs there: nothing was sent */
};

struct attach_info {
	int protocol;	       /* attach protocol version spoken: 1 or 2 */
	char agent_path[4096]; /* the library path the JVM was given (its own view) */
	bool copied;	       /* the library was copied into the JVM's /tmp */
	char options[256];     /* agent options in use (for ATTACH_ALREADY: the running agent's) */
	double seconds;	       /* from start to the JVM's reply */
};

/* Loads opts->agent into JVM pid. On failure err holds one line naming the
 * problem and the fix ("pid 12 is not a Java process ..."; the front end adds the jflame prefix). Switches
 * to the JVM's uid/gid for the trigger file and the socket; must be called
 * from a single-threaded process (or a forked child). Bounded: each of its
 * four waits (startup, listener, getversion reply, load reply) by
 * opts->timeout_ms, so 4 x timeout_ms in all; opts->cancel ends it sooner. */
enum attach_outcome attach_agent(pid_t pid, const struct attach_opts *opts, struct attach_info *info, char *err,
				 size_t errlen);

/* Finds libjflame-agent.so: $JFLAME_AGENT, else next to the jflame binary, in
 * ../lib, ../lib/jflame, or the build tree's ../jvmagent. 0, or -1 with err. */
int attach_find_agent(char *out, size_t len, char *err, size_t errlen);

/* Parses a JVM's reply to an attach request: the completion status line, then
 * for `load` the agent's return code ("N" up to JDK 20, "return code: N" from
 * JDK 21). Returns 0 when loaded; -1 with the JVM's text in msg otherwise;
 * *agent_rc is the Agent_OnAttach result when the JVM got that far, else INT_MIN. */
int attach_parse_load_reply(const char *reply, size_t len, int *agent_rc, char *msg, size_t msglen);

#endif
