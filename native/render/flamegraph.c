/* flamegraph.c - draws folded stacks as an interactive SVG flame graph: the
 * page, legend, subtitle and frames of the merged tree, with the viewer. */
#include "flamegraph.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "frame_tree.h"
#include "html_assets.h"
#include "palette.h"
#include "svg_out.h"

#define XPAD	    10.0
#define FRAMEPAD    1.0
#define FONTWIDTH   0.59 /* average glyph width relative to the font size */
#define SEARCHCOLOR "rgb(230,0,230)"

/* ---- drawing ------------------------------------------------------------- */

struct draw {
	const struct fg_options *o;
	struct out *out;
	struct frame_tree *t;
	enum palette pal;
	double fontsize, width, widthpertime, minwidth_time, height;
	double frameheight, top, bottom; /* frames: depth 0 at bottom (flame) or top (icicle) */
	uint64_t total, total_before;
	double maxdelta;
	const char *countname;
	uint64_t rng;
	const char **path; /* names from the root to the node drawn */
};

static double rng_next(struct draw *d)
{
	uint64_t z = (d->rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

/* --hash's colour: a number in [0, 1) from the name read forward or reversed, as
 * flamegraph.pl's namehash reads it both ways. Not str_hash: this one is what
 * the graphs' colours are, and changing it would recolour every --hash graph. */
static double hash01(const char *s, size_t n, bool reversed)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[reversed ? n - 1 - i : i]) * 0x100000001b3ull;
	h ^= h >> 32;
	h *= 0x9e3779b97f4a7c15ull;
	return (double)(h >> 11) * (1.0 / 9007199254740992.0);
}

static double node_delta(const struct draw *d, size_t i)
{
	double after = d->total ? (double)d->t->nodes[i].total / (double)d->total : 0;
	double before = d->total_before ? (double)d->t->before[i] / (double)d->total_before : 0;
	return d->o->negate ? before - after : after - before;
}

static void frame_color(struct draw *d, size_t i, uint8_t rgb[3])
{
	const struct frame_node *n = &d->t->nodes[i];
	struct frame_name *nm = n->depth ? &d->t->names[n->name] : NULL;
	const char *s = nm ? d->t->pool + nm->off : "all";
	size_t len = nm ? nm->len : 3;
	double v1, v2, v3;

	if (strcmp(s, "--") == 0 || strcmp(s, "-") == 0) {
		rgb[0] = rgb[1] = rgb[2] = s[1] ? 160 : 200;
		return;
	}
	if (d->o->differential) {
		double v = d->maxdelta > 0 ? node_delta(d, i) / d->maxdelta : 0;
		rgb[0] = rgb[1] = rgb[2] = 255;
		if (v > 0)
			rgb[1] = rgb[2] = (uint8_t)(int)(210 * (1 - (v > 1 ? 1 : v)));
		else if (v < 0)
			rgb[0] = rgb[1] = (uint8_t)(int)(210 * (1 + (v < -1 ? -1 : v)));
		return;
	}
	if (d->o->hash) {
		v1 = hash01(s, len, false);
		v2 = v3 = hash01(s, len, true);
	} else {
		v1 = rng_next(d), v2 = rng_next(d), v3 = rng_next(d);
	}
	if (d->pal == PAL_JAVA) {
		enum fg_hue hue;
		if (!nm) {
			hue = FG_HUE_META;
		} else {
			if (nm->hue < 0)
				nm->hue = (int8_t)palette_name_hue(s);
			hue = palette_hue_at(d->path + 1, n->depth, (enum fg_hue)nm->hue);
		}
		palette_hue_color(hue, v1, rgb);
		return;
	}
	palette_flat_color(d->pal == PAL_JS ? palette_js_type(s) : d->pal, v1, v2, v3, rgb);
}

/* the name without jflame's kind annotation */
static size_t display_len(const char *s, size_t len)
{
	if (len > 4 && palette_kind_hue(s, len) != FG_HUE_COUNT)
		return len - 4;
	return len;
}

