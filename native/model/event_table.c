/* event_table.c - the events record takes, one row each: -e's names, the perf event the
 * sampler opens, what a sample weighs, pprof's and JFR's names, titles and subtitles. */
#include "event_table.h"

#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

#include "recording.h"
#include "stack_table.h"

void event_human_bytes(char *out, size_t len, double v)
{
	static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;
	while (v >= 1024 && u < 4)
		v /= 1024, u++;
	if (u == 0 || v == (double)(uint64_t)v)
		snprintf(out, len, "%.0f %s", v, units[u]);
	else
		snprintf(out, len, "%.1f %s", v, units[u]);
}

/* ---- subtitles ------------------------------------------------------------- */

/* CPU samples at -F Hz: rate, counts, the frame-pointer finding. */
static void sub_clock(char *out, size_t len, const struct recording *rec, bool count_view)
{
	(void)count_view;
	snprintf(out, len,
		 "%.1f s at %d Hz (%s): %" PRIu64 " samples, %" PRIu64 " lost, %" PRIu64 " truncated, %" PRIu64
		 " unwind failed, %" PRIu64 " failed stack reads; %s",
		 rec->seconds, rec->freq, rec->event, rec->samples, rec->lost, rec->truncated, rec->unwind_failed,
		 rec->stack_errors, rec->frame_pointers);
}

/* A perf event counted: the events the samples stand for. */
static void sub_period(char *out, size_t len, const struct recording *rec, bool count_view)
{
	(void)count_view;
	const struct event_kind *e = rec->ev;
	snprintf(out, len,
		 "%.1f s, a sample every %" PRIu64 " %s (%s): %" PRIu64 " %s in %" PRIu64 " samples, %" PRIu64
		 " lost, %" PRIu64 " truncated, %" PRIu64 " unwind failed, %" PRIu64 " failed stack reads; %s",
		 rec->seconds, rec->interval, e->draw_unit, rec->event, rec->total_weight, e->draw_unit, rec->samples,
		 rec->lost, rec->truncated, rec->unwind_failed, rec->stack_errors, rec->frame_pointers);
}

/* Blocks off the CPU (and wall's CPU samples), weighted by their time. */
static void sub_blocks(char *out, size_t len, const struct recording *rec, bool count_view)
{
	(void)count_view;
	snprintf(out, len,
		 "%s, %.1f s (%s): %.1f ms in %" PRIu64 " samples, %" PRIu64 " lost, %" PRIu64 " truncated, %" PRIu64
		 " unwind failed; blocks under %.3f ms not drawn: %" PRIu64 " (%.1f ms); %s",
		 rec->ev->what, rec->seconds, rec->event, (double)rec->total_weight / 1e6, rec->samples, rec->lost,
		 rec->truncated, rec->unwind_failed, (double)rec->min_block_ns / 1e6, rec->short_blocks,
		 (double)rec->short_ns / 1e6, rec->frame_pointers);
}

static void sub_alloc(char *out, size_t len, const struct recording *rec, bool count_view)
{
	char every[32], total[32];
	event_human_bytes(every, sizeof(every), (double)rec->interval);
	event_human_bytes(total, sizeof(total), (double)rec->total_weight);
	snprintf(out, len,
		 "%s%s sampled every %s on average (%s), %.1f s: %s in %" PRIu64 " samples%s, %" PRIu64
		 " dropped, %" PRIu64 " truncated%s%s",
		 rec->note[0] ? "WARNING " : "", rec->ev->what, every, rec->event, rec->seconds, total, rec->samples,
		 count_view ? " (widths: samples)" : "", rec->lost, rec->truncated, rec->note[0] ? "; agent: " : "",
		 rec->note);
}

static void sub_lock(char *out, size_t len, const struct recording *rec, bool count_view)
{
	snprintf(out, len,
		 "%s%s of %.3f ms or more (%s), %.1f s: %.1f ms in %" PRIu64 " samples%s, %" PRIu64 " dropped, %" PRIu64
		 " truncated; shorter waits not drawn: %" PRIu64 "%s%s",
		 rec->note[0] ? "WARNING " : "", rec->ev->what, (double)rec->min_block_ns / 1e6, rec->event,
		 rec->seconds, (double)rec->total_weight / 1e6, rec->samples, count_view ? " (widths: samples)" : "",
		 rec->lost, rec->truncated, rec->short_blocks, rec->note[0] ? "; agent: " : "", rec->note);
}

/* ---- the rows ---------------------------------------------------------------- */

/* CPU samples' common part: counts, weighed 1e9/Hz ns each by the meta */
#define CPU_ROW                                                                                                  \
	.word = "cpu", .source = EVENT_SAMPLER, .agent = -1, .weigh = EVENT_WEIGH_NONE, .count_type = "samples", \
	.count_unit = "count", .weight_type = "cpu", .weight_unit = "nanoseconds", .title = "CPU",               \
	.what = "CPU samples", .none = "used no CPU", .jfr = EVENT_JFR_EXECUTION, .subtitle = sub_clock

/* A perf event counted: a sample every .period events (-c), each weighing the
 * period (the kernel's, from the sample), so the weights add up to the count. */
