/* folded_diff.c - merges BEFORE and AFTER folded stacks by sorting them
 * together; difffolded.pl's -n (normalize) and -s (strip hex) rules. */
#include "folded_diff.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	const char *s;
	uint64_t before, after;
};

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->s, ((const struct entry *)b)->s);
}

/* s with every "0x<hex digits>" as "0x...", interned; s itself when it has none */
static const char *strip_hex(struct str_intern *si, const char *s)
{
	const char *p = strstr(s, "0x");
	size_t len = strlen(s), k = 0;
	while (p && !(p[2] && strchr("0123456789abcdefABCDEF", p[2])))
		p = strstr(p + 1, "0x");
	if (!p)
		return s;
	char *buf = malloc(len + 1 + len / 3 * 2);
	if (!buf)
		return NULL;
	for (size_t i = 0; i < len;) {
		if (s[i] == '0' && s[i + 1] == 'x' && s[i + 2] && strchr("0123456789abcdefABCDEF", s[i + 2])) {
			memcpy(buf + k, "0x...", 5);
			k += 5;
			i += 2;
			while (s[i] && strchr("0123456789abcdefABCDEF", s[i]))
				i++;
		} else {
			buf[k++] = s[i++];
		}
	}
	const char *r = str_intern_n(si, buf, k);
	free(buf);
	return r;
}

const char *folded_diff_merge_ids(struct str_intern *si, const char *s)
{
	char *buf = malloc(strlen(s) + 16);
	size_t k = 0;
	const char *p = s;
	bool changed = false;
	if (!buf)
		return NULL;
	/* [Pod]<uid>;[Con]<id>; ... */
	while (strncmp(p, "[Pod]", 5) == 0 || strncmp(p, "[Con]", 5) == 0) {
		const char *end = strchr(p, ';');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		memcpy(buf + k, p, 5);
		buf[k + 5] = '*';
		k += 6;
		changed |= n != 6 || p[5] != '*';
		p += n;
		if (*p == ';')
			buf[k++] = *p++;
	}
	/* [1234] comm */
	size_t i = 1;
	if (p[0] == '[')
		while (p[i] >= '0' && p[i] <= '9')
			i++;
	if (i > 1 && p[i] == ']' && p[i + 1] == ' ') {
		memcpy(buf + k, "[*]", 3);
		k += 3;
		p += i + 1;
		changed = true;
	}
	const char *r = s;
	if (changed) {
		size_t rest = strlen(p);
		memcpy(buf + k, p, rest);
		r = str_intern_n(si, buf, k + rest);
	}
	free(buf);
	return r;
}

int folded_diff_build(struct folded_diff *d, const struct folded *before, const struct folded *after,
		      const struct folded_diff_opts *o)
{
	bool normalize = o->normalize, strip_hex_opt = o->strip_hex;
	size_t n = before->n + after->n, k = 0;
	struct entry *e = malloc((n ? n : 1) * sizeof(*e));
	int rc = -1;
	memset(d, 0, sizeof(*d));
	if (!e || ((strip_hex_opt || o->merge_ids) && !(d->si = str_intern_new())))
		goto out;
	for (int side = 0; side < 2; side++) {
		const struct folded *f = side ? after : before;
		for (size_t i = 0; i < f->n; i++) {
			const char *s = f->stacks[i].frames;
			if (strip_hex_opt && !(s = strip_hex(d->si, s)))
				goto out;
			if (o->merge_ids && !(s = folded_diff_merge_ids(d->si, s)))
				goto out;
			uint64_t c = f->stacks[i].count;
			e[k++] = (struct entry){ s, side ? 0 : c, side ? c : 0 };
			if (side)
				d->total_after += c;
			else
				d->total_before += c;
		}
	}
	qsort(e, k, sizeof(*e), cmp_entry);
	size_t m = 0;
	for (size_t i = 0; i < k; i++) {
		if (m && strcmp(e[m - 1].s, e[i].s) == 0) {
			e[m - 1].before += e[i].before;
			e[m - 1].after += e[i].after;
		} else {
			e[m++] = e[i];
		}
	}
	if (!(d->stacks = malloc((m ? m : 1) * sizeof(*d->stacks))))
		goto out;
	bool scale = normalize && d->total_before && d->total_before != d->total_after;
	for (size_t i = 0; i < m; i++) {
		uint64_t b = e[i].before;
		/* as difffolded.pl computes it: int(before * total2 / total1) */
		if (scale)
			b = (uint64_t)((double)b * (double)d->total_after / (double)d->total_before);
		d->stacks[i] = (struct fg_stack){ e[i].s, e[i].after, b };
	}
	d->n = m;
	rc = 0;
out:
	free(e);
	if (rc != 0)
		folded_diff_free(d);
	return rc;
}

void folded_diff_free(struct folded_diff *d)
{
	free(d->stacks);
	str_intern_free(d->si);
	memset(d, 0, sizeof(*d));
}

int folded_diff_write(FILE *out, const struct folded_diff *d)
{
	for (size_t i = 0; i < d->n; i++)
		fprintf(out, "%s %" PRIu64 " %" PRIu64 "\n", d->stacks[i].frames, d->stacks[i].count_before,
			d->stacks[i].count);
	return ferror(out) ? -1 : 0;
}
