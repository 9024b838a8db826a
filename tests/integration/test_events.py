# test_events.py - a perf event that is one row of the event table (-e page-faults) on a
# real JVM, refereed by the kernel's own count: the Workload's fault thread maps a file
# afresh and writes each page (a fault a page); /proc/PID/task/TID/stat's minflt and
# majflt, read every 20 ms around the recording and taken at jflame's own start and end
# (-v's "recorded from ... of CLOCK_MONOTONIC"), are what the samples' weights must add
# up to. Also: -c, every writer's words for the event, and a hardware counter's row on a
# machine with or without one. ctest: first JDK only
import os
import re
import shutil
import tempfile
import threading
import time
import unittest

import jvmtest
from jvmtest import read_folded

JFLAME = os.environ.get("JFLAME_BIN", "")
THREAD = "jflame-page-toucher"
TOUCH = "jflame/examples/Workload.touchPages"
RECORDED = re.compile(r"recorded from ([\d.]+) to ([\d.]+) s of CLOCK_MONOTONIC")
STACKS_HEAD = re.compile(r"^\S.* (\d+)/(\d+) \[\d+\] [\d.]+: (\d+) (\S+):$")


class FaultCounter:
    """The kernel's count of one thread's page faults (minflt + majflt), read
    every 20 ms on a thread of its own with the CLOCK_MONOTONIC time of each
    read, so the count at any moment in between is interpolated."""

    def __init__(self, pid, tid):
        self.path = "/proc/%d/task/%d/stat" % (pid, tid)
        self.reads = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def read(self):
        with open(self.path) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[7]) + int(fields[9])  # minflt, majflt (stat's fields 10 and 12)

    def run(self):
        while not self.stop.is_set():
            self.reads.append((time.monotonic(), self.read()))
            time.sleep(0.02)

    def end(self):
        self.stop.set()
        self.thread.join()
        self.reads.append((time.monotonic(), self.read()))  # after jflame's end

    def at(self, t):
        """The count at monotonic time t, between the two reads around it."""
        before = [r for r in self.reads if r[0] <= t]
        after = [r for r in self.reads if r[0] >= t]
        if not before or not after:
            raise AssertionError("no fault count read around %.3f (reads %.3f to %.3f)"
                                 % (t, self.reads[0][0], self.reads[-1][0]))
        (t0, c0), (t1, c1) = before[-1], after[0]
        return c0 if t1 == t0 else c0 + (c1 - c0) * (t - t0) / (t1 - t0)


def has_hardware_counters():
    """Whether the CPU's PMU is there (a VM often has none): perf's own test."""
    return os.path.exists("/sys/bus/event_source/devices/cpu/events/cpu-cycles") or \
        os.path.exists("/sys/bus/event_source/devices/armv8_pmuv3_0")


