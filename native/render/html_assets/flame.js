/* flame.js - jflame's flame graph component for the HTML views (heat map,
 * compare): the page's call tree, drawn as SVG; click to zoom, regex search
 * (both flame_core.js's, as in the SVG), tooltips. Shared by heatmap.js and
 * compare.js; needs flame_core.js before it. */
"use strict";
var JFlame = (function () {
	var SHADES = 8, MATCH_COLOR = "rgb(230,0,230)", FONT_WIDTH = 0.59;

	function fmtInt(n) {
		return Math.round(n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
	}

	function fmtPct(a, b) {
		return b > 0 ? (100 * a / b).toFixed(2) : "0.00";
	}

	function plural(n, what) {
		return fmtInt(n) + " " + (n === 1 && what === "samples" ? "sample" : what);
	}

	function esc(s) {
		return String(s).replace(/[&<>"']/g, function (c) {
			return { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" }[c];
		});
	}

	/* The page's call tree (call_tree_write_json): nodes 1, 2, ... as
	 * (parent, frame) pairs, the root "all" is node 0; a parent's number is
	 * below its children's. */
	function Model(data) {
		var n = data.nodes.length / 2 + 1;
		this.names = data.names;
		this.frames = data.frames;
		this.palette = data.palette;
		this.legend = data.legend;
		this.rootColor = data.rootColor;
		this.size = n;
		this.parent = new Int32Array(n);
		this.frame = new Int32Array(n);
		this.parent[0] = -1;
		this.frame[0] = -1;
		for (var i = 1; i < n; i++) {
			this.parent[i] = data.nodes[2 * i - 2];
			this.frame[i] = data.nodes[2 * i - 1];
		}
	}
	Model.prototype.name = function (i) {
		return i === 0 ? "all" : this.names[this.frames[2 * this.frame[i]]];
	};
	Model.prototype.color = function (i) {
		return i === 0 ? this.rootColor : this.palette[this.frames[2 * this.frame[i] + 1]];
	};
	Model.prototype.hue = function (i) {
		return i === 0 ? this.legend.length - 1 : Math.floor(this.frames[2 * this.frame[i] + 1] / SHADES);
	};
	/* Totals (a node and all below it) from per-node self counts. */
	Model.prototype.totals = function (self) {
		var t = Float64Array.from(self);
		for (var i = this.size - 1; i > 0; i--)
			t[this.parent[i]] += t[i];
		return t;
	};

	/* The nodes with samples on some side (totals: one Float64Array per side),
	 * each node's children sorted by name: the same frames in the same order
	 * on every side. */
	function Tree(model, totals) {
		var n = model.size, kids = new Array(n), depth = new Int32Array(n), i, s;
		this.model = model;
		this.v = totals;
		this.kids = kids;
		this.depth = depth;
		this.maxDepth = totals.map(function () { return 0; });
		for (i = 1; i < n; i++) {
			var used = false;
			for (s = 0; s < totals.length; s++) {
				if (totals[s][i] > 0) {
					used = true;
					if (depth[model.parent[i]] + 1 > this.maxDepth[s])
						this.maxDepth[s] = depth[model.parent[i]] + 1;
				}
			}
			if (!used)
				continue;
			var p = model.parent[i];
			depth[i] = depth[p] + 1;
			(kids[p] || (kids[p] = [])).push(i);
		}
		var byName = function (a, b) {
			var x = model.name(a), y = model.name(b);
			return x < y ? -1 : x > y ? 1 : a - b;
		};
		for (i = 0; i < n; i++)
			if (kids[i] && kids[i].length > 1)
				kids[i].sort(byName);
	}
	Tree.prototype.children = function (i) {
		return this.kids[i] || [];
	};
	/* The tree as flame_core.js walks it. */
	Tree.prototype.shape = function () {
		var t = this;
		return { parent: this.model.parent, kids: function (i) { return t.children(i); } };
	};

	var tip = null;
	function tooltip(text, e) {
		if (!tip) {
			tip = document.createElement("div");
			tip.className = "jf-tip";
			document.body.appendChild(tip);
		}
		if (!text) {
			tip.style.display = "none";
			return;
		}
		tip.textContent = text;
		tip.style.display = "block";
		var x = e.clientX + 14, y = e.clientY + 16, w = tip.offsetWidth, h = tip.offsetHeight;
		if (x + w > window.innerWidth - 4)
			x = Math.max(4, e.clientX - w - 10);
		if (y + h > window.innerHeight - 4)
			y = Math.max(4, e.clientY - h - 10);
		tip.style.left = x + "px";
		tip.style.top = y + "px";
	}

	/* A flame graph of one side of a tree in el (an element of its own).
	 * opts: side (index into tree.v), width() in pixels, color(i), describe(i),
	 * extraClass(i), onHover(i or -1), onClick(i), onRender(graph), details and
	 * matched (elements for the hover line and "Matched: x%"), countName,
	 * maxDepth (rows to draw; default: this side's deepest frame). */
	function Graph(el, tree, opts) {
		var g = this;
		this.el = el;
		this.tree = tree;
		this.o = opts || {};
		this.side = this.o.side || 0;
		this.fh = 17;
		this.fontSize = 12;
		this.zoomed = 0;
		this.matched = null;
		this.matchedPct = null;
		this.hover = -1;
		this.hl = -1;
		this.els = {};
		var model = tree.model;
		this.o.color = this.o.color || function (i) { return model.color(i); };
		this.o.describe = this.o.describe || function (i) {
			var v = tree.v[g.side];
			return model.name(i) + " (" + plural(v[i], g.o.countName || "samples") + ", " + fmtPct(v[i], v[0]) + "%)";
		};
		el.classList.add("jf-graph");
		el.addEventListener("mouseover", function (e) {
			var f = e.target.closest && e.target.closest("g.f");
			g.setHover(f ? +f.getAttribute("data-i") : -1, e);
		});
		el.addEventListener("mousemove", function (e) {
			if (g.hover >= 0)
				tooltip(g.o.describe(g.hover), e);
		});
		el.addEventListener("mouseleave", function (e) {
			g.setHover(-1, e);
		});
		el.addEventListener("click", function (e) {
			var f = e.target.closest && e.target.closest("g.f");
			if (!f)
				return;
			var i = +f.getAttribute("data-i");
			if (g.o.onClick)
				g.o.onClick(i);
			else
				g.zoom(i);
		});
	}

	Graph.prototype.value = function (i) {
		return this.tree.v[this.side][i];
	};

	Graph.prototype.setHover = function (i, e) {
		if (i === this.hover)
			return;
		this.hover = i;
		if (this.o.details)
			this.o.details.textContent = i >= 0 ? this.o.describe(i) : "\u00a0";
		tooltip(i >= 0 ? this.o.describe(i) : null, e);
		if (this.o.onHover)
			this.o.onHover(i);
	};

	/* Draws the graph: the zoomed frame full width, its ancestors greyed
	 * above the whole width, frames narrower than 0.1 px left out (their
	 * samples are in their parents). */
	Graph.prototype.render = function () {
		var tree = this.tree, model = tree.model, v = tree.v[this.side], o = this.o;
		var W = Math.max(200, Math.floor(o.width ? o.width() : this.el.clientWidth || 1200));
		if (this.el.clientWidth > 0 && this.el.clientWidth < W)
			W = Math.max(200, this.el.clientWidth); /* inside the box's scroll bar */
		var fh = this.fh, pad = 10, maxDepth = o.maxDepth !== undefined ? o.maxDepth : tree.maxDepth[this.side];
		var H = (maxDepth + 1) * fh + 2 * pad, cw = this.fontSize * FONT_WIDTH;
		var z = this.zoomed, out = [], self = this, matched = this.matched;
		if (z && !(v[z] > 0))
			z = this.zoomed = 0;

		function frame(i, x, w, cls) {
			var d = tree.depth[i], y = pad + (maxDepth - d) * fh, name = model.name(i);
			var fill = matched && matched[i] ? MATCH_COLOR : o.color(i), label = "";
			var extra = o.extraClass ? o.extraClass(i) : "";
			if (w >= 2 * cw + 3) {
				var chars = Math.floor((w - 3) / cw);
				label = name.length <= chars ? name : name.substring(0, Math.max(0, chars - 2)) + "..";
			}
			out.push("<g class=\"f" + (cls ? " " + cls : "") + (extra ? " " + extra : "") + "\" data-i=\"" + i +
				"\" data-name=\"" + esc(name) + "\"><rect x=\"" + x.toFixed(2) + "\" y=\"" + y +
				"\" width=\"" + Math.max(0, w - 0.5).toFixed(2) + "\" height=\"" + (fh - 1) +
				"\" rx=\"2\" fill=\"" + fill + "\"/>" + (label ? "<text x=\"" + (x + 3).toFixed(2) + "\" y=\"" +
				(y + fh - 5) + "\">" + esc(label) + "</text>" : "") + "</g>");
		}
		JFlameCore.layout(tree.shape(), v, z, pad, W - 2 * pad, 0.1, frame);
		/* deep stacks make a tall graph whose root is at the bottom: the
		 * graph scrolls in its box, which starts at the root and keeps its
		 * distance from the bottom when the graph is drawn again (zoom, search) */
		var fromBottom = this.svg ? this.el.scrollHeight - this.el.scrollTop : 0;
		var top = this.el.getBoundingClientRect().top + (window.scrollY || 0);
		if (window.innerHeight - top > 300) /* the box ends at the window's bottom */
			this.el.style.maxHeight = Math.floor(window.innerHeight - top - 8) + "px";
		this.el.innerHTML = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + W + "\" height=\"" + H +
			"\" style=\"font-size:" + this.fontSize + "px\">" + out.join("") + "</svg>";
		this.el.scrollTop = fromBottom ? this.el.scrollHeight - fromBottom : this.el.scrollHeight;
		this.svg = this.el.firstChild;
		tooltip(null);
		this.els = {};
		var gs = this.svg.querySelectorAll("g.f");
		for (var n = 0; n < gs.length; n++)
			this.els[gs[n].getAttribute("data-i")] = gs[n];
		this.hover = -1;
		if (this.hl >= 0)
			this.highlight(this.hl);
		if (this.o.onRender)
			this.o.onRender(this);
	};

	/* Outlines frame i (a frame's twin on the other side); -1: none. */
	Graph.prototype.highlight = function (i) {
		var old = this.svg && this.svg.querySelector("g.f.hl");
		if (old)
			old.classList.remove("hl");
		this.hl = i;
		if (i >= 0 && this.els[i])
			this.els[i].classList.add("hl");
	};

	Graph.prototype.zoom = function (i) {
		this.zoomed = i;
		this.render();
	};

	Graph.prototype.unzoom = function () {
		this.zoomed = 0;
		this.render();
	};

	/* The deepest of i and its ancestors with samples on this side. */
	Graph.prototype.nearest = function (i) {
		var p = this.tree.model.parent;
		while (i > 0 && !(this.value(i) > 0))
			i = p[i];
		return i;
	};

	/* Paints the frames whose name matches re (a RegExp; null clears) and
	 * returns the share of all samples under them ("Matched: x%"). */
	Graph.prototype.search = function (re) {
		var tree = this.tree, model = tree.model, v = tree.v[this.side];
		if (!re) {
			this.matched = null;
			this.matchedPct = null;
		} else {
			var m = JFlameCore.match(tree.shape(), v, function (i) { return model.name(i); }, re);
			this.matched = m.hits;
			this.matchedPct = JFlameCore.pct(m.sum, v[0]);
		}
		if (this.o.matched)
			this.o.matched.textContent = this.matchedPct === null ? "" : JFlameCore.matchedText(this.matchedPct);
		this.render();
		return this.matchedPct;
	};

	/* The legend of the java palette's hues present in the graph. */
	function legend(el, tree, side) {
		var model = tree.model, v = tree.v[side], seen = {}, html = [];
		for (var i = 1; i < model.size; i++)
			if (v[i] > 0)
				seen[model.hue(i)] = true;
		model.legend.forEach(function (l, h) {
			if (seen[h])
				html.push("<span class=\"sw\" style=\"background:" + l[1] + "\"></span>" + esc(l[0]));
		});
		el.innerHTML = html.join(" ");
	}

	/* A search box: regex (case-insensitive when ic is checked); calls
	 * apply(RegExp or null), which returns nothing. */
	function searchBox(input, button, clear, ic, apply) {
		function run() {
			var s = input.value;
			if (!s) {
				apply(null);
				return;
			}
			var re = JFlameCore.compile(s, ic && ic.checked);
			if (!re) {
				input.setCustomValidity("not a regular expression");
				input.reportValidity();
				return;
			}
			input.setCustomValidity("");
			apply(re);
		}
		button.addEventListener("click", run);
		input.addEventListener("keydown", function (e) {
			if (e.key === "Enter")
				run();
		});
		if (ic)
			ic.addEventListener("change", function () { if (input.value) run(); });
		clear.addEventListener("click", function () {
			input.value = "";
			apply(null);
		});
		JFlameCore.keys({
			find: function () {
				if (input.offsetParent === null)
					return false;
				input.focus();
				input.select();
			}
		});
		return run;
	}

	return { Model: Model, Tree: Tree, Graph: Graph, legend: legend, searchBox: searchBox, fmtInt: fmtInt,
		 fmtPct: fmtPct, plural: plural, esc: esc, tooltip: tooltip, SHADES: SHADES };
})();