#define PERIOD_ROW(nm, ty, cfg, per, unit, ttl)                                                                       \
	{                                                                                                             \
		.name = nm, .word = nm, .help = unit " (perf's " nm "): a sample every " #per " (-c), weighing them", \
		.source = EVENT_SAMPLER, .flags = EVENT_PERF | EVENT_INTERVAL, .agent = -1, .perf_type = ty,          \
		.perf_config = cfg, .perf_name = nm, .period = per, .weigh = EVENT_WEIGH_PERIOD,                      \
		.count_type = "samples", .count_unit = "count", .weight_type = nm, .weight_unit = "count",            \
		.title = ttl, .what = unit, .none = "had no " unit, .draw_weight = true, .draw_div = 1,               \
		.draw_unit = unit, .draw_unit_div = 1, .jfr = EVENT_JFR_EXECUTION, .subtitle = sub_period             \
	}

static const struct event_kind rows[] = {
	{ .name = "cpu",
	  .help = "on-CPU stacks sampled at -F Hz: cycles where the CPU counts them, else cpu-clock (the default)",
	  .flags = EVENT_PERF,
	  .perf_type = PERF_TYPE_HARDWARE,
	  .perf_config = PERF_COUNT_HW_CPU_CYCLES,
	  .perf_name = "cycles",
	  .fallback = "cpu-clock",
	  CPU_ROW },
	{ .name = "cpu-clock",
	  .help = "on-CPU stacks sampled at -F Hz by the kernel's clock",
	  .flags = EVENT_PERF | EVENT_CLOCK,
	  .perf_type = PERF_TYPE_SOFTWARE,
	  .perf_config = PERF_COUNT_SW_CPU_CLOCK,
	  .perf_name = "cpu-clock",
	  CPU_ROW },
	{ .name = "cycles",
	  .help = "on-CPU stacks sampled at -F Hz by the CPU's cycle counter (none in most VMs)",
	  .flags = EVENT_PERF,
	  .perf_type = PERF_TYPE_HARDWARE,
	  .perf_config = PERF_COUNT_HW_CPU_CYCLES,
	  .perf_name = "cycles",
	  CPU_ROW },
	{ .name = "offcpu",
	  .word = "offcpu",
	  .help = "a sample each time a thread blocks, weighted by the nanoseconds it was off the CPU (--min-block)",
	  .source = EVENT_SAMPLER,
	  .flags = EVENT_BLOCKS | EVENT_MIN_BLOCK,
	  .agent = -1,
	  .perf_name = "sched_switch",
	  .weigh = EVENT_WEIGH_TIME,
	  .count_type = "samples",
	  .count_unit = "count",
	  .weight_type = "off_cpu",
	  .weight_unit = "nanoseconds",
	  .title = "Off-CPU",
	  .what = "off-CPU time, weighted by time blocked",
	  .none = "blocked",
	  .draw_weight = true,
	  .draw_div = 1000,
	  .draw_unit = "ms",
	  .draw_unit_div = 1000,
	  .jfr = EVENT_JFR_WALL_OFFCPU,
	  .subtitle = sub_blocks },
	{ .name = "wall",
	  .word = "wall",
	  .help = "cpu-clock samples and off-CPU blocks together, each weighted by its time (a thread's width is its elapsed time)",
	  .source = EVENT_SAMPLER,
	  .flags = EVENT_PERF | EVENT_CLOCK | EVENT_BLOCKS | EVENT_MIN_BLOCK,
	  .agent = -1,
	  .perf_type = PERF_TYPE_SOFTWARE,
	  .perf_config = PERF_COUNT_SW_CPU_CLOCK,
	  .perf_name = "cpu-clock",
	  .weigh = EVENT_WEIGH_TIME,
	  .count_type = "samples",
	  .count_unit = "count",
	  .weight_type = "wall",
	  .weight_unit = "nanoseconds",
	  .title = "Wall",
	  .what = "wall-clock time",
	  .none = "blocked",
	  .draw_weight = true,
	  .draw_div = 1000,
	  .draw_unit = "ms",
	  .draw_unit_div = 1000,
	  .jfr = EVENT_JFR_WALL,
	  .subtitle = sub_blocks },
	/* perf's -F mode adapts a software event's period badly (perf record -F 99
	 * -e page-faults summed 90x the faults perf stat counted): a fixed period */
	PERIOD_ROW("page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 100, "page faults", "Page faults"),
	PERIOD_ROW("instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 10000019, "instructions",
		   "Instructions"),
	PERIOD_ROW("cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, 100003, "cache misses",
		   "Cache misses"),
	PERIOD_ROW("branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, 100003, "branch misses",
		   "Branch misses"),
	{ .name = "alloc",
	  .word = "alloc",
	  .help = "Java allocations sampled by the agent (--alloc-interval), weighted by bytes, the allocated class as leaf (_[a])",
	  .source = EVENT_AGENT,
	  .flags = EVENT_COUNT_VIEW | EVENT_INTERVAL,
	  .agent = 0,
	  .perf_name = "SampledObjectAlloc",
	  .weigh = EVENT_WEIGH_AGENT,
	  .count_type = "alloc_samples",
	  .count_unit = "count",
	  .weight_type = "alloc_space",
	  .weight_unit = "bytes",
	  .title = "Allocation",
	  .what = "Java allocations",
	  .none = "allocated",
	  .draw_weight = true,
	  .draw_bytes = true,
	  .draw_div = 1,
	  .jfr = EVENT_JFR_ALLOCATION,
	  .subtitle = sub_alloc },
	{ .name = "lock",
	  .word = "lock",
	  .help = "contended synchronized monitors and java.util.concurrent locks (ReentrantLock & co.) by the agent (--lock-min), weighted by the time blocked, the lock's class as leaf (_[l])",
	  .source = EVENT_AGENT,
	  .flags = EVENT_COUNT_VIEW | EVENT_MIN_BLOCK,
	  .agent = 1,
	  .perf_name = "MonitorContendedEnter, Unsafe.park",
	  .weigh = EVENT_WEIGH_AGENT,
	  .count_type = "contentions",
	  .count_unit = "count",
	  .weight_type = "delay",
	  .weight_unit = "nanoseconds",
	  .title = "Lock",
	  .what = "contended monitor and lock waits",
	  .none = "waited",
	  .draw_weight = true,
	  .draw_div = 1000,
	  .draw_unit = "ms",
	  .draw_unit_div = 1000,
	  .jfr = EVENT_JFR_MONITOR,
	  .subtitle = sub_lock },
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))

