# test_alloc.py - `jflame record -e alloc` on real JVMs with the real agent: AllocMix
# allocates byte[] (makeBytes) and String (makeStrings) in a known byte ratio; the
# allocation graph's bytes per class are checked against it, at startup (launch mode)
# and after attach, with the CPU graph in the same run (-e cpu,alloc) and in the count
# view; a JVM whose reader went away has its events off.
import gzip
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET

import jvmtest
from jvmtest import Jvm, read_folded
from test_agent_samples import ring_header

JFLAME = os.environ.get("JFLAME_BIN", "")
READY = "jflame-example: ready"
THREAD = "alloc-mix"
MAKE_BYTES = "jflame/examples/AllocMix.makeBytes"
MAKE_STRINGS = "jflame/examples/AllocMix.makeStrings"
SIZES = re.compile(r"jflame-example: sizes byte\[\] (\d+) String (\d+) per round byte\[\] (\d+) String (\d+) "
                   r"ratio ([0-9.]+)")
SVG = "{http://www.w3.org/2000/svg}"


def alloc_mix(seconds=60):
    return Jvm(["--seconds", str(seconds)], agent_opts=None, jvm_flags=["-XX:+PreserveFramePointer"],
               main="jflame.examples.AllocMix", ready=READY)


def slurp(path):
    with open(path) as f:
        return f.read()


