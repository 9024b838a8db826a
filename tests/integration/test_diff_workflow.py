# test_diff_workflow.py - the brief's before/after job on real JVMs: the
# Kafka-style producer recorded with StringBuilder, then with String.format()
# (the upgrade regression); `jflame diff` shows the Formatter work in red and
# lines the two runs up although their pids differ.
import os
import re
import shutil
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ET

import jvmtest
from jvmtest import read_folded

JFLAME = os.environ.get("JFLAME_BIN", "")
PRODUCER = "kafka-producer-network-thread | producer-1"
SVG = "{http://www.w3.org/2000/svg}"


def rate(stdout):
    m = re.search(r"total records \d+ records/s (\d+)", stdout)
    return int(m.group(1)) if m else 0


class DiffWorkflowTest(unittest.TestCase):
    def setUp(self):
        jvmtest.check_setup()
        jvmtest.require(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        self.tmp = tempfile.mkdtemp(prefix="jflame-diff-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def out(self, name):
        return os.path.join(self.tmp, name)

    def record(self, fmt):
        folded = self.out(fmt + ".folded")
        r = jvmtest.record(["-o", folded, "--", jvmtest.JAVA, "-cp", jvmtest.JAR, "jflame.examples.KafkaStyle",
                            "--seconds", "5", "--format", fmt], launch=True, cwd=self.tmp)
        return folded, rate(r.stdout), r.stderr

    def test_string_format_regression_is_red(self):
        before, before_rate, _ = self.record("string-builder")
        after, after_rate, err = self.record("string-format")
        # the regression itself: String.format() costs throughput
        self.assertGreater(before_rate, 0)
        self.assertLess(after_rate, before_rate * 0.8, (before_rate, after_rate))
        pids = {f[0] for path in (before, after) for f, _ in read_folded(path) if f[0].endswith("] java")}
        self.assertEqual(len(pids), 2, pids)  # two runs, two pids

        svg, html, text = self.out("diff.svg"), self.out("compare.html"), self.out("diff.folded")
        r = subprocess.run([JFLAME, "diff", before, after, "-o", svg, "-o", html, "-o", text],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)

        # the runs line up under one "[*] java" process frame
        with open(text) as f:
            rows = [l.rsplit(" ", 2) for l in f.read().splitlines() if l]
        self.assertTrue(all(row[0].startswith("[*] java;") for row in rows if "java" in row[0].split(";")[0]))
        both = sum(1 for _, b, a in rows if int(b) > 0 and int(a) > 0)
        self.assertGreater(both, 0, "no stack is in both runs: the pids were not merged")

        # in the SVG: frames of java/util/Formatter grew (red, "+D%"), and the
        # producer's share of Formatter work is a clear change
        frames = []
        for g in ET.parse(svg).getroot().iter(SVG + "g"):
            title, rect = g.find(SVG + "title"), g.find(SVG + "rect")
            if title is None or rect is None:
                continue
            m = re.match(r"^(.*) \(([\d,]+) samples?, [\d.]+%; ([+-][\d.]+)%\)$", title.text or "")
            fill = re.match(r"rgb\((\d+),(\d+),(\d+)\)", rect.get("fill", ""))
            if m and fill:
                frames.append((m.group(1), float(m.group(3)), tuple(int(x) for x in fill.groups())))
        fmt = [(d, rgb) for name, d, rgb in frames if name.startswith("java/util/Formatter")]
        self.assertTrue(fmt, "no java/util/Formatter frame in the diff:\n" + err)
        top = max(fmt, key=lambda x: x[0])
        self.assertGreater(top[0], 3.0, "Formatter work should grow by several percentage points")
        r_, g_, b_ = top[1]
        self.assertEqual(r_, 255, top)
        self.assertLess(g_, 230, top)  # clearly red, not near white
        self.assertEqual(g_, b_, top)
        # every grown frame is red, every shrunk frame blue
        for name, d, (r_, g_, b_) in frames:
            if d > 0.5:
                self.assertTrue(r_ == 255 and b_ < 255, (name, d, (r_, g_, b_)))
            elif d < -0.5:
                self.assertTrue(b_ == 255 and r_ < 255, (name, d, (r_, g_, b_)))
        self.assertTrue(any(d < -0.5 for _, d, _ in frames), "something must have shrunk")

        # the compare page holds both runs' totals
        with open(html) as f:
            page = f.read()
        total_before = sum(n for _, n in read_folded(before))
        total_after = sum(n for _, n in read_folded(after))
        self.assertIn(str(total_before), page)
        self.assertIn(str(total_after), page)
        self.assertNotIn("<script src", page)


if __name__ == "__main__":
    jvmtest.main()
