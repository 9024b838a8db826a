/* flamegraph.js - the SVG flame graph's viewer (after flame_core.js and a
 * "var fg = {...}" settings line): zoom, search and the URL's state. */
"use strict";
var details, searchbtn, icbtn, unzoombtn, matchedtxt, framesg, nametype;
var frames = [], total = 0, zoomed = null;
var tree = { parent: [], kids: function (i) { return tree.children[i]; }, children: [], start: [] };
var widths = [], counts = [];
var searching = false, searchterm = null, ignorecase = false;

function init(evt) {
	details = document.getElementById("details").firstChild;
	searchbtn = document.getElementById("search");
	icbtn = document.getElementById("ignorecase");
	unzoombtn = document.getElementById("unzoom");
	matchedtxt = document.getElementById("matched");
	framesg = document.getElementById("frames");
	nametype = framesg.getAttribute("data-nametype") || "Function:";
	var el = framesg.children, widest = -1;
	for (var i = 0; i < el.length; i++) {
		var g = el[i], r = g.children[1], f = parse_title(g.children[0].textContent);
		f.g = g;
		f.rect = r;
		f.text = g.children[2];
		f.xs = r.getAttribute("x");
		f.ys = r.getAttribute("y");
		f.ws = r.getAttribute("width");
		f.x = parseFloat(f.xs);
		f.y = parseFloat(f.ys);
		f.w = parseFloat(f.ws);
		f.fill = r.getAttribute("fill");
		f.label = f.text.textContent;
		f.tx = f.text.getAttribute("x");
		f.moved = false;
		f.i = frames.length;
		g.fg = f;
		frames.push(f);
		if (f.w > widest) {
			widest = f.w;
			total = f.count;
		}
	}
	make_tree();
	var p = get_params();
	if (p.x && p.y) {
		for (var i = 0; i < frames.length; i++) {
			if (frames[i].xs == p.x && frames[i].ys == p.y) {
				zoom(frames[i].g);
				break;
			}
		}
	}
	if (p.s)
		search(p.s);
}

/* "NAME (1,234 samples, 5.67%)" or "NAME (1,234.56 ms, 5.67%)" -> name and count */
function parse_title(t) {
	var m = /^([\s\S]*) \(([0-9,.]+) [\s\S]*\)$/.exec(t);
	if (!m)
		return { name: t, count: 0 };
	return { name: m[1], count: parseFloat(m[2].replace(/,/g, "")) };
}

/* The frames as a tree for flame_core.js: flamegraph.c draws them parents
 * first, children in order, a row per depth (the root's row at the bottom,
 * or at the top when inverted). */
function make_tree() {
	var ys = [], depth = {}, last = [];
	for (var i = 0; i < frames.length; i++)
		ys.push(frames[i].y);
	ys.sort(function (a, b) { return fg.inverted ? a - b : b - a; });
	for (var i = 0, d = 0; i < ys.length; i++) {
		if (!(ys[i] in depth))
			depth[ys[i]] = d++;
	}
	for (var i = 0; i < frames.length; i++) {
		var f = frames[i], d = depth[f.y], p = d > 0 && last[d - 1] !== undefined ? last[d - 1] : -1;
		last[d] = i;
		last.length = d + 1;
		tree.parent.push(i === 0 ? -1 : p);
		tree.children.push([]);
		if (i > 0 && p >= 0)
			tree.children[p].push(i);
		tree.start.push(f.x);
		widths.push(f.w);
		counts.push(f.count);
	}
}

/* the query string keeps the zoom (x, y of the frame's rect) and the search (s) */
function get_params() {
	var p = {}, a = window.location.search.substring(1).split("&");
	for (var i = 0; i < a.length; i++) {
		var k = a[i].indexOf("=");
		if (k <= 0 || k == a[i].length - 1)
			continue;
		try {
			p[a[i].substring(0, k)] = decodeURIComponent(a[i].substring(k + 1).replace(/\+/g, " "));
		} catch (e) {
		}
	}
	return p;
}
function set_param(key, val) {
	var p = get_params(), q = [];
	if (val === null)
		delete p[key];
	else
		p[key] = val;
	for (var k in p) {
		if (Object.prototype.hasOwnProperty.call(p, k))
			q.push(encodeURIComponent(k) + "=" + encodeURIComponent(p[k]));
	}
	try {
		history.replaceState(null, "", window.location.pathname + (q.length ? "?" + q.join("&") : "") + window.location.hash);
	} catch (e) {
	}
}

function find_group(node) {
	while (node && node.parentNode) {
		if (node.parentNode === framesg)
			return node;
		node = node.parentNode;
	}
	return null;
}

window.addEventListener("click", function (e) {
	var g = find_group(e.target);
	if (g) {
		zoom(g);
		if (zoomed) {
			set_param("x", g.fg.xs);
			set_param("y", g.fg.ys);
		} else {
			set_param("x", null);
			set_param("y", null);
		}
		return;
	}
	var id = e.target.id || (e.target.parentNode && e.target.parentNode.id);
	if (id == "unzoom")
		unzoom();
	else if (id == "search")
		search_prompt();
	else if (id == "ignorecase")
		toggle_ignorecase();
}, false);