class AllocCase(unittest.TestCase):
    def setUp(self):
        jvmtest.check_setup()
        jvmtest.require(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        self.tmp = tempfile.mkdtemp(prefix="jflame-alloc-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def out(self, name):
        return os.path.join(self.tmp, name)

    def jflame(self, args, timeout=120):
        r = subprocess.run([JFLAME, "record"] + list(args), capture_output=True, text=True, timeout=timeout,
                           stdin=subprocess.DEVNULL)
        self.assertEqual(r.returncode, 0, "jflame record failed:\n" + r.stderr)
        return r

    def printed_ratio(self, stdout):
        m = SIZES.search(stdout)
        self.assertTrue(m, "no sizes line from AllocMix:\n" + stdout[-2000:])
        return float(m.group(5))

    def check_ratio(self, folded, pid, ratio, count_view=False):
        """byte[] bytes under makeBytes to String bytes under makeStrings, rooted
        as CPU stacks are: [pid] java, then the thread's name."""
        stacks = read_folded(folded)
        root = "[%d] java" % pid
        mine = [(f, n) for f, n in stacks if f[0] == root and len(f) > 2 and f[1] == THREAD]
        self.assertTrue(mine, "no stacks of %s rooted in %r:\n%s" % (THREAD, root, slurp(folded)[:3000]))
        for f, n in stacks:
            self.assertTrue(f[-1].endswith("_[a]"), "leaf is not an allocated class: %r" % f[-1])
        b = sum(n for f, n in mine if f[-1] == "byte[]_[a]" and f[-2] == MAKE_BYTES)
        s = sum(n for f, n in mine if f[-1] == "java/lang/String_[a]" and MAKE_STRINGS in f)
        self.assertGreater(b, 0, "no byte[] under makeBytes")
        self.assertGreater(s, 0, "no String under makeStrings")
        if count_view:
            return b, s
        self.assertLess(abs(b / s - ratio) / ratio, 0.10,
                        "byte[]:String bytes %d:%d = %.3f, AllocMix allocates them %.3f" % (b, s, b / s, ratio))
        return b, s

    def test_at_startup(self):
        """Launch mode: the agent is on from the JVM's start."""
        folded = self.out("alloc.folded")
        jar = os.environ["JFLAME_EXAMPLES_JAR"]
        r = subprocess.run([JFLAME, "record", "-e", "alloc", "-o", folded, "-o", self.out("alloc.svg"), "--",
                            jvmtest.JAVA, "-cp", jar, "jflame.examples.AllocMix", "--seconds", "5"],
                           capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                           env=dict(os.environ, **jvmtest.JVM_ENV))
        self.assertEqual(r.returncode, 0, r.stderr)
        pid = int(re.search(r"\[(\d+)\] java;" + THREAD, slurp(folded)).group(1))
        self.check_ratio(folded, pid, self.printed_ratio(r.stdout))
        self.assertIn("alloc:", r.stderr)
        # the SVG: the class leaf in the allocation hue, a legend entry, titles in bytes
        root = ET.parse(self.out("alloc.svg")).getroot()
        titles = [t.text for t in root.iter(SVG + "title")]
        self.assertTrue(any(t.startswith("byte[] (") and " bytes" in t for t in titles), titles[:20])
        legend = [t.text for g in root.iter(SVG + "g") if g.get("id") == "legend" for t in g.iter(SVG + "text")]
        self.assertIn("allocated class", legend)
        sub = [t.text for t in root.iter(SVG + "text") if t.get("id") == "subtitle"]
        self.assertTrue(sub and "sampled every 512 KiB" in sub[0] and "dropped" in sub[0], sub)

    def test_after_attach_with_cpu(self):
        """-p on a JVM started without the agent: attached; -e cpu,alloc writes
        both graphs, each to the output named for it, and more outputs by the
        naming rule."""
        jvm = alloc_mix()
        self.addCleanup(jvm.cleanup)
        ratio = self.printed_ratio(jvm.stdout())
        os.mkdir(self.out("x"))
        r = self.jflame(["-e", "cpu,alloc", "-p", str(jvm.pid), "-d", "5", "-o", self.out("x/cpu.svg"),
                         "-o", self.out("x/alloc.svg"), "-o", self.out("x/run.folded"), "-o",
                         self.out("x/%e.pb.gz")])
        self.assertIn("loaded the agent into pid %d" % jvm.pid, r.stderr)
        for name in ("cpu.svg", "alloc.svg", "run-cpu.folded", "run-alloc.folded", "cpu.pb.gz", "alloc.pb.gz"):
            self.assertTrue(os.path.exists(self.out("x/" + name)), name + "\n" + r.stderr)
        self.check_ratio(self.out("x/run-alloc.folded"), jvm.pid, ratio)
        cpu = read_folded(self.out("x/run-cpu.folded"))
        self.assertTrue(cpu and not any(f[-1].endswith("_[a]") for f, n in cpu))
        self.assertTrue(any(f[0] == "[%d] java" % jvm.pid and f[1] == THREAD for f, n in cpu))
        cpu_svg = slurp(self.out("x/cpu.svg"))
        alloc_svg = slurp(self.out("x/alloc.svg"))
        self.assertIn("CPU: ", cpu_svg)
        self.assertNotIn("allocated class", cpu_svg)
        self.assertIn("Allocation: ", alloc_svg)
        self.assertIn("byte[] (", alloc_svg)
        # pprof: the allocation sample types (the protobuf's string table)
        with gzip.open(self.out("x/alloc.pb.gz")) as f:
            pb = f.read()
        for s in (b"alloc_samples", b"alloc_space", b"bytes", b"count"):
            self.assertIn(s, pb)
        # the summary says which file holds which event
        self.assertRegex(r.stderr, r"cpu: \d+ samples.*wrote .*cpu\.svg")
        self.assertRegex(r.stderr, r"alloc: \d+ samples.*wrote .*alloc\.svg")

    def test_count_view_and_events_off_after(self):
        """--count: samples, not bytes; after jflame exits, the JVM's agent has
        its events off (nobody reads)."""
        jvm = alloc_mix()
        self.addCleanup(jvm.cleanup)
        folded = self.out("count.folded")
        self.jflame(["-e", "alloc", "--count", "--alloc-interval", "256k", "-p", str(jvm.pid), "-d", "4", "-o",
                     folded])
        b, s = self.check_ratio(folded, jvm.pid, 0, count_view=True)
        # samples: a byte[] of 2304 bytes and a String of 24 are each about one sample per 256 KiB
        total = sum(n for f, n in read_folded(folded))
        self.assertLess(total, 200000, "counts look like bytes")
        self.assertGreater(b, s, "byte[] under makeBytes should be sampled more often than String")
        hdr = ring_header(jvm.samples_path)
        self.assertEqual(hdr["want"], 0, "jflame left want set")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and ring_header(jvm.samples_path)["active"] != 0:
            time.sleep(0.2)
        self.assertEqual(ring_header(jvm.samples_path)["active"], 0, "events still on without a reader")


if __name__ == "__main__":
    jvmtest.main()
