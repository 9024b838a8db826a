# test_lock.py - `jflame record -e lock` and `-e offcpu` on LockContend: the thread
# "ledger-waiter" blocks ~90% of its time on a Ledger monitor the holder keeps; its
# lock samples (Ledger_[l] leaf, through Ledger.post) must add up to the blocked time
# it measures itself, and its off-CPU stacks show Ledger.post above the JVM's monitor
# and futex frames. With `--lock juc` the same on a ReentrantLock (the agent's
# Unsafe.park wrapper): ReentrantLock$NonfairSync_[l] through LockedLedger.post; threads
# parked on a Condition, an idle executor and a CountDownLatch give no lock samples;
# and after the recording Unsafe.park is the JVM's own again.
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest

import jvmtest
from jvmtest import Jvm, read_folded

JFLAME = os.environ.get("JFLAME_BIN", "")
READY = "jflame-example: ready"
WAITER = "ledger-waiter"
POST = "jflame/examples/Ledger.post"
LEDGER = "jflame/examples/Ledger_[l]"
JUC_POST = "jflame/examples/LockedLedger.post"
QUEUE = "java/util/concurrent/LinkedBlockingQueue."
JUC_LOCK = "java/util/concurrent/locks/ReentrantLock$NonfairSync_[l]"
WRAPPER = "jflame_unsafe_park"  # the agent's Unsafe.park wrapper, as native frames are named
IDLE = ("ledger-idle", "ledger-pool", "ledger-latch")
TOTALS = re.compile(r"jflame-example: totals monotonic_ns (\d+) blocked_ns (\d+) calls (\d+)")
SECONDS = 5


def slurp(path):
    with open(path) as f:
        return f.read()