window.addEventListener("mouseover", function (e) {
	var g = find_group(e.target);
	if (g)
		details.nodeValue = nametype + " " + g.children[0].textContent;
}, false);

window.addEventListener("mouseout", function (e) {
	if (find_group(e.target))
		details.nodeValue = " ";
}, false);

/* Ctrl-F or F3: search; Ctrl-I: toggle case; Escape: reset zoom, then search */
JFlameCore.keys({
	find: search_prompt,
	ignorecase: toggle_ignorecase,
	escape: function () {
		if (zoomed)
			unzoom();
		else if (searching)
			reset_search();
	}
});

function set_geometry(f, x, w) {
	f.rect.setAttribute("x", x.toFixed(2));
	f.rect.setAttribute("width", w.toFixed(2));
	f.moved = true;
}

function restore(f) {
	f.g.classList.remove("hide");
	f.g.classList.remove("parent");
	if (f.moved) {
		f.rect.setAttribute("x", f.xs);
		f.rect.setAttribute("width", f.ws);
		f.text.setAttribute("x", f.tx);
		f.text.textContent = f.label;
		f.moved = false;
	}
}

/* fits the frame's name into its rect, cut with ".." */
function update_text(f) {
	var t = f.text, x = parseFloat(f.rect.getAttribute("x")), w = parseFloat(f.rect.getAttribute("width")) - 3;
	var s = f.name;
	t.setAttribute("x", (x + 3).toFixed(2));
	if (w < 2 * fg.fontsize * fg.fontwidth) {
		t.textContent = "";
		return;
	}
	t.textContent = s;
	var len = t.getComputedTextLength();
	if (len <= w || /^ *$/.test(s))
		return;
	for (var n = Math.floor(s.length * w / len); n > 0; n--) {
		t.textContent = s.substring(0, n) + "..";
		if (t.getComputedTextLength() <= w)
			return;
	}
	t.textContent = "";
}

/* zoom onto frame g: it spans the width, its ancestors are stretched and
 * greyed out, everything not above or below it is hidden */
function zoom(g) {
	var z = g.fg;
	if (z === frames[0]) {
		unzoom();
		return;
	}
	for (var i = 0; i < frames.length; i++) {
		restore(frames[i]);
		frames[i].g.classList.add("hide");
	}
	JFlameCore.layout(tree, widths, z.i, fg.xpad, fg.width - 2 * fg.xpad, 0, function (i, x, w, cls) {
		var f = frames[i];
		f.g.classList.remove("hide");
		if (cls)
			f.g.classList.add("parent");
		set_geometry(f, x, w);
		update_text(f);
	});
	zoomed = z;
	unzoombtn.classList.remove("hide");
}

function unzoom() {
	for (var i = 0; i < frames.length; i++)
		restore(frames[i]);
	zoomed = null;
	unzoombtn.classList.add("hide");
	set_param("x", null);
	set_param("y", null);
}

function toggle_ignorecase() {
	ignorecase = !ignorecase;
	if (ignorecase)
		icbtn.classList.add("show");
	else
		icbtn.classList.remove("show");
	if (searchterm !== null)
		search();
}

function reset_search() {
	for (var i = 0; i < frames.length; i++)
		frames[i].rect.setAttribute("fill", frames[i].fill);
	searching = false;
	searchterm = null;
	searchbtn.classList.remove("show");
	searchbtn.firstChild.nodeValue = "Search";
	matchedtxt.classList.add("hide");
	matchedtxt.firstChild.nodeValue = " ";
	set_param("s", null);
}

function search_prompt() {
	if (searching) {
		reset_search();
		return;
	}
	var term = prompt("Enter a search term (regexp allowed, eg: ^ext4_)" +
		(ignorecase ? ", ignoring case" : "") +
		"\nPress Ctrl-i to toggle case sensitivity", "");
	if (term)
		search(term);
}

/* paints the frames whose name matches the regex; "Matched:" is the share of
 * all samples under a match (a match inside another counts once) */
function search(term) {
	if (term !== undefined && term !== null)
		searchterm = String(term);
	if (searchterm === null)
		return;
	var re = JFlameCore.compile(searchterm, ignorecase);
	if (!re) {
		matchedtxt.classList.remove("hide");
		matchedtxt.firstChild.nodeValue = "Bad regex";
		return;
	}
	var m = JFlameCore.match(tree, counts, function (i) { return frames[i].name; }, re);
	for (var i = 0; i < frames.length; i++)
		frames[i].rect.setAttribute("fill", m.hits[i] ? fg.searchcolor : frames[i].fill);
	searching = true;
	set_param("s", searchterm);
	searchbtn.classList.add("show");
	searchbtn.firstChild.nodeValue = "Reset Search";
	matchedtxt.classList.remove("hide");
	matchedtxt.firstChild.nodeValue = JFlameCore.matchedText(JFlameCore.pct(m.sum, total));
}