class PerfEventRow(unittest.TestCase):
    def setUp(self):
        jvmtest.check_setup()
        jvmtest.require(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        self.tmp = tempfile.mkdtemp(prefix="jflame-events-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def out(self, name):
        return os.path.join(self.tmp, name)

    def faulter(self):
        jvm = jvmtest.shared_jvm("faults", ["faults", "600000"], agent_opts=None, jvm_flags=["-Xmx256m"])
        jvm.wait_thread(THREAD, 30)
        for tid in os.listdir("/proc/%d/task" % jvm.pid):
            with open("/proc/%d/task/%s/comm" % (jvm.pid, tid)) as f:
                if f.read().rstrip("\n") == THREAD[:15]:
                    return jvm, int(tid)
        raise AssertionError("no %s thread" % THREAD)

    def record_counted(self, jvm, tid, *args):
        """Records -e page-faults (args added) with -v; the kernel's count of the
        thread's faults over exactly the recording's span, and the output."""
        counter = FaultCounter(jvm.pid, tid)
        try:
            r = jvmtest.record(["-e", "page-faults", "-v", "-p", jvm.pid, "-d", "4"] + list(args))
        finally:
            counter.end()
        m = RECORDED.search(r.stderr)
        self.assertTrue(m, r.stderr[-3000:])
        start, end = float(m.group(1)), float(m.group(2))
        return counter.at(end) - counter.at(start), end - start, r

    def thread_stacks(self, jvm, folded):
        stacks = [(f, n) for f, n in read_folded(folded) if len(f) > 1 and f[0].startswith("[%d]" % jvm.pid)
                  and f[1] == THREAD]
        self.assertTrue(stacks, "no stacks of %s in %s" % (THREAD, folded))
        return stacks

    def test_weights_are_the_kernels_count(self):
        """Every 100th fault sampled (the row's period): the thread's weights add
        up to the faults the kernel counted for it while jflame recorded, within
        5% (over 4 s at ~100k faults/s: thousands of samples)."""
        jvm, tid = self.faulter()
        folded, svg, stacks, pb = (self.out(n) for n in ("pf.folded", "pf.svg", "pf.stacks", "pf.pb.gz"))
        kernel, span, r = self.record_counted(jvm, tid, "-o", folded, "-o", svg, "-o", stacks, "-o", pb)
        mine = self.thread_stacks(jvm, folded)
        recorded = sum(n for f, n in mine)
        self.assertGreater(kernel, 20000, "the thread faulted only %d times in %.1f s" % (kernel, span))
        print("page-faults: recorded %d, the kernel counted %d in %.2f s (ratio %.4f)"
              % (recorded, kernel, span, recorded / kernel))
        self.assertAlmostEqual(recorded / kernel, 1.0, delta=0.05,
                               msg="recorded %d faults, the kernel counted %d in the same %.2f s"
                               % (recorded, kernel, span))
        # where: the Java method that writes the pages, the thread's frames whole
        touching = sum(n for f, n in mine if any(fr.startswith(TOUCH) for fr in f))
        self.assertGreater(touching / recorded, 0.95, "faults outside %s: %s" % (TOUCH, sorted(
            (n, ";".join(f[-4:])) for f, n in mine if not any(fr.startswith(TOUCH) for fr in f))[-5:]))
        # .stacks: perf script's period is the events a sample stands for
        periods = set()
        with open(stacks) as f:
            for line in f:
                m = STACKS_HEAD.match(line.rstrip("\n"))
                if m and m.group(2) == str(tid):
                    periods.add((int(m.group(3)), m.group(4)))
        self.assertEqual(periods, {(100, "page-faults")})
        # the graph says what it counts; pprof names the event's values
        with open(svg) as f:
            text = f.read()
        self.assertIn(">Page faults: pid %d" % jvm.pid, text)
        self.assertIn("a sample every 100 page faults (page-faults)", text)
        self.assertRegex(text, r"<title>%s \([0-9,]+ page faults, [0-9.]+%%\)</title>" % THREAD)
        p = jvmtest.protoc_pprof(pb)
        strings = p["string_table"]
        types = [(strings[t["type"][0]], strings[t["unit"][0]]) for t in p["sample_type"]]
        self.assertEqual(types, [("samples", "count"), ("page-faults", "count")])
        self.assertEqual(p["period"], [100])

    def test_period_option(self):
        """-c 1000: a tenth of the samples, each weighing 1000, the same total."""
        jvm, tid = self.faulter()
        folded = self.out("c.folded")
        kernel, span, r = self.record_counted(jvm, tid, "-c", "1000", "-o", folded)
        recorded = sum(n for f, n in self.thread_stacks(jvm, folded))
        self.assertEqual(recorded % 1000, 0, "weights not in thousands: %d" % recorded)
        self.assertAlmostEqual(recorded / kernel, 1.0, delta=0.1,
                               msg="recorded %d faults with -c 1000, the kernel counted %d" % (recorded, kernel))

    def test_hardware_counter_row(self):
        """A hardware counter's row: recorded where the CPU counts it, else one
        line that says so and what to use instead (no output written)."""
        jvm, tid = self.faulter()
        svg = self.out("cm.svg")
        r = jvmtest.record(["-e", "cache-misses", "-p", jvm.pid, "-d", "1", "-o", svg], check=False)
        if has_hardware_counters():
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(svg) as f:
                self.assertIn(">Cache misses: pid %d" % jvm.pid, f.read())
        else:
            self.assertNotEqual(r.returncode, 0)
            lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
            self.assertEqual(len(lines), 1, r.stderr)
            self.assertIn("this machine has no cache-misses counter", lines[0])
            self.assertIn("record -e cpu", lines[0])
            self.assertFalse(os.path.exists(svg))


if __name__ == "__main__":
    unittest.main(verbosity=2)
