/* flame_core.js - the one zoom and search of jflame's flame graphs, shared by
 * the SVG's viewer (flamegraph.js) and the HTML views' graphs (flame.js). */
"use strict";
var JFlameCore = (function () {
	/* A graph is a tree of frames: parent[i] (-1 at the root, frame 0),
	 * kids(i) a frame's children in drawing order and, for a graph whose
	 * frames were laid out already (the SVG, which leaves out frames too
	 * narrow to draw but keeps their room), start[i]: a frame's left edge in
	 * the unit of its widths. */

	/* The zoom on frame z: z spans full pixels from x0, its ancestors span
	 * them too, greyed (cls "anc"), its descendants (width v[i] > 0) are
	 * stretched in proportion, side by side or at their start; a frame
	 * narrower than minw pixels is left out with all above it. Calls
	 * draw(i, x, w, cls) for each frame to draw; the others are not drawn. */
	function layout(g, v, z, x0, full, minw, draw) {
		var parent = g.parent, start = g.start;
		for (var a = parent[z]; z && a >= 0; a = parent[a])
			draw(a, x0, full, "anc");
		var scale = v[z] > 0 ? full / v[z] : 0;
		if (!(scale > 0))
			return;
		function subtree(i, x) {
			var w = v[i] * scale;
			if (w < minw)
				return;
			draw(i, x, w, "");
			var k = g.kids(i);
			for (var j = 0; j < k.length; j++) {
				if (v[k[j]] > 0) {
					subtree(k[j], start ? x0 + (start[k[j]] - start[z]) * scale : x);
					x += v[k[j]] * scale;
				}
			}
		}
		subtree(z, x0);
	}

	/* The search term as a RegExp (case-insensitive with ignorecase), or
	 * null when it is not a regular expression. */
	function compile(term, ignorecase) {
		try {
			return new RegExp(term, ignorecase ? "i" : "");
		} catch (e) {
			return null;
		}
	}

	/* The frames (of v[i] > 0, from the root up) whose name(i) matches re:
	 * hits[i] is 1 for a match; sum is v over the matches not under another
	 * match, so that a match inside a match counts once. */
	function match(g, v, name, re) {
		var hits = new Uint8Array(g.parent.length), sum = 0, stack = [[0, false]];
		while (stack.length) {
			var top = stack.pop(), i = top[0], under = top[1], hit = re.test(name(i));
			if (re.global)
				re.lastIndex = 0;
			if (hit) {
				hits[i] = 1;
				if (!under)
					sum += v[i];
			}
			var k = g.kids(i);
			for (var j = 0; j < k.length; j++)
				if (v[k[j]] > 0)
					stack.push([k[j], under || hit]);
		}
		return { hits: hits, sum: sum };
	}

	/* The matches' share of all samples, in percent. */
	function pct(sum, total) {
		return total > 0 ? 100 * sum / total : 0;
	}

	/* "Matched: 12.3%" under the graph. */
	function matchedText(p) {
		return "Matched: " + (p === 100 ? "100" : p.toFixed(1)) + "%";
	}

	/* The search's keys: Ctrl-F (Cmd-F) or F3 call find(), Ctrl-I
	 * ignorecase(), Escape escape(); a handler left out, or find() returning
	 * false, leaves the key to the browser. */
	function keys(h) {
		document.addEventListener("keydown", function (e) {
			var ctrl = e.ctrlKey || e.metaKey, k = e.key ? e.key.toLowerCase() : "";
			if (h.find && (e.key === "F3" || e.keyCode === 114 || (ctrl && (k === "f" || e.keyCode === 70)))) {
				if (h.find() !== false)
					e.preventDefault();
			} else if (h.ignorecase && ctrl && (k === "i" || e.keyCode === 73)) {
				e.preventDefault();
				h.ignorecase();
			} else if (h.escape && (e.key === "Escape" || e.keyCode === 27)) {
				h.escape();
			}
		}, false);
	}

	return { layout: layout, compile: compile, match: match, pct: pct, matchedText: matchedText, keys: keys };
})();
