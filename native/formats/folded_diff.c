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

int folded_diff_build(struct folded_diff *d, const struct stack_table *before, const struct stack_table *after,
		      const struct folded_diff_opts *o)
{
	bool normalize = o->normalize, strip_hex_opt = o->strip_hex;
	size_t n = before->stacks.n + after->stacks.n, k = 0;
	struct entry *e = malloc((n ? n : 1) * sizeof(*e));
	struct str_intern *si = NULL; /* stacks rewritten by strip_hex or merge_ids */
	int rc = -1;
	memset(d, 0, sizeof(*d));
	stack_table_init(&d->t);
	if (!e || ((strip_hex_opt || o->merge_ids) && !(si = str_intern_new())))
		goto out;
	for (int side = 0; side < 2; side++) {
		const struct stack_table *f = side ? after : before;
		for (size_t i = 0; i < f->stacks.n; i++) {
			const char *s = f->stacks.strs[i];
			if (strip_hex_opt && !(s = strip_hex(si, s)))
				goto out;
			if (o->merge_ids && !(s = folded_diff_merge_ids(si, s)))
				goto out;
			uint64_t c = f->counts[i];
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
	bool scale = normalize && d->total_before && d->total_before != d->total_after;
	for (size_t i = 0; i < m; i++) {
		uint64_t b = e[i].before;
		/* as difffolded.pl computes it: int(before * total2 / total1) */
		if (scale)
			b = (uint64_t)((double)b * (double)d->total_after / (double)d->total_before);
		if (stack_table_add_diff(&d->t, e[i].s, strlen(e[i].s), b, e[i].after) < 0)
			goto out;
	}
	rc = 0;
out:
	free(e);
	str_intern_free(si);
	if (rc != 0)
		folded_diff_free(d);
	return rc;
}

void folded_diff_free(struct folded_diff *d)
{
	stack_table_free(&d->t);
	memset(d, 0, sizeof(*d));
}

int folded_diff_write(FILE *out, const struct folded_diff *d)
{
	for (size_t i = 0; i < d->t.stacks.n; i++)
		fprintf(out, "%s %" PRIu64 " %" PRIu64 "\n", d->t.stacks.strs[i], d->t.befores ? d->t.befores[i] : 0,
			d->t.counts[i]);
	return ferror(out) ? -1 : 0;
}
