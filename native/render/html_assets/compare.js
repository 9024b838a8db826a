/* compare.js - the compare view (jflame diff -o x.html): BEFORE and AFTER flame
 * graphs side by side (flame.js), the same frames in the same order on both,
 * coloured by the change of their share; hover shows a frame's twin, click
 * zooms both sides. */
(function () {
	"use strict";
	var J = JFlame, data = JSON.parse(document.getElementById("jflame-data").textContent);
	var model = new J.Model(data), n = model.size, i;
	var selfB = new Float64Array(n), selfA = new Float64Array(n), C = data.counts;
	for (i = 0; i < C.length; i += 3) {
		selfB[C[i]] += C[i + 1];
		selfA[C[i]] += C[i + 2];
	}
	var totB = model.totals(selfB), totA = model.totals(selfA), TB = totB[0], TA = totA[0];
	var tree = new J.Tree(model, [totB, totA]);
	var $ = function (id) { return document.getElementById(id); };

	/* the change of a frame's share of all samples, in percentage points */
	function delta(k) {
		return 100 * ((TA > 0 ? totA[k] / TA : 0) - (TB > 0 ? totB[k] / TB : 0));
	}
	var maxDelta = 0;
	for (i = 1; i < n; i++)
		if (totA[i] > 0 || totB[i] > 0)
			maxDelta = Math.max(maxDelta, Math.abs(delta(i)));

	/* white for no change to full red (grew) or blue (shrank) for the largest
	 * change, as jflame's differential SVG */
	function color(k) {
		var v = maxDelta > 0 && k > 0 ? delta(k) / maxDelta : 0, c;
		if (v > 0) {
			c = Math.round(210 * (1 - Math.min(1, v)));
			return "rgb(255," + c + "," + c + ")";
		}
		if (v < 0) {
			c = Math.round(210 * (1 + Math.max(-1, v)));
			return "rgb(" + c + "," + c + ",255)";
		}
		return "rgb(255,255,255)";
	}

	function signed(d) {
		var s = d.toFixed(2);
		if (s === "-0.00")
			s = "0.00";
		return (d > 0 && s !== "0.00" ? "+" : "") + s + "%";
	}

	function describe(k) {
		var s = model.name(k) + ": before " + J.plural(totB[k], "samples") + " (" + J.fmtPct(totB[k], TB) +
			"%), after " + J.plural(totA[k], "samples") + " (" + J.fmtPct(totA[k], TA) + "%), change " + signed(delta(k));
		if (totB[k] > 0 && totA[k] > 0 && totB[k] !== totA[k])
			s += " of all samples; samples " + signed(100 * (totA[k] - totB[k]) / totB[k]);
		else if (k > 0)
			s += " of all samples";
		if (!(totB[k] > 0))
			s += " \u2014 new: absent in BEFORE";
		else if (!(totA[k] > 0))
			s += " \u2014 gone: absent in AFTER";
		return s;
	}

	var graphs = [], details = $("details");
	function width() {
		var w = document.documentElement.clientWidth || 1400;
		return Math.floor((w - 48) / 2);
	}
	function zoomBoth(k) {
		graphs.forEach(function (g) { g.zoom(g.nearest(k)); });
		$("unzoom").disabled = k === 0;
	}
	[["graph-before", 0], ["graph-after", 1]].forEach(function (s) {
		var side = s[1], other = 1 - side;
		var g = new J.Graph($(s[0]), tree, {
			side: side,
			width: width,
			maxDepth: Math.max(tree.maxDepth[0], tree.maxDepth[1]),
			color: color,
			describe: describe,
			details: details,
			matched: $(side ? "matched-after" : "matched-before"),
			extraClass: function (k) {
				return k > 0 && !(tree.v[other][k] > 0) ? "only" : "";
			},
			onHover: function (k) {
				graphs[other].highlight(k);
				graphs[side].highlight(k);
			},
			onClick: zoomBoth
		});
		graphs.push(g);
	});
	/* both sides scroll together (the same rows hold the same frames) */
	graphs.forEach(function (g, side) {
		g.el.addEventListener("scroll", function () {
			var o = graphs[1 - side].el;
			if (Math.abs(o.scrollTop - g.el.scrollTop) > 1)
				o.scrollTop = g.el.scrollTop;
		});
	});
	$("name-before").textContent = data.before.name;
	$("name-after").textContent = data.after.name;
	$("total-before").textContent = J.plural(TB, "samples");
	$("total-after").textContent = J.plural(TA, "samples");
	$("unzoom").addEventListener("click", function () { zoomBoth(0); });
	J.searchBox($("search-input"), $("search-btn"), $("search-clear"), $("ic"), function (re) {
		graphs.forEach(function (g) { g.search(re); });
	});
	document.addEventListener("keydown", function (e) {
		if (e.key === "Escape")
			zoomBoth(0);
	});
	var resizeTimer = 0;
	window.addEventListener("resize", function () {
		clearTimeout(resizeTimer);
		resizeTimer = setTimeout(function () { graphs.forEach(function (g) { g.render(); }); }, 150);
	});
	graphs.forEach(function (g) { g.render(); });
	$("unzoom").disabled = true;

	/* for scripted use and tests */
	window.jflame = {
		data: data, model: model, tree: tree, before: graphs[0], after: graphs[1], delta: delta,
		zoom: zoomBoth, totals: { before: totB, after: totA }
	};
})();
