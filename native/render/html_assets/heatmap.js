/* heatmap.js - the subsecond-offset heat map page (jflame heatmap): columns are
 * seconds, rows offsets within the second; click a start and an end cell to see
 * the flame graph of that range (flame.js), "Back to heat map" returns. */
(function () {
	"use strict";
	var J = JFlame, data = JSON.parse(document.getElementById("jflame-data").textContent);
	var model = new J.Model(data), rows = data.rows, cols = data.cols, nbins = rows * cols;
	var S = data.samples, ns = S.length / 3, i, b;
	var bins = new Int32Array(ns), nodes = new Int32Array(ns), counts = new Float64Array(ns);
	var cells = new Float64Array(nbins), max = 0, nonEmpty = 0;
	for (i = 0, b = 0; i < ns; i++) {
		b += S[3 * i];
		bins[i] = b;
		nodes[i] = S[3 * i + 1];
		counts[i] = S[3 * i + 2];
		cells[b] += counts[i];
	}
	for (b = 0; b < nbins; b++) {
		if (cells[b] > max)
			max = cells[b];
		if (cells[b] > 0)
			nonEmpty++;
	}

	var $ = function (id) { return document.getElementById(id); };
	var mapView = $("heatmap-view"), flameView = $("flame-view"), hmDetails = $("hm-details");
	var left = 70, top = 10, cw, ch, gridW, gridH, svg, selG;
	var pending = -1, selected = null, graph = null;

	function colFmt(t) {
		return t.toFixed(3) + " s";
	}
	/* a bin's time range, in seconds from the first second */
	function binStart(bin) {
		return Math.floor(bin / rows) + (bin % rows) / rows;
	}
	function binEnd(bin) {
		return Math.floor(bin / rows) + (bin % rows + 1) / rows;
	}
	/* heat colour: light orange for one sample to dark red for the busiest cell */
	function heat(n) {
		var t = max > 1 ? (n - 1) / (max - 1) : 1, c0 = [255, 236, 200], c1 = [252, 141, 60], c2 = [160, 16, 16], a, z, u;
		if (t < 0.5) {
			a = c0; z = c1; u = t / 0.5;
		} else {
			a = c1; z = c2; u = (t - 0.5) / 0.5;
		}
		return "rgb(" + Math.round(a[0] + (z[0] - a[0]) * u) + "," + Math.round(a[1] + (z[1] - a[1]) * u) + "," +
			Math.round(a[2] + (z[2] - a[2]) * u) + ")";
	}

	function drawMap() {
		var avail = Math.max(400, (document.documentElement.clientWidth || 1200) - left - 40);
		cw = Math.max(3, Math.min(24, Math.floor(avail / cols)));
		ch = Math.max(1, Math.min(12, Math.floor(500 / rows)));
		gridW = cols * cw;
		gridH = rows * ch;
		var W = left + gridW + 20, H = top + gridH + 24, out = [], c, r;
		out.push("<rect class=\"bg\" x=\"" + left + "\" y=\"" + top + "\" width=\"" + gridW + "\" height=\"" + gridH + "\"/>");
		for (b = 0; b < nbins; b++) {
			if (!(cells[b] > 0))
				continue;
			c = Math.floor(b / rows);
			r = b % rows;
			out.push("<rect class=\"cell\" data-col=\"" + c + "\" data-row=\"" + r + "\" data-n=\"" + cells[b] + "\" x=\"" +
				(left + c * cw) + "\" y=\"" + (top + (rows - 1 - r) * ch) + "\" width=\"" + cw + "\" height=\"" + ch +
				"\" fill=\"" + heat(cells[b]) + "\"/>");
		}
		/* axes: offsets (ms) up the side, seconds along the bottom */
		var rstep = Math.max(1, Math.ceil(16 / ch)), cstep = Math.max(1, Math.ceil(44 / cw));
		for (r = 0; r < rows; r += rstep)
			out.push("<text class=\"ax\" x=\"" + (left - 6) + "\" y=\"" + (top + (rows - r) * ch) + "\" text-anchor=\"end\">" +
				Math.round(r * 1000 / rows) + " ms</text>");
		for (c = 0; c < cols; c += cstep)
			out.push("<text class=\"ax\" x=\"" + (left + c * cw) + "\" y=\"" + (top + gridH + 16) + "\">" + c + " s</text>");
		out.push("<g id=\"sel\"></g>");
		var el = $("heatmap");
		el.innerHTML = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + W + "\" height=\"" + H + "\">" + out.join("") + "</svg>";
		svg = el.firstChild;
		selG = svg.querySelector("#sel");
		svg.addEventListener("mousemove", onMove);
		svg.addEventListener("mouseleave", function () {
			hmDetails.textContent = "\u00a0";
			J.tooltip(null);
			if (pending >= 0)
				drawSelection(pending, pending, "pending");
		});
		svg.addEventListener("click", onClick);
		drawScale();
		if (selected)
			drawSelection(selected[0], selected[1], "chosen");
	}

	function drawScale() {
		$("hm-scale").innerHTML = "<span>1</span><span class=\"bar\" style=\"background:linear-gradient(to right," +
			heat(1) + "," + heat(1 + (max - 1) / 2) + "," + heat(max) + ")\"></span><span>" + J.fmtInt(max) +
			" samples per cell</span>";
	}

	/* the bin under the mouse, or -1 */
	function binAt(e) {
		var rc = svg.getBoundingClientRect(), x = e.clientX - rc.left - left, y = e.clientY - rc.top - top;
		if (x < 0 || y < 0 || x >= gridW || y >= gridH)
			return -1;
		var c = Math.floor(x / cw), r = rows - 1 - Math.floor(y / ch);
		return c * rows + r;
	}

	function describe(bin) {
		var n = cells[bin];
		return "time " + colFmt(binStart(bin)) + " \u2013 " + colFmt(binEnd(bin)) + ", " + J.plural(n, "samples");
	}

	function onMove(e) {
		var bin = binAt(e);
		if (bin < 0) {
			hmDetails.textContent = "\u00a0";
			J.tooltip(null);
			return;
		}
		var text = describe(bin);
		if (pending >= 0) {
			var a = Math.min(pending, bin), z = Math.max(pending, bin);
			text += "; range " + colFmt(binStart(a)) + " \u2013 " + colFmt(binEnd(z)) + ", " + J.plural(rangeCount(a, z), "samples");
			drawSelection(a, z, "pending");
		}
		hmDetails.textContent = text;
		J.tooltip(text, e);
	}

	function onClick(e) {
		var bin = binAt(e);
		if (bin < 0)
			return;
		if (pending < 0) {
			pending = bin;
			drawSelection(bin, bin, "pending");
			$("hm-help").textContent = "Start: " + colFmt(binStart(bin)) + ". Now click the end cell (Escape cancels).";
			return;
		}
		var a = Math.min(pending, bin), z = Math.max(pending, bin);
		pending = -1;
		select(a, z);
	}

	/* Outlines the bins a..z in time order (column by column, rows upwards). */
	function drawSelection(a, z, cls) {
		var ca = Math.floor(a / rows), ra = a % rows, cz = Math.floor(z / rows), rz = z % rows, out = [];
		function box(c0, c1, r0, r1) {
			out.push("<rect class=\"" + cls + "\" x=\"" + (left + c0 * cw) + "\" y=\"" + (top + (rows - 1 - r1) * ch) +
				"\" width=\"" + ((c1 - c0 + 1) * cw) + "\" height=\"" + ((r1 - r0 + 1) * ch) + "\"/>");
		}
		if (ca === cz) {
			box(ca, ca, ra, rz);
		} else {
			box(ca, ca, ra, rows - 1);
			if (cz - ca > 1)
				box(ca + 1, cz - 1, 0, rows - 1);
			box(cz, cz, 0, rz);
		}
		selG.innerHTML = out.join("");
	}

	/* first sample index at or after bin */
	function lowerBound(bin) {
		var lo = 0, hi = ns;
		while (lo < hi) {
			var mid = (lo + hi) >> 1;
			if (bins[mid] < bin)
				lo = mid + 1;
			else
				hi = mid;
		}
		return lo;
	}

	function rangeCount(a, z) {
		var n = 0;
		for (var k = lowerBound(a), e = lowerBound(z + 1); k < e; k++)
			n += counts[k];
		return n;
	}

	/* Shows the flame graph of the samples in bins a..z (inclusive). */
	function select(a, z) {
		selected = [a, z];
		drawSelection(a, z, "chosen");
		$("hm-help").textContent = defaultHelp;
		var self = new Float64Array(model.size);
		for (var k = lowerBound(a), e = lowerBound(z + 1); k < e; k++)
			self[nodes[k]] += counts[k];
		var totals = model.totals(self), tree = new J.Tree(model, [totals]);
		$("range-title").textContent = "Range " + colFmt(binStart(a)) + " \u2013 " + colFmt(binEnd(z)) + ": " +
			J.plural(totals[0], "samples");
		mapView.hidden = true;
		flameView.hidden = false;
		$("search-input").value = "";
		$("matched").textContent = "";
		/* a fresh element: the last range's graph and its listeners go */
		var old = $("graph"), el = old.cloneNode(false);
		old.parentNode.replaceChild(el, old);
		graph = new J.Graph(el, tree, {
			details: $("details"),
			matched: $("matched"),
			onRender: function (g) { $("unzoom").disabled = g.zoomed === 0; }
		});
		J.legend($("legend"), tree, 0);
		graph.render();
		api.graph = graph;
		window.scrollTo(0, 0);
	}

	function back() {
		flameView.hidden = true;
		mapView.hidden = false;
		J.tooltip(null);
		$("graph").innerHTML = "";
		graph = null;
		api.graph = null;
	}

	var defaultHelp = $("hm-help").textContent;
	$("back").addEventListener("click", back);
	$("unzoom").addEventListener("click", function () { if (graph) graph.unzoom(); });
	J.searchBox($("search-input"), $("search-btn"), $("search-clear"), $("ic"), function (re) {
		if (graph)
			graph.search(re);
	});
	document.addEventListener("keydown", function (e) {
		if (e.key !== "Escape")
			return;
		if (!flameView.hidden && graph && graph.zoomed)
			graph.unzoom();
		else if (pending >= 0) {
			pending = -1;
			selG.innerHTML = "";
			if (selected)
				drawSelection(selected[0], selected[1], "chosen");
			$("hm-help").textContent = defaultHelp;
		}
	});
	var resizeTimer = 0;
	window.addEventListener("resize", function () {
		clearTimeout(resizeTimer);
		resizeTimer = setTimeout(function () {
			if (!mapView.hidden)
				drawMap();
			else if (graph)
				graph.render();
		}, 150);
	});

	$("hm-summary").textContent = cols + " columns of one second (from " + data.t0 + " s on the input's clock), " +
		rows + " rows of " + +(1000 / rows).toFixed(3) + " ms; " + J.fmtInt(nonEmpty) + " cells with samples, the busiest " +
		J.plural(max, "samples") + (data.idle ? "; " + J.plural(data.idle, "samples") + " of the idle task left out" : "") + ".";
	drawMap();

	/* for scripted use and tests */
	var api = window.jflame = {
		data: data, cells: cells, rows: rows, cols: cols, graph: null,
		bin: function (col, row) { return col * rows + row; },
		select: function (a, z) { select(Math.min(a, z), Math.max(a, z)); },
		rangeCount: rangeCount, back: back
	};
})();
