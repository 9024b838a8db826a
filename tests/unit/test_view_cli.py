# test_view_cli.py - `jflame diff` and `jflame heatmap` as users run them: the
# differential SVG's numbers and colours, difffolded.pl's text, the pages
# written, and bad input (one line, nonzero exit, no output file).
import gzip
import json
import os
import re
import unittest
import xml.etree.ElementTree as ET

import cli_test
from cli_test import DATA, CliCase, run


def svg_frames(svg_bytes):
    return cli_test.svg_frames(svg_bytes)[1]


BEFORE = """java;main;App.run;App.handle;StringBuilder.append 50
java;main;App.run;App.handle;App.render 30
java;main;App.run;App.idle 20
java;GC Thread#0;G1ParTask::work 10
java;main;App.run;App.handle;App.render 5
java;main;App.run;Cache.get;0x7f00aa 4
"""
AFTER = """java;main;App.run;App.handle;StringBuilder.append 20
java;main;App.run;App.handle;String.format;Formatter.format 120
java;main;App.run;App.handle;App.render 35
java;GC Thread#0;G1ParTask::work 10
java;main;App.run;Cache.get;0x7f00bb 4
"""


def slurp(path, mode="r"):
    with open(path, mode) as f:
        return f.read()


def folded(text):
    out = {}
    for line in text.splitlines():
        stack, count = line.rsplit(" ", 1)
        out[stack] = out.get(stack, 0) + int(count)
    return out


def difffolded(before, after, normalize=False, strip_hex=False):
    """What difffolded.pl writes, as a dict stack -> (before, after)."""
    b, a = folded(before), folded(after)
    if strip_hex:
        sub = lambda d: _merge((re.sub(r"0x[0-9a-fA-F]+", "0x...", k), v) for k, v in d.items())
        b, a = sub(b), sub(a)
    t1, t2 = sum(b.values()), sum(a.values())
    out = {}
    for s in set(b) | set(a):
        c1, c2 = b.get(s, 0), a.get(s, 0)
        if normalize and t1 != t2:
            c1 = int(c1 * t2 / t1)
        out[s] = (c1, c2)
    return out


def _merge(pairs):
    d = {}
    for k, v in pairs:
        d[k] = d.get(k, 0) + v
    return d


def node_shares(diff):
    """Per frame path: (before, after) totals, from 'stack -> (before, after)'."""
    nodes = {}
    for stack, (b, a) in diff.items():
        parts = stack.split(";")
        for i in range(1, len(parts) + 1):
            k = tuple(parts[:i])
            ob, oa = nodes.get(k, (0, 0))
            nodes[k] = (ob + b, oa + a)
    return nodes


class Case(CliCase):
    prefix = "jflame-view-"

    def setUp(self):
        super().setUp()
        self.before = self.write("before.folded", BEFORE)
        self.after = self.write("after.folded", AFTER)

    def write(self, name, text):
        with open(self.p(name), "w") as f:
            f.write(text)
        return self.p(name)

    def no_files_but(self, *names):
        self.assertEqual(sorted(os.listdir(self.tmp)), sorted(names))


