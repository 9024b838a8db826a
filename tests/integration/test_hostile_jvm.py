# test_hostile_jvm.py - jflame as root beside a fake hostile JVM (fake_jvm.c, issue 31): a
# process as nobody that maps a libjvm.so of its own whose HotSpot VMStructs tables it
# fills itself (walkable: jflame's eBPF walker goes through its code cache), keeps
# 2000 code-cache stub frames on each of several spinning threads' stacks and rewrites
# those stubs' names in a loop (escape sequences, no NUL, 255 characters). `record -a`
# and `record -p` must end within 2 s after -d (jflame's start-up measured on a plain
# run), their peak RSS (its VmHWM) at most 1.5 x the same command's beside
# no fake JVM + 8 MB, their outputs whole; SIGINT ends a recording within 2 s; a fake
# whose stacks change every sample (--shuffle) fills a window's store to its cap, no
# further (the capped frame, said once); each
# crafted-table variant (zero or huge stride, no terminator, names without NUL, a table
# pointing into itself, unmapped pointers, tables flipped while read) is survived on time
# with bounded RSS and no raw control bytes on stderr; the stub frames come out with the
# names the fake wrote, escaped. JFLAME_FAKE_JVM is the fake's program, JFLAME_CPUHOG the
# plain -p target of the baseline; JFLAME_HOSTILE_JVM_VERBOSE=1 prints jflame's stderr.
# ctest: first JDK only
import os
import re
import select
import signal
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

import jvmtest

JFLAME = os.environ.get("JFLAME_BIN", "")
FAKE_JVM = os.environ.get("JFLAME_FAKE_JVM", "")
CPUHOG = os.environ.get("JFLAME_CPUHOG", "")
VERBOSE = os.environ.get("JFLAME_HOSTILE_JVM_VERBOSE") == "1"
NOBODY = 65534
FRAMES = 2000
THREADS = 3
DURATION = 3         # -d of the main cases
VARIANT_DURATION = 2  # -d of each crafted-table variant
AFTER_D = 2.0        # seconds a recording may take past -d and its start-up
SIGINT_AT = 1.5
STOP_BOUND = 2.0     # seconds from SIGINT to exit
KILL_MARGIN = 6.0    # a run still going this long past its bound is SIGKILLed
RSS_RATIO = 1.5
RSS_FLOOR_KB = 8 * 1024  # noise: a plain run's RSS varies by a few MB
# --shuffle makes every sample a new stack: a window keeps 32 MiB of one
# process's distinct stacks (WINDOW_PID_STACK_BYTES), what it costs in memory
# (the store and its index) is bounded by this many times that
SANITIZED = bool(os.environ.get("JFLAME_JVM_PRELOAD"))  # the sanitizer pass: ASan's shadow doubles the store's cost
SHUFFLE_STORE_FACTOR = 5 if SANITIZED else 3
STORE_CAP_KB = 32 * 1024
CAPPED_FRAME = "[jflame: too many distinct stacks]"
NAME_PREFIX = "StubRoutines ("
NAME_RE = re.compile(r"^StubRoutines \(\d+\)")
VARIANTS = ("zero-stride", "huge-stride", "no-terminator", "no-nul", "cycle", "unmapped", "flip")
# raw control bytes: what must never reach stderr or an output (a line's end aside)
CONTROL = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]")


