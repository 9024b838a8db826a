/* recording.c - aggregates samples into folded stacks: the stack store
 * (stack_table.c) with the totals record and collapse print. */
#include "recording.h"

#include <stdlib.h>
#include <string.h>

int recording_init(struct recording *r)
{
	memset(r, 0, sizeof(*r));
	stack_table_init(&r->stacks);
	r->ev = event_kind_named("cpu");
	return 0;
}

void recording_free(struct recording *r)
{
	stack_table_free(&r->stacks);
	memset(r, 0, sizeof(*r));
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

int recording_add(struct recording *r, const char *stack, size_t len, uint64_t count)
{
	return recording_add_weighted(r, stack, len, count, 0);
}

int recording_add_weighted(struct recording *r, const char *stack, size_t len, uint64_t count, uint64_t weight)
{
	const char *nul = memchr(stack, '\0', len);
	if (nul)
		len = (size_t)(nul - stack); /* the stack is a C string */
	if (stack_table_add(&r->stacks, stack, len, count, weight) < 0)
		return -1;
	r->nstacks = r->stacks.stacks.n;
	r->total += count;
	r->total_weight = add_sat(r->total_weight, weight);
	return 0;
}

struct stack_count *recording_sorted(const struct recording *r, size_t *n)
{
	const struct stack_table *t = &r->stacks;
	uint32_t *ix = stack_table_sorted(t);
	struct stack_count *out = ix ? malloc((t->stacks.n ? t->stacks.n : 1) * sizeof(*out)) : NULL;
	if (out) {
		for (size_t i = 0; i < t->stacks.n; i++)
			out[i] = (struct stack_count){ t->stacks.strs[ix[i]], t->counts[ix[i]], t->weights[ix[i]] };
		*n = t->stacks.n;
	}
	free(ix);
	return out;
}

int recording_copy_plain(struct recording *dst, const struct recording *src)
{
	size_t n;
	int rc = -1;
	struct stack_count *s = recording_sorted(src, &n);
	char *buf = NULL;
	size_t cap = 0;
	if (!s)
		return -1;
	*dst = *src; /* what was recorded; the stacks are its own, below */
	stack_table_init(&dst->stacks);
	dst->nstacks = 0;
	dst->total = dst->total_weight = 0;
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(s[i].stack);
		const char *text = stack_plain(s[i].stack, &len, true, &buf, &cap);
		if (!text || recording_add_weighted(dst, text, len, s[i].count, s[i].weight) != 0)
			goto out;
	}
	rc = 0;
out:
	if (rc != 0)
		recording_free(dst);
	free(buf);
	free(s);
	return rc;
}
