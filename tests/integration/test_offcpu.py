# test_offcpu.py - `jflame record -e offcpu` and `-e wall` on a real JVM: a thread that
# sleeps ~90% of its time in Thread.sleep and spins ~10% (examples' SleepSpin, which
# times itself); the recorded time is checked against its own measurements.
import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import jvmtest
from jvmtest import read_folded

JFLAME = os.environ.get("JFLAME_BIN", "")
THREAD = "sleep-spin"
SLEEP = "jflame/examples/SleepSpin.sleep"
SPIN = "jflame/examples/SleepSpin.spin"
TOTALS = re.compile(r"jflame-example: totals monotonic_ns (\d+) sleep_ns (\d+) spin_ns (\d+) rounds (\d+)")
SECONDS = 6
RECORDED = re.compile(r"recorded from ([\d.]+) to ([\d.]+) s of CLOCK_MONOTONIC")

STACKS_HEAD = re.compile(r"^\S.* (\d+)/(\d+) \[\d+\] [\d.]+: (\d+) offcpu-time:$")


def offcpu_per_tid(stacks):
    """A .stacks file's off-CPU ns per thread id (perf script's offcpu-time period)."""
    per_tid = {}
    with open(stacks) as f:
        for line in f:
            m = STACKS_HEAD.match(line.rstrip("\n"))
            if m:
                per_tid[m.group(2)] = per_tid.get(m.group(2), 0) + int(m.group(3))
    return per_tid


def kernel_threads():
    """The host's kernel threads' ids (PF_KTHREAD in /proc/PID/stat's flags)."""
    out = set()
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[6]) & 0x00200000:
            out.add(pid)
    return out


def thread_blocks(stacks, tid):
    """A thread's samples in a .stacks file, their head lines (for a failure's message)."""
    with open(stacks) as f:
        heads = [line.rstrip("\n") for line in f if (m := STACKS_HEAD.match(line.rstrip("\n"))) and m.group(2) == tid]
    return "\n".join(heads[:40] + (["... %d more" % (len(heads) - 40)] if len(heads) > 40 else []))


