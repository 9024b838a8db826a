# test_window.py - `jflame record --window`: a recording cut into consecutive
# windows, each sample in exactly one (counts add up to the recording's, the
# .stacks files' times do not overlap), outputs named by %t/%n, pprof windows'
# time ranges (decoded by protoc), SIGHUP and SIGTERM, --keep rotation, bad
# options; and a CI-sized soak: 1 s windows while JVMs start and exit, with
# jflame's memory and open files at the start and the end.
# ctest: first JDK only (nothing here depends on the JDK)
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import jvmtest
from jvmtest import read_folded, stacks_times

JFLAME = os.environ.get("JFLAME_BIN", "")
CPUHOG = os.environ.get("JFLAME_CPUHOG", "")
WINDOW = re.compile(r"jflame: window (\d+) from (\d{8}T\d{6}Z), ([\d.]+) s: (\d+) samples \((\d+) lost, (\d+) "
                    r"truncated, (\d+) unwind failed, (\d+) failed stack reads\); wrote(.*)")
TOTAL = re.compile(r"jflame: (\d+) windows?, (\d+) samples \((\d+) lost\)")
STAMP = re.compile(r"cpu-(\d{8}T\d{6}Z)\.folded$")


def windows(stderr):
    return [dict(seq=int(m.group(1)), start=m.group(2), seconds=float(m.group(3)), samples=int(m.group(4)),
                 lost=int(m.group(5)), wrote=m.group(9).split()) for m in WINDOW.finditer(stderr)]


def proc_usage(pid):
    """(RSS in KiB, open file descriptors) of a process."""
    with open("/proc/%d/status" % pid) as f:
        rss = int(re.search(r"^VmRSS:\s+(\d+)", f.read(), re.M).group(1))
    return rss, len(os.listdir("/proc/%d/fd" % pid))