static void draw_frame(struct draw *d, size_t i)
{
	struct out *o = d->out;
	const struct frame_node *n = &d->t->nodes[i];
	const char *s = d->path[n->depth];
	size_t len = n->depth ? display_len(s, d->t->names[n->name].len) : 3;
	double x1 = XPAD + (double)n->start * d->widthpertime;
	double x2 = XPAD + (double)(n->start + n->total) * d->widthpertime;
	int64_t cx1 = centi_round(x1), cx2 = centi_round(x2);
	double y1, y2;
	uint8_t rgb[3];

	if (d->o->inverted) {
		y1 = d->top + n->depth * d->frameheight;
		y2 = d->top + (n->depth + 1) * d->frameheight - FRAMEPAD;
	} else {
		y1 = d->bottom - (n->depth + 1) * d->frameheight + FRAMEPAD;
		y2 = d->bottom - n->depth * d->frameheight;
	}
	out_str(o, "<g>\n<title>");
	out_xml_n(o, s, len, SIZE_MAX);
	out_str(o, " (");
	if (d->o->bytes) {
		/* the exact count first: the page's search sums it */
		static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
		double v = (double)n->total;
		int u = -1;
		char buf[48];
		out_u64(o, n->total, true);
		out_str(o, " bytes");
		while (v >= 1024 && u < 3)
			v /= 1024, u++;
		if (u >= 0) {
			snprintf(buf, sizeof(buf), " = %.1f %s", v, units[u]);
			out_str(o, buf);
		}
	} else {
		if (d->o->count_scale > 1)
			out_centi(o, (int64_t)llround(100.0 * (double)n->total / (double)d->o->count_scale), false);
		else
			out_u64(o, n->total, true);
		out_char(o, ' ');
		out_xml(o, d->countname);
	}
	out_str(o, ", ");
	if (n->depth == 0)
		out_str(o, "100");
	else
		out_centi(o, (int64_t)llround(10000.0 * (double)n->total / (double)d->total), false);
	out_char(o, '%');
	if (d->o->differential && n->depth) {
		int64_t dc = centi_round(100.0 * node_delta(d, i));
		out_str(o, "; ");
		if (dc > 0)
			out_char(o, '+');
		out_centi(o, dc, false);
		out_char(o, '%');
	}
	out_str(o, ")</title><rect x=\"");
	out_centi(o, cx1, true);
	out_str(o, "\" y=\"");
	out_num(o, y1);
	out_str(o, "\" width=\"");
	out_centi(o, cx2 - cx1, true);
	out_str(o, "\" height=\"");
	out_num(o, y2 - y1);
	out_str(o, "\" fill=\"");
	frame_color(d, i, rgb);
	out_rgb(o, rgb);
	out_str(o, "\" rx=\"2\" ry=\"2\"/>\n<text x=\"");
	out_num(o, x1 + 3);
	out_str(o, "\" y=\"");
	out_num(o, 3 + (y1 + y2) / 2);
	out_str(o, "\">");
	out_fitted(o, s, len, (size_t)((x2 - x1) / (d->fontsize * FONTWIDTH)));
	out_str(o, "</text>\n</g>\n");
}

static bool node_shown(const struct draw *d, const struct frame_node *n)
{
	return n->total && (double)n->total >= d->minwidth_time;
}

/* The nodes are in drawing order already: parents first, children in order.
 * A frame too narrow to draw has only narrower frames above it. */
static void draw_frames(struct draw *d)
{
	const struct frame_tree *t = d->t;
	d->path[0] = "all";
	for (size_t i = 0; i < t->nnodes; i++) {
		const struct frame_node *n = &t->nodes[i];
		if (!node_shown(d, n))
			continue;
		if (n->depth)
			d->path[n->depth] = t->pool + t->names[n->name].off;
		draw_frame(d, i);
	}
}

struct legend_item {
	const char *label;
	uint8_t rgb[3];
};

