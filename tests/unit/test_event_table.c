/* test_event_table.c - the event table: every row whole, found by its name, its word
 * and its perf name, its meta read back to the same row, its view and subtitle. */
#include "check.h"
#include "event_table.h"
#include "recording.h"

#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

/* Each row has what its readers need, and finds itself again. */
static void test_rows(void)
{
	size_t n;
	const struct event_kind *e = event_kinds(&n);
	CHECK(n >= 9);
	for (size_t i = 0; i < n; i++) {
		const struct event_kind *k = &e[i];
		CHECK_MSG(k->name && k->word && k->help && k->title && k->what && k->none && k->perf_name &&
				  k->count_type && k->count_unit && k->weight_type && k->weight_unit && k->subtitle,
			  "row %s: a field is missing", k->name);
		CHECK_MSG(event_kind_named(k->name) == k, "row %s: not found by its name", k->name);
		CHECK_MSG(event_kind_of_word(k->word) && strcmp(event_kind_of_word(k->word)->word, k->word) == 0,
			  "row %s: its word %s", k->name, k->word);
		CHECK_MSG((k->source == EVENT_AGENT) == (k->agent >= 0), "row %s: agent kind %d", k->name, k->agent);
		CHECK_MSG(k->source == EVENT_AGENT || (k->flags & (EVENT_PERF | EVENT_BLOCKS)),
			  "row %s: the sampler takes nothing", k->name);
		CHECK_MSG(!k->fallback || event_kind_named(k->fallback), "row %s: fallback %s", k->name, k->fallback);
		CHECK_MSG(k->weigh != EVENT_WEIGH_PERIOD || (k->flags & EVENT_PERF),
			  "row %s: a period without a perf event", k->name);
		for (size_t j = 0; j < i; j++)
			CHECK_MSG(strcmp(e[j].name, k->name) != 0, "row %s twice", k->name);
	}
	CHECK(event_kind_named("cache-misses")->perf_type == PERF_TYPE_HARDWARE);
	CHECK(event_kind_named("page-faults")->perf_config == PERF_COUNT_SW_PAGE_FAULTS);
	CHECK(event_kind_named("cpu-clock")->perf_config == PERF_COUNT_SW_CPU_CLOCK);
	CHECK(event_kind_named("nope") == NULL);
	CHECK(event_kind_named("CPU") == NULL); /* names are exact, as perf's */
	/* the word of the CPU rows is cpu: cpu.svg holds -e cycles */
	CHECK(strcmp(event_kind_named("cycles")->word, "cpu") == 0);
	CHECK(event_kind_of_word("cpu") == event_kind_named("cpu"));
}

/* perf script's event names: a perf event's own row, task-clock as cpu-clock,
 * the modifiers after ':' ignored; cpu's and wall's rows are not perf's names. */
static void test_of_perf(void)
{
	CHECK(event_kind_of_perf("cpu-clock:ppp", 13) == event_kind_named("cpu-clock"));
	CHECK(event_kind_of_perf("task-clock", 10) == event_kind_named("cpu-clock"));
	CHECK(event_kind_of_perf("cycles", 6) == event_kind_named("cycles"));
	CHECK(event_kind_of_perf("page-faults:u", 13) == event_kind_named("page-faults"));
	CHECK(event_kind_of_perf("cpu", 3) == NULL);
	CHECK(event_kind_of_perf("offcpu-time", 11) == NULL);
	CHECK(event_kind_of_perf("cpu-clockx", 10) == NULL);
	CHECK((event_kind_of_perf("cpu-clock", 9)->flags & EVENT_CLOCK) != 0);
	CHECK((event_kind_named("cycles")->flags & EVENT_CLOCK) == 0);
}

/* A recording of each row described in pprof's words and read back: the
 * JFR writer and convert find the row from the file's types alone. */
