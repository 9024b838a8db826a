/* push.c - Pyroscope pushes: each window's pprof, per series, to the server's
 * /ingest from a thread of its own, so a slow or dead server never slows sampling. */
#include "push.h"
#include "msg.h"

#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- the request ----------------------------------------------------------------- */

static bool label_char_ok(char c)
{
	return (unsigned char)c > ' ' && c != '{' && c != '}' && c != ',' && c != '=' && c != '"' && c != '\'' &&
	       c != 0x7f;
}

static void put_clean(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(label_char_ok(*s) ? *s : '_', f);
}

struct label {
	const char *k, *v;
};

static int cmp_label(const void *a, const void *b)
{
	return strcmp(((const struct label *)a)->k, ((const struct label *)b)->k);
}

char *push_series_name(const char *app, const char *const *keys, const char *const *values, size_t n)
{
	char *out = NULL;
	size_t len = 0;
	struct label *l = calloc(n ? n : 1, sizeof(*l));
	FILE *f = l ? open_memstream(&out, &len) : NULL;
	if (!f) {
		free(l);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		l[i] = (struct label){ keys[i], values[i] };
	qsort(l, n, sizeof(*l), cmp_label);
	put_clean(f, app && *app ? app : "jflame");
	fputc('{', f);
	for (size_t i = 0, first = 1; i < n; i++) {
		if (!l[i].v || !*l[i].v || (i > 0 && strcmp(l[i].k, l[i - 1].k) == 0))
			continue; /* empty, or a key given twice: the first one counts */
		fputs(first ? "" : ",", f);
		put_clean(f, l[i].k);
		fputc('=', f);
		put_clean(f, l[i].v);
		first = 0;
	}
	fputc('}', f);
	free(l);
	if (fclose(f) != 0) {
		free(out);
		return NULL;
	}
	return out;
}

/* The request as Pyroscope's own clients send it (@pyroscope/nodejs, captured in
 * tests/data/pyroscope/nodejs_request.json): the query keys in the same order, the
 * gzip-compressed pprof as the whole body, application/octet-stream. */
int push_request_build(const struct push_profile *p, struct push_request *rq)
{
	FILE *f = NULL;
	size_t qlen = 0;
	char *name;

	memset(rq, 0, sizeof(*rq));
	if (!(name = curl_easy_escape(NULL, p->name, 0)))
		return -1;
	f = open_memstream(&rq->path_query, &qlen);
	if (!f) {
		curl_free(name);
		return -1;
	}
	/* whole seconds, so consecutive windows meet: [from, until) */
	int64_t from = p->from_ns / 1000000000, until = p->until_ns / 1000000000;
	fprintf(f,
		"/ingest?format=pprof&from=%" PRId64 "&name=%s&spyName=" PUSH_SPY_NAME "&until=%" PRId64
		"&sampleRate=%d",
		from, name, until > from ? until : from + 1, p->sample_rate);
	curl_free(name);
	if (fclose(f) != 0)
		goto fail;
	if (!(rq->content_type = strdup("application/octet-stream")))
		goto fail;
	if (!(rq->body = malloc(p->len ? p->len : 1)))
		goto fail;
	memcpy(rq->body, p->pprof, p->len);
	rq->len = p->len;
	return 0;
fail:
	push_request_free(rq);
	return -1;
}

void push_request_free(struct push_request *rq)
{
	free(rq->path_query);
	free(rq->content_type);
	free(rq->body);
	memset(rq, 0, sizeof(*rq));
}

/* ---- the sending thread ------------------------------------------------------------ */

struct pusher {
	struct push_opts o;
	char *base;  /* the URL without a trailing '/' */
	char *shown; /* scheme://host[:port]: what messages name (never credentials) */
	char *auth_header, *tenant_header;
	CURL *curl;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct push_profile **q; /* ring of o.queue entries */
	size_t head, n;
	bool stopping, busy, warned_drop, warned_fail;
	volatile int abort;
	struct push_stats st;
};

static void profile_free(struct push_profile *p)
{
	if (!p)
		return;
	free(p->name);
	free(p->pprof);
	free(p);
}

static size_t discard(char *data, size_t size, size_t n, void *ctx)
{
	(void)data;
	(void)ctx;
	return size * n;
}

static int abort_check(void *ctx, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	(void)a, (void)b, (void)c, (void)d;
	return ((struct pusher *)ctx)->abort ? 1 : 0;
}

/* One try: the HTTP status, or -1 when there was none (errbuf says why). */
static long send_once(struct pusher *p, const struct push_profile *prof, char *errbuf)
{
	struct push_request rq;
	struct curl_slist *h = NULL;
	char *url = NULL, *ct = NULL;
	long code = -1;
	errbuf[0] = '\0';
	if (push_request_build(prof, &rq) != 0) {
		snprintf(errbuf, CURL_ERROR_SIZE, "out of memory");
		return -1;
	}
	if (asprintf(&url, "%s%s", p->base, rq.path_query) < 0 ||
	    asprintf(&ct, "Content-Type: %s", rq.content_type) < 0) {
		snprintf(errbuf, CURL_ERROR_SIZE, "out of memory");
		url = ct = NULL;
		goto out;
	}
	h = curl_slist_append(h, ct);
	h = curl_slist_append(h, "User-Agent: jflame/" JFLAME_VERSION);
	if (p->auth_header)
		h = curl_slist_append(h, p->auth_header);
	if (p->tenant_header)
		h = curl_slist_append(h, p->tenant_header);
	curl_easy_reset(p->curl);
	curl_easy_setopt(p->curl, CURLOPT_URL, url);
	curl_easy_setopt(p->curl, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(p->curl, CURLOPT_POST, 1L);
	curl_easy_setopt(p->curl, CURLOPT_POSTFIELDS, rq.body);
	curl_easy_setopt(p->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq.len);
	curl_easy_setopt(p->curl, CURLOPT_TIMEOUT_MS, (long)p->o.timeout_ms);
	curl_easy_setopt(p->curl, CURLOPT_CONNECTTIMEOUT_MS, (long)p->o.timeout_ms);
	curl_easy_setopt(p->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(p->curl, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(p->curl, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(p->curl, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(p->curl, CURLOPT_XFERINFOFUNCTION, abort_check);
	curl_easy_setopt(p->curl, CURLOPT_XFERINFODATA, p);
	curl_easy_setopt(p->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	if (p->o.ca)
		curl_easy_setopt(p->curl, CURLOPT_CAINFO, p->o.ca);
	if (p->o.basic_auth) {
		curl_easy_setopt(p->curl, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(p->curl, CURLOPT_USERPWD, p->o.basic_auth);
	}
	CURLcode rc = curl_easy_perform(p->curl);
	if (rc == CURLE_OK)
		curl_easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, &code);
	else if (!errbuf[0])
		snprintf(errbuf, CURL_ERROR_SIZE, "%s", curl_easy_strerror(rc));
	if (p->o.verbose)
		msg_say("push %s%.200s: %ld%s%s\n", p->shown, rq.path_query, code, errbuf[0] ? " " : "", errbuf);
out:
	curl_slist_free_all(h);
	free(url);
	free(ct);
	push_request_free(&rq);
	return code;
}

/* CLOCK_MONOTONIC ms from now, for pthread_cond_timedwait. */
static struct timespec after_ms(int ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

/* Waits ms, or less when stopping is aborted. */
static void pause_ms(struct pusher *p, int ms)
{
	struct timespec ts = after_ms(ms);
	pthread_mutex_lock(&p->mu);
	while (!p->abort && pthread_cond_timedwait(&p->cv, &p->mu, &ts) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&p->mu);
}

static void send_with_retries(struct pusher *p, const struct push_profile *prof)
{
	char errbuf[CURL_ERROR_SIZE];
	int wait = p->o.backoff_ms;
	for (int t = 1;; t++) {
		long code = send_once(p, prof, errbuf);
		if (code >= 200 && code < 300) {
			pthread_mutex_lock(&p->mu);
			p->st.sent++;
			pthread_mutex_unlock(&p->mu);
			return;
		}
		/* a server error, too many requests or no answer: worth another try;
		 * any other answer will not change */
		bool again = code < 0 || code >= 500 || code == 429 || code == 408;
		if (!again || t >= p->o.tries || p->abort) {
			pthread_mutex_lock(&p->mu);
			p->st.failed++;
			bool say = !p->warned_fail;
			p->warned_fail = true;
			pthread_mutex_unlock(&p->mu);
			if (say) {
				if (code >= 0)
					msg_warn("%s answered HTTP %ld to a window's profile%s; windows that "
						 "cannot be sent are counted in the summary\n",
						 p->shown, code, again ? " after retries" : "");
				else
					msg_warn("cannot send a window's profile to %s: %s%s; windows that "
						 "cannot be sent are counted in the summary\n",
						 p->shown, errbuf,
						 strstr(errbuf, "certificate") || strstr(errbuf, "SSL") ?
							 " (a server whose CA is not the system's: --push-ca FILE)" :
							 "");
			}
			return;
		}
		pthread_mutex_lock(&p->mu);
		p->st.retries++;
		pthread_mutex_unlock(&p->mu);
		pause_ms(p, wait);
		wait = wait < 30000 ? wait * 2 : wait;
	}
}

static void *push_thread(void *arg)
{
	struct pusher *p = arg;
	for (;;) {
		pthread_mutex_lock(&p->mu);
		while (!p->n && !p->stopping)
			pthread_cond_wait(&p->cv, &p->mu);
		if (!p->n || p->abort) {
			pthread_mutex_unlock(&p->mu);
			break;
		}
		struct push_profile *prof = p->q[p->head];
		p->q[p->head] = NULL;
		p->head = (p->head + 1) % p->o.queue;
		p->n--;
		p->busy = true;
		pthread_mutex_unlock(&p->mu);
		send_with_retries(p, prof);
		profile_free(prof);
		pthread_mutex_lock(&p->mu);
		p->busy = false;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
	}
	return NULL;
}

/* What push_start allocated (not the thread and its locks). */
static void pusher_free(struct pusher *p)
{
	if (!p)
		return;
	if (p->curl)
		curl_easy_cleanup(p->curl);
	free(p->q);
	free(p->base);
	free(p->shown);
	free(p->auth_header);
	free(p->tenant_header);
	free(p);
}

static char *header(const char *name, const char *value)
{
	char *h = NULL;
	return asprintf(&h, "%s: %s", name, value) < 0 ? NULL : h;
}

struct pusher *push_start(const struct push_opts *o, char *err, size_t errlen)
{
	struct pusher *p = calloc(1, sizeof(*p));
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *port = NULL;
	pthread_condattr_t ca;
	if (!p || !u)
		goto oom;
	p->o = *o;
	p->o.queue = o->queue ? o->queue : 32;
	p->o.timeout_ms = o->timeout_ms > 0 ? o->timeout_ms : 10000;
	p->o.tries = o->tries > 0 ? o->tries : 4;
	p->o.backoff_ms = o->backoff_ms > 0 ? o->backoff_ms : 1000;
	if (curl_url_set(u, CURLUPART_URL, o->url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
	    (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)) {
		snprintf(err, errlen, "--push takes the server's URL such as http://pyroscope:4040, not '%s'", o->url);
		goto fail;
	}
	curl_url_get(u, CURLUPART_PORT, &port, 0);
	if (asprintf(&p->shown, "%s://%s%s%s", scheme, host, port ? ":" : "", port ? port : "") < 0) {
		p->shown = NULL;
		goto oom;
	}
	if (!(p->base = strdup(o->url)))
		goto oom;
	for (size_t n = strlen(p->base); n > 0 && p->base[n - 1] == '/'; n--)
		p->base[n - 1] = '\0';
	if (o->token && asprintf(&p->auth_header, "Authorization: Bearer %s", o->token) < 0) {
		p->auth_header = NULL;
		goto oom;
	}
	if (o->tenant && !(p->tenant_header = header("X-Scope-OrgID", o->tenant)))
		goto oom;
	if (!(p->q = calloc(p->o.queue, sizeof(*p->q))) || !(p->curl = curl_easy_init()))
		goto oom;
	pthread_mutex_init(&p->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&p->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&p->thread, NULL, push_thread, p) != 0) {
		snprintf(err, errlen, "cannot start the push thread: %s", strerror(errno));
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->cv);
		goto fail;
	}
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(u);
	return p;
oom:
	snprintf(err, errlen, "out of memory");
fail:
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(u);
	pusher_free(p);
	return NULL;
}

bool push_enqueue(struct pusher *p, struct push_profile *prof)
{
	bool room = true, say = false;
	pthread_mutex_lock(&p->mu);
	if (p->n == p->o.queue) { /* the oldest waiting window makes room */
		profile_free(p->q[p->head]);
		p->q[p->head] = NULL;
		p->head = (p->head + 1) % p->o.queue;
		p->n--;
		p->st.dropped++;
		room = false;
		say = !p->warned_drop;
		p->warned_drop = true;
	}
	p->q[(p->head + p->n) % p->o.queue] = prof;
	p->n++;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	if (say)
		msg_warn("%s is not keeping up: %zu windows wait to be sent; the oldest are "
			 "dropped (counted in the summary)\n",
			 p->shown, p->o.queue);
	return room;
}

void push_read_stats(struct pusher *p, struct push_stats *st)
{
	pthread_mutex_lock(&p->mu);
	*st = p->st;
	pthread_mutex_unlock(&p->mu);
}

void push_stop(struct pusher *p, int wait_ms, struct push_stats *st)
{
	if (!p)
		return;
	struct timespec ts = after_ms(wait_ms);
	pthread_mutex_lock(&p->mu);
	p->stopping = true;
	pthread_cond_broadcast(&p->cv);
	while ((p->n || p->busy) && pthread_cond_timedwait(&p->cv, &p->mu, &ts) != ETIMEDOUT)
		;
	p->abort = 1; /* what is still under way gives up */
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	for (; p->n; p->n--) {
		profile_free(p->q[p->head]);
		p->head = (p->head + 1) % p->o.queue;
		p->st.dropped++;
	}
	if (st)
		*st = p->st;
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	pusher_free(p);
}