/* Lays the legend out in centred rows; with out NULL only counts the rows. */
static int draw_legend(struct draw *d, const struct legend_item *items, size_t n, double y0)
{
	double fs = d->fontsize, rowh = fs + 6, avail = d->width - 2 * XPAD;
	double widths[16];
	size_t first = 0;
	int rows = 0;

	for (size_t i = 0; i < n; i++)
		widths[i] =
			fs + 4 + (double)utf8_chars(items[i].label, strlen(items[i].label)) * fs * FONTWIDTH + 2 * fs;
	while (first < n) {
		size_t last = first + 1;
		double w = widths[first], x;
		while (last < n && w + widths[last] <= avail)
			w += widths[last++];
		if (y0 >= 0) {
			double y = y0 + rows * rowh;
			x = (d->width - w) / 2 + fs;
			for (size_t i = first; i < last; i++) {
				out_str(d->out, "<rect x=\"");
				out_num(d->out, x);
				out_str(d->out, "\" y=\"");
				out_num(d->out, y + 3);
				out_str(d->out, "\" width=\"");
				out_num(d->out, fs);
				out_str(d->out, "\" height=\"");
				out_num(d->out, fs);
				out_str(d->out, "\" fill=\"");
				out_rgb(d->out, items[i].rgb);
				out_str(d->out, "\" stroke=\"rgb(90,90,90)\" stroke-width=\"0.5\"/>\n<text x=\"");
				out_num(d->out, x + fs + 4);
				out_str(d->out, "\" y=\"");
				out_num(d->out, y + fs + 1);
				out_str(d->out, "\">");
				out_xml(d->out, items[i].label);
				out_str(d->out, "</text>\n");
				x += widths[i];
			}
		}
		rows++;
		first = last;
	}
	return rows;
}

static size_t legend_items(const struct draw *d, struct legend_item *items)
{
	size_t n = 0;
	if (!d->o->legend)
		return 0;
	if (d->o->differential) {
		items[0] = (struct legend_item){ "grew", { 255, 100, 100 } };
		items[1] = (struct legend_item){ "shrank", { 100, 100, 255 } };
		return 2;
	}
	if (d->pal != PAL_JAVA)
		return 0;
	bool drawn[FG_HUE_COUNT] = { false };
	for (int h = 0; h < FG_HUE_ALWAYS; h++)
		drawn[h] = true;
	for (uint32_t i = 0; i < d->t->nnames; i++) { /* alloc and lock: when the graph has them */
		const struct frame_name *nm = &d->t->names[i];
		const char *s = d->t->pool + nm->off;
		enum fg_hue kind = palette_kind_hue(s, nm->len);
		if (kind == FG_HUE_ALLOC || kind == FG_HUE_LOCK)
			drawn[kind] = true;
	}
	for (int h = 0; h < FG_HUE_COUNT; h++) {
		if (!drawn[h])
			continue;
		items[n].label = palette_hue_label((enum fg_hue)h);
		palette_hue_color((enum fg_hue)h, 0.5, items[n].rgb);
		n++;
	}
	return n;
}

static const char *background(enum palette p, bool top)
{
	switch (p) {
	case PAL_MEM:
		return top ? "#eef2ee" : "#e0ffe0";
	case PAL_IO:
		return top ? "#eeeeee" : "#e0e0ff";
	case PAL_JAVA:
	case PAL_HOT:
	case PAL_JS:
		return top ? "#eeeeee" : "#eeeeb0";
	default:
		return top ? "#f8f8f8" : "#e8e8e8";
	}
}

#define SUBTITLE_LEADING 1.25 /* line height, in font sizes */

/* How many characters of the subtitle fit on a line of width: glyphs
 * estimated as flamegraph.pl does (FONTWIDTH), with a margin, more for the
 * bold warning. */
static size_t subtitle_room(double width, double fontsize, bool bold)
{
	double chars = width / (fontsize * (bold ? FONTWIDTH + 0.09 : FONTWIDTH + 0.03));
	return chars > 8 ? (size_t)chars : 8;
}

/* The length in bytes of the subtitle's next line of at most room characters:
 * up to the last "; " that fits (whole parts), else the last space, else a cut
 * between two characters. Never 0 when len is not. */
static size_t subtitle_line(const char *s, size_t len, size_t room)
{
	size_t i = 0, chars = 0, part = 0, space = 0;
	while (i < len) {
		uint32_t cp;
		if (i > 0 && s[i] == ' ') {
			space = i;
			if (s[i - 1] == ';')
				part = i;
		}
		if (chars == room)
			return part ? part : space ? space : i;
		i += utf8_next((const unsigned char *)s + i, len - i, &cp);
		chars++;
	}
	return len;
}

