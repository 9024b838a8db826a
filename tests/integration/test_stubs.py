# test_stubs.py - whole stacks through HotSpot's generated stubs (#34): StubMix
# runs a thread per family (TLS with AES-GCM, SHA-256/512, MD5, CRC32/CRC32C,
# Adler32, Base64, RSA, copies, fills, compares, math) without
# -XX:+PreserveFramePointer; recorded agentless (-p) and with the agent
# (--attach), the samples whose leaf is a stub (the JVM's own list of them,
# read by hotspot_probe --stubs) run from the thread's start through their Java
# caller to the stub, and [unwind failed] stays under 0.5% of the workload's.
# Also C1's stubs (C1StubsTest) and the stubs the interpreter's intrinsic
# entries call (InterpEntryStubsTest).
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
# C1's stubs: in Runtime1::_blobs (JDK 17 "slow_subtype_check Runtime1 stub", 25 "C1 Runtime
# slow_subtype_check_blob"), and G1's barrier stubs, which have no frame size either
C1_STUB = re.compile(r"( Runtime1 stub|^C1 Runtime .*_blob|^g1_(pre|post)_barrier_slow)$")
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


class OneJvmStubsCase(unittest.TestCase):
    """One JVM (ARGS, FLAGS, MAIN) recorded agentless for 5 s; tally() counts its
    samples whose user leaf is_stub(leaf) and those of them whole with a Java
    caller (caller(frames, at): the frame below the leaf, at f[at - 1], judged)."""
    ARGS, FLAGS, MAIN, PREFIX = (), (), "", "jflame-stubs-"

    @classmethod
    def setUpClass(cls):
        jvmtest.check_setup()
        jvmtest.require(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        cls.tmp = tempfile.mkdtemp(prefix=cls.PREFIX)
        cls.jvm = Jvm(list(cls.ARGS), agent_opts=None, jvm_flags=list(cls.FLAGS), main=cls.MAIN,
                      ready="jflame-example: ready")

    @classmethod
    def tearDownClass(cls):
        cls.jvm.cleanup()
        shutil.rmtree(cls.tmp, True)

    def tally(self, is_stub, caller):
        """(samples, in stubs, of them whole with a Java caller, [unwind failed] by last frames, stderr)."""
        folded = os.path.join(self.tmp, "stubs.folded")
        r = jvmtest.record(["-p", str(self.jvm.pid), "-d", "5", "-o", folded], timeout=180)
        stacks = [(f, n) for f, n in jvmtest.read_folded(folded) if len(f) > 1 and f[0] == "[%d] java" % self.jvm.pid]
        failed = collections.Counter()
        stubs = good = 0
        for f, n in stacks:
            if "[unwind failed]" in f:
                failed[";".join(f[-3:])] += n
            leaf = user_leaf(f)
            if not is_stub(leaf or ""):
                continue
            at = len(f) - 1 - f[::-1].index(leaf)
            stubs += n
            if any(x.startswith("start_thread") for x in f[2:8]) and caller(f, at):
                good += n
        return sum(n for _, n in stacks), stubs, good, failed, r.stderr


class C1StubsTest(OneJvmStubsCase):
    """C1's runtime stubs that HotSpot gives no frame size (g1_post_barrier_slow,
    slow_subtype_check: Runtime1::_blobs): the Kafka-style example compiled by C1
    alone (-XX:TieredStopAtLevel=1, as a slow or busy host runs it for minutes)
    spends ~10% in them; each such sample is whole, with its Java caller."""
    ARGS = ("--seconds", "300", "--format", "string-format")
    FLAGS = ("-XX:TieredStopAtLevel=1",)
    MAIN, PREFIX = "jflame.examples.KafkaStyle", "jflame-c1-stubs-"

    def test_c1_stubs_unwound(self):
        total, c1, good, failed, err = self.tally(
            lambda leaf: C1_STUB.search(leaf) is not None,
            lambda f, at: at > 0 and JAVA_FRAME.search(f[at - 1]) is not None)
        print("\nJDK %d C1 only: %d samples, %d in C1's stubs, %d of them whole with a Java caller, %d [unwind "
              "failed]" % (jvmtest.java_version(), total, c1, good, sum(failed.values())), file=sys.stderr)
        self.assertGreater(total, 200, err)
        self.assertGreater(c1, 10, "samples in C1's g1_post_barrier_slow / Runtime1 stubs")
        self.assertGreaterEqual(good, c1 * 0.95)
        # a sample in the caller between the return from slow_subtype_check and the
        # pops of its two arguments is not unwound (~0.2%: docs/walker.md)
        self.assertLess(sum(failed.values()), total * 0.01, failed.most_common(5))


class InterpEntryStubsTest(OneJvmStubsCase):
    """The interpreter's intrinsic entries for CRC32.updateBytes and
    CRC32C.updateBytes call their stub without a frame of their own; compiled
    code reaches them through a c2i adapter whenever it calls the method
    instead of inlining its intrinsic (C1, a JIT that has not got to it yet, an
    emulated CPU: 5% of the Kafka example's producer in a qemu guest). Forced
    here: the JIT's intrinsics off and the methods kept from compiling. Each
    sample in the stubs is whole with its Java caller (JDK 17 has the entries;
    JDK 25 interprets the methods' bytecode instead)."""
    ARGS = ("--seconds", "300", "--families", "crc32,crc32c")
    FLAGS = ("-XX:+UnlockDiagnosticVMOptions", "-XX:DisableIntrinsic=_updateBytesCRC32C,_updateBytesCRC32,_updateCRC32",
             "-XX:CompileCommand=quiet", "-XX:CompileCommand=exclude,java.util.zip.CRC32C::updateBytes",
             "-XX:CompileCommand=exclude,java.util.zip.CRC32::updateBytes0")
    MAIN, PREFIX = "jflame.examples.StubMix", "jflame-interp-stubs-"

    def test_interp_entry_stubs_unwound(self):
        def java_caller(f, at):
            # the stub, the interpreter's entry (named as the interpreter), the Java caller
            java = [x for x in f[:at] if JAVA_FRAME.search(x) or x.endswith("_[i]")]
            return (any(x.startswith("java/lang/Thread.run_[") for x in f) and java and
                    java[-1].startswith(("java/util/zip/CRC32", "jflame/examples/StubMix")))
        total, crc, good, failed, err = self.tally(
            lambda leaf: leaf in ("updateBytesCRC32", "updateBytesCRC32C"), java_caller)
        jdk = jvmtest.java_version()
        print("\nJDK %d, intrinsics through the interpreter's entries: %d samples, %d in the CRC stubs, %d of them "
              "whole with their Java caller, %d [unwind failed]" % (jdk, total, crc, good, sum(failed.values())),
              file=sys.stderr)
        self.assertGreater(total, 200, err)
        if jdk < 25:
            self.assertGreater(crc, 50, "samples in updateBytesCRC32/updateBytesCRC32C through the interpreter")
        self.assertGreaterEqual(good, crc * 0.95, failed.most_common(5))
        self.assertLess(sum(failed.values()), total * 0.01, failed.most_common(5))

if __name__ == "__main__":
    jvmtest.main()