static void test_meta_round_trip(void)
{
	size_t n;
	const struct event_kind *e = event_kinds(&n);
	for (size_t i = 0; i < n; i++) {
		struct recording r;
		struct stack_table t;
		recording_init(&r);
		stack_table_init(&t);
		r.ev = &e[i];
		r.freq = 99;
		r.interval = 524288;
		recording_add_weighted(&r, "a;b", 3, 2, 2000);
		CHECK_EQ_INT(stack_table_from_recording(&t, &r, 1000000000000), 0);
		const struct event_kind *back = event_kind_of_meta(&t.meta);
		/* the CPU rows are one kind in a file: samples weighing CPU ns */
		CHECK_MSG(back == &e[i] || (e[i].weigh == EVENT_WEIGH_NONE && back->weigh == EVENT_WEIGH_NONE),
			  "row %s read back as %s", e[i].name, back->name);
		CHECK_MSG(back->jfr == e[i].jfr, "row %s: its JFR event", e[i].name);
		CHECK_MSG(strncmp(t.meta.name, e[i].title, strlen(e[i].title)) == 0, "row %s: name '%s'", e[i].name,
			  t.meta.name);
		/* the weights: CPU rows count x 1e9/Hz, the others as added */
		CHECK_EQ_U64(t.weights[0], e[i].weigh == EVENT_WEIGH_NONE ? 2 * (1000000000ULL / 99) : 2000);
		/* a counted perf event's period is the recording's (-c or the row's) */
		if (e[i].weigh == EVENT_WEIGH_PERIOD)
			CHECK(e[i].period && (e[i].flags & EVENT_INTERVAL));
		if (e[i].flags & EVENT_INTERVAL)
			CHECK_EQ_U64(t.meta.period, 524288);
		stack_table_free(&t);
		recording_free(&r);
	}
}

/* What graphs draw: samples, us of ns shown as ms, bytes, events; --count. */
static void test_views(void)
{
	struct event_view v = event_view(event_kind_named("cpu"), false);
	CHECK(!v.weight && event_view_value(&v, 7, 9000) == 7 && !v.unit);
	v = event_view(event_kind_named("offcpu"), false);
	CHECK(v.weight && event_view_value(&v, 7, 1500) == 2 && strcmp(v.unit, "ms") == 0 && v.unit_div == 1000);
	v = event_view(event_kind_named("offcpu"), true); /* --count is alloc's and lock's */
	CHECK(v.weight);
	v = event_view(event_kind_named("lock"), true);
	CHECK(!v.weight && event_view_value(&v, 7, 1500) == 7);
	v = event_view(event_kind_named("alloc"), false);
	CHECK(v.weight && v.bytes && event_view_value(&v, 1, 524288) == 524288);
	v = event_view(event_kind_named("page-faults"), false);
	CHECK(v.weight && event_view_value(&v, 3, 48) == 48 && strcmp(v.unit, "page faults") == 0);
	CHECK_EQ_U64(event_sample_weight(event_kind_named("wall"), 100), 10000000);
	CHECK_EQ_U64(event_sample_weight(event_kind_named("cpu"), 100), 0);
	/* each page-faults sample weighs its own period (the kernel's: -c or the row's) */
	CHECK_EQ_U64(event_sample_weight(event_kind_named("page-faults"), 100), 0);
	CHECK_EQ_U64(event_stacks_period(event_kind_named("cpu-clock"), 100), 10000000);
	CHECK_EQ_U64(event_stacks_period(event_kind_named("cycles"), 100), 1);
}

/* Every row's subtitle names its event and its samples; the list of names. */
static void test_words(void)
{
	size_t n;
	char sub[1024], list[256];
	const struct event_kind *e = event_kinds(&n);
	for (size_t i = 0; i < n; i++) {
		struct recording r;
		recording_init(&r);
		r.ev = &e[i];
		r.samples = 4242;
		snprintf(r.event, sizeof(r.event), "%s", e[i].perf_name);
		event_subtitle(sub, sizeof(sub), &r, false);
		CHECK_MSG(strstr(sub, "4242") && strstr(sub, e[i].perf_name), "row %s: subtitle '%s'", e[i].name, sub);
		recording_free(&r);
	}
	event_kind_list(list, sizeof(list), EVENT_AGENT, false);
	CHECK_MSG(strcmp(list, "alloc or lock") == 0, "agent events: '%s'", list);
	event_kind_list(list, sizeof(list), EVENT_SAMPLER, true);
	CHECK_MSG(strncmp(list, "cpu, cpu-clock, cycles, offcpu, wall, page-faults", 48) == 0 &&
			  strstr(list, ", alloc or lock"),
		  "every event: '%s'", list);
	char tiny[8];
	event_kind_list(tiny, sizeof(tiny), EVENT_SAMPLER, true); /* cut, still a string */
	CHECK(strlen(tiny) < sizeof(tiny));
}

int main(void)
{
	test_rows();
	test_of_perf();
	test_meta_round_trip();
	test_views();
	test_words();
	return check_report("test_event_table");
}