/* Steps to the subtitle's next line: its text in *line and *n; false at the end. */
static bool subtitle_next(const char **s, size_t *len, size_t room, const char **line, size_t *n)
{
	while (*len > 0 && **s == ' ')
		(*s)++, (*len)--;
	if (*len == 0)
		return false;
	*line = *s;
	*n = subtitle_line(*s, *len, room);
	*s += *n;
	*len -= *n;
	return true;
}

/* The number of lines the subtitle takes at this width (1 when it fits). */
static size_t subtitle_count(const char *s, bool warns, double width, double fontsize)
{
	size_t room = subtitle_room(width, fontsize, warns), len = strlen(s), n = 0, k;
	const char *line;
	while (subtitle_next(&s, &len, room, &line, &k))
		n++;
	return n ? n : 1;
}

static void draw_text(struct out *o, const char *id, double x, double y, const char *extra, const char *text)
{
	out_str(o, "<text id=\"");
	out_str(o, id);
	out_str(o, "\" x=\"");
	out_num(o, x);
	out_str(o, "\" y=\"");
	out_num(o, y);
	out_char(o, '"');
	if (extra) {
		out_char(o, ' ');
		out_str(o, extra);
	}
	out_char(o, '>');
	out_xml(o, text);
	out_str(o, "</text>\n");
}

/* A script from html_assets/ into the page; one missing is a broken build. */
static void out_asset(struct out *o, const char *name)
{
	size_t len;
	const char *a = html_asset(name, &len);

	if (!a) {
		if (!o->err)
			o->err = ENOENT;
		return;
	}
	out_mem(o, a, len);
}

