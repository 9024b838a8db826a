/* fuzz_heatmap.c - any text (or bytes) as perf script input for the heat map:
 * folded per sample, binned, written as the page's JSON (names escaped) at a
 * row count taken from the input; no read outside it, no crash, no leak.
 * module: native/render/heatmap.c native/render/call_tree.c native/util/json_out.c native/formats/perf_script.c native/formats/collapse.c native/model/recording.c native/model/event_table.c native/util/str_intern.c native/render/flamegraph.c native/render/palette.c native/render/svg_out.c native/render/frame_tree.c native/model/stack_table.c native/util/str_index.c native/util/grow.c native/util/u64_map.c */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heatmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct collapse_opts o = { .pid = size & 1, .tid = size & 2, .kernel = true, .jit = size & 4 };
	struct heatmap h;
	struct heatmap_reader r;
	struct ps_stats st;
	char err[256], *buf = NULL;
	size_t len = 0;
	if (heatmap_init(&h) != 0)
		return 0;
	if (heatmap_reader_init(&r, &h, &o, size & 8) != 0) {
		heatmap_free(&h);
		return 0;
	}
	perf_script_parse_buffer((const char *)data, size, heatmap_reader_sample, &r, &st);
	/* any weights and times through the recorder's entry point too */
	if (size >= 9) {
		double t;
		memcpy(&t, data + 1, sizeof(t));
		heatmap_add(&h, t, (const char *)data, size < 64 ? size : 64, data[0]);
	}
	struct heatmap_options ho = { "t", NULL, size ? 1 + data[0] * 4 % 1000 : 50, r.idle };
	FILE *f = open_memstream(&buf, &len);
	if (f) {
		if (heatmap_check(&h, &ho, err, sizeof(err)) == 0)
			heatmap_write_json(f, &h, &ho, err, sizeof(err));
		fclose(f);
		/* the JSON must not end a <script> element */
		if (buf && memmem(buf, len, "</", 2))
			abort();
		free(buf);
	}
	heatmap_reader_free(&r);
	heatmap_free(&h);
	return 0;
}
