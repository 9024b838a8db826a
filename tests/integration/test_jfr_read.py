# test_jfr_read.py - `jflame convert x.jfr` and `jflame heatmap x.jfr` on recordings the
# JDK itself makes (java -XX:StartFlightRecording, settings=profile): every stack's Java
# frames and every count (CPU samples, allocation bytes, monitor waits) agree with the
# JDK's own `jfr print --json`, the roots are the JVM's pid and the sampled thread.
import collections
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import jvmtest
from jvmtest import Jvm, read_folded

JFLAME = os.environ.get("JFLAME_BIN", "")
JFR_TOOL = os.path.join(jvmtest.JAVA_HOME, "bin", "jfr")
MARKS = {"Interpreted": "_[0]", "JIT compiled": "_[j]", "C1 compiled": "_[j]", "Inlined": "_[i]", "Kernel": "_[k]"}
PRIMS = {"B": "byte", "C": "char", "D": "double", "F": "float", "I": "int", "J": "long", "S": "short", "Z": "boolean"}


def class_name(name):
    """A JFR class name as jflame writes it: '/' separators, a hidden class's /0x... as .0x...,
    descriptors as Java arrays."""
    name = re.sub(r"/(0x[0-9a-fA-F]+)$", r".\1", name.replace(".", "/"))  # a hidden class's suffix
    dims = len(name) - len(name.lstrip("["))
    elem = name[dims:]
    if dims and elem in PRIMS:
        return PRIMS[elem] + "[]" * dims
    if dims and elem.startswith("L") and elem.endswith(";"):
        return elem[1:-1] + "[]" * dims
    return name


def iso_seconds(d):
    m = re.fullmatch(r"PT(?:(\d+)H)?(?:(\d+)M)?(?:([0-9.]+)S)?", d)
    assert m, d
    return int(m.group(1) or 0) * 3600 + int(m.group(2) or 0) * 60 + float(m.group(3) or 0)


def jdk_stacks(path, event, weight=None, leaf=None):
    """What the JDK's jfr tool says: {(thread, frames root first): [count, weight]}. event may
    name several types (a,b); leaf is then the class field of each ({type: field})."""
    out = subprocess.run(jvmtest.in_root([JFR_TOOL, "print", "--json", "--stack-depth", "4096", "--events", event, path]),
                         capture_output=True, text=True, timeout=120, check=True).stdout
    stacks = collections.defaultdict(lambda: [0, 0.0])
    for e in json.loads(out)["recording"]["events"]:
        v = e["values"]
        st = v.get("stackTrace")
        if not st or not st["frames"]:
            continue
        frames = []
        for f in reversed(st["frames"]):
            m = f["method"]
            frames.append(class_name(m["type"]["name"]) + "." + m["name"] + MARKS.get(f.get("type"), ""))
        field = leaf.get(e["type"]) if isinstance(leaf, dict) else leaf
        if field:  # a park without a blocker object has no class (jflame: [unknown class])
            cls = class_name(v[field]["name"]) if v[field] else "[unknown class]"
            frames.append(cls + ("_[a]" if field == "objectClass" else "_[l]"))
        th = v.get("sampledThread") or v.get("eventThread")
        key = (th["javaName"] or th["osName"], tuple(frames))
        stacks[key][0] += 1
        if weight == "duration":
            stacks[key][1] += iso_seconds(v["duration"]) * 1e9
        elif weight:
            stacks[key][1] += v[weight]
    return stacks


class JfrReadTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        jvmtest.check_setup()
        jvmtest.require(jvmtest.jdk_tool("jfr"), "no jfr tool at %s" % JFR_TOOL)
        cls.tmp = tempfile.mkdtemp(prefix="jflame-jfr-read-")
        cls.pids = {}

        def rec(name, main, *args):
            path = os.path.join(cls.tmp, name + ".jfr")
            jvm = Jvm(list(args), main=main, wait_ready=False, cwd=cls.tmp,
                      jvm_flags=["-XX:StartFlightRecording=filename=%s,settings=profile" % path])
            rc = jvm.wait(120)
            assert rc == 0, "%s exited %s: %s" % (main, rc, jvm.stderr()[-2000:])
            cls.pids[name] = jvm.pid
            return path

        # a hot loop (CPU samples), allocations of known classes, a contended monitor held 25 ms
        cls.hot = rec("hot", "jflame.examples.Workload", "hot", "2500")
        cls.alloc = rec("alloc", "jflame.examples.AllocMix", "--seconds", "2")
        cls.lock = rec("lock", "jflame.examples.LockContend", "--seconds", "2", "--hold-ms", "25")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def convert(self, src, out, *opts):
        path = os.path.join(self.tmp, out)
        r = subprocess.run([JFLAME, "convert", *opts, src, "-o", path], capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        # a recording the JDK wrote reads without warnings, but for events the JDK recorded
        # without a frame (jfr print shows them with empty stacks; jdk_stacks leaves them out too)
        self.assertRegex(r.stderr, r"^(|jflame: warning: skipped \d+ of \d+ \w+ events in \S+ \(0 refer to a thread, "
                         r"stack trace, method, class or string that is not in the file, 0 do not parse, \d+ have no "
                         r"frames, 0 are longer than 16 MiB\)\n)$")
        return path

    def check_agree(self, name, src, kind, event, weight=None, leaf=None):
        want = jdk_stacks(src, event, weight, leaf)
        self.assertTrue(want, "the JDK recorded no %s events with stacks" % event)
        folded = self.convert(src, "%s.%s.folded" % (name, kind), *(["--sample-index", kind] if kind != "cpu" else []))
        got = collections.defaultdict(int)
        root = "[%d] java" % self.pids[name]
        for frames, count in read_folded(folded):
            self.assertEqual(frames[0], root, "rooted in the JVM's pid")
            java = tuple(f for f in frames[2:] if f != "[truncated]")
            got[(frames[1], java)] += count
        self.assertEqual(set(got), set(want), "the same threads and Java stacks as jfr print")
        if weight:  # counts are samples: a pprof has the weights; compare both
            pb = self.convert(src, "%s.%s.pb.gz" % (name, kind), *(["--sample-index", kind]))
            back = subprocess.run([JFLAME, "convert", "--sample-index", "1", pb, "-o", "-", "-t", "folded"],
                                  capture_output=True, text=True, timeout=60, check=True).stdout
            weights = collections.defaultdict(int)
            for line in back.splitlines():
                stack, _, n = line.rpartition(" ")
                frames = stack.split(";")
                weights[(frames[1], tuple(f for f in frames[2:] if f != "[truncated]"))] += int(n)
            for k, (n, w) in want.items():
                self.assertAlmostEqual(weights[k], w, delta=max(n + 1.0, w * 1e-6), msg=str(k)[:300])
        for k, (n, _) in want.items():
            self.assertEqual(got[k], n, str(k)[:300])
        return got

    def test_cpu_samples(self):
        got = self.check_agree("hot", self.hot, "cpu", "jdk.ExecutionSample")
        hot = sum(n for (thread, frames), n in got.items()
                  if thread == "jflame-hot-worker-thread-with-a-long-name"
                  and any(f.startswith("jflame/examples/Workload.spin_[") for f in frames))
        self.assertGreater(hot, 50, "the hot loop's samples")

    def test_alloc_samples(self):
        if jvmtest.java_version() >= 16:
            got = self.check_agree("alloc", self.alloc, "alloc", "jdk.ObjectAllocationSample", "weight", "objectClass")
        else:  # JDK 11 (the JDK matrix): the TLAB events, weighed by their allocation's size
            got = self.check_agree("alloc", self.alloc, "alloc", "jdk.ObjectAllocationInNewTLAB,"
                                   "jdk.ObjectAllocationOutsideTLAB", "allocationSize", "objectClass")
        leaves = {frames[-1] for (_, frames) in got}
        self.assertTrue({"byte[]_[a]", "java/lang/String_[a]"} <= leaves, leaves)

    def test_lock_waits(self):
        # monitors and java.util.concurrent parks (the JDK's jdk.ThreadPark), as jflame's lock view
        got = self.check_agree("lock", self.lock, "lock", "jdk.JavaMonitorEnter,jdk.ThreadPark", "duration",
                               {"jdk.JavaMonitorEnter": "monitorClass", "jdk.ThreadPark": "parkedClass"})
        self.assertIn("jflame/examples/Ledger_[l]", {frames[-1] for (_, frames) in got})

    def test_outputs_and_heatmap(self):
        svg = self.convert(self.hot, "hot.svg")
        with open(svg) as f:
            self.assertIn("Workload.spin", f.read())
        n = sum(c for c, _ in jdk_stacks(self.hot, "jdk.ExecutionSample").values())
        html = os.path.join(self.tmp, "hot.html")
        r = subprocess.run([JFLAME, "heatmap", self.hot, "-o", html], capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(html) as f:
            self.assertRegex(f.read(), r"hot\.jfr: %d samples over [1-9]\d* s" % n)


if __name__ == "__main__":
    jvmtest.main()