def vm_hwm(pid):
    """The peak RSS (VmHWM, KB) of pid's memory as it is now; 0 when gone. Not
    wait4's ru_maxrss: after a fork and exec that holds the forking process's
    peak too (this test's own, once it has read a large folded file)."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_jflame(args, limit, sigint_at=None):
    """Runs jflame (its own process group), SIGINT at sigint_at seconds if given,
    SIGKILL at limit. Returns (rc or None when killed, seconds, peak RSS in KB (VmHWM, every 20 ms),
    stderr bytes, seconds from SIGINT to exit or None)."""
    err = tempfile.TemporaryFile()
    start = time.monotonic()
    # the sanitizer pass names every cached stack again and fails on a
    # difference (JFLAME_STACK_CACHE=verify): this fake changes its names on
    # purpose, so its stacks may differ; the cache runs as users run it
    env = dict(os.environ)
    env.pop("JFLAME_STACK_CACHE", None)
    # an ASan build's RSS is measured: freed memory reused at once, as without
    # ASan, not held in its 256 MiB quarantine (as test_window.py does)
    opts = env.get("ASAN_OPTIONS", "")
    env["ASAN_OPTIONS"] = (opts + ":" if opts else "") + "quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
    p = subprocess.Popen([JFLAME] + args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                         start_new_session=True, env=env)
    sent = None
    killed = False
    hwm = 0
    while True:
        hwm = max(hwm, vm_hwm(p.pid))
        pid, status, _ = os.wait4(p.pid, os.WNOHANG)
        now = time.monotonic() - start
        if pid:
            break
        if sigint_at is not None and sent is None and now >= sigint_at:
            os.kill(p.pid, signal.SIGINT)
            sent = now
        if now >= limit and not killed:
            os.killpg(p.pid, signal.SIGKILL)
            killed = True
        time.sleep(0.02)
    p.returncode = 0  # reaped by wait4
    err.seek(0)
    data = err.read()
    err.close()
    if VERBOSE:
        sys.stderr.write("jflame %s: %.2f s, peak RSS %d KB\n%s\n" % (" ".join(args), now, hwm,
                                                                     data.decode(errors="replace")))
    rc = None if killed else (os.waitstatus_to_exitcode(status))
    return rc, now, hwm, data, (now - sent if sent is not None else None)


class FakeJvm:
    """A running fake_jvm, as nobody (it drops root itself after exec)."""

    def __init__(self, *args):
        self.p = subprocess.Popen([FAKE_JVM] + list(args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, start_new_session=True)
        line = b""
        deadline = time.monotonic() + 10
        while not line.endswith(b"\n") and time.monotonic() < deadline:
            r, _, _ = select.select([self.p.stdout], [], [], 0.5)
            if r:
                b = os.read(self.p.stdout.fileno(), 256)
                if not b:
                    break
                line += b
        m = re.match(rb"fake-jvm: ready pid=(\d+)\n", line)
        if not m:
            self.kill()
            raise AssertionError("fake JVM %s did not start: %r %r" % (args, line, self.p.stderr.read()))
        self.pid = int(m.group(1))
        with open("/proc/%d/status" % self.pid) as f:
            uids = [l.split()[1:] for l in f if l.startswith("Uid:")][0]
        if any(int(u) != NOBODY for u in uids):
            self.kill()
            raise AssertionError("fake JVM is not nobody: uids %s" % uids)

    def kill(self):
        try:
            os.killpg(self.p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.p.wait()
        self.p.stdout.close()
        self.p.stderr.close()


def folded_stacks(path):
    """The folded file's stacks, checked whole: every line 'frames count\\n'."""
    with open(path, "rb") as f:
        data = f.read()
    assert data.endswith(b"\n"), "%s does not end with a newline (%d bytes)" % (path, len(data))
    stacks = []
    for line in data.decode("utf-8").splitlines():
        m = re.match(r"^(.+) (\d+)$", line)
        assert m, "%s: not a folded line: %r" % (path, line[:200])
        stacks.append((m.group(1).split(";"), int(m.group(2))))
    assert stacks, "%s has no stacks" % path
    return stacks, data


