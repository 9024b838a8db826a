# test_lock.py - `jflame record -e lock` and `-e offcpu` on LockContend: the thread
# "ledger-waiter" blocks ~90% of its time on a Ledger monitor the holder keeps; its
# lock samples (Ledger_[l] leaf, through Ledger.post) must add up to the blocked time
# it measures itself, and its off-CPU stacks show Ledger.post above the JVM's monitor
# and futex frames.
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
TOTALS = re.compile(r"jflame-example: totals monotonic_ns (\d+) blocked_ns (\d+) calls (\d+)")
SECONDS = 5


def slurp(path):
    with open(path) as f:
        return f.read()


class LockCase(unittest.TestCase):
    def setUp(self):
        jvmtest.check_setup()
        jvmtest.require(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        self.tmp = tempfile.mkdtemp(prefix="jflame-lock-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.jvm = Jvm(["--seconds", "120"], agent_opts="", jvm_flags=["-XX:+PreserveFramePointer"],
                       main="jflame.examples.LockContend", ready=READY)
        self.addCleanup(self.jvm.cleanup)

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

    def waiter(self, folded):
        root = "[%d] java" % self.jvm.pid
        stacks = [(f, n) for f, n in read_folded(folded) if f[0] == root and len(f) > 2 and f[1] == WAITER]
        self.assertTrue(stacks, "no stacks of %s in %s:\n%s" % (WAITER, folded, slurp(folded)[:3000]))
        return stacks

    def test_lock_blocked_time(self):
        folded, svg = self.out("lock.folded"), self.out("lock.svg")
        r, measured_ns = self.record("-e", "lock", "-o", folded, "-o", svg, "-o", self.out("lock.json"))
        stacks = self.waiter(folded)
        on_ledger = [(f, n) for f, n in stacks if f[-1] == LEDGER and POST in f]
        self.assertTrue(on_ledger, "no %s leaf through %s:\n%s" % (LEDGER, POST, stacks[:5]))
        us = sum(n for f, n in on_ledger)
        self.assertLess(abs(us * 1e3 - measured_ns) / measured_ns, 0.15,
                        "lock graph %.1f ms, the waiter measured %.1f ms blocked" % (us / 1e3, measured_ns / 1e6))
        text = slurp(svg)
        self.assertIn("lock (monitor class)", text)
        self.assertIn("Lock: ", text)
        self.assertRegex(text, r"<title>jflame/examples/Ledger \([0-9,.]+ ms, ")
        self.assertIn('"unit": "nanoseconds"', slurp(self.out("lock.json")).replace('":"', '": "'))

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


if __name__ == "__main__":
    jvmtest.main()