class LockBase(unittest.TestCase):
    """One LockContend JVM for the class: each recording is measured against
    the waiter's own totals around it, and what a recording leaves behind (the
    lock events and the park hook off again) is what the tests check."""
    LOCK = "monitor"

    @classmethod
    def setUpClass(cls):
        jvmtest.check_setup()
        jvmtest.require(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        cls.shared_tmp = tempfile.mkdtemp(prefix="jflame-lock-")
        cls.addClassCleanup(shutil.rmtree, cls.shared_tmp, True)
        cls.recordings = None
        cls.jvm = Jvm(["--seconds", "600", "--lock", cls.LOCK], agent_opts="",
                      jvm_flags=["-XX:+PreserveFramePointer"], main="jflame.examples.LockContend", ready=READY)
        cls.addClassCleanup(cls.jvm.cleanup)

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="jflame-lock-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def out(self, name):
        return os.path.join(self.tmp, name)

    def totals(self):
        m = TOTALS.findall(self.jvm.stdout())
        self.assertTrue(m, "no totals line from LockContend:\n" + self.jvm.stdout()[-2000:])
        return [int(x) for x in m[-1]]

    def record(self, *args):
        """Records the JVM; the waiter's own blocked ns over the recording,
        from its totals lines (every 200 ms) right before and after it."""
        before = self.totals()
        r = subprocess.run([JFLAME, "record", "-p", str(self.jvm.pid), "-d", str(SECONDS)] + list(args),
                           capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        self.assertEqual(r.returncode, 0, "jflame record failed:\n" + r.stderr)
        time.sleep(0.3)
        after = self.totals()
        # the totals bracket the recording by up to 200 ms each side: scale to its length
        span = (after[0] - before[0]) / 1e9
        return r, (after[1] - before[1]) * SECONDS / span

    def two_recordings(self):
        """Two `-e lock` recordings one after the other (the first also to a flame
        graph and speedscope), made once for the class: [(folded, the ns the waiter
        measured blocked over it)] for each."""
        cls = type(self)
        if cls.recordings is None:
            out = lambda name: os.path.join(cls.shared_tmp, name)
            r, ns1 = self.record("-e", "lock", "-o", out("lock1.folded"), "-o", out("lock1.svg"),
                                 "-o", out("lock1.json"))
            time.sleep(1)
            r, ns2 = self.record("-e", "lock", "-o", out("lock2.folded"))
            cls.recordings = [(out("lock1.folded"), ns1), (out("lock2.folded"), ns2)]
        return cls.recordings

    def check_two_recordings(self, leaf, through):
        """Two recordings one after the other: each one's waits add up to what the
        waiter measured over it (a wait seen beginning in the first recording and
        ending in the second belongs to neither)."""
        for k, (folded, measured_ns) in enumerate(self.two_recordings(), 1):
            self.waits_match(self.waiter(folded), leaf, through, measured_ns, "recording %d: " % k)

    def waits_match(self, stacks, leaf, through, measured_ns, what=""):
        """The waiter's stacks with leaf through the frame through: there are some, and
        their µs add up to the ns the waiter measured within 15%. Returns them."""
        on_lock = [(f, n) for f, n in stacks if f[-1] == leaf and through in f]
        self.assertTrue(on_lock, "%sno %s leaf through %s:\n%s" % (what, leaf, through, stacks[:5]))
        us = sum(n for f, n in on_lock)
        self.assertLess(abs(us * 1e3 - measured_ns) / measured_ns, 0.15,
                        "%slock graph %.1f ms, the waiter measured %.1f ms blocked"
                        % (what, us / 1e3, measured_ns / 1e6))
        return on_lock

    def thread(self, folded, name):
        root = "[%d] java" % self.jvm.pid
        return [(f, n) for f, n in read_folded(folded) if f[0] == root and len(f) > 2 and f[1] == name]

    def waiter(self, folded):
        stacks = self.thread(folded, WAITER)
        self.assertTrue(stacks, "no stacks of %s in %s:\n%s" % (WAITER, folded, slurp(folded)[:3000]))
        return stacks


class LockCase(LockBase):
    def test_lock_blocked_time(self):
        folded, measured_ns = self.two_recordings()[0]
        self.waits_match(self.waiter(folded), LEDGER, POST, measured_ns)
        text = slurp(folded[:-len(".folded")] + ".svg")
        self.assertIn("lock (monitor class)", text)
        self.assertIn("Lock: ", text)
        self.assertRegex(text, r"<title>jflame/examples/Ledger \([0-9,.]+ ms, ")
        self.assertIn('"unit": "nanoseconds"', slurp(folded[:-len(".folded")] + ".json").replace('":"', '": "'))

    def test_two_recordings(self):
        self.check_two_recordings(LEDGER, POST)

    def test_offcpu_shows_the_monitor_wait(self):
        folded = self.out("offcpu.folded")
        r, measured_ns = self.record("-e", "offcpu", "-o", folded)
        stacks = self.waiter(folded)
        # Ledger.post, then (above it) the JVM's monitor enter and the kernel's futex wait
        through = []
        for f, n in stacks:
            if POST + "_[j]" in f or POST + "_[0]" in f or POST + "_[i]" in f:
                i = max(k for k, x in enumerate(f) if x.startswith(POST))
                above = f[i + 1:]
                if any("ObjectMonitor" in x for x in above) and any("futex" in x for x in above):
                    through.append((f, n))
        self.assertTrue(through, "no off-CPU stack of %s through %s, ObjectMonitor and futex:\n%s"
                        % (WAITER, POST, "\n".join(";".join(f) for f, n in stacks[:5])))
        us = sum(n for f, n in through)
        self.assertGreater(us * 1e3, 0.5 * measured_ns,
                           "monitor waits %.1f ms off CPU, the waiter measured %.1f ms blocked"
                           % (us / 1e3, measured_ns / 1e6))


class JucLockCase(LockBase):
    LOCK = "juc"

    def test_juc_lock_blocked_time(self):
        folded, measured_ns = self.two_recordings()[0]
        on_lock = self.waits_match(self.waiter(folded), JUC_LOCK, JUC_POST, measured_ns)
        # the Java frames down to LockSupport.park; the wrapped Unsafe.park itself left out
        f = on_lock[0][0]
        i = f.index(JUC_POST)
        above = f[i + 1:]
        self.assertIn("java/util/concurrent/locks/ReentrantLock.lock", above, f)
        self.assertEqual(above[-2], "java/util/concurrent/locks/LockSupport.park", f)
        self.assertFalse([x for x in f if "Unsafe.park" in x], f)
        # no JVM warning about re-registering a platform native method
        self.assertNotIn("Re-registering", self.jvm.stdout() + self.jvm.stderr())

    def test_two_recordings(self):
        self.check_two_recordings(JUC_LOCK, JUC_POST)

    def test_waiting_is_not_contention(self):
        """Parks on a Condition (awaitNanos, an idle executor's worker in
        LinkedBlockingQueue.take) and on a CountDownLatch give no lock samples,
        although each of those threads parks every 2 ms for about 2 ms."""
        for folded, _ in self.two_recordings():
            self.waiter(folded)
            self.no_waiting_samples(folded)

    def no_waiting_samples(self, folded):
        for name in IDLE:
            stacks = self.thread(folded, name)
            self.assertFalse([(f, n) for f, n in stacks if "ConditionObject" in f[-1] or "CountDownLatch" in f[-1]],
                             "%s: lock samples on a Condition or latch:\n%s" % (name, stacks[:5]))
            # the executor's queue locks (takeLock/putLock: the worker's take and the idle
            # thread's execute -> offer -> signalNotEmpty) are real, rarely contended locks
            # (under ASan a ~1 ms wait there shows up); nothing else may
            other = [(f, n) for f, n in stacks if not any(x.startswith(QUEUE) for x in f)]
            self.assertFalse(other, "%s: lock samples of a thread that only waits:\n%s" % (name, other[:5]))
            self.assertLess(sum(n for f, n in stacks), 50e3, "%s: %s" % (name, stacks[:5]))

    def test_park_is_the_jvms_own_again(self):
        """While a lock recording runs, Unsafe.park runs through the agent's
        wrapper (it shows in the waiter's off-CPU stacks, the status file says
        park_hook=on); after it, the status says lock_events=off and park_hook=off,
        and off-CPU stacks of the same wait go from Unsafe.park straight into the JVM."""
        both = self.out("offcpu.folded")
        rec = subprocess.Popen([JFLAME, "record", "-p", str(self.jvm.pid), "-d", str(SECONDS), "-e", "offcpu,lock",
                                "-o", both, "-o", self.out("lock.folded")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
        try:
            self.jvm.wait_status(lambda st: st.get("park_hook") == "on" and st.get("lock_events") == "on", 10)
        finally:
            out, err = rec.communicate(timeout=120)
        self.assertEqual(rec.returncode, 0, "jflame record failed:\n" + err)
        during = [(f, n) for f, n in self.waiter(both) if JUC_POST + "_[j]" in f or JUC_POST + "_[i]" in f
                  or JUC_POST + "_[0]" in f]
        self.assertTrue([f for f, n in during if any(WRAPPER in x for x in f)],
                        "no off-CPU stack of the waiter through %s while recording locks:\n%s"
                        % (WRAPPER, "\n".join(";".join(f) for f, n in during[:5])))
        st = self.jvm.wait_status(lambda st: st.get("park_hook") == "off" and st.get("lock_events") == "off", 10)
        self.assertEqual(st.get("error", ""), "")
        after = self.out("after.folded")
        self.record("-e", "offcpu", "-o", after)
        parked = [(f, n) for f, n in self.waiter(after)
                  if any(x.startswith("jdk/internal/misc/Unsafe.park") for x in f)]
        self.assertTrue(parked, "no off-CPU stack of the waiter through Unsafe.park after the lock recording")
        self.assertFalse([f for f, n in parked if any(WRAPPER in x for x in f)],
                         "Unsafe.park still runs through %s after the lock recording" % WRAPPER)
        self.assertNotIn("Re-registering", self.jvm.stdout() + self.jvm.stderr())


if __name__ == "__main__":
    jvmtest.main()