const struct event_kind *event_kinds(size_t *n)
{
	*n = NROWS;
	return rows;
}

const struct event_kind *event_kind_named(const char *name)
{
	for (size_t i = 0; name && i < NROWS; i++)
		if (strcmp(rows[i].name, name) == 0)
			return &rows[i];
	return NULL;
}

const struct event_kind *event_kind_of_word(const char *word)
{
	for (size_t i = 0; word && i < NROWS; i++)
		if (strcmp(rows[i].word, word) == 0)
			return &rows[i];
	return NULL;
}

const struct event_kind *event_kind_of_perf(const char *ev, size_t len)
{
	const char *colon = memchr(ev, ':', len);
	size_t n = colon ? (size_t)(colon - ev) : len;
	if (n == 10 && memcmp(ev, "task-clock", 10) == 0)
		return event_kind_named("cpu-clock");
	for (size_t i = 0; i < NROWS; i++)
		if ((rows[i].flags & EVENT_PERF) && strcmp(rows[i].name, rows[i].perf_name) == 0 &&
		    strlen(rows[i].perf_name) == n && memcmp(rows[i].perf_name, ev, n) == 0)
			return &rows[i]; /* a perf event's own row, not cpu's or wall's */
	return NULL;
}

const struct event_kind *event_kind_of_meta(const struct stack_meta *m)
{
	for (size_t i = 0; i < NROWS; i++) {
		const struct event_kind *e = &rows[i];
		if (e->weigh == EVENT_WEIGH_NONE)
			continue; /* the CPU rows: the default */
		if (e->source == EVENT_AGENT ? strcmp(m->count_type, e->count_type) == 0 :
					       m->has_weight && strcmp(m->weight_type, e->weight_type) == 0)
			return e;
	}
	return &rows[0];
}

void event_kind_list(char *out, size_t len, enum event_source src, bool any)
{
	size_t used = 0, k = 0, n = 0;
	for (size_t i = 0; i < NROWS; i++)
		n += any || rows[i].source == src;
	out[0] = '\0';
	for (size_t i = 0; i < NROWS && used < len; i++) {
		if (!any && rows[i].source != src)
			continue;
		k++;
		int w = snprintf(out + used, len - used, "%s%s", k == 1 ? "" : k == n ? " or " : ", ", rows[i].name);
		if (w < 0)
			break;
		used += (size_t)w;
	}
}

uint64_t event_sample_weight(const struct event_kind *e, int freq)
{
	if (e->weigh == EVENT_WEIGH_TIME)
		return freq > 0 ? 1000000000ULL / (uint64_t)freq : 0;
	return 0; /* the sample's own period */
}

uint64_t event_stacks_period(const struct event_kind *e, int freq)
{
	if ((e->flags & EVENT_CLOCK) && freq > 0)
		return 1000000000ULL / (uint64_t)freq;
	return e->period ? e->period : 1;
}

struct event_view event_view(const struct event_kind *e, bool count_view)
{
	struct event_view v = { .div = 1 };
	if (!e->draw_weight || (count_view && (e->flags & EVENT_COUNT_VIEW)))
		return v;
	v.weight = true;
	v.div = e->draw_div ? e->draw_div : 1;
	v.unit = e->draw_unit;
	v.unit_div = e->draw_unit_div;
	v.bytes = e->draw_bytes;
	return v;
}

uint64_t event_view_value(const struct event_view *v, uint64_t count, uint64_t weight)
{
	if (!v->weight)
		return count;
	return v->div > 1 ? (weight + v->div / 2) / v->div : weight;
}

void event_subtitle(char *out, size_t len, const struct recording *rec, bool count_view)
{
	rec->ev->subtitle(out, len, rec, count_view);
}