static void draw_page(struct draw *d, double legend_y, const struct legend_item *items, size_t nitems)
{
	const struct fg_options *op = d->o;
	struct out *o = d->out;
	double fs = d->fontsize, W = d->width, H = d->height, ypad2 = fs * 2 + 10;
	const char *title = op->title;
	char num[64];

	if (!title)
		title = op->flamechart ? "Flame Chart" : op->inverted ? "Icicle Graph" : "Flame Graph";
	out_str(o, "<?xml version=\"1.0\" standalone=\"no\"?>\n<svg version=\"1.1\" width=\"");
	out_num(o, W);
	out_str(o, "\" height=\"");
	out_num(o, H);
	out_str(o, "\" onload=\"init(evt)\" viewBox=\"0 0 ");
	out_num(o, W);
	out_char(o, ' ');
	out_num(o, H);
	out_str(o, "\" xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n"
		   "<!-- Flame graph written by jflame: click a frame to zoom, Search (Ctrl-F) for a regex. "
		   "The layout and viewer follow Brendan Gregg's flamegraph.pl. -->\n");
	if (op->notes) {
		out_str(o, "<desc id=\"notes\">");
		out_xml(o, op->notes);
		out_str(o, "</desc>\n");
	}
	out_str(o, "<defs>\n\t<linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">\n"
		   "\t\t<stop stop-color=\"");
	out_str(o, background(d->pal, true));
	out_str(o, "\" offset=\"5%\"/>\n\t\t<stop stop-color=\"");
	out_str(o, background(d->pal, false));
	out_str(o, "\" offset=\"95%\"/>\n\t</linearGradient>\n</defs>\n<style type=\"text/css\">\n"
		   "\ttext { font-family:");
	out_xml(o, op->fonttype ? op->fonttype : "Verdana");
	out_str(o, "; font-size:");
	out_num(o, fs);
	out_str(o, "px; fill:rgb(0,0,0); }\n"
		   "\t#search, #ignorecase { opacity:0.1; cursor:pointer; }\n"
		   "\t#search:hover, #search.show, #ignorecase:hover, #ignorecase.show { opacity:1; }\n"
		   "\t#subtitle { text-anchor:middle; fill:rgb(60,60,60); }\n"
		   "\t#subtitle.warning { fill:rgb(200,0,0); font-weight:bold; }\n"
		   "\t#title { text-anchor:middle; font-size:");
	out_num(o, fs + 5);
	out_str(o, "px; }\n"
		   "\t#unzoom { cursor:pointer; }\n"
		   "\t#frames > *:hover { stroke:black; stroke-width:0.5; cursor:pointer; }\n"
		   "\t.hide { display:none; }\n"
		   "\t.parent { opacity:0.5; }\n"
		   "</style>\n<script type=\"text/ecmascript\">\n<![CDATA[\nvar fg = { width: ");
	out_num(o, W);
	out_str(o, ", xpad: ");
	out_num(o, XPAD);
	out_str(o, ", fontsize: ");
	out_num(o, fs);
	snprintf(num, sizeof(num), ", fontwidth: %g, inverted: %s, searchcolor: \"", FONTWIDTH,
		 op->inverted ? "true" : "false");
	out_str(o, num);
	out_str(o, SEARCHCOLOR "\" };\n");
	out_asset(o, "flame_core.js");
	out_asset(o, "flamegraph.js");
	out_str(o, "]]>\n</script>\n<rect x=\"0\" y=\"0\" width=\"");
	out_num(o, W);
	out_str(o, "\" height=\"");
	out_num(o, H);
	out_str(o, "\" fill=\"url(#background)\"/>\n");
	draw_text(o, "title", W / 2, fs * 2, NULL, title);
	if (op->subtitle && subtitle_count(op->subtitle, op->subtitle_warning, W - 2 * XPAD, fs) <= 1) {
		draw_text(o, "subtitle", W / 2, fs * 4, op->subtitle_warning ? "class=\"warning\"" : NULL,
			  op->subtitle);
	} else if (op->subtitle) {
		/* one <text>, a line per <tspan>, so that it fits the graph's width */
		bool warns = op->subtitle_warning;
		size_t room = subtitle_room(W - 2 * XPAD, fs, warns), len = strlen(op->subtitle), n, i = 0;
		const char *s = op->subtitle, *line;
		out_str(o, "<text id=\"subtitle\" x=\"");
		out_num(o, W / 2);
		out_str(o, "\" y=\"");
		out_num(o, fs * 4);
		out_str(o, warns ? "\" class=\"warning\">" : "\">");
		while (subtitle_next(&s, &len, room, &line, &n)) {
			out_str(o, "<tspan x=\"");
			out_num(o, W / 2);
			out_str(o, "\" dy=\"");
			out_num(o, i++ ? fs * SUBTITLE_LEADING : 0);
			out_str(o, "\">");
			out_xml_n(o, line, n, SIZE_MAX);
			out_str(o, "</tspan>");
		}
		out_str(o, "</text>\n");
	}
	draw_text(o, "details", XPAD, H - ypad2 / 2, NULL, " ");
	draw_text(o, "unzoom", XPAD, fs * 2, "class=\"hide\"", "Reset Zoom");
	draw_text(o, "search", W - XPAD - 100, fs * 2, NULL, "Search");
	draw_text(o, "ignorecase", W - XPAD - 16, fs * 2, NULL, "ic");
	draw_text(o, "matched", W - XPAD - 100, H - ypad2 / 2, NULL, " ");
	if (nitems) {
		out_str(o, "<g id=\"legend\">\n");
		draw_legend(d, items, nitems, legend_y);
		out_str(o, "</g>\n");
	}
	out_str(o, "<g id=\"frames\" data-nametype=\"");
	out_xml(o, op->nametype ? op->nametype : "Function:");
	out_str(o, "\">\n");
}

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* The tree's view of the table: its steps (a flame chart of an input that kept
 * them), else its stacks with their counts. Caller frees; NULL when out of memory. */
static struct fg_stack *stacks_view(const struct stack_table *tab, bool steps, size_t *n)
{
	*n = steps ? tab->nsteps : tab->stacks.n;
	struct fg_stack *v = malloc((*n ? *n : 1) * sizeof(*v));
	if (!v)
		return NULL;
	for (size_t i = 0; i < *n; i++) {
		if (steps) {
			const struct stack_step *s = &tab->steps[i];
			v[i] = (struct fg_stack){ tab->stacks.strs[s->stack], s->count, s->before };
		} else {
			v[i] = (struct fg_stack){ tab->stacks.strs[i], tab->counts[i],
						  tab->befores ? tab->befores[i] : 0 };
		}
	}
	return v;
}