class DiffCli(Case):
    def read_folded_out(self, path):
        out = {}
        for line in slurp(path).splitlines():
            stack, b, a = line.rsplit(" ", 2)
            self.assertNotIn(stack, out)
            out[stack] = (int(b), int(a))
        return out

    def test_folded_output_is_difffolded(self):
        for opts, norm, strip in (([], False, False), (["-n"], True, False), (["--normalize", "-s"], True, True),
                                  (["--strip-hex"], False, True)):
            out = self.p("d.folded")
            r = run(["diff"] + opts + [self.before, self.after, "-o", out])
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(self.read_folded_out(out), difffolded(BEFORE, AFTER, norm, strip), opts)
            lines = slurp(out).splitlines()
            self.assertEqual(lines, sorted(lines, key=lambda l: l.rsplit(" ", 2)[0].encode()))
        # stacks only in BEFORE stay, with AFTER 0; only in AFTER get BEFORE 0
        d = self.read_folded_out(out)
        self.assertEqual(d["java;main;App.run;App.idle"], (20, 0))
        self.assertEqual(d["java;main;App.run;App.handle;String.format;Formatter.format"], (0, 120))

    def test_inputs_gzip_and_stdin(self):
        gz = self.p("after.folded.gz")
        with gzip.open(gz, "wb") as g:
            g.write(AFTER.encode())
        a = run(["diff", self.before, gz, "-o", self.p("a.folded")])
        b = run(["diff", "-", self.after, "-o", self.p("b.folded")], input_bytes=BEFORE.encode())
        self.assertEqual(a.returncode, 0, a.stderr)
        self.assertEqual(b.returncode, 0, b.stderr)
        self.assertEqual(slurp(self.p("a.folded")), slurp(self.p("b.folded")))

    def check_svg(self, svg, diff):
        fr = svg_frames(svg)
        nodes = node_shares(diff)
        tb = sum(b for b, a in diff.values())
        ta = sum(a for b, a in diff.values())
        # which node a frame is: its path by y (parents drawn before children)
        by_y = {}
        seen = 0
        for f in fr:
            if f["name"] == "all":
                self.assertEqual(f["count"], ta)
                continue
            seen += 1
            cands = [k for k, (b, a) in nodes.items() if k[-1] == f["name"] and a == f["count"]]
            self.assertTrue(cands, f)
            want = {round(100.0 * (nodes[k][1] / ta - nodes[k][0] / tb), 2) for k in cands}
            got = float(f["delta"])
            self.assertTrue(any(abs(got - w) <= 0.011 for w in want), (f, want))
            r, g, b = map(int, re.findall(r"\d+", f["fill"]))
            if got > 0.005:
                self.assertTrue(r == 255 and g == b and g < 255, f)  # grew: red
            elif got < -0.005:
                self.assertTrue(b == 255 and r == g and r < 255, f)  # shrank: blue
            else:
                self.assertEqual((r, g, b), (255, 255, 255), f)
        self.assertGreater(seen, 5)
        return fr

    def test_svg_numbers_and_colours(self):
        r = run(["diff", self.before, self.after])  # no -o: the SVG on standard output
        self.assertEqual(r.returncode, 0, r.stderr)
        fr = self.check_svg(r.stdout, difffolded(BEFORE, AFTER))
        byname = {f["name"]: f for f in fr}
        # the user story: String.format() in red, its share from 0 to 120/189
        self.assertEqual(byname["String.format"]["delta"], "+%.2f" % (100 * 120 / 189))
        self.assertEqual(byname["String.format"]["fill"], "rgb(255,0,0)")  # the largest change
        self.assertTrue(byname["StringBuilder.append"]["delta"].startswith("-"))
        # stacks only in BEFORE have no width: App.idle is not drawn
        self.assertNotIn("App.idle", byname)
        # -n: BEFORE scaled to AFTER's total; the titles' changes follow the scaled counts
        n = run(["diff", "-n", self.before, self.after, "-o", self.p("n.svg")])
        self.assertEqual(n.returncode, 0, n.stderr)
        self.check_svg(slurp(self.p("n.svg"), "rb"), difffolded(BEFORE, AFTER, normalize=True))
        self.assertIn(b"(BEFORE normalized to AFTER&apos;s total)", slurp(self.p("n.svg"), "rb"))
        # --negate swaps the colours
        g = run(["diff", "--negate", "--title", "T", self.before, self.after])
        fneg = {f["name"]: f for f in svg_frames(g.stdout)}
        self.assertTrue(fneg["String.format"]["fill"].startswith("rgb(0,0,255"))
        self.assertIn(b">T</text>", g.stdout)

    def test_several_outputs_and_html(self):
        r = run(["diff", self.before, self.after, "-o", self.p("c.html"), "-o", self.p("d.svg"), "-o", self.p("e.folded")])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.no_files_but("before.folded", "after.folded", "c.html", "d.svg", "e.folded")
        page = slurp(self.p("c.html"))
        m = re.search(r'<script type="application/json" id="jflame-data">(.*?)</script>', page, re.S)
        self.assertTrue(m)
        data = json.loads(m.group(1))
        self.assertEqual(data["before"], {"name": self.before, "total": 119})
        self.assertEqual(data["after"], {"name": self.after, "total": 189})
        # the counts per node add up to each side's total, raw (not normalized)
        self.assertEqual(sum(data["counts"][1::3]), 119)
        self.assertEqual(sum(data["counts"][2::3]), 189)
        self.assertNotIn("<script src", page)
        self.assertIn("<title>Compare: %s vs %s</title>" % (self.before, self.after), page)
        self.assertIn("BEFORE %s: 119 samples; AFTER %s: 189 samples</p>" % (self.before, self.after), page)
        self.assertNotIn("http://", page.replace("http://www.w3.org/2000/svg", ""))
        ET.fromstring(slurp(self.p("d.svg"), "rb"))

    def test_bad_input(self):
        missing = self.p("missing.folded")
        out = self.p("never.svg")
        self.one_line_error(run(["diff", missing, self.after, "-o", out]), "failed to open", "missing.folded")
        self.one_line_error(run(["diff", self.before, missing, "-o", out]), "missing.folded")
        two = self.write("two.folded", "a;b 3 4\na;c 1 2\n")
        self.one_line_error(run(["diff", two, self.after, "-o", out]), "two.folded", "differential")
        empty = self.write("empty.folded", "")
        self.one_line_error(run(["diff", self.before, empty, "-o", out]), "no stacks", "empty.folded")
        junk = self.write("junk.folded", "not folded\nat all\n")
        self.one_line_error(run(["diff", junk, self.after, "-o", out]), "no stacks", "junk.folded")
        zero = self.write("zero.folded", "a;b 0\n")
        self.one_line_error(run(["diff", zero, self.after, "-o", out]), "no samples")
        self.one_line_error(run(["diff", self.before]), "two folded profiles", code=2)
        self.one_line_error(run(["diff", self.before, self.after, self.after]), "two folded profiles", code=2)
        self.one_line_error(run(["diff", self.before, self.after, "-o", self.p("x.png")]), "x.png", code=2)
        self.one_line_error(run(["diff", "-", "-"]), "standard input", code=2)
        self.one_line_error(run(["diff", "--width", "5", self.before, self.after]), "--width", code=2)
        self.one_line_error(run(["diff", "--bogus", self.before, self.after]), "unknown option", code=2)
        for o in ("never.svg", "never.html"):
            self.one_line_error(run(["diff", self.before, empty, "-o", self.p(o)]), "no stacks")
        self.no_files_but("before.folded", "after.folded", "two.folded", "empty.folded", "junk.folded", "zero.folded")
        h = run(["diff", "--help"])
        self.assertEqual(h.returncode, 0)
        self.assertIn(b"jflame diff before.folded after.folded -o diff.svg", h.stdout)


