# test_toolkit_cli.py - `jflame collapse` and `jflame svg` as users run them:
# files, gzip, pipes, flamegraph.pl's options, and bad input (one line, nonzero exit).
import gzip
import os
import re
import stat
import unittest
import xml.etree.ElementTree as ET

from cli_test import DATA, SVG, CliCase, run, svg_frames
class Case(CliCase):
    prefix = "jflame-cli-"


class CollapseCli(Case):
    def test_file_gzip_and_stdin_agree(self):
        src = os.path.join(DATA, "collapse", "sys-pid.perf")
        want = open(os.path.join(DATA, "collapse", "sys-pid.tid.folded"), "rb").read()
        a = run(["collapse", "--tid", "--all", src])
        self.assertEqual(a.returncode, 0, a.stderr)
        self.assertEqual(a.stdout, want)
        gz = self.p("in.perf.gz")
        with open(src, "rb") as f, gzip.open(gz, "wb") as g:
            g.write(f.read())
        b = run(["collapse", "--tid", "--all", gz])
        self.assertEqual(b.stdout, want)
        with open(src, "rb") as f:
            c = run(["collapse", "--tid", "--all"], stdin=f)
        self.assertEqual(c.stdout, want)
        # -o writes the same into a file
        d = run(["collapse", "--tid", "--all", "-o", self.p("o.folded"), src])
        self.assertEqual(d.returncode, 0)
        self.assertEqual(open(self.p("o.folded"), "rb").read(), want)

    def test_output_to_a_device_writes_through_it(self):
        # -o /dev/null must not replace the device with a file (temp + rename is for files)
        r = run(["collapse", "-o", "/dev/null", os.path.join(DATA, "collapse", "rules.perf")])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(stat.S_ISCHR(os.stat("/dev/null").st_mode), "/dev/null is no longer a device")
        r = run(["svg", "-o", "/dev/null", os.path.join(DATA, "collapse", "rules.default.folded")])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(stat.S_ISCHR(os.stat("/dev/null").st_mode))
        self.one_line_error(run(["collapse", "-o", self.tmp, os.path.join(DATA, "collapse", "sys.perf")]),
                            "is a directory")

    def test_weighting_and_counts(self):
        r = run(["collapse", os.path.join(DATA, "collapse", "sys.perf")])
        total = sum(int(l.rsplit(b" ", 1)[1]) for l in r.stdout.splitlines())
        samples = sum(1 for l in open(os.path.join(DATA, "collapse", "sys.perf")) if l[:1] not in ("\t", "\n", "#", " "))
        self.assertEqual(total, samples * 10101010)  # each cpu-clock sample weighs its period

    def test_bad_input(self):
        r = run(["collapse", "/nonexistent.perf"])
        self.one_line_error(r, "/nonexistent.perf")
        garbage = self.p("garbage")
        with open(garbage, "wb") as f:
            f.write(bytes(range(256)) * 64)
        self.one_line_error(run(["collapse", garbage]), "no samples", "does not look like perf script")
        full = gzip.compress(open(os.path.join(DATA, "collapse", "java.perf"), "rb").read())
        with open(self.p("t.gz"), "wb") as f:
            f.write(full[: len(full) // 2])
        self.one_line_error(run(["collapse", self.p("t.gz")]), "truncated")
        self.one_line_error(run(["collapse", "--from", "2", "--to", "1", garbage]), "not after", code=2)
        self.one_line_error(run(["collapse", "--frobnicate"]), "unknown option", code=2)
        self.one_line_error(run(["collapse", "-", "--from", "x"]), "--from takes seconds", code=2)
        # a huge line is skipped and counted; the rest still folds
        text = open(os.path.join(DATA, "collapse", "rules.perf"), "rb").read()
        huge = b"\t" + b"x" * (3 << 20) + b"\n"
        r = run(["collapse"], input_bytes=huge + text)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"1 overlong", r.stderr)
        self.assertEqual(r.stdout, open(os.path.join(DATA, "collapse", "rules.default.folded"), "rb").read())


class SvgCli(Case):
    def test_flamegraph_pl_options_and_widths(self):
        src = os.path.join(DATA, "collapse", "sys-pid.tid.folded")
        r = run(["svg", "-title", "Host", "--subtitle", "dd and sh", "--width", "900", "--height", "18",
                 "--countname", "ns", "--nametype", "Frame:", "--colors", "hot", "--hash", src])
        self.assertEqual(r.returncode, 0, r.stderr)
        root, fr = svg_frames(r.stdout)
        self.assertEqual(root.get("width"), "900")
        texts = {t.get("id"): (t.text or "") for t in root.iter(SVG + "text") if t.get("id")}
        self.assertEqual(texts["title"], "Host")
        self.assertEqual(texts["subtitle"], "dd and sh")
        self.assertIn(b"Frame:", r.stdout)
        total = sum(int(l.rsplit(" ", 1)[1]) for l in open(src))
        top = [f for f in fr if f["name"] == "all"][0]
        self.assertEqual(top["count"], total)
        self.assertEqual(top["unit"], "ns")
        # a frame's width is its share of the 880 px between the margins
        for f in fr:
            self.assertAlmostEqual(f["w"], 880 * f["count"] / total, delta=0.02)
        heights = {round(b["y"] - a["y"]) for a, b in zip(fr, fr[1:]) if b["y"] != a["y"]}
        self.assertIn(18, {abs(h) for h in heights})
        # the hot palette: reds to yellows
        for f in fr[1:]:
            rr, gg, bb = map(int, re.findall(r"\d+", f["fill"]))
            self.assertGreaterEqual(rr, 200)
            self.assertLessEqual(bb, 55)

    def test_minwidth_percent_prunes_and_counts_stay(self):
        src = os.path.join(DATA, "collapse", "sys-pid.tid.folded")
        _, all_frames = svg_frames(run(["svg", src]).stdout)
        _, pruned = svg_frames(run(["svg", "--minwidth", "5%", src]).stdout)
        total = [f for f in all_frames if f["name"] == "all"][0]["count"]
        self.assertLess(len(pruned), len(all_frames))
        self.assertTrue(all(f["count"] >= 0.05 * total for f in pruned))

    def test_differential_two_columns(self):
        src = self.p("d.folded")
        with open(src, "w") as f:
            f.write("main;a 10 10\nmain;b 10 30\nmain;c 10 0\n")
        r = run(["svg", src])
        self.assertEqual(r.returncode, 0, r.stderr)
        _, fr = svg_frames(r.stdout)
        by = {f["name"]: f for f in fr}
        self.assertEqual(by["b"]["count"], 30)  # the shape of AFTER
        self.assertNotIn("c", by)  # gone in AFTER
        self.assertTrue(by["b"]["delta"].startswith("+"))
        rr, gg, bb = map(int, re.findall(r"\d+", by["b"]["fill"]))
        self.assertGreater(rr, bb)  # grew: red
        rr, gg, bb = map(int, re.findall(r"\d+", by["a"]["fill"]))
        self.assertGreater(bb, rr)  # its share fell from 1/3 to 1/4: blue

    def test_other_formats_draw_as_their_folded_stacks(self):
        # svg reads what convert reads: the graph of a perf script file, of its
        # pprof and of its speedscope JSON has the frames and counts of the graph
        # of its folded stacks (as convert writes them: samples, not perf's periods)
        src = os.path.join(DATA, "collapse", "java.perf")
        folded = run(["convert", src, "-t", "folded", "-o", "-"])
        self.assertEqual(folded.returncode, 0, folded.stderr)
        want = sorted((f["name"], f["count"]) for f in svg_frames(run(["svg"], input_bytes=folded.stdout).stdout)[1])
        inputs = [src]
        for ext in ("pb.gz", "json"):
            out = self.p("java." + ext)
            r = run(["convert", src, "-o", out])
            self.assertEqual(r.returncode, 0, r.stderr)
            inputs.append(out)
        for path in inputs:
            r = run(["svg", path])
            self.assertEqual(r.returncode, 0, (path, r.stderr))
            got = sorted((f["name"], f["count"]) for f in svg_frames(r.stdout)[1])
            if path.endswith(".json"):
                # speedscope keeps each sample's weight (perf's period), not a count: the same shape
                unit = got[0][1] // want[0][1]
                got = [(n, c // unit) for n, c in got]
            self.assertEqual(got, want, path)
        # an SVG is not a profile: one line saying so
        g = self.p("g.svg")
        with open(g, "wb") as f:
            f.write(run(["svg"], input_bytes=folded.stdout).stdout)
        self.one_line_error(run(["svg", g]), "is an SVG")

    def test_flamechart_keeps_line_order(self):
        # a flame chart draws folded lines in input order: the same stack on
        # lines 1 and 3 is two columns, apart; without --flamechart one, merged
        data = b"m;a 1\nm;b 1\nm;a 1\n"
        _, chart = svg_frames(run(["svg", "--flamechart"], input_bytes=data).stdout)
        a = sorted(f["x"] for f in chart if f["name"] == "a")
        b = [f["x"] for f in chart if f["name"] == "b"]
        self.assertEqual(len(a), 2)
        self.assertTrue(a[0] < b[0] < a[1], (a, b))
        _, graph = svg_frames(run(["svg"], input_bytes=data).stdout)
        self.assertEqual([f["count"] for f in graph if f["name"] == "a"], [2])

    def test_pipeline_and_layouts(self):
        c = run(["collapse", "--all", os.path.join(DATA, "collapse", "java.perf")])
        for extra in ([], ["--inverted"], ["--flamechart"], ["--reverse"], ["--colors", "java", "--notes", "n"]):
            r = run(["svg"] + extra, input_bytes=c.stdout)
            self.assertEqual(r.returncode, 0, (extra, r.stderr))
            ET.fromstring(r.stdout)

    def test_bad_input(self):
        self.one_line_error(run(["svg"], input_bytes=b""), "no stacks")
        self.one_line_error(run(["svg"], input_bytes=bytes(range(256)) * 40), "no stacks")
        r = run(["svg"], input_bytes=b"a;b 3\na;c\nx" * 1 + b"\n" + b"y" * (17 << 20) + b" 5\nd 2\n")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"skipped 2 lines without a count", r.stderr)
        self.assertIn(b"skipped 1 lines longer than the 16 MiB line limit (first: line 4)", r.stderr)
        ET.fromstring(r.stdout)
        self.one_line_error(run(["svg", "--colors", "plaid"], input_bytes=b"a 1\n"), "--colors takes", code=2)
        self.one_line_error(run(["svg", "--minwidth", "wide"], input_bytes=b"a 1\n"), "--minwidth", code=2)
        full = gzip.compress(b"a;b 1\n" * 100000)
        self.one_line_error(run(["svg"], input_bytes=full[: len(full) // 2]), "truncated")
        # a failed run leaves no half-written output
        out = self.p("never.svg")
        self.one_line_error(run(["svg", "-o", out], input_bytes=b""), "no stacks")
        self.assertFalse(os.path.exists(out))


if __name__ == "__main__":
    unittest.main(verbosity=2)
