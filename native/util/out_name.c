/* out_name.c - output paths from templates (-o /out/cpu-%t.pb.gz) and the
 * rotation (--keep, --keep-bytes) of the files a template has named. */
#include "out_name.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "grow.h"

#define TIME_LEN 16 /* YYYYmmddTHHMMSSZ */

int out_name_check(const char *tmpl, char *err, size_t errlen)
{
	for (const char *p = tmpl; *p; p++) {
		if (*p != '%')
			continue;
		if (p[1] && strchr("tphne%", p[1])) {
			p++;
			continue;
		}
		if (p[1])
			snprintf(
				err, errlen,
				"'%%%c' in output name '%s' is not a field; use %%t (window start, "
				"UTC), %%p (pid), %%h (host), %%n (window number), %%e (event) or %%%% (a percent sign)",
				p[1], tmpl);
		else
			snprintf(err, errlen, "output name '%s' ends in a lone '%%'; write %%%% for a percent sign",
				 tmpl);
		return -1;
	}
	return 0;
}

bool out_name_varies(const char *tmpl)
{
	for (const char *p = tmpl; *p; p++) {
		if (*p != '%' || !p[1])
			continue;
		if (p[1] == 't' || p[1] == 'n')
			return true;
		p++;
	}
	return false;
}

bool out_name_fixed_dir(const char *tmpl)
{
	const char *slash = strrchr(tmpl, '/');
	for (const char *p = tmpl; slash && p < slash; p++) {
		if (*p != '%' || !p[1])
			continue;
		if (p[1] != '%')
			return false;
		p++;
	}
	return true;
}

/* Appends s[0..n) to out at *pos; false when it does not fit. */
static bool put(char *out, size_t len, size_t *pos, const char *s, size_t n)
{
	if (*pos + n >= len)
		return false;
	memcpy(out + *pos, s, n);
	*pos += n;
	return true;
}

int out_name_expand(const char *tmpl, const struct out_name_vars *v, char *out, size_t len)
{
	size_t pos = 0;
	char buf[64];
	if (!len)
		return -1;
	for (const char *p = tmpl; *p; p++) {
		bool ok;
		if (*p != '%' || !p[1]) {
			ok = put(out, len, &pos, p, 1);
		} else {
			p++;
			if (*p == 't') {
				time_t secs = (time_t)(v->time_ns / 1000000000LL);
				struct tm tm;
				gmtime_r(&secs, &tm);
				ok = strftime(buf, sizeof(buf), "%Y%m%dT%H%M%SZ", &tm) == TIME_LEN &&
				     put(out, len, &pos, buf, TIME_LEN);
			} else if (*p == 'p' || *p == 'n') {
				int n = *p == 'p' ? snprintf(buf, sizeof(buf), "%d", (int)v->pid) :
						    snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v->seq);
				ok = put(out, len, &pos, buf, (size_t)n);
			} else if (*p == 'e') {
				const char *e = v->event && *v->event ? v->event : "cpu";
				ok = put(out, len, &pos, e, strlen(e));
			} else if (*p == 'h') {
				const char *h = v->host && *v->host ? v->host : "localhost";
				ok = true;
				for (; *h && ok; h++)
					ok = put(out, len, &pos, *h == '/' ? "_" : h, 1);
			} else {
				ok = put(out, len, &pos, p, 1); /* %% and, unchecked, anything else */
			}
		}
		if (!ok) {
			out[0] = '\0';
			return -1;
		}
	}
	out[pos] = '\0';
	return 0;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* A %t: YYYYmmddTHHMMSSZ. */
static bool is_time(const char *s)
{
	for (int i = 0; i < TIME_LEN; i++) {
		char want = i == 8 ? 'T' : i == 15 ? 'Z' : 0;
		if (!s[i] || (want ? s[i] != want : !is_digit(s[i])))
			return false;
	}
	return true;
}

/* Positions beyond these are not matched: a file name is at most 255 bytes. */
#define MATCH_MAX 256

struct match_memo {
	const char *t0, *n0;
	unsigned char failed[MATCH_MAX * MATCH_MAX / 8]; /* (t, n) pairs already known not to match */
};

/* The template t (a file part) against name n. Every (t, n) pair that fails is
 * remembered, so a template with many variable fields stays polynomial. */
static bool match(struct match_memo *m, const char *t, const char *n)
{
	for (;; t++, n++) {
		if (*t != '%' || !t[1]) {
			if (*t != *n)
				return false;
			if (!*t)
				return true;
			continue;
		}
		t++;
		if (*t == '%') {
			if (*n != '%')
				return false;
		} else if (*t == 't') {
			if (!is_time(n))
				return false;
			n += TIME_LEN - 1;
		} else if (*t == 'p' || *t == 'n' || *t == 'h' || *t == 'e') {
			size_t bit = (size_t)(t - m->t0) * MATCH_MAX + (size_t)(n - m->n0);
			if (m->failed[bit / 8] & (1u << (bit % 8)))
				return false;
			/* one or more characters (digits for %p and %n): each length tried */
			size_t k = 0;
			while (n[k] && n[k] != '/' &&
			       (*t == 'h' || (*t == 'e' ? n[k] >= 'a' && n[k] <= 'z' : is_digit(n[k]))))
				k++;
			for (; k > 0; k--)
				if (match(m, t + 1, n + k))
					return true;
			m->failed[bit / 8] |= (unsigned char)(1u << (bit % 8));
			return false;
		} else {
			return false;
		}
	}
}