class WindowCase(unittest.TestCase):
    def setUp(self):
        jvmtest.check_setup()
        jvmtest.require(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        jvmtest.require(os.access(CPUHOG, os.X_OK), "cpuhog not built (JFLAME_CPUHOG=%r)" % CPUHOG)
        self.tmp = tempfile.mkdtemp(prefix="jflame-window-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def out(self, name):
        return os.path.join(self.tmp, name)

    def hog(self, seconds=60):
        h = subprocess.Popen([CPUHOG, str(seconds)])
        self.addCleanup(h.wait)
        self.addCleanup(h.kill)
        time.sleep(0.3)
        return h

    def run_record(self, *args, timeout=120):
        return jvmtest.record(args, timeout=timeout)


class WindowTest(WindowCase):
    def test_windows_partition_the_recording(self):
        h = self.hog()
        r = self.run_record("-p", str(h.pid), "--window", "2s", "-d", "7", "-o", self.out("cpu-%t.folded"),
                            "-o", self.out("s-%n.stacks"), "-o", self.out("p-%n.pb.gz"))
        ws = windows(r.stderr)
        self.assertEqual([w["seq"] for w in ws], [1, 2, 3, 4], r.stderr)
        self.assertEqual([round(w["seconds"]) for w in ws[:3]], [2, 2, 2])
        self.assertTrue(0.5 < ws[3]["seconds"] <= 1.5, ws[3])
        total = TOTAL.search(r.stderr)
        self.assertIsNotNone(total, r.stderr)
        self.assertEqual(int(total.group(1)), 4)
        self.assertEqual(sum(w["samples"] for w in ws), int(total.group(2)))
        # files named by each window's start, 2 s apart; what each says it wrote is there
        stamps = sorted(STAMP.search(f).group(1) for f in os.listdir(self.tmp) if STAMP.search(f))
        self.assertEqual(stamps, [w["start"] for w in ws])
        secs = [time.mktime(time.strptime(s, "%Y%m%dT%H%M%SZ")) for s in stamps]
        self.assertTrue(all(1 <= b - a <= 3 for a, b in zip(secs, secs[1:])), stamps)
        for w in ws:
            self.assertEqual(len(w["wrote"]), 3)
            self.assertTrue(all(os.path.exists(p) for p in w["wrote"]), w)
        # every sample in exactly one window: folded counts, .stacks samples and
        # the window line agree, and the .stacks files' times do not overlap
        spans = []
        for w in ws:
            folded = next(p for p in w["wrote"] if p.endswith(".folded"))
            stacks = self.out("s-%d.stacks" % w["seq"])
            n = sum(c for _, c in read_folded(folded))
            times = stacks_times(stacks)
            self.assertEqual(n, w["samples"] - w["lost"])
            self.assertEqual(len(times), n)
            self.assertEqual(times, sorted(times), "%s is not in time order" % stacks)
            if times:
                spans.append((min(times), max(times)))
        self.assertGreater(sum(w["samples"] for w in ws), 200)
        self.assertTrue(all(a[1] < b[0] for a, b in zip(spans, spans[1:])), spans)
        # pprof windows: consecutive time ranges, each the window's length
        ranges = []
        for w in ws:
            p = jvmtest.protoc_pprof(self.out("p-%d.pb.gz" % w["seq"]))
            t, d = p["time_nanos"][0], p["duration_nanos"][0]
            self.assertAlmostEqual(d / 1e9, w["seconds"], delta=0.15)
            self.assertEqual(sum(s["value"][0] for s in p.get("sample", [])), w["samples"] - w["lost"])
            ranges.append((t, t + d))
        for a, b in zip(ranges, ranges[1:]):
            self.assertLess(abs(b[0] - a[1]), 50_000_000, ranges)  # the next starts where this one ended

    def test_sighup_closes_a_window_and_sigterm_the_last(self):
        h = self.hog()
        p = subprocess.Popen([JFLAME, "record", "-p", str(h.pid), "--window", "60", "-o", self.out("cpu-%n.folded")],
                             stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
        time.sleep(2.5)
        p.send_signal(signal.SIGHUP)
        time.sleep(2)
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, err)
        ws = windows(err)
        self.assertEqual([w["seq"] for w in ws], [1, 2], err)
        self.assertLess(ws[0]["seconds"], 10)  # not the 60 s asked for
        self.assertGreater(ws[0]["samples"], 50)
        self.assertGreater(ws[1]["samples"], 50)
        for w in ws:
            self.assertEqual(sum(c for _, c in read_folded(self.out("cpu-%d.folded" % w["seq"]))),
                             w["samples"] - w["lost"])

    def test_keep_rotates_old_windows_away(self):
        h = self.hog()
        unrelated = self.out("cpu-notes.folded")
        with open(unrelated, "w") as f:
            f.write("a;b 1\n")
        r = self.run_record("-p", str(h.pid), "--window", "1", "-d", "5.5", "--keep", "2",
                            "-o", self.out("cpu-%t.folded"), "-o", self.out("all-%n.svg"))
        ws = windows(r.stderr)
        self.assertGreaterEqual(len(ws), 5, r.stderr)
        left = sorted(f for f in os.listdir(self.tmp) if STAMP.search(f))
        self.assertEqual(left, sorted(os.path.basename(p) for w in ws[-2:] for p in w["wrote"] if p.endswith(".folded")))
        self.assertEqual(len([f for f in os.listdir(self.tmp) if f.endswith(".svg")]), 2)
        self.assertTrue(os.path.exists(unrelated), "a file --keep did not write was removed")
        # by size: the newest windows that fit in the budget (the newest always)
        r = self.run_record("-p", str(h.pid), "--window", "1", "-d", "4.5", "--keep-bytes", "1k",
                            "-o", self.out("kb-%n.folded"))
        left = [f for f in os.listdir(self.tmp) if f.startswith("kb-")]
        self.assertGreaterEqual(len(left), 1)
        self.assertLessEqual(sum(os.path.getsize(self.out(f)) for f in left[1:]), 1024)
        self.assertIn("kb-%d.folded" % windows(r.stderr)[-1]["seq"], left)


class WindowBadInputTest(WindowCase):
    def fails(self, args, expect):
        r = jvmtest.record(args, timeout=60, check=False)
        self.assertEqual(r.returncode, 2, r.stderr)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn(expect, lines[0])
        self.assertEqual(os.listdir(self.tmp), [])

    def test_bad_window_options(self):
        pid = str(os.getpid())
        o = self.out("cpu-%t.folded")
        self.fails(["-p", pid, "--window", "0", "-o", o], "--window takes a duration")
        self.fails(["-p", pid, "--window", "10x", "-o", o], "--window takes a duration")
        self.fails(["-p", pid, "--window"], "option --window needs a value")
        self.fails(["-p", pid, "--keep", "3", "-o", o], "add --window")
        self.fails(["-p", pid, "--window", "5", "--keep", "0", "-o", o], "--keep takes a number")
        self.fails(["-p", pid, "--window", "5", "--keep-bytes", "12", "-o", o], "--keep-bytes takes a size")
        self.fails(["-p", pid, "--window", "5", "--keep", "3", "-o", self.out("cpu.folded")], "no -o names one")
        self.fails(["-p", pid, "--window", "5", "--keep", "3", "-o", self.out("%h/cpu-%t.folded")],
                   "fields in its directory")
        self.fails(["-p", pid, "-o", self.out("cpu-%d.folded")], "'%d'")
        self.fails(["-p", pid, "-o", self.out("a-%n.stacks"), "-o", self.out("b-%n.stacks")],
                   "only one .stacks output")


def asan_without_quarantine():
    """ASAN_OPTIONS for a jflame built with AddressSanitizer whose RSS is
    measured: freed memory is reused at once, as without ASan, instead of
    being held in its 256 MiB quarantine (which would look like a leak)."""
    opts = os.environ.get("ASAN_OPTIONS", "")
    return (opts + ":" if opts else "") + "quarantine_size_mb=0:thread_local_quarantine_size_kb=0"


class SoakTest(WindowCase):
    """CI-sized form of the days-long run: 1 s windows over the whole host for
    a minute while short JVMs start (jflame reads them, agentless) and exit. jflame's RSS
    and open files at the start and the end are printed and must stay flat."""

    def test_flat_memory_and_files_while_jvms_come_and_go(self):
        java = os.path.join(jvmtest.JAVA_HOME, "bin", "java")
        jar = os.environ.get("JFLAME_EXAMPLES_JAR", "")
        jvmtest.require(os.path.exists(jar), "examples jar not built (JFLAME_EXAMPLES_JAR=%r)" % jar)
        seconds = int(os.environ.get("JFLAME_SOAK_SECONDS", "60"))
        # stderr to a file: a pipe read only at the end fills up (a line a
        # window) and stalls jflame in longer soaks
        log = open(os.path.join(self.tmp, "..", os.path.basename(self.tmp) + ".log"), "w+")
        self.addCleanup(os.unlink, log.name)
        self.addCleanup(log.close)
        p = subprocess.Popen([JFLAME, "record", "-a", "-F", "99", "--window", "1", "-d", str(seconds), "--keep", "8",
                              "-o", self.out("cpu-%t.pb.gz"), "-o", self.out("cpu-%t.folded")],
                             stderr=log, stdin=subprocess.DEVNULL, env=dict(
                                 os.environ, ASAN_OPTIONS=asan_without_quarantine()))
        jvms, samples, start = [], [], time.monotonic()
        try:
            while time.monotonic() - start < seconds - 4:
                # a JVM that runs 3 s, started every 5 s: its tables read, sampled, gone
                # (with the sanitizer build's runtime preloaded: its agent loads only so)
                j = subprocess.Popen([java, "-cp", jar, "jflame.examples.Workload", "hot", "3000"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                     env=dict(os.environ, **jvmtest.JVM_ENV))
                jvms.append(j)
                time.sleep(5)
                samples.append((time.monotonic() - start, proc_usage(p.pid)))
                for k in jvms:
                    k.poll()
        finally:
            for k in jvms:
                k.kill()
                k.wait()
                for f in ("/tmp/perf-%d.map" % k.pid, "/tmp/jflame-%d.events" % k.pid,
                          "/tmp/jflame-%d.status" % k.pid):
                    if os.path.exists(f):
                        os.unlink(f)
        p.wait(timeout=120)
        log.seek(0)
        err = log.read()
        # what made it fail may be far above the tail (a stack cache mismatch
        # is said when it happens, the count at the end)
        said = "\n".join(l for l in err.splitlines() if "mismatch" in l or "warning" in l)[:4000]
        self.assertEqual(p.returncode, 0, said + "\n...\n" + err[-3000:])
        ws = windows(err)
        self.assertGreaterEqual(len(ws), seconds - 3, err[-2000:])
        self.assertEqual([w["seq"] for w in ws], list(range(1, len(ws) + 1)))
        self.assertEqual(len([f for f in os.listdir(self.tmp) if f.endswith(".pb.gz")]), 8)
        # the first measurement after warm-up (attach, first symbols) against the last
        (t0, (rss0, fds0)), (t1, (rss1, fds1)) = samples[1], samples[-1]
        print("\nsoak: %d JVMs over %d s in %d windows; jflame RSS %d KiB at %.0f s, %d KiB at %.0f s; "
              "open files %d and %d" % (len(jvms), seconds, len(ws), rss0, t0, rss1, t1, fds0, fds1))
        print("soak: RSS KiB by time: " + " ".join("%.0fs:%d" % (t, u[0]) for t, u in samples))
        self.assertLessEqual(fds1, fds0 + 2, samples)
        self.assertLessEqual(rss1, rss0 * 1.25 + 8192, samples)
        # jflame attached to each JVM from a forked child: neither jflame nor
        # its children are recorded
        own = {fr[0] for f in os.listdir(self.tmp) if f.endswith(".folded") for fr, _ in read_folded(self.out(f))
               if re.match(r"^\[\d+\] jflame$", fr[0])}
        self.assertEqual(own, set())
        # the last JVMs ran in the windows kept: their Java frames are named
        named = sum(c for f in os.listdir(self.tmp) if f.endswith(".folded") for fr, c in read_folded(self.out(f))
                    if any(x.startswith("jflame/examples/") and x[-4:] in ("_[j]", "_[i]", "_[0]") for x in fr))
        self.assertGreater(named, 20)


if __name__ == "__main__":
    jvmtest.main()
