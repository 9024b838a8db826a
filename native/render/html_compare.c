/* html_compare.c - writes the compare page: compare.html with flame.js,
 * compare.js and flame.css inlined, and both sides' counts on one call tree. */
#include "html_compare.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "call_tree.h"
#include "html_page.h"
#include "json_out.h"

struct page_ctx {
	const struct compare_options *o;
	struct call_tree *tree;
	uint64_t *self; /* per node: before, after */
	uint64_t total[2];
};

static void side_out(FILE *out, const char *key, const char *name, uint64_t total)
{
	fprintf(out, "\"%s\":{\"name\":", key);
	json_out_str(out, name, strlen(name));
	fprintf(out, ",\"total\":%" PRIu64 "},\n", total);
}

static int page_data(FILE *out, void *ctx, char *err, size_t errlen)
{
	struct page_ctx *c = ctx;
	fputs("{", out);
	side_out(out, "before", c->o->before_name ? c->o->before_name : "before", c->total[0]);
	side_out(out, "after", c->o->after_name ? c->o->after_name : "after", c->total[1]);
	if (call_tree_write_json(c->tree, out) != 0)
		goto fail;
	fputs(",\n\"counts\":[", out);
	bool first = true;
	for (size_t i = 0; i < call_tree_size(c->tree); i++) {
		if (!c->self[2 * i] && !c->self[2 * i + 1])
			continue;
		fprintf(out, "%s%zu,%" PRIu64 ",%" PRIu64, first ? "" : ",", i, c->self[2 * i], c->self[2 * i + 1]);
		first = false;
	}
	fputs("]}", out);
	if (!ferror(out))
		return 0;
fail:
	snprintf(err, errlen, "failed to write the compare page");
	return -1;
}

int compare_write_html(FILE *out, const struct stack_table *t, const struct compare_options *o, char *err,
		       size_t errlen)
{
	size_t n = t->stacks.n;
	struct page_ctx c = { o, call_tree_new(), NULL, { 0, 0 } };
	long *node = malloc((n ? n : 1) * sizeof(*node));
	char title[512];
	int rc = -1;

	if (!c.tree || !node)
		goto oom;
	for (size_t i = 0; i < n; i++) {
		if ((node[i] = call_tree_node(c.tree, t->stacks.strs[i], t->stacks.lens[i])) < 0)
			goto oom;
		c.total[0] += t->befores ? t->befores[i] : 0;
		c.total[1] += t->counts[i];
	}
	if (!c.total[0] && !c.total[1]) {
		snprintf(err, errlen, "no samples to compare");
		goto out;
	}
	if (!(c.self = calloc(2 * call_tree_size(c.tree), sizeof(*c.self))))
		goto oom;
	for (size_t i = 0; i < n; i++) {
		c.self[2 * node[i]] += t->befores ? t->befores[i] : 0;
		c.self[2 * node[i] + 1] += t->counts[i];
	}
	if (!o->title)
		snprintf(title, sizeof(title), "Compare: %.200s vs %.200s", o->before_name ? o->before_name : "before",
			 o->after_name ? o->after_name : "after");
	struct html_page p = { o->title ? o->title : title, o->subtitle, page_data, &c };
	rc = html_page_write(out, "compare.html", &p, err, errlen);
	goto out;
oom:
	snprintf(err, errlen, "out of memory writing the compare page");
out:
	free(node);
	free(c.self);
	call_tree_free(c.tree);
	return rc;
}
