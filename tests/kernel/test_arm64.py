# test_arm64.py - jflame on arm64 for real (issue 36): the arm64 build (scripts/cross-build.sh:
# jflame, the agent and the BPF walker for __TARGET_ARCH_arm64) boots with Debian bookworm's
# arm64 kernel under qemu-system-aarch64 (run-vm-arm64.sh, on rootfs-arm64.sh's root file
# system with Debian's arm64 OpenJDK 17) and records a JVM there (checks-arm64.sh), held to
# the host's assertions for agentless CPU recording: the program loads, stacks reach their
# thread's start (no PreserveFramePointer), interpreted, compiled and inlined frames named,
# full Java thread names, the vDSO named, and -a beside it; a never-compiled method named,
# a 700-deep recursion whole, launch mode; and for the agent's events,
# attached by pid: lock samples on the contended Ledger through Ledger.post, allocation
# samples of byte[] under makeBytes and String under makeStrings.
#
# JFLAME_ARM64_BUILD: the cross build's directory (built or brought up to date here);
# JFLAME_KERNEL_OUT: where the guest's console, res/ and timing go.
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

import jvmtest  # noqa: E402
from jvmtest import read_folded  # noqa: E402
import test_alloc  # noqa: E402
import test_lock  # noqa: E402
from test_walker import UNNAMED, java_region, reaches_entry  # noqa: E402

BUILD = os.environ.get("JFLAME_ARM64_BUILD") or os.path.join(SRC, "build-arm64")
OUT = os.environ.get("JFLAME_KERNEL_OUT") or "/tmp/jflame-kernel-arm64"
JAR = os.environ.get("JFLAME_EXAMPLES_JAR", "")
HOT = "jflame-hot-worker-thread-with-a-long-name"
WORK = "jflame-mixed-work-thread-with-a-long-name"


def slurp(path, default=None):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        if default is None:
            raise
        return default