class HostileJvmCase(unittest.TestCase):
    baseline = {}  # "-a" / "-p": (seconds past -d, peak RSS KB) of a plain run

    def setUp(self):
        jvmtest.require(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        jvmtest.require(os.access(FAKE_JVM, os.X_OK), "fake JVM not built (JFLAME_FAKE_JVM=%r)" % FAKE_JVM)
        jvmtest.require(os.access(CPUHOG, os.X_OK), "cpuhog not built (JFLAME_CPUHOG=%r)" % CPUHOG)
        jvmtest.require(os.geteuid() == 0, "the hostile-JVM test runs jflame as root (the fake as nobody)")
        self.tmp = tempfile.mkdtemp(prefix="jflame-hostile-jvm-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.fakes = []
        self.addCleanup(self.kill_fakes)

    def kill_fakes(self):
        for f in self.fakes:
            f.kill()

    def fake(self, *args):
        f = FakeJvm(*args)
        self.fakes.append(f)
        return f

    def out(self, name):
        return os.path.join(self.tmp, name)

    def plain(self, mode):
        """Start-up seconds and peak RSS of `record MODE -d DURATION` beside no
        fake JVM, a plain native process busy (-p: that one), measured once."""
        self.assertFalse(self.fakes, "a baseline measured beside a fake JVM")
        if mode not in HostileJvmCase.baseline:
            hog = subprocess.Popen([CPUHOG, "60"], stdout=subprocess.DEVNULL)
            try:
                target = [mode, str(hog.pid)] if mode == "-p" else [mode]
                rc, secs, rss, err, _ = run_jflame(["record"] + target + ["-d", str(DURATION), "-o",
                                                                         self.out("plain.folded")], 60)
            finally:
                hog.kill()
                hog.wait()
            self.assertEqual(rc, 0, "the plain run failed: %r" % err[-2000:])
            HostileJvmCase.baseline[mode] = (max(secs - DURATION, 0.0), rss)
        return HostileJvmCase.baseline[mode]

    def bounds(self, mode, duration):
        startup, rss = self.plain(mode)
        return duration + startup + AFTER_D, rss * RSS_RATIO + RSS_FLOOR_KB

    def check_run(self, what, rc, secs, rss, err, time_bound, rss_bound, folded):
        tail = err[-1500:].decode(errors="replace")
        self.assertIsNotNone(rc, "%s: still running after %.1f s, SIGKILLed (bound %.1f s); peak RSS %d KB\n%s"
                             % (what, secs, time_bound, rss, tail))
        self.assertLessEqual(secs, time_bound, "%s: took %.2f s (bound %.2f s)\n%s" % (what, secs, time_bound, tail))
        self.assertEqual(rc, 0, "%s: exit %s\n%s" % (what, rc, tail))
        self.assertLessEqual(rss, rss_bound, "%s: peak RSS %d KB (bound %d KB: %.1f x the plain run + %d MB)"
                             % (what, rss, rss_bound, RSS_RATIO, RSS_FLOOR_KB // 1024))
        self.assertIsNone(CONTROL.search(err), "%s: raw control bytes on stderr: %r" % (what, tail))
        stacks, data = folded_stacks(folded)
        self.assertIsNone(CONTROL.search(data.replace(b"\n", b"")), "%s: raw control bytes in %s" % (what, folded))
        return stacks


class StallTest(HostileJvmCase):
    def record_beside(self, mode):
        time_bound, rss_bound = self.bounds(mode, DURATION)
        f = self.fake("--frames", str(FRAMES), "--threads", str(THREADS))
        folded = self.out("stall%s.folded" % mode)
        target = [mode, str(f.pid)] if mode == "-p" else [mode]
        rc, secs, rss, err, _ = run_jflame(["record"] + target + ["-d", str(DURATION), "-o", folded],
                                           time_bound + KILL_MARGIN)
        self.check_run("record %s beside the fake JVM" % mode, rc, secs, rss, err, time_bound, rss_bound, folded)

    def test_record_a_beside_a_stub_renaming_jvm(self):
        self.record_beside("-a")

    def test_record_p_of_a_stub_renaming_jvm(self):
        self.record_beside("-p")

    def test_sigint_ends_record_a_beside_it(self):
        self.bounds("-a", DURATION)  # the baseline first, beside no fake
        self.fake("--frames", str(FRAMES), "--threads", str(THREADS))
        folded = self.out("sigint.folded")
        rc, secs, rss, err, after = run_jflame(["record", "-a", "-d", "60", "-o", folded],
                                               SIGINT_AT + STOP_BOUND + KILL_MARGIN, sigint_at=SIGINT_AT)
        tail = err[-1500:].decode(errors="replace")
        self.assertIsNotNone(rc, "record -a: SIGINT at %.1f s did not end it; SIGKILLed at %.1f s, peak RSS %d KB\n%s"
                             % (SIGINT_AT, secs, rss, tail))
        self.assertLessEqual(after, STOP_BOUND, "record -a ended %.2f s after SIGINT\n%s" % (after, tail))
        self.assertEqual(rc, 0, tail)
        folded_stacks(folded)


class DistinctStacksTest(HostileJvmCase):
    def test_every_sample_a_new_stack(self):
        """The fake's return addresses point into other stubs all the time: every
        sample a stack not seen before. The window's store stops at its cap (the
        capped frame, said once), the recording ends on time, memory bounded."""
        time_bound, _ = self.bounds("-a", DURATION)
        _, plain_rss = self.plain("-a")
        f = self.fake("--frames", str(FRAMES), "--threads", str(THREADS), "--shuffle")
        folded = self.out("shuffle.folded")
        rc, secs, rss, err, _ = run_jflame(["record", "-a", "-F", "499", "-d", str(DURATION), "-o", folded],
                                           time_bound + KILL_MARGIN)
        bound = plain_rss + SHUFFLE_STORE_FACTOR * STORE_CAP_KB
        stacks = self.check_run("record -a beside a fake making every stack new", rc, secs, rss, err, time_bound,
                                bound, folded)
        text = err.decode(errors="replace")
        self.assertRegex(text, r"pid %d: more than 32 MiB of distinct stacks in window 1" % f.pid)
        self.assertEqual(text.count("of distinct stacks in window"), 1, "said once: " + text[-1500:])
        capped = [(fr, n) for fr, n in stacks if fr[-1] == CAPPED_FRAME]
        self.assertTrue(capped, "no stack kept as %s" % CAPPED_FRAME)
        for fr, _ in capped:  # its roots: process, thread, then the mark
            self.assertEqual(fr[0], "[%d] jflame_fake_jvm" % f.pid)
            self.assertTrue(fr[1].startswith("fake-spin-"), fr[:3])
            self.assertEqual(len(fr), 3, fr[:5])
        self.assertLessEqual(sum(len(";".join(fr)) for fr, _ in stacks if fr[0].startswith("[%d] " % f.pid)),
                             STORE_CAP_KB * 1024 + 64 * 1024, "more than the cap of the fake's stacks kept")


class CraftedTablesTest(HostileJvmCase):
    def test_crafted_tables(self):
        time_bound, rss_bound = self.bounds("-a", VARIANT_DURATION)
        for v in VARIANTS:
            with self.subTest(tables=v):
                f = self.fake("--frames", str(FRAMES), "--threads", "2", "--tables", v)
                folded = self.out("tables-%s.folded" % v)
                rc, secs, rss, err, _ = run_jflame(["record", "-a", "-d", str(VARIANT_DURATION), "-o", folded],
                                                   time_bound + KILL_MARGIN)
                f.kill()
                self.fakes.remove(f)
                self.check_run("record -a beside --tables %s" % v, rc, secs, rss, err, time_bound, rss_bound, folded)


class StubNamesTest(HostileJvmCase):
    def test_renamed_stubs_are_named_and_escaped(self):
        time_bound, rss_bound = self.bounds("-p", DURATION)
        f = self.fake("--frames", str(FRAMES), "--threads", "2")
        folded = self.out("names.folded")
        rc, secs, rss, err, _ = run_jflame(["record", "-p", str(f.pid), "-d", str(DURATION), "-o", folded],
                                           time_bound + KILL_MARGIN)
        stacks = self.check_run("record -p of the fake JVM", rc, secs, rss, err, time_bound, rss_bound, folded)
        deepest = 0
        for frames, _ in stacks:
            if not frames[0].startswith("[%d] " % f.pid) or len(frames) < 3 or not frames[1].startswith("fake-spin"):
                continue
            stubs = [x for x in frames[2:] if x.startswith(NAME_PREFIX)]
            deepest = max(deepest, len(stubs))
            for name in stubs:
                self.assertRegex(name, NAME_RE, "a stub name the fake did not write")
            # every other frame: the spin, the kernel's, or one jflame could not name
            others = [x for x in frames[2:] if not x.startswith(NAME_PREFIX) and x not in
                      ("fake_jvm_spin", "[unknown]", "[truncated]", "[unwind failed]") and not x.endswith("_[k]")]
            self.assertFalse(others[:5], "frames of the fake's stack that are no stub of it")
        self.assertGreaterEqual(deepest, FRAMES * 3 // 4, "no stack of the fake's spinning threads went through "
                                "its stubs (deepest: %d of %d stub frames named)" % (deepest, FRAMES))


if __name__ == "__main__":
    unittest.main(verbosity=2)