bool out_name_matches(const char *tmpl_file, const char *name)
{
	if (strlen(tmpl_file) >= MATCH_MAX || strlen(name) >= MATCH_MAX)
		return false;
	struct match_memo *m = calloc(1, sizeof(*m));
	if (!m)
		return false;
	m->t0 = tmpl_file;
	m->n0 = name;
	bool ok = match(m, tmpl_file, name);
	free(m);
	return ok;
}

struct kept {
	char *path;
	struct timespec mtime;
	uint64_t bytes;
};

static int cmp_kept(const void *a, const void *b)
{
	const struct kept *x = a, *y = b;
	if (x->mtime.tv_sec != y->mtime.tv_sec)
		return x->mtime.tv_sec < y->mtime.tv_sec ? -1 : 1;
	if (x->mtime.tv_nsec != y->mtime.tv_nsec)
		return x->mtime.tv_nsec < y->mtime.tv_nsec ? -1 : 1;
	return strcmp(x->path, y->path);
}

long out_name_rotate(const char *tmpl, size_t keep, uint64_t keep_bytes, char *err, size_t errlen)
{
	const char *slash = strrchr(tmpl, '/');
	char dir[4096];
	const char *file = slash ? slash + 1 : tmpl;
	struct kept *k = NULL;
	size_t n = 0, cap = 0;
	long removed = -1;
	uint64_t total = 0;
	DIR *d;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == tmpl)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - tmpl), tmpl);
	if (!(d = opendir(dir))) {
		snprintf(err, errlen, "failed to read directory %s to rotate outputs: %s", dir, strerror(errno));
		return -1;
	}
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		struct stat st;
		char path[4096 + 256];
		if (!out_name_matches(file, e->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
			continue; /* gone meanwhile, or not a file jflame wrote */
		if (ARRAY_GROW(k, cap, n + 1) != 0 || !(k[n].path = strdup(path)))
			goto oom;
		k[n].mtime = st.st_mtim;
		k[n].bytes = (uint64_t)st.st_size;
		total += k[n].bytes;
		n++;
	}
	qsort(k, n, sizeof(*k), cmp_kept);
	removed = 0;
	/* oldest first; the newest always stays */
	for (size_t i = 0; i + 1 < n && ((keep && n - i > keep) || (keep_bytes && total > keep_bytes)); i++) {
		if (unlink(k[i].path) == 0 || errno == ENOENT)
			removed++;
		total -= k[i].bytes;
	}
	goto out;
oom:
	snprintf(err, errlen, "out of memory rotating outputs");
	removed = -1;
out:
	closedir(d);
	for (size_t i = 0; i < n; i++)
		free(k[i].path);
	free(k);
	return removed;
}

/* ---- several events ---------------------------------------------------------- */

bool out_name_has_event(const char *tmpl)
{
	for (const char *p = tmpl; *p; p++) {
		if (*p != '%' || !p[1])
			continue;
		if (p[1] == 'e')
			return true;
		p++;
	}
	return false;
}

int out_name_for_event(const char *tmpl, const char *event, char *out, size_t len)
{
	size_t pos = 0;
	if (!len)
		return -1;
	for (const char *p = tmpl; *p; p++) {
		bool ok;
		if (*p == '%' && p[1] == 'e') {
			ok = put(out, len, &pos, event, strlen(event));
			p++;
		} else if (*p == '%' && p[1]) {
			ok = put(out, len, &pos, p, 2);
			p++;
		} else {
			ok = put(out, len, &pos, p, 1);
		}
		if (!ok) {
			out[0] = '\0';
			return -1;
		}
	}
	out[pos] = '\0';
	return 0;
}

int out_name_insert_event(const char *tmpl, const char *event, char *out, size_t len)
{
	const char *slash = strrchr(tmpl, '/'), *file = slash ? slash + 1 : tmpl;
	size_t n = strlen(tmpl), fn = strlen(file);
	const char *ext = strrchr(file, '.');
	if (fn > 6 && strcmp(file + fn - 6, ".pb.gz") == 0)
		ext = file + fn - 6;
	if (!ext || ext == file) /* no extension, or a dot file: at the end */
		ext = tmpl + n;
	size_t head = (size_t)(ext - tmpl);
	int w = snprintf(out, len, "%.*s-%s%s", (int)head, tmpl, event, ext);
	if (w < 0 || (size_t)w >= len) {
		if (len)
			out[0] = '\0';
		return -1;
	}
	return 0;
}

static bool is_word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c);
}

int out_name_event_word(const char *tmpl, const char *const *words, size_t n)
{
	const char *slash = strrchr(tmpl, '/'), *p = slash ? slash + 1 : tmpl;
	int found = -1;
	while (*p) {
		if (*p == '%' && p[1]) { /* a field: its letter is no word */
			p += 2;
			continue;
		}
		if (!is_word_char(*p)) {
			p++;
			continue;
		}
		/* a word here, whole: a word may hold a '-' (page-faults) */
		const char *start = p;
		size_t longest = 0;
		while (*p && is_word_char(*p))
			p++;
		for (size_t i = 0; i < n; i++) {
			size_t wl = strlen(words[i]);
			if (strncasecmp(start, words[i], wl) != 0 || is_word_char(start[wl]))
				continue;
			if (found >= 0 && found != (int)i)
				return -2;
			found = (int)i;
			longest = wl > longest ? wl : longest;
		}
		if (start + longest > p)
			p = start + longest;
	}
	return found;
}
