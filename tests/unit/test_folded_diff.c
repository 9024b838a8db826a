/* test_folded_diff.c - jflame diff's matching of two runs: root frames that
 * name one run's instances (pid, pod, container) merged, counts per side, -n. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "folded.h"
#include "folded_diff.h"
#include "str_intern.h"

static void test_merge_ids(void)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{ "[1234] java;main;a", "[*] java;main;a" },
		{ "[1] java", "[*] java" },
		{ "[Pod]0f1e-22;[Con]abcdef012345;[77] java;t;f", "[Pod]*;[Con]*;[*] java;t;f" },
		{ "[Con]abcdef012345;[77] kafka server;t", "[Con]*;[*] kafka server;t" },
		{ "[*] java;main", "[*] java;main" }, /* already merged: unchanged */
		{ "[Pod]*;[Con]*;[*] java", "[Pod]*;[Con]*;[*] java" },
		{ "java;main;a", "java;main;a" }, /* stackcollapse-perf roots */
		{ "[unknown];a", "[unknown];a" }, /* not a process frame */
		{ "[12]java;a", "[12]java;a" },	  /* no blank after ]: not ours */
		{ "[] java;a", "[] java;a" },
		{ "main;[1234] java", "main;[1234] java" }, /* only the root frames */
		{ "", "" },
	};
	struct str_intern *si = str_intern_new();
	CHECK(si != NULL);
	for (size_t i = 0; si && i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *r = folded_diff_merge_ids(si, cases[i].in);
		CHECK_MSG(r && strcmp(r, cases[i].out) == 0, "'%s' -> '%s', want '%s'", cases[i].in, r ? r : "(null)",
			  cases[i].out);
		if (strcmp(cases[i].in, cases[i].out) == 0)
			CHECK_MSG(r == cases[i].in, "'%s' unchanged is not copied", cases[i].in);
	}
	str_intern_free(si);
}

static int parse(struct stack_table *t, const char *text)
{
	struct folded f;
	char err[256];
	stack_table_init(t);
	return folded_parse(&f, t, text, strlen(text), "test", 0, err, sizeof(err));
}

/* A stack of the merged profile: its counts before and after. */
struct both {
	uint64_t count_before, count;
};

static const struct both *find(const struct folded_diff *d, const char *s)
{
	static struct both b[4];
	static int next;
	long i = str_index_find(&d->t.stacks, s, strlen(s));
	if (i < 0)
		return NULL;
	struct both *r = &b[next++ % 4];
	*r = (struct both){ d->t.befores ? d->t.befores[i] : 0, d->t.counts[i] };
	return r;
}

static void test_two_runs_line_up(void)
{
	struct stack_table a, b;
	struct folded_diff d;
	CHECK_EQ_INT(parse(&a, "[100] java;main;StringBuilder.append 30\n[100] java;main;io 10\n"), 0);
	CHECK_EQ_INT(parse(&b, "[200] java;main;String.format 60\n[200] java;main;io 20\n[200] java;main;io 5\n"), 0);

	/* merged: the io stacks of both runs are one stack */
	CHECK_EQ_INT(folded_diff_build(&d, &a, &b, &(struct folded_diff_opts){ .merge_ids = true }), 0);
	CHECK_EQ_INT(d.t.stacks.n, 3);
	const struct both *io = find(&d, "[*] java;main;io");
	CHECK(io && io->count_before == 10 && io->count == 25);
	const struct both *fmt = find(&d, "[*] java;main;String.format");
	CHECK(fmt && fmt->count_before == 0 && fmt->count == 60);
	const struct both *sb = find(&d, "[*] java;main;StringBuilder.append");
	CHECK(sb && sb->count_before == 30 && sb->count == 0);
	CHECK(d.total_before == 40 && d.total_after == 85);
	folded_diff_free(&d);

	/* kept apart (--keep-ids): nothing in common */
	CHECK_EQ_INT(folded_diff_build(&d, &a, &b, &(struct folded_diff_opts){ .merge_ids = false }), 0);
	CHECK_EQ_INT(d.t.stacks.n, 4);
	CHECK(find(&d, "[100] java;main;io") && find(&d, "[200] java;main;io"));
	folded_diff_free(&d);

	/* -n: BEFORE scaled to AFTER's total, rounded down (difffolded.pl) */
	CHECK_EQ_INT(folded_diff_build(&d, &a, &b, &(struct folded_diff_opts){ .merge_ids = true, .normalize = true }),
		     0);
	io = find(&d, "[*] java;main;io");
	CHECK(io && io->count_before == 21); /* int(10 * 85 / 40) */
	sb = find(&d, "[*] java;main;StringBuilder.append");
	CHECK(sb && sb->count_before == 63); /* int(30 * 85 / 40) = int(63.75) */
	folded_diff_free(&d);
	stack_table_free(&a);
	stack_table_free(&b);
}

int main(void)
{
	test_merge_ids();
	test_two_runs_line_up();
	return check_report("folded_diff");
}