class Arm64Test(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        jvmtest.require(os.geteuid() == 0, "the arm64 guest runs as root (the cached root file system, binfmt_misc)")
        for tool in ("qemu-system-aarch64", "aarch64-linux-gnu-gcc", "mke2fs", "debugfs", "mmdebstrap"):
            jvmtest.require(subprocess.run(["sh", "-c", "command -v " + tool], capture_output=True).returncode == 0,
                            "%s missing; run scripts/deps.sh" % tool)
        jvmtest.require(os.path.isfile(JAR), "examples jar not built (JFLAME_EXAMPLES_JAR=%r)" % JAR)
        # the same configuration as unit.arm64's (which leaves it in BUILD): nothing to rebuild after it
        r = subprocess.run(["bash", os.path.join(SRC, "scripts", "cross-build.sh"), BUILD, "-DBUILD_TESTING=ON",
                            "-DJFLAME_MAN=OFF"], capture_output=True, text=True, timeout=1200)
        if r.returncode != 0:
            raise AssertionError("the arm64 cross build failed:\n%s" % (r.stdout + r.stderr)[-4000:])
        extra = [os.path.join(BUILD, "native", "jflame"), os.path.join(BUILD, "jvmagent", "libjflame-agent.so"), JAR]
        r = subprocess.run(["bash", os.path.join(HERE, "run-vm-arm64.sh"), os.path.join(HERE, "checks-arm64.sh"), OUT],
                           capture_output=True, text=True, timeout=1500, stdin=subprocess.DEVNULL,
                           env=dict(os.environ, JFLAME_KERNEL_EXTRA=" ".join(extra),
                                    JFLAME_KERNEL_TIMEOUT=os.environ.get("JFLAME_KERNEL_TIMEOUT", "900")))
        cls.log = r.stdout + r.stderr
        print("\n" + cls.log.strip(), file=sys.stderr)
        if r.returncode != 0:
            raise AssertionError("run-vm-arm64.sh failed (exit %d):\n%s" % (r.returncode, cls.log[-6000:]))
        cls.res = os.path.join(OUT, "res")
        print("arm64 guest: kernel %s, %s; timeline %s" % (
            slurp(os.path.join(cls.res, "uname"), "?").strip(),
            slurp(os.path.join(cls.res, "java-version"), "?").splitlines()[:1],
            " ".join(slurp(os.path.join(cls.res, "timeline"), "").split())), file=sys.stderr)

    def ran(self, mode, expect=0):
        rc = slurp(os.path.join(self.res, mode + ".rc"), "").strip()
        err = slurp(os.path.join(self.res, mode + ".err"), "")
        self.assertEqual(rc, str(expect), "jflame record (%s) exited %r on arm64:\n%s\nworkload: %s" % (
            mode, rc, err[-3000:], slurp(os.path.join(self.res, "mixed.out"), "")[-1000:]))
        return err

    def test_cpu_agentless(self):
        """record -p of Workload mixed: whole, named stacks and full thread names."""
        err = self.ran("cpu")
        pid = int(slurp(os.path.join(self.res, "mixed.pid")).strip())
        stacks = [(f, n) for f, n in read_folded(os.path.join(self.res, "cpu.folded"))
                  if len(f) > 2 and f[0] == "[%d] java" % pid]
        total = sum(n for _, n in stacks)
        threads = {f[1] for f, _ in stacks}
        self.assertGreater(total, 200, err)
        self.assertIn(HOT, threads, "the hot thread's full name: %s" % sorted(threads))
        self.assertIn(WORK, threads, "the work thread's full name: %s" % sorted(threads))
        named = [(f, n) for f, n in stacks if f[1] in (HOT, WORK)]
        mine = sum(n for _, n in named)
        whole = sum(n for f, n in named if reaches_entry(f[2:]))
        unnamed = sum(n for f, n in named if any(x in UNNAMED for x in f))
        failed = sum(n for f, n in stacks if "[unwind failed]" in f)
        print("arm64: %d samples, the two threads' %d: %d whole, %d with an unnamed frame; [unwind failed] %d; %s" % (
            total, mine, whole, unnamed, failed, err.strip().splitlines()[-1:]), file=sys.stderr)
        self.assertGreaterEqual(whole, mine * 0.99, [";".join(f[-4:]) for f, _ in named if not reaches_entry(f[2:])][:5])
        self.assertLess(unnamed, mine * 0.01, [";".join(f[-4:]) for f, _ in named if any(x in UNNAMED for x in f)][:5])
        frames = {x for f, _ in named for x in f}
        # interpreted and compiled Java frames, HotSpot's C++ and libc, and the vDSO (arm64's names)
        self.assertTrue(any(x.startswith("java/lang/Thread.run_[") for x in frames))
        self.assertTrue(any(x.startswith("jflame/examples/Workload.") and x.endswith("_[j]") for x in frames),
                        "no compiled Workload frame")
        self.assertIn("JavaCalls::call_helper", frames)
        self.assertIn("__kernel_clock_gettime", frames, "the vDSO's clock_gettime, named")
        # -XX:+DebugNonSafepoints: the hot loop's inlined callees from the nmethods' scopes
        hot = [f for f, _ in named if f[1] == HOT]
        inlined = {x for f in hot for x in f if x.endswith("_[i]")}
        self.assertTrue({"jflame/examples/Workload.mix_[i]", "jflame/examples/HotMath.scramble_[i]",
                         "jflame/examples/Workload.spin_[i]"} & inlined,
                        "no inlined frame on the hot thread; its leaves: %s" % sorted({f[-1] for f in hot})[:10])

    def test_all(self):
        """record -a beside it: the JVM's threads among every process's."""
        err = self.ran("all")
        stacks = read_folded(os.path.join(self.res, "all.folded"))
        self.assertGreater(sum(n for _, n in stacks), 50, err)
        self.assertTrue(any(len(f) > 1 and f[1] == HOT for f, _ in stacks), "the hot thread under -a")

    def thread(self, mode, name):
        """MODE's stacks of the JVM MODE.pid names, on its thread NAME."""
        pid = self.pid(mode)
        return [(f, n) for f, n in read_folded(os.path.join(self.res, mode + ".folded"))
                if len(f) > 2 and f[0] == "[%d] java" % pid and f[1] == name]

    def test_interpreted(self):
        """A method HotSpot never compiles (Stacks.huge, over HugeMethodLimit) named
        from its interpreter frame, on whole stacks, agentless."""
        err = self.ran("huge")
        stacks = self.thread("huge", "jflame-huge-method")
        total = sum(n for _, n in stacks)
        huge = sum(n for f, n in stacks if "jflame/examples/Stacks.huge_[0]" in f)
        whole = sum(n for f, n in stacks if reaches_entry(f[2:]))
        named = unnamed = 0
        for f, n in stacks:
            named += n * sum(1 for x in java_region(f) if x.endswith("_[0]"))
            unnamed += n * sum(1 for x in java_region(f) if x == "Interpreter")
        print("arm64: huge method %d of %d samples, %d whole; interpreted frames %d named, %d not" % (
            huge, total, whole, named, unnamed), file=sys.stderr)
        self.assertGreater(total, 100, err[-2000:])
        self.assertGreaterEqual(huge, total * 0.9, [";".join(f[-3:]) for f, _ in stacks][:5])
        self.assertFalse(any("Stacks.huge_[j]" in f for f, _ in stacks), "the huge method was compiled")
        self.assertGreaterEqual(whole, total * 0.99, [";".join(f[:4]) for f, _ in stacks if not reaches_entry(f[2:])][:5])
        self.assertGreaterEqual(named, (named + unnamed) * 0.99, "interpreted frames: %d named, %d not" % (named, unnamed))

    def test_deep_recursion(self):
        """A 700-deep recursion (one compiled frame a level) walked whole from the
        bottom to the thread's start, nothing truncated."""
        err = self.ran("deep")
        stacks = [(f, n) for f, n in self.thread("deep", "jflame-deep-700")
                  if any(x.startswith("jflame/examples/Stacks.bottom_[") for x in f)]
        total = sum(n for _, n in stacks)
        whole = sum(n for f, n in stacks if reaches_entry(f[2:]) and "[truncated]" not in f and
                    sum(1 for x in f if x.startswith("jflame/examples/Stacks.descend_[")) >= 700)
        print("arm64: 700 deep: %d of %d samples at the bottom whole; depths %s" % (
            whole, total, sorted({len(f) for f, _ in stacks})[:6]), file=sys.stderr)
        self.assertGreater(total, 100, err[-2000:])
        self.assertGreaterEqual(whole, total * 0.95, [(len(f), f[:4]) for f, _ in stacks][:5])

    def test_launch(self):
        """record -- java ...: the JVM's exit code (7) passes through, its output is
        its own, its hot thread recorded whole by the HotSpot walker."""
        err = self.ran("launch", expect=7)
        self.assertIn("jflame-workload: ready", slurp(os.path.join(self.res, "launch.stdout"), ""))
        stacks = read_folded(os.path.join(self.res, "launch.folded"))
        pids = {f[0] for f, _ in stacks if len(f) > 1 and f[1] == HOT}
        self.assertEqual(len(pids), 1, (pids, err[-2000:]))
        root = pids.pop()
        spin = [(f, n) for f, n in stacks if f[0] == root and f[1] == HOT and
                any(x.startswith("jflame/examples/Workload.spin_[") for x in f)]
        total = sum(n for _, n in spin)
        whole = sum(n for f, n in spin if reaches_entry(f[2:]))
        print("arm64: launch: %d samples in Workload.spin, %d whole" % (total, whole), file=sys.stderr)
        self.assertGreater(total, 100, err[-2000:])
        self.assertGreater(whole, total * 0.9, [";".join(f[:4]) for f, _ in spin if not reaches_entry(f[2:])][:3])
        self.assertIn("Java stacks: HotSpot walker", slurp(os.path.join(self.res, "launch.svg")))

    def pid(self, name):
        return int(slurp(os.path.join(self.res, name + ".pid")).strip())

    def test_lock(self):
        """-e lock -p of LockContend (the arm64 agent attached by pid): the waiter's
        samples on the contended Ledger through Ledger.post."""
        err = self.ran("lock")
        pid = self.pid("lockcontend")
        stacks = [(f, n) for f, n in read_folded(os.path.join(self.res, "lock.folded"))
                  if f[0] == "[%d] java" % pid and len(f) > 2 and f[1] == test_lock.WAITER]
        on_lock = sum(n for f, n in stacks if f[-1] == test_lock.LEDGER and test_lock.POST in f)
        print("arm64: lock graph %.1f ms on %s through %s" % (on_lock / 1e3, test_lock.LEDGER, test_lock.POST),
              file=sys.stderr)
        self.assertGreater(on_lock, 0, "no %s leaf through %s:\n%s\n%s" % (test_lock.LEDGER, test_lock.POST,
                                                                           stacks[:5], err[-2000:]))

    def test_alloc(self):
        """-e alloc -p of AllocMix (attached): every leaf an allocated class; byte[]
        under makeBytes and String under makeStrings."""
        err = self.ran("alloc")
        pid = self.pid("allocmix")
        stacks = read_folded(os.path.join(self.res, "alloc.folded"))
        self.assertTrue(stacks, err[-2000:])
        for f, n in stacks:
            self.assertTrue(f[-1].endswith("_[a]"), "leaf is not an allocated class: %r" % f[-1])
        mine = [(f, n) for f, n in stacks if f[0] == "[%d] java" % pid and len(f) > 2 and f[1] == test_alloc.THREAD]
        b = sum(n for f, n in mine if f[-1] == "byte[]_[a]" and f[-2] == test_alloc.MAKE_BYTES)
        s = sum(n for f, n in mine if f[-1] == "java/lang/String_[a]" and test_alloc.MAKE_STRINGS in f)
        print("arm64: alloc byte[] under makeBytes %d, String under makeStrings %d" % (b, s), file=sys.stderr)
        self.assertGreater(b, 0, "no byte[] under makeBytes: %s" % [";".join(f[-3:]) for f, _ in mine][:5])
        self.assertGreater(s, 0, "no String under makeStrings: %s" % [";".join(f[-3:]) for f, _ in mine][:5])


if __name__ == "__main__":
    jvmtest.main()
