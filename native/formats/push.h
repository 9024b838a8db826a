/* push.h - sends recording windows to a Grafana Pyroscope server's ingest API
 * (pprof bodies, libcurl) from a thread of its own: a bounded queue, retries
 * with backoff, windows dropped and counted when the queue is full. */
#ifndef JFLAME_PUSH_H
#define JFLAME_PUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct push_opts {
	const char *url;	/* the server: http(s)://host[:port][/prefix] */
	const char *basic_auth; /* "user:password" (Grafana Cloud: tenant id and token), or NULL */
	const char *token;	/* bearer token, or NULL */
	const char *tenant;	/* X-Scope-OrgID, or NULL */
	const char *ca;		/* CA certificates (PEM) for https, or NULL for the system's */
	size_t queue;		/* windows waiting at most (default 32) */
	int timeout_ms;		/* per request (default 10 s) */
	int tries;		/* per window (default 4): backoff 1 s, 2 s, 4 s, ... */
	int backoff_ms;		/* the first retry's wait (default 1000) */
	bool verbose;		/* one line per request */
};

/* One series' profile of one window. */
struct push_profile {
	char *name;		   /* application name with its labels: app{k=v,...} (see push_series_name) */
	int64_t from_ns, until_ns; /* the window, wall clock */
	int sample_rate;	   /* Hz */
	uint8_t *pprof;		   /* gzip-compressed profile.proto */
	size_t len;
};

/* The ingest request of a profile, as Pyroscope's clients send it: the path
 * and query (after the server's URL: format, from, name, spyName, until,
 * sampleRate), the content type (application/octet-stream) and the body (the
 * gzip-compressed pprof itself). Caller frees the strings and body. */
#define PUSH_SPY_NAME "jflame"
struct push_request {
	char *path_query;
	char *content_type;
	uint8_t *body;
	size_t len;
};
int push_request_build(const struct push_profile *p, struct push_request *rq);
void push_request_free(struct push_request *rq);

/* "app{k=v,k2=v2}": labels as given, sorted by key, values with characters
 * Pyroscope does not take in a label ('{', '}', ',', '=', quotes, spaces and
 * controls) replaced by '_'; keys likewise. NULL when out of memory. */
char *push_series_name(const char *app, const char *const *keys, const char *const *values, size_t n);

struct pusher;
struct push_stats {
	uint64_t sent, failed, dropped, retries;
};

/* Starts the sending thread. NULL with one line in err (a bad URL, libcurl). */
struct pusher *push_start(const struct push_opts *o, char *err, size_t errlen);
/* Queues a profile (the pusher owns it from now on, whatever happens). false
 * when the queue was full: the oldest waiting one was dropped for it, and
 * counted; the first drop says so in one warning. */
bool push_enqueue(struct pusher *p, struct push_profile *prof);
void push_read_stats(struct pusher *p, struct push_stats *st);
/* Waits up to wait_ms for the queue to empty, then stops (what is left is
 * dropped and counted), gives the final counts in st (when not NULL) and
 * frees the pusher. */
void push_stop(struct pusher *p, int wait_ms, struct push_stats *st);

#endif
