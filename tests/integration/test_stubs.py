# test_stubs.py - whole stacks through HotSpot's generated stubs (#34): StubMix
# runs a thread per family (TLS with AES-GCM, SHA-256/512, MD5, CRC32/CRC32C,
# Adler32, Base64, RSA, copies, fills, compares, math) without
# -XX:+PreserveFramePointer; recorded agentless (-p) and with the agent
# (--attach), the samples whose leaf is a stub (the JVM's own list of them,
# read by hotspot_probe --stubs) run from the thread's start through their Java
# caller to the stub, and [unwind failed] stays under 0.5% of the workload's.
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import jvmtest
from jvmtest import Jvm

JFLAME = os.environ.get("JFLAME_BIN", "")
PROBE = os.environ.get("JFLAME_HOTSPOT_PROBE") or os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(JFLAME or "."))), "tests", "unit", "hotspot_probe")
JAVA_FRAME = re.compile(r"_\[[ji0]\]$")
# the families whose threads spend most of their time in a stub on every JDK
# and CPU here (the others are measured, not required: their work is compiled
# Java or libjvm's C++ on some CPUs)
STUB_FAMILIES = ("sha256", "sha512", "md5", "crc32", "crc32c", "adler32", "arraycopy", "mismatch")


def user_leaf(frames):
    """The last frame that is not the kernel's (an interrupt on the stub)."""
    for f in reversed(frames):
        if not f.endswith("_[k]"):
            return f
    return None


class StubsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        jvmtest.check_setup()
        jvmtest.require(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        jvmtest.require(os.access(PROBE, os.X_OK), "hotspot_probe not built (%s)" % PROBE)
        cls.tmp = tempfile.mkdtemp(prefix="jflame-stubs-")
        cls.jdk = jvmtest.java_version()
        cls.jvm = Jvm(["--seconds", "300"], agent_opts=None, main="jflame.examples.StubMix",
                      ready="jflame-example: ready")
        r = subprocess.run([PROBE, str(cls.jvm.pid), "--stubs"], capture_output=True, text=True, timeout=60)
        cls.probe_err = r.stderr
        cls.stubs = {l.split()[1] for l in r.stdout.splitlines() if l.startswith("stub ")}

    @classmethod
    def tearDownClass(cls):
        cls.jvm.cleanup()
        shutil.rmtree(cls.tmp, True)

    def record(self, name, *extra):
        folded = os.path.join(self.tmp, name + ".folded")
        r = jvmtest.record(["-p", str(self.jvm.pid), "-d", "5", "-o", folded] + list(extra), timeout=180)
        return [(f, n) for f, n in jvmtest.read_folded(folded)
                if len(f) > 1 and f[0] == "[%d] java" % self.jvm.pid], r.stderr

    def check(self, how, stacks, err):
        self.assertGreater(len(self.stubs), 100, self.probe_err)
        total = sum(n for _, n in stacks)
        failed = sum(n for f, n in stacks if "[unwind failed]" in f)
        per = collections.defaultdict(lambda: [0, 0, 0])  # family: stub leaves, whole, with a Java caller
        broken = collections.Counter()
        for f, n in stacks:
            thread = f[1]
            if not thread.startswith("stub-"):
                continue
            leaf = user_leaf(f)
            if leaf not in self.stubs:
                continue
            fam = per[thread[5:]]
            fam[0] += n
            at = len(f) - 1 - f[::-1].index(leaf)
            whole = (any(x.startswith("start_thread") for x in f[2:8]) and
                     any(x.startswith("java/lang/Thread.run_[") for x in f))
            caller = at > 0 and JAVA_FRAME.search(f[at - 1]) is not None
            fam[1] += n if whole else 0
            fam[2] += n if whole and caller else 0
            if not (whole and caller):
                broken[";".join(f[-4:])] += n
        print("\nJDK %d %s: %d samples, %d [unwind failed]; stub leaves (whole, with a Java caller) by family: %s"
              % (self.jdk, how, total, failed,
                 ", ".join("%s %d (%d, %d)" % (k, v[0], v[1], v[2]) for k, v in sorted(per.items()))),
              file=sys.stderr)
        self.assertGreater(total, 200, err)
        self.assertLess(failed, total * 0.005, "[unwind failed] %d of %d: %s" % (failed, total, broken.most_common(5)))
        for fam in STUB_FAMILIES:
            self.assertGreater(per[fam][0], 0, "no sample of stub-%s in a stub: %s" % (fam, dict(per)))
        leaves = sum(v[0] for v in per.values())
        good = sum(v[2] for v in per.values())
        self.assertGreaterEqual(good, leaves * 0.99, "stub leaves whole with their Java caller: %d of %d; not: %s"
                                % (good, leaves, broken.most_common(5)))
        for fam, v in per.items():
            if v[0] >= 20:
                self.assertGreaterEqual(v[2], v[0] * 0.95, "stub-%s: %d of %d whole with a Java caller: %s"
                                        % (fam, v[2], v[0], broken.most_common(5)))

    def test_1_agentless(self):
        """-p: no agent, the walker alone (the JVM's own stub list and code)."""
        stacks, err = self.record("agentless")
        self.check("agentless", stacks, err)

    def test_2_with_the_agent(self):
        """--attach: the same with the agent's names for compiled code."""
        stacks, err = self.record("attached", "--attach")
        self.check("with the agent", stacks, err)


if __name__ == "__main__":
    jvmtest.main()
