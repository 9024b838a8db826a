# test_jfr.py - `jflame record -o x.jfr -o x.folded` on a real JVM: the JDK's own `jfr`
# tool (of the JDK under test) reads x.jfr, and the stacks rebuilt from its events, with
# their counts, equal x.folded (CPU samples; allocation samples with their bytes).
import collections
import datetime
import os
import re
import shutil
import sys
import tempfile
import unittest

import jvmtest

sys.path.insert(0, os.path.join(jvmtest.SOURCE_DIR, "tests", "unit"))
import jfr_check  # noqa: E402  (tests/unit: the unit test's referee)

JFLAME = os.environ.get("JFLAME_BIN", "")


class JfrRecordTest(unittest.TestCase):
    def setUp(self):
        jvmtest.check_setup()
        jvmtest.require(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        jfr_check.JFR = os.path.join(jvmtest.JAVA_HOME, "bin", "jfr")
        jvmtest.require(os.access(jfr_check.JFR, os.X_OK), "no jfr tool at %s" % jfr_check.JFR)
        self.tmp = tempfile.mkdtemp(prefix="jflame-jfr-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def record(self, mode, *args):
        jfr, folded = os.path.join(self.tmp, mode + ".jfr"), os.path.join(self.tmp, mode + ".folded")
        jvmtest.record(list(args) + ["-o", jfr, "-o", folded, "--", jvmtest.JAVA, "-XX:+PreserveFramePointer",
                                     "-cp", jvmtest.JAR, "jflame.examples.Workload", mode, "2000"],
                       launch=True, cwd=self.tmp)
        with open(folded, "rb") as f:
            want = jfr_check.folded_counts(f.read())
        self.assertGreater(sum(want.values()), 20, want)
        return jfr, want

    def test_cpu_recording(self):
        stacks = os.path.join(self.tmp, "hot.stacks")
        jfr, want = self.record("hot", "-o", stacks)
        ev = jfr_check.jfr_events(jfr, "jdk.ExecutionSample")
        got = collections.Counter(jfr_check.rebuild(e, "sampledThread") for e in ev)
        self.assertEqual(got, want)
        self.assertEqual(jfr_check.jfr_summary(jfr).get("jdk.ExecutionSample"), sum(want.values()))
        # mixed mode: Java frames by their type, kernel frames, threads as the events' threads
        types = collections.Counter(f["type"] for e in ev for f in e["values"]["stackTrace"]["frames"])
        self.assertGreater(types["JIT compiled"], 0, types)
        self.assertTrue(all(e["values"]["sampledThread"] for e in ev))
        # each event carries its sample's time: the events' times, from the first, are the
        # .stacks output's sample times, from the first (to the microsecond perf script prints)
        def at(iso):
            date, frac = re.match(r"(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?", iso).groups()
            base = datetime.datetime.fromisoformat(date).replace(tzinfo=datetime.timezone.utc).timestamp()
            return base + float("0." + (frac or "0"))
        times = sorted(at(e["values"]["startTime"]) for e in ev)
        want_times = sorted(jvmtest.stacks_times(stacks))
        self.assertEqual(len(times), len(want_times))
        worst = max(abs((a - times[0]) - (b - want_times[0])) for a, b in zip(times, want_times))
        self.assertLess(worst, 0.0001, "the events are not stamped with their samples' times")

    def test_alloc_recording(self):
        jfr, want = self.record("alloc", "-e", "alloc")
        weights = collections.Counter()
        for e in jfr_check.jfr_events(jfr, "jdk.ObjectAllocationSample"):
            weights[jfr_check.rebuild(e, "eventThread", "objectClass", "_[a]")] += e["values"]["weight"]
        self.assertEqual(weights, want)  # the folded alloc view counts bytes


if __name__ == "__main__":
    jvmtest.main()