class OffCpuCase(unittest.TestCase):
    def setUp(self):
        jvmtest.check_setup()
        jvmtest.require(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        self.tmp = tempfile.mkdtemp(prefix="jflame-offcpu-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def out(self, name):
        return os.path.join(self.tmp, name)

    def sleep_spin(self):
        """The SleepSpin JVM, one for the file: each recording is measured
        against the thread's own totals around it."""
        return jvmtest.shared_jvm("sleep-spin", ["--seconds", "600"], agent_opts="",
                                  jvm_flags=["-XX:+PreserveFramePointer"], main="jflame.examples.SleepSpin",
                                  ready="jflame-example: ready")

    def totals(self, jvm):
        m = TOTALS.findall(jvm.stdout())
        self.assertTrue(m, "no totals line from SleepSpin:\n" + jvm.stdout()[-2000:])
        return [int(x) for x in m[-1]]

    def record(self, jvm, *args):
        """Records the JVM; returns jflame's result and the thread's measured
        sleep fraction over the recording (from its totals lines around it)."""
        before = self.totals(jvm)
        r = jvmtest.record(["-p", jvm.pid, "-d", SECONDS] + list(args))
        time.sleep(0.5)  # the next totals line
        after = self.totals(jvm)
        slept, spun = after[1] - before[1], after[2] - before[2]
        self.assertGreater(slept + spun, SECONDS * 0.8e9, "the thread did not run through the recording")
        return r, slept / (slept + spun)

    def thread_stacks(self, jvm, folded):
        root = "[%d] java" % jvm.pid
        stacks = [(f, n) for f, n in read_folded(folded) if f[0] == root and len(f) > 1 and f[1] == THREAD]
        self.assertTrue(stacks, "no stacks of thread %s in %s" % (THREAD, folded))
        return stacks

    def test_offcpu_attributes_sleep(self):
        jvm = self.sleep_spin()
        folded, svg, pb, js = self.out("off.folded"), self.out("off.svg"), self.out("off.pb.gz"), self.out("off.json")
        r, measured = self.record(jvm, "-e", "offcpu", "-o", folded, "-o", svg, "-o", pb, "-o", js)
        stacks = self.thread_stacks(jvm, folded)
        # folded counts are microseconds
        sleep_us = sum(n for f, n in stacks if any(fr.startswith(SLEEP) for fr in f))
        share = sleep_us / (SECONDS * 1e6)
        self.assertAlmostEqual(share, measured, delta=0.05,
                               msg="off-CPU in sleep: %.3f of %d s; the thread measured %.3f" % (share, SECONDS,
                                                                                                 measured))
        self.assertGreater(measured, 0.8)
        sleep_stacks = [f for f, n in stacks if any(fr.startswith(SLEEP) for fr in f)]
        frames = set(fr for f in sleep_stacks for fr in f)
        # Java frames named, kernel frames saying why it blocked
        self.assertTrue(any(fr.startswith("java/lang/Thread.sleep") for fr in frames), sorted(frames))
        self.assertTrue(any(fr.endswith("_[k]") for fr in frames), sorted(frames))
        self.assertTrue(any(fr.startswith("JVM_Sleep") for fr in frames), sorted(frames))
        self.assertTrue(any(("futex" in fr or "nanosleep" in fr) and fr.endswith("_[k]") for fr in frames),
                        sorted(frames))
        # the spin loop runs: at most preemptions of it are off the CPU
        spin_us = sum(n for f, n in stacks if any(fr.startswith(SPIN) for fr in f))
        self.assertLess(spin_us, sleep_us / 5)
        # the other outputs carry the weights
        with open(svg) as f:
            text = f.read()
        self.assertIn(">Off-CPU: pid %d" % jvm.pid, text)
        self.assertIn("off-CPU time", text)
        self.assertRegex(text, r"<title>sleep-spin \([0-9.]+ ms, [0-9.]+%\)</title>")
        with open(js) as f:
            prof = json.load(f)
        self.assertEqual(prof["profiles"][0]["unit"], "nanoseconds")
        total_ns = sum(prof["profiles"][0]["weights"])
        self.assertGreater(total_ns, sleep_us * 1000 * 0.99)
        p = jvmtest.protoc_pprof(pb)
        strings = p["string_table"]
        types = [(strings[t["type"][0]], strings[t["unit"][0]]) for t in p["sample_type"]]
        self.assertEqual(types, [("samples", "count"), ("off_cpu", "nanoseconds")])
        self.assertIn("jflame: ", r.stderr)

    def test_wall_shows_both_parts(self):
        jvm = self.sleep_spin()
        folded, pb = self.out("wall.folded"), self.out("wall.pb.gz")
        r, measured = self.record(jvm, "-e", "wall", "-F", "499", "-o", folded, "-o", pb)
        stacks = self.thread_stacks(jvm, folded)
        total = sum(n for f, n in stacks)
        sleep_us = sum(n for f, n in stacks if any(fr.startswith(SLEEP) for fr in f))
        spin_us = sum(n for f, n in stacks if any(fr.startswith(SPIN) for fr in f))
        # the thread's width is its elapsed time, split as it measured itself
        self.assertAlmostEqual(total / (SECONDS * 1e6), 1.0, delta=0.1)
        self.assertAlmostEqual(sleep_us / total, measured, delta=0.05)
        self.assertAlmostEqual(spin_us / total, 1 - measured, delta=0.05)
        p = jvmtest.protoc_pprof(pb)
        strings = p["string_table"]
        types = [(strings[t["type"][0]], strings[t["unit"][0]]) for t in p["sample_type"]]
        self.assertEqual(types, [("samples", "count"), ("wall", "nanoseconds")])

    def test_min_block_counts_the_rest(self):
        jvm = self.sleep_spin()
        folded, svg = self.out("long.folded"), self.out("long.svg")
        # 9 ms sleeps stay, everything shorter is counted in the subtitle
        self.record(jvm, "-e", "offcpu", "--min-block", "5ms", "-o", folded, "-o", svg)
        stacks = read_folded(folded)
        self.assertTrue(any(any(fr.startswith(SLEEP) for fr in f) for f, n in stacks))
        # a 9 ms block is at least 5000 us: every stack's total is a multiple of such blocks
        for f, n in stacks:
            self.assertGreaterEqual(n, 5000, ";".join(f))
        with open(svg) as f:
            self.assertRegex(f.read(), r"blocks under 5\.000 ms not drawn: \d+")

    def test_late_end_counts_the_recordings_time_only(self):
        """A loop that ends late (here jflame is stopped across -d's end; in CI,
        a busy host under ASan): the sampler runs on meanwhile, but the blocks
        sent after -d's time count their time up to it only."""
        jvm = self.sleep_spin()
        stacks = self.out("late.stacks")
        p = subprocess.Popen([JFLAME, "record", "-v", "-e", "offcpu", "-p", str(jvm.pid), "-d", "1.5", "-o", stacks],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        self.addCleanup(p.stderr.close)
        self.addCleanup(p.kill)
        err = []
        for line in p.stderr:
            err.append(line)
            if "BPF programs loaded" in line:
                break
        time.sleep(0.3)
        os.kill(p.pid, signal.SIGSTOP)
        time.sleep(2.5)
        os.kill(p.pid, signal.SIGCONT)
        err += p.stderr.readlines()
        self.assertEqual(p.wait(60), 0, "".join(err))
        text = "".join(err)
        m = RECORDED.search(text)
        self.assertTrue(m, text)
        span = float(m.group(2)) - float(m.group(1))
        self.assertAlmostEqual(span, 1.5, delta=0.01, msg="-v's span is -d's")
        per_tid = offcpu_per_tid(stacks)
        self.assertTrue(per_tid, text)
        worst = max(per_tid.values()) / 1e9
        # before: up to the 2.8 s until jflame went on (the sampler's time, not the recording's)
        self.assertLessEqual(worst, span + 0.05, "a thread off the CPU for %.2f s in a %.2f s recording" % (worst, span))
        self.assertGreater(worst, span * 0.5, "the sleeping thread's blocks were lost")
        self.assertIn("off-CPU blocks wholly outside the recording's time", text)


class HostTest(unittest.TestCase):
    def test_whole_host_totals_bounded(self):
        """-a -e offcpu on the host: finishes, and no thread is off the CPU
        longer than the recording (blocks begun before it are not counted)."""
        jvmtest.require(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        tmp = tempfile.mkdtemp(prefix="jflame-offcpu-")
        self.addCleanup(shutil.rmtree, tmp, True)
        stacks, folded = os.path.join(tmp, "host.stacks"), os.path.join(tmp, "host.folded")
        seconds = 5  # the idle-host check: 5 s of -a -e offcpu
        t0 = time.monotonic()
        r = jvmtest.record(["-v", "-a", "-e", "offcpu", "-d", str(seconds), "-o", stacks, "-o", folded])
        took = time.monotonic() - t0
        err = r.stderr[-3000:]
        self.assertLess(took, seconds + 30, "jflame took %.1f s to finish:\n%s" % (took, err))
        per_tid = offcpu_per_tid(stacks)
        self.assertTrue(per_tid, "no off-CPU samples on the whole host:\n" + err)
        worst_tid = max(per_tid, key=per_tid.get)
        worst = per_tid[worst_tid]
        limit_ns = (seconds + 0.3) * 1e9
        self.assertLessEqual(worst, limit_ns, "thread %s off the CPU for %.2f s in a %d s recording; its blocks:\n%s\n%s"
                             % (worst_tid, worst / 1e9, seconds, thread_blocks(stacks, worst_tid), err))
        total_us = sum(n for f, n in read_folded(folded))
        self.assertLessEqual(total_us, len(per_tid) * limit_ns / 1000, err)
        # the kernel's own threads block too (rcu, kworkers: perf's offcpu-time has
        # them); they were held for a syscall exit they never make
        kthreads = kernel_threads()
        self.assertGreaterEqual(len(kthreads & set(per_tid)), 3, "kernel threads' blocks: %d of %d threads"
                                % (len(kthreads & set(per_tid)), len(per_tid)))


class BadOptionsTest(unittest.TestCase):
    def fails(self, args, expect):
        jvmtest.require(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        r = jvmtest.record(args, timeout=60, check=False)
        self.assertNotEqual(r.returncode, 0)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertTrue(lines[0].startswith("jflame: "), lines[0])
        self.assertIn(expect, lines[0])

    def test_bad_options(self):
        self.fails(["-e", "bogus", "-a"], "-e takes cpu, cpu-clock, cycles, offcpu, wall, page-faults")
        self.fails(["-e", "offcpu", "--min-block", "x", "-a"], "--min-block takes a duration")
        self.fails(["-e", "offcpu", "--min-block", "-1ms", "-a"], "--min-block takes a duration")
        self.fails(["--min-block", "1ms", "-a"], "--min-block goes with -e offcpu or -e wall")
        self.fails(["-e", "offcpu", "--min-block"], "needs a value")


if __name__ == "__main__":
    jvmtest.main()