int flamegraph_write(FILE *out, const struct stack_table *tab, const struct fg_options *opts, char *err, size_t errlen)
{
	static const struct fg_options defaults;
	const struct fg_options *op = opts ? opts : &defaults;
	struct frame_tree t = { 0 };
	struct draw d = { 0 };
	struct out *o = NULL;
	struct legend_item items[FG_HUE_COUNT];
	size_t nitems;
	uint32_t depthmax = 0;
	size_t i;
	int r;
	double minwidth, legend_y, legend_h = 0, ypad1, ypad3;
	int ret = -1;

	struct fg_stack *stacks = NULL;
	size_t n = 0;

	if (!out || !tab) {
		set_err(err, errlen, "flame graph: no output or no stacks given");
		return -1;
	}
	if (!(stacks = stacks_view(tab, op->flamechart && tab->nsteps, &n))) {
		set_err(err, errlen, "flame graph: out of memory");
		return -1;
	}
	for (i = 0; i < n; i++) {
		d.total += stacks[i].count;
		if (d.total < stacks[i].count) {
			set_err(err, errlen, "flame graph: the sample counts overflow");
			goto out;
		}
	}
	if (!d.total) {
		set_err(err, errlen, "no samples");
		goto out;
	}
	d.o = op, d.t = &t, d.pal = palette_of(op->colors);
	d.fontsize = op->fontsize > 0 ? op->fontsize : 12;
	d.width = op->width > 0 ? op->width : 1200;
	d.frameheight = op->frameheight > 0 ? op->frameheight : 16;
	d.countname = op->countname ? op->countname : "samples";
	d.widthpertime = (d.width - 2 * XPAD) / (double)d.total;
	minwidth = op->minwidth > 0 ? op->minwidth : 0.1;
	if (op->minwidth_percent && op->minwidth > 0)
		d.minwidth_time = (double)d.total * minwidth / 100.0;
	else
		d.minwidth_time = minwidth / d.widthpertime;
	r = frame_tree_build(&t, stacks, n,
			     &(struct frame_tree_options){ op->reverse, op->differential, op->flamechart },
			     d.minwidth_time);
	if (r) {
		set_err(err, errlen,
			r == -2 ? "flame graph: the sample counts overflow" : "flame graph: out of memory");
		goto out;
	}
	d.total_before = t.before ? t.before[0] : 0;
	d.rng = 0x6a666c616d65ull; /* "jflame": same input, same colours */
	for (i = 0; i < t.nnodes; i++) {
		const struct frame_node *nd = &t.nodes[i];
		if (!node_shown(&d, nd))
			continue;
		if (nd->depth > depthmax)
			depthmax = nd->depth;
		if (op->differential && nd->depth) {
			double dl = fabs(node_delta(&d, i));
			if (dl > d.maxdelta)
				d.maxdelta = dl;
		}
	}
	nitems = legend_items(&d, items);
	ypad1 = d.fontsize * 3;
	ypad3 = 0;
	if (op->subtitle)
		ypad3 = d.fontsize * 2 +
			(double)(subtitle_count(op->subtitle, op->subtitle_warning, d.width - 2 * XPAD, d.fontsize) -
				 1) *
				d.fontsize * SUBTITLE_LEADING;
	legend_y = ypad1 + ypad3;
	if (nitems)
		legend_h = draw_legend(&d, items, nitems, -1) * (d.fontsize + 6) + 6;
	d.top = ypad1 + ypad3 + legend_h;
	d.height = d.top + (depthmax + 1) * d.frameheight + d.fontsize * 2 + 10;
	d.bottom = d.height - (d.fontsize * 2 + 10);
	if (!(d.path = calloc((size_t)t.maxdepth + 1, sizeof(*d.path))) || !(o = malloc(sizeof(*o)))) {
		set_err(err, errlen, "flame graph: out of memory");
		goto out;
	}
	o->f = out, o->len = 0, o->err = 0;
	d.out = o;

	draw_page(&d, legend_y, items, nitems);
	draw_frames(&d);
	out_str(o, "</g>\n</svg>\n");
	out_flush(o);
	if (o->err || fflush(out) || ferror(out)) {
		set_err(err, errlen, "flame graph: write failed: %s", strerror(o->err ? o->err : errno ? errno : EIO));
		goto out;
	}
	ret = 0;
out:
	free(o);
	free(d.path);
	free(stacks);
	frame_tree_free(&t);
	return ret;
}
