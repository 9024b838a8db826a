# test_convert_cli.py - `jflame convert` as users run it: formats by extension and
# by content (stdin), round trips, and bad input (one line, nonzero exit, no output left).
import collections
import gzip
import json
import os
import re
import subprocess
import unittest
import xml.etree.ElementTree as ET

import cli_test
from cli_test import DATA, JFLAME, CliCase, slurp

FOLDED = os.path.join(DATA, "convert", "jvm.folded")
PERF = os.path.join(DATA, "collapse", "sys-pid.perf")
JFR = os.path.join(DATA, "convert", "jdk17_cpu.jfr.gz")  # the JDK 17's jdk.ExecutionSample and jdk.JVMInformation


def run(args, input_bytes=None):
    return cli_test.run(["convert"] + list(args), input_bytes)


def sorted_folded(path):
    return b"".join(sorted(l + b"\n" for l in slurp(path).splitlines() if l))


class Case(CliCase):
    prefix = "jflame-convert-"

    def ok(self, args, input_bytes=None):
        r = run(args, input_bytes)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r

    def no_output_left(self):
        """a failed run leaves neither the output nor a temporary file beside it"""
        self.assertEqual([f for f in os.listdir(self.tmp) if f.startswith("out")], [])


class Formats(Case):
    def test_round_trips_by_extension(self):
        want = sorted_folded(FOLDED)
        self.ok([FOLDED, "-o", self.p("a.pb.gz"), "-o", self.p("a.json"), "-o", self.p("a.pb"),
                 "-o", self.p("a.svg"), "-o", self.p("a.folded")])
        self.assertEqual(slurp(self.p("a.folded")), want)
        self.assertEqual(slurp(self.p("a.pb.gz"))[:2], b"\x1f\x8b")
        self.assertNotEqual(slurp(self.p("a.pb"))[:2], b"\x1f\x8b")  # .pb: plain protobuf
        ET.parse(self.p("a.svg"))
        for src in ("a.pb.gz", "a.pb", "a.json"):
            self.ok([self.p(src), "-o", self.p(src + ".folded")])
            self.assertEqual(slurp(self.p(src + ".folded")), want, src)
        # pprof -> speedscope -> pprof -> folded
        self.ok([self.p("a.pb.gz"), "-o", self.p("b.json")])
        self.ok([self.p("b.json"), "-o", self.p("b.pb.gz")])
        self.assertEqual(self.ok([self.p("b.pb.gz"), "-o", "-", "-t", "folded"]).stdout, want)

    def test_content_sniffed_on_stdin_and_odd_names(self):
        want = sorted_folded(FOLDED)
        folded = slurp(FOLDED)
        self.assertEqual(self.ok(["-", "-o", "-", "-t", "folded"], folded).stdout, want)
        self.assertEqual(self.ok(["-", "-o", "-", "-t", "folded"], gzip.compress(folded)).stdout, want)
        pb = self.ok(["-", "-o", "-", "-t", "pprof"], folded).stdout
        self.assertEqual(pb[:2], b"\x1f\x8b")
        self.assertEqual(self.ok(["-", "-o", "-", "-t", "folded"], pb).stdout, want)
        self.assertEqual(self.ok(["-", "-o", "-", "-t", "folded"], gzip.decompress(pb)).stdout, want)
        js = self.ok(["-", "-o", "-", "-t", "speedscope"], folded).stdout
        self.assertEqual(self.ok(["-", "-o", "-", "-t", "folded"], js).stdout, want)
        # perf script text on stdin and as .txt: folded as jflame collapse --all folds it, counting samples
        perf = slurp(PERF)
        a = self.ok(["-", "-o", "-", "-t", "folded"], perf).stdout
        with open(self.p("perf.txt"), "wb") as f:
            f.write(perf)
        self.assertEqual(self.ok([self.p("perf.txt"), "-o", "-", "-t", "folded"]).stdout, a)
        self.assertEqual(sum(int(l.rsplit(b" ", 1)[1]) for l in a.splitlines()), 80)
        collapsed = subprocess.run([JFLAME, "collapse", "--all", PERF], capture_output=True).stdout
        self.assertEqual([l.rsplit(b" ", 1)[0] for l in a.splitlines()],
                         [l.rsplit(b" ", 1)[0] for l in collapsed.splitlines()])
        # a name that says nothing: the content decides
        with open(self.p("profile.data"), "wb") as f:
            f.write(pb)
        self.assertEqual(self.ok([self.p("profile.data"), "-o", "-", "-t", "folded"]).stdout, want)
        # -f overrides the extension
        with open(self.p("really-folded.json"), "wb") as f:
            f.write(folded)
        self.assertEqual(self.ok(["-f", "folded", self.p("really-folded.json"), "-o", "-", "-t", "folded"]).stdout, want)

    def test_speedscope_inputs(self):
        for name in ("sampled", "evented"):
            r = self.ok([os.path.join(DATA, "convert", name + ".json"), "-o", "-", "-t", "folded"])
            self.assertEqual(r.stdout, slurp(os.path.join(DATA, "convert", name + ".folded")))

    def test_rate_and_sample_index(self):
        self.ok(["-F", "99", FOLDED, "-o", self.p("r.pb.gz")])
        ns = self.ok(["--sample-index", "cpu", self.p("r.pb.gz"), "-o", "-", "-t", "folded"]).stdout
        counts = self.ok(["--sample-index", "0", self.p("r.pb.gz"), "-o", "-", "-t", "folded"]).stdout
        for a, b in zip(ns.splitlines(), counts.splitlines()):
            self.assertEqual(int(a.rsplit(b" ", 1)[1]), int(b.rsplit(b" ", 1)[1]) * (10 ** 9 // 99))
        js = json.loads(self.ok(["-F", "99", FOLDED, "-o", "-", "-t", "json"]).stdout)
        self.assertEqual(js["profiles"][0]["unit"], "nanoseconds")
        self.one_line_error(run(["--sample-index", "alloc", self.p("r.pb.gz"), "-o", "-", "-t", "folded"]),
                            "no sample type 'alloc'", "0 (samples), 1 (cpu)")
        self.one_line_error(run(["--sample-index", "1", FOLDED, "-o", "-", "-t", "folded"]), "--sample-index is for pprof")
        self.one_line_error(run(["-F", "fast", FOLDED, "-o", self.p("x.pb.gz")]), "-F takes", code=2)

    def test_svg_title_and_units(self):
        r = self.ok(["--title", "Converted", os.path.join(DATA, "convert", "evented.json"), "-o", "-", "-t", "svg"])
        root = ET.fromstring(r.stdout)
        texts = {t.get("id"): t.text for t in root.iter("{http://www.w3.org/2000/svg}text") if t.get("id")}
        self.assertEqual(texts["title"], "Converted")
        self.assertIn(b"nanoseconds", r.stdout)  # the counts are time: the tooltips say so


class Jfr(Case):
    def jfr(self):
        """The JDK 17 recording, unpacked."""
        with open(self.p("in.jfr"), "wb") as f:
            f.write(gzip.decompress(slurp(JFR)))
        return self.p("in.jfr")

    def test_jdk_recording(self):
        src = self.jfr()
        folded = self.ok([src, "-o", self.p("a.folded"), "-o", self.p("a.pb.gz"), "-o", self.p("a.svg"),
                          "-o", self.p("a.json")])
        self.assertEqual(folded.stderr, b"")
        lines = slurp(self.p("a.folded")).decode().splitlines()
        self.assertEqual(sum(int(l.rsplit(" ", 1)[1]) for l in lines), 17)  # jfr summary: 17 samples
        for l in lines:
            self.assertRegex(l, r"^\[\d+\] java;jflame-hot-worker-thread-with-a-long-name;java/lang/Thread\.run_\[0\];")
        self.assertEqual(self.ok([self.p("a.pb.gz"), "-o", "-", "-t", "folded"]).stdout, slurp(self.p("a.folded")))
        # by content (standard input, gzip) and with -f
        self.assertEqual(self.ok(["-", "-o", "-", "-t", "folded"], slurp(JFR)).stdout, slurp(self.p("a.folded")))
        self.assertEqual(self.ok(["-f", "jfr", JFR, "-o", "-", "-t", "folded"]).stdout, slurp(self.p("a.folded")))
        # one speedscope profile per thread, samples in time order
        js = json.loads(slurp(self.p("a.json")))
        self.assertEqual(sum(len(p["samples"]) for p in js["profiles"]), 17)

    def test_event_kinds(self):
        src = self.jfr()
        self.one_line_error(run(["--sample-index", "cycles", src, "-o", self.p("out.folded")]),
                            "in.jfr", "cpu, wall, alloc, lock or native")
        # the recording has no allocation samples: said, no output
        self.one_line_error(run(["--sample-index", "alloc", src, "-o", self.p("out.folded")]),
                            "no alloc events with stacks in", "--sample-index")
        self.no_output_left()

    def test_truncated_and_corrupt(self):
        data = slurp(self.jfr())
        for name, cut, needles in (("t1.jfr", data[:40], ("truncated", "header")),
                                   ("t2.jfr", data[: len(data) // 2], ("truncated", "being written")),
                                   ("t3.jfr", data[: len(data) - 1], ("truncated",)),
                                   ("bad.jfr", b"FLR\0\0\1\0\0" + data[8:], ("JFR version 1.0",)),
                                   ("pk.jfr", b"PK\3\4" + data[4:], ("not a JFR recording",)),
                                   ("zero.jfr", data[:68] + bytes(len(data) - 68), ("metadata", "corrupt"))):
            with open(self.p(name), "wb") as f:
                f.write(cut)
            self.one_line_error(run([self.p(name), "-o", self.p("out.folded")]), name, *needles)
        with open(self.p("t.jfr.gz"), "wb") as f:
            f.write(slurp(JFR)[:-100])
        self.one_line_error(run([self.p("t.jfr.gz"), "-o", self.p("out.folded")]), "truncated")
        self.no_output_left()


class BadInput(Case):
    def test_usage_errors(self):
        self.one_line_error(run([]), "give the profile to convert", code=2)
        self.one_line_error(run([FOLDED]), "-o OUT", code=2)
        self.one_line_error(run([FOLDED, "-o", self.p("out.bin")]), "cannot tell the format of", ".pb.gz", code=2)
        self.one_line_error(run([FOLDED, "-o", "-"]), "needs -t", code=2)
        self.one_line_error(run([FOLDED, "-o", self.p("out.stacks")]), "does not write .stacks", code=2)
        self.one_line_error(run(["-t", "stacks", FOLDED, "-o", "-"]), "-t takes", code=2)
        self.one_line_error(run(["-f", "yaml", FOLDED, "-o", "-"]), "-f takes", code=2)
        self.one_line_error(run([FOLDED, FOLDED, "-o", self.p("out.json")]), "one input", code=2)
        self.one_line_error(run(["--frobnicate", FOLDED]), "unknown option", code=2)
        self.one_line_error(run([FOLDED, "-o", self.p("out.json"), "-o", self.p("out.json")]), "named twice", code=2)
        self.no_output_left()

    def test_missing_and_unreadable(self):
        self.one_line_error(run(["/nonexistent/in.folded", "-o", self.p("out.json")]),
                            "/nonexistent/in.folded", "No such file")
        self.one_line_error(run(["/nonexistent/in.pb.gz", "-o", self.p("out.json")]), "No such file")
        self.one_line_error(run([self.tmp, "-o", self.p("out.json")]))
        self.one_line_error(run([FOLDED, "-o", "/nonexistent/dir/out.json"]), "/nonexistent/dir")
        self.no_output_left()

    def test_garbage(self):
        garbage = bytes(range(256)) * 64
        for name, needle in (("g.pb.gz", "not a pprof profile"), ("g.folded", "no stacks"),
                             ("g.json", "not valid JSON"), ("g.stacks", "no samples"), ("g.bin", "")):
            with open(self.p(name), "wb") as f:
                f.write(garbage)
            self.one_line_error(run([self.p(name), "-o", self.p("out.json")]), needle)
        self.one_line_error(run(["-", "-o", self.p("out.json")], b""), "cannot tell the format", "it is empty")
        self.one_line_error(run(["-", "-o", self.p("out.json")], b"\x7fELF\x02\x01\x01" + garbage),
                            "cannot tell the format")
        self.one_line_error(run(["-", "-o", self.p("out.json")], b"just some words\nand more\n"),
                            "cannot tell the format")
        self.no_output_left()

    def test_truncated_gzip(self):
        pb = self.ok([FOLDED, "-o", "-", "-t", "pprof"]).stdout
        for name, data in (("t.pb.gz", pb), ("t.folded.gz", gzip.compress(slurp(FOLDED) * 200)),
                           ("t.json.gz", gzip.compress(self.ok([FOLDED, "-o", "-", "-t", "json"]).stdout * 50)),
                           ("t.stacks.gz", gzip.compress(slurp(PERF)))):
            with open(self.p(name), "wb") as f:
                f.write(data[: len(data) // 2])
            self.one_line_error(run([self.p(name), "-o", self.p("out.folded")]), "truncated")
        self.no_output_left()

    def test_not_a_pprof_protobuf(self):
        # a valid protobuf message of another kind: only fields pprof does not have
        other = b"\xa2\x06\x05hello\xa8\x06\x2a"
        with open(self.p("other.pb"), "wb") as f:
            f.write(other)
        self.one_line_error(run([self.p("other.pb"), "-o", self.p("out.folded")]), "not a pprof profile",
                            "no sample types")
        # a wire type that does not fit profile.proto
        with open(self.p("wire.pb.gz"), "wb") as f:
            f.write(gzip.compress(b"\x08\x96\x01\x12\x07garbage"))
        self.one_line_error(run([self.p("wire.pb.gz"), "-o", self.p("out.folded")]), "not a pprof profile")
        self.no_output_left()

    def test_malformed_json(self):
        for text, needle in ((b'{"shared": {"frames": [', "ends early"), (b'{"a" 1}', "line 1"),
                             (b"[1, 2]", "not a speedscope file"),
                             (b'{"shared":{"frames":[{"name":"a"}]},"profiles":[{"type":"sampled","unit":"none",'
                              b'"samples":[[3]],"weights":[1]}]}', "not a frame index (there are 1 frames)")):
            with open(self.p("m.json"), "wb") as f:
                f.write(text)
            self.one_line_error(run([self.p("m.json"), "-o", self.p("out.folded")]), needle)
        self.no_output_left()

    def test_huge_lines_are_skipped_and_counted(self):
        folded = slurp(FOLDED)
        huge = b"x" * (17 << 20) + b" 5\n"
        r = self.ok(["-", "-o", self.p("h.folded")], huge + folded)
        self.assertIn(b"skipped 1 lines longer than the 16 MiB line limit (first: line 1)", r.stderr)
        self.assertEqual(slurp(self.p("h.folded")), sorted_folded(FOLDED))
        perf = slurp(PERF)
        r = self.ok(["-f", "stacks", "-", "-o", self.p("h.json")], b"\t" + b"f" * (3 << 20) + b"\n" + perf)
        self.assertIn(b"1 overlong", r.stderr)
        json.loads(slurp(self.p("h.json")))

    def test_differential_and_empty(self):
        self.one_line_error(run(["-", "-o", self.p("out.pb.gz")], b"a;b 1 2\n"), "differential")
        self.one_line_error(run(["-f", "folded", "-", "-o", self.p("out.pb.gz")], b"# only a comment\n"), "no stacks")
        self.one_line_error(run([os.path.join(DATA, "convert", "sampled.json"), "-o", self.p("out.svg"),
                                 "-f", "stacks"]), "no samples")
        # every count zero: the flame graph's own message, with the prefix as every other
        self.one_line_error(run(["-", "-o", self.p("out.svg")], b"a;b 0\n"), "no samples")
        r = cli_test.run(["svg", "-o", self.p("out.svg")], b"a;b 0\n")
        self.one_line_error(r, "no samples")
        self.no_output_left()

    def test_failure_keeps_an_existing_output(self):
        out = self.p("keep.json")
        with open(out, "w") as f:
            f.write("old")
        self.one_line_error(run(["-", "-o", out], b"\x00\x01garbage"), "")
        self.assertEqual(slurp(out), b"old")


if __name__ == "__main__":
    unittest.main(verbosity=2)