class HeatmapCli(Case):
    def page_data(self, path):
        page = slurp(path)
        m = re.search(r'<script type="application/json" id="jflame-data">(.*?)</script>', page, re.S)
        self.assertTrue(m)
        self.assertNotIn("<script src", page)
        return json.loads(m.group(1))

    def test_file_gzip_stdin(self):
        src = os.path.join(DATA, "heatmap", "boundaries.stacks")
        r = run(["heatmap", src, "-o", self.p("a.html")])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"1 samples without a timestamp", r.stderr)
        d = self.page_data(self.p("a.html"))
        self.assertEqual((d["rows"], d["cols"], d["t0"], d["total"], d["idle"]), (50, 3, 99, 7, 2))
        self.assertEqual(sum(d["samples"][2::3]), 7)
        gz = self.p("b.stacks.gz")
        with open(src, "rb") as f, gzip.open(gz, "wb") as g:
            g.write(f.read())
        r = run(["heatmap", "--rows", "1000", gz, "-o", self.p("b.html")])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.page_data(self.p("b.html"))["rows"], 1000)
        with open(src, "rb") as f:
            s = run(["heatmap", "--title", "Mine", "--include-idle"], input_bytes=f.read())
        self.assertEqual(s.returncode, 0, s.stderr)
        self.assertIn(b"<title>Mine</title>", s.stdout)
        self.assertIn(b'"total":9,', s.stdout)

    def test_jfr_read_through_the_format_table(self):
        """A JFR recording (async-profiler's, tests/data/jfr) by its name and, renamed,
        by its first bytes: every CPU sample at its time, as many as its folded stacks count."""
        src = os.path.join(DATA, "jfr", "ap-cpu-jdk17.jfr")
        with open(os.path.join(DATA, "jfr", "ap-cpu-jdk17.cpu.collapsed")) as f:
            want = sum(int(l.rsplit(" ", 1)[1]) for l in f if l.strip())
        renamed = self.p("recording.bin")
        with open(src, "rb") as f, open(renamed, "wb") as g:
            g.write(f.read())
        for path in (src, renamed):
            r = run(["heatmap", "--include-idle", path, "-o", self.p("j.html")])
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(self.page_data(self.p("j.html"))["total"], want, path)

    def test_perf_script_recorded(self):
        r = run(["heatmap", os.path.join(DATA, "collapse", "sys.perf"), "-o", self.p("s.html")])
        self.assertEqual(r.returncode, 0, r.stderr)
        d = self.page_data(self.p("s.html"))
        self.assertEqual((d["total"], d["idle"]), (77, 3))

    def test_bad_input(self):
        out = self.p("never.html")
        self.one_line_error(run(["heatmap", self.p("missing.stacks"), "-o", out]), "failed to open", "missing.stacks")
        empty = self.write("empty.stacks", "")
        self.one_line_error(run(["heatmap", empty, "-o", out]), "no samples", "empty.stacks")
        with open(self.p("junk.stacks"), "wb") as f:
            f.write(bytes(range(256)) * 40)
        self.one_line_error(run(["heatmap", self.p("junk.stacks"), "-o", out]), "no samples", "does not look like")
        idle = self.write("idle.stacks", "swapper     0 [000] 5.000000: 1 cpu-clock:\n\tffff native_safe_halt ([kernel.kallsyms])\n\n")
        self.one_line_error(run(["heatmap", idle, "-o", out]), "idle task", "--include-idle")
        untimed = self.write("untimed.stacks", "java 1/2 [000] 1 cpu-clock:\n\tffff app/A.b (x)\n\n")
        r = run(["heatmap", untimed, "-o", out])
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(b"no timestamps", r.stderr)
        self.assertEqual(r.stderr.decode().strip().splitlines()[-1].count("jflame:"), 1)
        full = gzip.compress(slurp(os.path.join(DATA, "heatmap", "boundaries.stacks"), "rb") * 50)
        with open(self.p("cut.stacks.gz"), "wb") as f:
            f.write(full[: len(full) // 2])
        self.one_line_error(run(["heatmap", self.p("cut.stacks.gz"), "-o", out]), "truncated")
        for bad in ("0", "1001", "ten", ""):
            self.one_line_error(run(["heatmap", "--rows", bad, empty]), "--rows", code=2)
        self.one_line_error(run(["heatmap", "--bogus", empty]), "unknown option", code=2)
        # never a page over the input, or under another format's name
        src = os.path.join(DATA, "heatmap", "boundaries.stacks")
        self.one_line_error(run(["heatmap", src, "-o", self.p("run.stacks")]), "name it .html", code=2)
        self.one_line_error(run(["heatmap", src, "-o", self.p("a.svg")]), "name it .html", code=2)
        self.one_line_error(run(["heatmap", src, "-o", self.p("a.html"), "-o", self.p("b.html")]), "-o once", code=2)
        self.assertFalse(os.path.exists(out))
        h = run(["heatmap", "--help"])
        self.assertEqual(h.returncode, 0)
        self.assertIn(b"jflame heatmap run.stacks -o run.html", h.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
