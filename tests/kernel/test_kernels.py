# test_kernels.py - jflame on the kernels users run: Debian's own 5.10 (bullseye),
# 6.1 (bookworm) and 6.12 (trixie) booted under qemu (run-vm.sh), and the host's
# kernel, each running the same checks (checks.sh: real JVMs without
# PreserveFramePointer, every mode of `jflame record`), held here to the host
# integration tests' assertions: whole stacks, named interpreted and inlined
# frames, full Java thread names, off-CPU, wall-clock, allocation and lock frames,
# launch mode, windows with a baseline, the hostile FIFO, and the demo's
# String.format share within 5 points of the host's. What a kernel cannot give
# is instead checked to be said (DEGRADATIONS).
#
# One kernel a run: JFLAME_KERNEL=5.10|6.1|6.12|host (or the first argument).
# JFLAME_KERNEL_OUT: where its results go (console log, res/, timing).
# JFLAME_KERNEL_HOST_RES: the host run's res/ (kernel.host), the Kafka share's
# reference; when it is missing or older than jflame, the host is recorded here.
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

import jvmtest  # noqa: E402
from jvmtest import read_folded  # noqa: E402
import test_alloc  # noqa: E402
import test_lock  # noqa: E402
import test_offcpu  # noqa: E402
from test_record import SUMMARY  # noqa: E402
from test_walker import UNNAMED, java_region, reaches_entry, thread_stacks  # noqa: E402
from test_window import TOTAL, WINDOW  # noqa: E402

KERNEL = os.environ.get("JFLAME_KERNEL") or (sys.argv.pop(1) if len(sys.argv) > 1 and not
                                             sys.argv[1].startswith("-") else "")
KERNELS = ("5.10", "6.1", "6.12", "host")
# the modes checks.sh runs (comma-separated, default all); tests of the others say they did not run.
# JFLAME_KERNEL_CHECKS, given to ctest, overrides the list CMake set for each kernel.
CHECKS = os.environ.get("JFLAME_KERNEL_CHECKS") or os.environ.get("JFLAME_CHECKS", "all")
JFLAME = os.environ.get("JFLAME_BIN", "")
OUT = os.environ.get("JFLAME_KERNEL_OUT") or os.path.join(tempfile.gettempdir(), "jflame-kernel-%s" % KERNEL)
HOST_RES = os.environ.get("JFLAME_KERNEL_HOST_RES", "")
# The JDK matrix (tests/jdk/README.md): the host's checks with a JDK of Debian's in
# its own root file system (jvmtest.jdk_root: tests/jdk/rootfs.sh builds it, once).
JDK = jvmtest.JDK
jdk_root = jvmtest.jdk_root
HOT = "jflame-hot-worker-thread-with-a-long-name"
# jflame record -v: the recording's own time, to line it up with a workload's clock
RECORDED = re.compile(r"(?m)^jflame: recorded from ([0-9.]+) to ([0-9.]+) s of CLOCK_MONOTONIC$")
# LockContend's totals: its time in post() and the JVM's count of the waiter's time blocked
LOCK_TOTALS = re.compile(r"jflame-example: totals monotonic_ns (\d+) blocked_ns (\d+) calls \d+ slow_calls \d+ "
                         r"jvm_blocked_ms (-?\d+)")
WORK = "jflame-mixed-work-thread-with-a-long-name"
# Generational ZGC moves Thread objects and heals the references to them lazily:
# jflame follows its forwarding tables (the JDK matrix's jdk.21-zgc collects twice
# before the recordings so that it must), and says once when it cannot
# (ZGC_NOTE): never in these runs.
ZGC = "ZGC" in os.environ.get("JFLAME_JVM_GC", "")
ZGC_NOTE = re.compile(r"^jflame: pid \d+ runs generational ZGC, which moves Thread objects", re.M)
PRODUCER = "kafka-producer-network-thread | producer-1"
FORMAT = "java/lang/String.format_"
HOST_WARMUP = "3"  # s after ready on the host; a guest's JIT needs more (run-vm.sh: 8)
LIMIT = {"host": 10.0}  # s a hostile-target recording may take, start-up included (test_hostile.py: 10)
# under TCG jflame's start-up (BTF, the verifier: the legacy programs on 5.10) takes
# seconds more, and more again beside another guest (5.10: 37.3 s in one CI run); what
# this holds is that the FIFO does not stop the recording (stuck: the 180-s kill)
GUEST_LIMIT = 60.0

# ---- what each kernel cannot give, and what jflame says instead --------------------
# A degradation: the line jflame prints once at start (on stderr) on that kernel, and
# the facts below it waives: a waived fact's assertion checks for the line instead.
# Facts: whole (cpu: stacks reaching their thread's start), all (the same under -a),
# interpreted, inlined, thread_names, offcpu, wall, lock, alloc, launch, window,
# hostile, kafka.
Degradation = collections.namedtuple("Degradation", "what line waives")
# the wording is jflame's (native/sampler/kernel_features.c): keep in step with it
BPF_LOOP_510 = r"(?m)^jflame: kernel 5\.10[^\n]* has no bpf_loop: Java stacks are walked to \d+ frames"
DEGRADATIONS = {
    # the legacy programs walk CPU samples to 2048 frames too (tail calls): nothing waived
    "5.10": [Degradation("no bpf_loop (5.17)", BPF_LOOP_510, set())],
    "6.1": [],
    "6.12": [],
    "host": [],
}
# any line of this shape is a degradation line: one not in the table fails the test
DEGRADATION_LINE = re.compile(r"(?m)^jflame: kernel \d+\.\d+.*$")
# the release each kernel's uname -r starts with
RELEASE = {"5.10": "5.10.", "6.1": "6.1.", "6.12": "6.12."}


def slurp(path, default=None):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except FileNotFoundError:
        if default is not None:
            return default
        raise


def share(part, whole):
    return part / whole if whole else 0.0


# Under qemu's TCG what the emulated CPU does slowly weighs more than on hardware:
# the kernel's loopback TCP path (interrupts, TLB work: 6-18% of the producer in a
# guest, 5% on the host), HotSpot's stubs (CRC32C's SSE 4.2 crc32, emulated: 3.5%
# in a guest, under 0.1% on the host; the arraycopy stubs the guest's CPU gets,
# not the host's _avx3 ones) and the JVM's own C++. The graphs are the same;
# their prices are the emulator's. So String.format's share is compared over the
# producer's samples in Java code (a Java method the leaf), which TCG runs alike:
# 92-95% in guests and on the host. One 5.10 run in CI came 86% against 92.6%
# outside the kernel and CRC32C alone, with half the usual samples. Java code
# that C2 builds around a vector intrinsic is priced by the emulator too: the
# records' UTF-8 encoding (String.encode, its countPositives inlined) took 5.1% of
# the Java samples in a 6.1 guest, 0.6% on the host, and is left out as well.
JAVA_LEAF = re.compile(r"_\[[ji0]\]$")
EMULATOR_PRICED = "java/lang/String.encode"


def kafka_share(folded):
    """String.format's share of the producer thread's samples (scripts/demo.sh's
    figure); the same share of its samples in Java code (the leaf a Java
    method, outside the UTF-8 encoding); the producer thread's samples; and
    the leaves of its samples outside String.format, most first (what a
    failure shows)."""
    prod = fmt = java = java_fmt = 0
    others = collections.Counter()
    for frames, n in read_folded(folded):
        if len(frames) > 1 and frames[1] == PRODUCER:
            in_fmt = any(f.startswith(FORMAT) for f in frames)
            prod += n
            fmt += n if in_fmt else 0
            if JAVA_LEAF.search(frames[-1]) and not any(f.startswith(EMULATOR_PRICED) for f in frames):
                java += n
                java_fmt += n if in_fmt else 0
            if not in_fmt:
                others[";".join(frames[-2:])] += n
    return share(fmt, prod), share(java_fmt, java), prod, others


class KernelRun:
    """One run of checks.sh, on the host or in a guest: its results directory."""

    def __init__(self, kernel):
        self.kernel = kernel
        self.out = os.path.abspath(OUT)
        self.res = os.path.join(self.out, "res")
        self.log = ""
        self.seconds = 0.0

    def start(self):
        t0 = time.monotonic()
        if self.kernel == "host":
            self.host_checks(self.res)
        else:
            self.guest()
        self.seconds = time.monotonic() - t0

    def host_checks(self, res, checks=CHECKS):
        shutil.rmtree(res, True)
        os.makedirs(res)
        env = dict(os.environ, RES=res, JFLAME_CHECKS=checks, JFLAME_KERNEL_WARMUP=HOST_WARMUP)
        env.update(jvmtest.JVM_ENV)
        if jdk_root():
            # what the JVMs name (-agentpath:, -cp, -XX:ErrorFile=) at the same paths in the root
            dirs = [os.path.dirname(os.path.abspath(env.get(v, ""))) for v in ("JFLAME_AGENT", "JFLAME_EXAMPLES_JAR")]
            env.update(JFLAME_JAVA_ROOT=jdk_root(), JFLAME_IN_ROOT_DIRS=":".join(dirs + [res]))
        r = subprocess.run(["bash", os.path.join(HERE, "checks.sh")], capture_output=True, text=True, env=env,
                           timeout=900, stdin=subprocess.DEVNULL)
        with open(os.path.join(res, "checks.log"), "w") as f:
            f.write(r.stdout + r.stderr)
        with open(os.path.join(res, "checks-exit"), "w") as f:
            f.write("%d\n" % r.returncode)
        self.log += r.stdout + r.stderr

    def guest(self):
        r = subprocess.run(["bash", os.path.join(HERE, "run-vm.sh"), self.kernel, self.out], capture_output=True,
                           text=True, timeout=1200, stdin=subprocess.DEVNULL,
                           env=dict(os.environ, JFLAME_CHECKS=CHECKS))
        self.log = r.stdout + r.stderr
        if r.returncode != 0:
            raise AssertionError("kernel %s: run-vm.sh failed (exit %d):\n%s" % (self.kernel, r.returncode,
                                                                               self.log[-6000:]))


class KernelTest(unittest.TestCase):
    krun = None

    @classmethod
    def setUpClass(cls):
        if KERNEL not in KERNELS:
            raise AssertionError("say which kernel: JFLAME_KERNEL=%s (or the first argument), not %r"
                                 % ("|".join(KERNELS), KERNEL))
        if JDK:  # the JDK matrix: its java is in its root
            jvmtest.require(shutil.which("mmdebstrap"), "mmdebstrap not installed (scripts/deps.sh installs it)")
            jvmtest.require(jvmtest.jdk_tool("java"), "no java at %s in JDK %s's root %s" % (jvmtest.JAVA, JDK,
                                                                                             jdk_root()))
            jvmtest.require(os.path.isfile(jvmtest.AGENT), "agent not built (JFLAME_AGENT=%r)" % jvmtest.AGENT)
            jvmtest.require(os.path.isfile(jvmtest.JAR), "examples jar not built (JFLAME_EXAMPLES_JAR=%r)" % jvmtest.JAR)
        else:
            jvmtest.check_setup()
        jvmtest.require(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        jvmtest.require(os.geteuid() == 0, "the kernel tests run as root (BPF; the hostile case's nobody JVM; "
                        "the cached root file system)")
        if KERNEL != "host":
            for tool, pkg in (("qemu-system-x86_64", "qemu-system-x86"), ("mmdebstrap", "mmdebstrap"),
                              ("mke2fs", "e2fsprogs"), ("debugfs", "e2fsprogs")):
                jvmtest.require(shutil.which(tool), "%s not installed (scripts/deps.sh installs %s)" % (tool, pkg))
        for tool in ("unshare", "setpriv", "mkfifo"):
            jvmtest.require(shutil.which(tool), "%s not installed (util-linux, coreutils)" % tool)
        cls.krun = KernelRun(KERNEL)
        cls.krun.start()
        cls.print_timing()

    @classmethod
    def print_timing(cls):
        steps = []
        for line in slurp(os.path.join(cls.krun.res, "steps.tsv"), "").splitlines():
            name, a, b, rc = (line.split("\t") + ["", "", "", ""])[:4]
            if not re.match(r"^[\d.]+$", a) or not re.match(r"^[\d.]+$", b):
                steps.append("%s ?" % name)
                continue
            steps.append("%s %.1f s%s" % (name, float(b) - float(a), "" if rc == "0" else " (exit %s)" % rc))
        timing = slurp(os.path.join(cls.krun.out, "timing"), "").split()
        print("\nkernel %s (%s): %.0f s in all%s\n  steps: %s" % (
            KERNEL, slurp(os.path.join(cls.krun.res, "uname"), "?").strip(), cls.krun.seconds,
            "; host side: " + " ".join(timing) if timing else "", "; ".join(steps)), file=sys.stderr)

    # ---- helpers ------------------------------------------------------------------

    def path(self, name):
        return os.path.join(self.krun.res, name)

    def stderr(self, mode):
        return slurp(self.path(mode + ".err"), "")

    def ran(self, mode, expect=0):
        """The mode's jflame record ran and exited expect; its stderr."""
        if CHECKS != "all" and mode not in CHECKS.split(","):
            # a pass that runs only some modes (scripts/test.sh: CI's time): said, not hidden
            raise unittest.SkipTest("mode %s not run in this pass (JFLAME_CHECKS=%s)" % (mode, CHECKS))
        rc = slurp(self.path(mode + ".rc"), "").strip()
        err = self.stderr(mode)
        cmd = slurp(self.path(mode + ".cmd"), "jflame record (%s)" % mode).strip()
        refused = slurp(self.path("bpf-refused"), "")
        if refused:
            log = slurp(self.path("bpf-verifier.log"), "").splitlines()
            self.fail("kernel %s: jflame's BPF program does not load (%s); no recording ran. The end of the "
                      "verifier's log (res/bpf-verifier.log, jflame record -v):\n%s"
                      % (KERNEL, refused.strip(), "\n".join(log[-25:])))
        if not rc:
            steps = slurp(self.path("steps.tsv"), "")
            self.fail("kernel %s: %s did not run (its workload did not start?); steps:\n%s\nlog tail:\n%s"
                      % (KERNEL, mode, steps, self.console_tail()))
        if int(rc) != expect:
            hint = ""
            if "failed to load the BPF program" in err:
                hint = " (jflame's BPF program does not load on kernel %s)" % KERNEL
            self.fail("kernel %s: %s exited %s, not %d%s\nstderr:\n%s%s" % (KERNEL, cmd, rc, expect, hint, err[-3000:],
                                                                          self.crashes()))
        return err

    def crashes(self):
        """The JVMs that crashed in this run (their hs_err files' problematic frames)."""
        out = []
        for name in sorted(os.listdir(self.krun.res)):
            if name.startswith("hs_err_pid"):
                m = re.search(r"(?m)^# Problematic frame:\n# (.*)$", slurp(self.path(name)))
                out.append("%s: %s" % (name, m.group(1) if m else "?"))
        return "\nJVMs that crashed in this run: " + "; ".join(out) if out else ""

    def console_tail(self):
        text = slurp(os.path.join(self.krun.out, "console.log"), "") or self.krun.log
        return "\n".join(text.replace("\r", "").splitlines()[-30:])

    def holds(self, fact, mode):
        """Whether this kernel gives the fact; when not, its degradation line must
        be in the mode's stderr instead (asserted here)."""
        waived = [d for d in DEGRADATIONS[KERNEL] if fact in d.waives]
        for d in waived:
            self.assertRegex(self.stderr(mode), d.line, "kernel %s cannot give '%s' (%s): jflame must say so"
                             % (KERNEL, fact, d.what))
        return not waived

    def pid(self, name):
        return int(slurp(self.path(name + ".pid")).strip())

    def java_threads(self, folded, pid):
        """(frames below the thread frame, count) of the workload's two Java threads."""
        return self.thread_stacks(folded, pid, HOT) + self.thread_stacks(folded, pid, WORK)

    def thread_stacks(self, folded, pid, name):
        """test_walker's thread_stacks."""
        return thread_stacks(folded, pid, name)

    def whole_share(self, stacks):
        """test_walker's measure: from the thread's start (start_thread, JavaMain)
        to Thread.run, every Java frame named. The share, the samples, and the
        most common stacks that are not whole."""
        total = sum(n for _, n in stacks)
        whole = sum(n for f, n in stacks if reaches_entry(f) and not any(x in UNNAMED for x in java_region(f)))
        broken = collections.Counter()
        for f, n in stacks:
            if not (reaches_entry(f) and not any(x in UNNAMED for x in java_region(f))):
                broken[";".join(f)] += n
        return share(whole, total), total, broken.most_common(6)

    def stacks_samples(self, mode):
        """The samples of the mode's .stacks file, in the order written: (thread name,
        pid, seconds, frame lines); None when there is no such file."""
        path = self.path(mode + ".stacks")
        if not os.path.exists(path):
            return None
        samples = []
        for block in slurp(path).split("\n\n"):
            lines = block.strip("\n").splitlines()
            m = re.match(r"^(\S.*) (\d+)/\d+ \[\d+\] (\d+\.\d+): ", lines[0]) if lines else None
            if m:
                samples.append((m.group(1), int(m.group(2)), float(m.group(3)), lines[1:]))
        return samples

    def steps(self):
        """steps.tsv's rows by step name: [name, start, end, exit code]."""
        return {l.split("\t")[0]: l.split("\t") for l in slurp(self.path("steps.tsv")).splitlines()}

    def lone_unknowns(self, mode, pid):
        """When in the recording the pid's samples of one lone [unknown] frame came
        (its .stacks file): (their number, ms from the recording's first sample to
        the last of them, the pid's samples in all)."""
        samples = self.stacks_samples(mode)
        if samples is None:
            return None
        first, lone, last, total = None, 0, 0.0, 0
        for _, spid, t, frames in samples:
            first = t if first is None else min(first, t)
            if spid != pid:
                continue
            total += 1
            if len(frames) == 1 and frames[0].split()[1:2] == ["[unknown]"]:
                lone += 1
                last = max(last, t)
        return lone, 1000 * (last - first) if lone else 0.0, total

    def explain(self, mode, pid, broken):
        """The stacks that are not whole, and when the lone [unknown] ones came."""
        text = "\n".join("%d %s" % (n, s) for s, n in broken)
        lone = self.lone_unknowns(mode, pid)
        if lone and lone[0]:
            text += ("\n(%s.stacks: %d of the pid's %d samples are one lone [unknown] frame, the last of them "
                     "%.0f ms after the recording's first sample)" % (mode, lone[0], lone[2], lone[1]))
        return text

    # ---- the kernel and what ran on it ----------------------------------------------------

    def test_kernel_and_jdk(self):
        release = slurp(self.path("uname")).strip()
        if KERNEL != "host":
            self.assertTrue(release.startswith(RELEASE[KERNEL]), "booted %s, not a %s kernel" % (release, KERNEL))
        # the guest runs the host's JDK (rootfs.sh copies it) and this build's jflame;
        # the JDK matrix a JDK in its own root (tests/jdk/in-root.sh)
        host_java = subprocess.run(jvmtest.in_root([jvmtest.JAVA, "-version"]), capture_output=True,
                                   text=True).stderr
        self.assertEqual(slurp(self.path("java-version")).strip(), host_java.strip())
        if JDK:
            self.assertRegex(host_java, r'version "%s[."]' % JDK, "JDK %s's root runs another java" % JDK)
            print("\nJDK %s (%s): %s" % (JDK, os.environ.get("JFLAME_JVM_GC", "-XX:+UseG1GC"),
                                         host_java.strip().splitlines()[-1]), file=sys.stderr)
        host_jflame = subprocess.run([JFLAME, "--version"], capture_output=True, text=True).stdout
        self.assertEqual(slurp(self.path("jflame-version")).strip(), host_jflame.strip())
        crashed = slurp(self.path("jvm-crashed-before-ready"), "")
        if crashed:
            print("\nkernel %s: a JVM crashed before it was ready, before jflame touched it, and was started "
                  "again (qemu TCG): %s" % (KERNEL, crashed.strip()), file=sys.stderr)

    def test_degradations_said_once_and_only_those(self):
        """Each expected degradation line is said once at start (in the CPU
        recording's stderr); no other `jflame: kernel X.Y ...` line appears in any
        mode's stderr."""
        err = self.ran("cpu")
        for d in DEGRADATIONS[KERNEL]:
            self.assertEqual(len(re.findall(d.line, err)), 1, "kernel %s: '%s' not said exactly once:\n%s"
                             % (KERNEL, d.what, err))
        for name in sorted(os.listdir(self.krun.res)):
            if not name.endswith(".err"):
                continue
            for line in DEGRADATION_LINE.findall(slurp(self.path(name))):
                self.assertTrue(any(re.match(d.line.replace("(?m)", ""), line) for d in DEGRADATIONS[KERNEL]),
                                "kernel %s: %s says a degradation the table does not expect: %r"
                                % (KERNEL, name, line))

    # ---- CPU: agentless -p of Workload mixed ----------------------------------------------

    def test_cpu_counts_add_up(self):
        err = self.ran("cpu")
        m = SUMMARY.search(err)
        self.assertTrue(m, err)
        total = sum(n for _, n in read_folded(self.path("cpu.folded")))
        self.assertEqual(total, int(m.group(1)) - int(m.group(2)), err)
        self.assertGreater(total, 300, err)
        self.assertNotIn("loaded the agent", err)  # agentless: nothing loaded into the JVM

    def test_cpu_whole_stacks(self):
        """>= 99% of the Java threads' samples run from the thread's start to
        Thread.run with every Java frame named (test_walker's measure)."""
        self.ran("cpu")
        stacks = self.java_threads(self.path("cpu.folded"), self.pid("mixed"))
        whole, total, broken = self.whole_share(stacks)
        print("\nkernel %s: cpu: whole Java-thread stacks %.1f%% of %d" % (KERNEL, 100 * whole, total),
              file=sys.stderr)
        if not self.holds("whole", "cpu"):
            return
        self.assertGreater(total, 300)
        self.assertGreaterEqual(whole, 0.99, "kernel %s: whole stacks %.1f%% of %d; the others, most common "
                                "first:\n%s" % (KERNEL, 100 * whole, total,
                                                self.explain("cpu", self.pid("mixed"), broken)))

    def test_cpu_interpreted_frames_named(self):
        self.ran("cpu")
        if not self.holds("interpreted", "cpu"):
            return
        named = unnamed = 0
        for frames, n in self.java_threads(self.path("cpu.folded"), self.pid("mixed")):
            for f in java_region(frames):
                if f.endswith("_[0]"):
                    named += n
                elif f == "Interpreter":
                    unnamed += n
        self.assertGreater(named, 0, "no interpreted frame (_[0]) named")
        self.assertGreaterEqual(share(named, named + unnamed), 0.99, "interpreted frames: %d named, %d not"
                                % (named, unnamed))

    def test_cpu_inlined_frames(self):
        """-XX:+DebugNonSafepoints: the hot loop's inlined callees as _[i] right
        above their compiled caller, and the graph says placement is exact."""
        self.ran("cpu")
        if not self.holds("inlined", "cpu"):
            return
        hot = self.thread_stacks(self.path("cpu.folded"), self.pid("mixed"), HOT)
        inl = collections.Counter(f for s, n in hot for f in s if f.endswith("_[i]") for _ in range(n))
        # on failure: the hot thread's leaves (a JIT state without the inlined loop?)
        leaves = collections.Counter(";".join(s[-3:]) for s, n in hot for _ in range(n))
        self.assertTrue({"jflame/examples/Workload.mix_[i]", "jflame/examples/HotMath.scramble_[i]",
                         "jflame/examples/Workload.spin_[i]"} & set(inl),
                        "no inlined frame on %s's %d samples; their leaves: %s" % (HOT, sum(leaves.values()),
                                                                                leaves.most_common(8)))
        pairs = sum(n for f, n in hot if any(a.endswith("_[j]") and b.endswith("_[i]") for a, b in zip(f, f[1:])))
        self.assertGreater(pairs, 0, [f for f, _ in hot][:3])
        svg = slurp(self.path("cpu.svg"))
        self.assertIn("HotSpot walker", svg)
        self.assertNotIn("safepoints only", svg)

    def test_cpu_full_thread_names(self):
        """The Java threads under their full names (longer than the kernel's 15-byte comm)."""
        self.ran("cpu")
        if not self.holds("thread_names", "cpu"):
            return
        pid = self.pid("mixed")
        threads = collections.Counter()
        for frames, n in read_folded(self.path("cpu.folded")):
            if frames[0] == "[%d] java" % pid and len(frames) > 1:
                threads[frames[1]] += n
        if ZGC:  # the Thread objects moved: read through ZGC's forwarding, not given up on
            self.assertNotRegex(self.stderr("cpu"), ZGC_NOTE)
        self.assertIn(HOT, threads, threads.most_common(10))
        self.assertIn(WORK, threads, threads.most_common(10))
        self.assertFalse([t for t in threads if t in (HOT[:15], WORK[:15])], threads.most_common(10))

    def test_all(self):
        """-a: the JVM among everything else, as test_hostile.py's check_jvm holds it:
        its hot thread by its full Java name dominates it, named Java frames on 90%
        of it, Workload.spin on 80%; the whole share printed."""
        err = self.ran("all")
        self.assertTrue(SUMMARY.search(err), err)
        if not self.holds("all", "all"):
            return
        pid = self.pid("mixed")
        stacks = [(f, n) for f, n in read_folded(self.path("all.folded")) if f[0] == "[%d] java" % pid]
        total = sum(n for _, n in stacks)
        self.assertGreater(total, 50, "few samples of the JVM under -a")
        hot = [(f, n) for f, n in stacks if len(f) > 1 and f[1] == HOT]
        hot_total = sum(n for _, n in hot)
        self.assertGreater(hot_total, total * 0.3, "its hot thread, by its Java name, should stand out")
        named = sum(n for f, n in hot if any(x.endswith(("_[j]", "_[i]", "_[0]")) for x in f))
        self.assertGreaterEqual(named / hot_total, 0.9, "samples of its hot thread with a named Java frame")
        spin = sum(n for f, n in hot if any(x.startswith("jflame/examples/Workload.spin_[") for x in f))
        self.assertGreaterEqual(spin / hot_total, 0.8, "Workload.spin should be on most hot samples")
        whole, total, broken = self.whole_share(self.java_threads(self.path("all.folded"), pid))
        print("\nkernel %s: -a: whole Java-thread stacks %.1f%% of %d; not whole:\n%s"
              % (KERNEL, 100 * whole, total, self.explain("all", pid, broken)), file=sys.stderr)

    def test_window_with_baseline(self):
        """--window 1 -d 3 --baseline first: consecutive windows, each written, each
        sample in one (test_window.py's partition, briefly)."""
        err = self.ran("window")
        if not self.holds("window", "window"):
            return
        ws = [(int(m.group(1)), int(m.group(4)), int(m.group(5)), m.group(9).split()) for m in WINDOW.finditer(err)]
        # -d 3 is three 1 s windows (and a last one of the drain's moment at most):
        # the first starts with the recording, not while the sampler loads (in an
        # emulated guest that took seconds: up to eight windows, the first ones empty)
        self.assertIn(len(ws), (3, 4), err)
        spans = [float(m.group(3)) for m in WINDOW.finditer(err)]
        self.assertAlmostEqual(sum(spans), 3.0, delta=0.15, msg=err)
        self.assertEqual([w[0] for w in ws], list(range(1, len(ws) + 1)), err)
        total = TOTAL.search(err)
        self.assertTrue(total, err)
        self.assertEqual(int(total.group(1)), len(ws), err)
        self.assertEqual(sum(w[1] for w in ws), int(total.group(2)), err)
        for seq, samples, lost, wrote in ws:
            self.assertEqual(wrote, ["window-%d.folded" % seq], err)
            self.assertEqual(sum(n for _, n in read_folded(self.path(wrote[0]))), samples - lost)
        # the hot threads' samples: a guest's JVM gets 14-80 a second (TCG, beside the other guest)
        self.assertGreater(sum(w[1] for w in ws), 30, err)

    # ---- off-CPU and wall-clock: SleepSpin ------------------------------------------------

    def totals_around(self, mode, workload, regex):
        """The workload's totals lines (one every 200 ms, group 1 its System.nanoTime)
        just before and just after the recording's own time (jflame -v says it in
        CLOCK_MONOTONIC): under emulation jflame takes seconds to start and stop, so
        lines taken around the jflame command span far more than the recording."""
        m = RECORDED.search(slurp(self.path(mode + ".err")))
        self.assertTrue(m, "jflame -v did not say the recording's time:\n" + slurp(self.path(mode + ".err"))[-1500:])
        start, end = float(m.group(1)) * 1e9, float(m.group(2)) * 1e9
        lines = regex.finditer(slurp(self.path(workload + ".out")))
        lines = sorted(lines, key=lambda x: int(x.group(1)))
        before = [x for x in lines if int(x.group(1)) <= start]
        after = [x for x in lines if int(x.group(1)) >= end]
        self.assertTrue(before and after, "no totals lines of %s around the recording's %.3f-%.3f s"
                        % (workload, start / 1e9, end / 1e9))
        return before[-1], after[0]

    def sleep_spin(self, mode):
        """The sleep-spin thread's stacks in the mode's recording, and the share of
        its time it measured asleep over the recording (its totals lines around it)."""
        before, after = self.totals_around(mode, "sleepspin", test_offcpu.TOTALS)
        slept = int(after.group(2)) - int(before.group(2))
        spun = int(after.group(3)) - int(before.group(3))
        self.assertGreater(slept + spun, 5 * 0.8e9,
                           "the thread did not run through the recording")
        pid = self.pid("sleepspin")
        stacks = [(f, n) for f, n in read_folded(self.path(mode + ".folded"))
                  if f[0] == "[%d] java" % pid and len(f) > 1 and f[1] == test_offcpu.THREAD]
        self.assertTrue(stacks, "no stacks of thread %s" % test_offcpu.THREAD)
        return stacks, slept / (slept + spun)

    def preempted(self, stacks):
        """Time the thread was off the CPU without a user stack ([no user stack]:
        preempted, mostly, where its user stack had moved on by the time it ran
        again). In a guest whose JVMs outnumber its CPUs that is seconds, and it
        falls in the sleep as the thread measures it too (the JVM's code around the
        futex is preempted as well as the spin): the sleep's own stacks are then
        bounded by the thread's measure, from below by it less this time."""
        return sum(n for f, n in stacks if "[no user stack]" in f)

    def sleep_within(self, mode, sleep, preempted, measured):
        print("\nkernel %s: %s: in sleep %.3f, without a user stack %.3f; the thread measured %.3f asleep"
              % (KERNEL, mode, sleep, preempted, measured), file=sys.stderr)
        self.assertLess(sleep, measured + 0.05, "%s: more in sleep (%.3f) than the thread measured (%.3f)"
                        % (mode, sleep, measured))
        self.assertGreater(sleep + preempted, measured - 0.05, "%s: in sleep %.3f (and %.3f without a user stack), "
                           "the thread measured %.3f" % (mode, sleep, preempted, measured))

    def test_offcpu(self):
        """test_offcpu.py: the sleeps' off-CPU time as the thread measured it, through
        Thread.sleep, JVM_Sleep and the kernel's futex or nanosleep; the spin barely."""
        self.ran("offcpu")
        if not self.holds("offcpu", "offcpu"):
            return
        stacks, measured = self.sleep_spin("offcpu")
        seconds = 5
        sleep_us = sum(n for f, n in stacks if any(fr.startswith(test_offcpu.SLEEP) for fr in f))
        self.sleep_within("offcpu", sleep_us / (seconds * 1e6), self.preempted(stacks) / (seconds * 1e6), measured)
        self.assertGreater(measured, 0.6)
        frames = {fr for f, n in stacks if any(x.startswith(test_offcpu.SLEEP) for x in f) for fr in f}
        self.assertTrue(any(fr.startswith("java/lang/Thread.sleep") for fr in frames), sorted(frames))
        self.assertTrue(any(fr.startswith("JVM_Sleep") for fr in frames), sorted(frames))
        self.assertTrue(any(("futex" in fr or "nanosleep" in fr) and fr.endswith("_[k]") for fr in frames),
                        sorted(frames))
        spin_us = sum(n for f, n in stacks if any(fr.startswith(test_offcpu.SPIN) for fr in f))
        self.assertLess(spin_us, sleep_us / 5)

    def test_wall(self):
        """test_offcpu.py: the thread's width is its elapsed time, split as it measured."""
        self.ran("wall")
        if not self.holds("wall", "wall"):
            return
        stacks, measured = self.sleep_spin("wall")
        seconds = 5
        total = sum(n for f, n in stacks)
        sleep_us = sum(n for f, n in stacks if any(fr.startswith(test_offcpu.SLEEP) for fr in f))
        spin_us = sum(n for f, n in stacks if any(fr.startswith(test_offcpu.SPIN) for fr in f))
        # within 10% on the host; 20% in a guest: once (CI, 6.12 beside 5.10's guest) the thread
        # came out 16% short, more than its spinning (~12% of it), cause not known yet: the
        # message says where the time went when it happens again
        bound = 0.10 if KERNEL == "host" else 0.20
        self.assertAlmostEqual(total / (seconds * 1e6), 1.0, delta=bound,
                               msg="wall: %.3f s of the thread's %d s (in sleep %.3f s, spinning %.3f s, without a user "
                               "stack %.3f s; it measured %.3f of its time asleep)"
                               % (total / 1e6, seconds, sleep_us / 1e6, spin_us / 1e6,
                                  self.preempted(stacks) / 1e6, measured))
        self.sleep_within("wall", sleep_us / total, self.preempted(stacks) / total, measured)
        self.assertLess(spin_us / total, 1 - measured + 0.05)
        self.assertGreater((spin_us + self.preempted(stacks)) / total, 1 - measured - 0.05)

    # ---- the agent's events: LockContend and AllocMix (attached) ----------------------------

    def test_lock(self):
        """test_lock.py: the waiter's lock samples, Ledger_[l] through Ledger.post, add
        up to the time it was blocked within 15%: the JVM's own account of it
        (ThreadMXBean contention monitoring, LockContend's jvm_blocked_ms). The time
        the waiter measured in post() is an upper bound only: a guest busy with other
        JVMs leaves the waiter runnable, not running, for seconds while it spins
        before it blocks (a wall recording beside it showed 67% of its time
        preempted in user mode), which no lock profiler counts."""
        err = self.ran("lock")
        if not self.holds("lock", "lock"):
            return
        before, after = self.totals_around("lock", "lockcontend", LOCK_TOTALS)
        span = (int(after.group(1)) - int(before.group(1))) / 1e9
        in_post_ns = (int(after.group(2)) - int(before.group(2))) * 5 / span
        self.assertGreaterEqual(int(before.group(3)), 0, "LockContend has no contention monitoring")
        blocked_ns = (int(after.group(3)) - int(before.group(3))) * 1e6 * 5 / span
        pid = self.pid("lockcontend")
        stacks = [(f, n) for f, n in read_folded(self.path("lock.folded"))
                  if f[0] == "[%d] java" % pid and len(f) > 2 and f[1] == test_lock.WAITER]
        on_lock = [(f, n) for f, n in stacks if f[-1] == test_lock.LEDGER and test_lock.POST in f]
        self.assertTrue(on_lock, "no %s leaf through %s:\n%s" % (test_lock.LEDGER, test_lock.POST, stacks[:5]))
        us = sum(n for f, n in on_lock)
        print("kernel %s: lock graph %.1f ms; the JVM counted the waiter %.1f ms blocked, %.1f ms in post()"
              % (KERNEL, us / 1e3, blocked_ns / 1e6, in_post_ns / 1e6))
        self.assertLess(abs(us * 1e3 - blocked_ns) / blocked_ns, 0.15,
                        "lock graph %.1f ms, the JVM counted the waiter %.1f ms blocked" % (us / 1e3, blocked_ns / 1e6))
        self.assertLess(us * 1e3, in_post_ns * 1.15,
                        "lock graph %.1f ms, more than the waiter's %.1f ms in post()" % (us / 1e3, in_post_ns / 1e6))

    def test_alloc(self):
        """test_alloc.py: every leaf an allocated class; byte[] under makeBytes to
        String under makeStrings within 10% of AllocMix's own ratio (15% in a guest)."""
        err = self.ran("alloc")
        if not self.holds("alloc", "alloc"):
            return
        pid = self.pid("allocmix")
        # (the agent is attached now, or was by someone else: on a shared host another
        # jflame's record -a --attach loads it into every JVM it sees)
        m = test_alloc.SIZES.search(slurp(self.path("allocmix.out")))
        self.assertTrue(m, "no sizes line from AllocMix")
        ratio = float(m.group(5))
        stacks = read_folded(self.path("alloc.folded"))
        for f, n in stacks:
            self.assertTrue(f[-1].endswith("_[a]"), "leaf is not an allocated class: %r" % f[-1])
        mine = [(f, n) for f, n in stacks if f[0] == "[%d] java" % pid and len(f) > 2 and f[1] == test_alloc.THREAD]
        self.assertTrue(mine, "no stacks of %s rooted in [%d] java" % (test_alloc.THREAD, pid))
        b = sum(n for f, n in mine if f[-1] == "byte[]_[a]" and f[-2] == test_alloc.MAKE_BYTES)
        s = sum(n for f, n in mine if f[-1] == "java/lang/String_[a]" and test_alloc.MAKE_STRINGS in f)
        self.assertGreater(b, 0, "no byte[] under makeBytes")
        self.assertGreater(s, 0, "no String under makeStrings")
        # within 10% on the host (test_alloc.py's bound); an emulated guest's
        # recordings of the same 5 s spread wider (2.65 to 3.19 for 3.0 seen on
        # 5.10, 6.1 and 6.12): 15% there
        bound = 0.10 if KERNEL == "host" else 0.15
        self.assertLess(abs(b / s - ratio) / ratio, bound,
                        "byte[]:String bytes %d:%d = %.3f, AllocMix allocates them %.3f" % (b, s, b / s, ratio))

    # ---- launch mode, the hostile target, the demo ------------------------------------------

    def test_launch(self):
        """test_launch.py: the JVM's exit code passes through, its output is its own,
        its hot thread recorded whole from its start by the HotSpot walker."""
        err = self.ran("launch", expect=7)
        if not self.holds("launch", "launch"):
            return
        self.assertIn("jflame-workload: ready", slurp(self.path("launch.stdout")))
        stacks = read_folded(self.path("launch.folded"))
        pids = {f[0] for f, _ in stacks if len(f) > 1 and f[1] == HOT}
        self.assertEqual(len(pids), 1, pids)
        root = pids.pop()
        hot = [(f, n) for f, n in stacks if f[0] == root and f[1] == HOT]
        spin = sum(n for f, n in hot if any(x.startswith("jflame/examples/Workload.spin_[") for x in f))
        self.assertGreater(spin, 100, err)
        whole = sum(n for f, n in hot if any(x.startswith("jflame/examples/Workload.spin_[") for x in f) and
                    reaches_entry(f[2:]))
        self.assertGreater(whole, spin * 0.9, "%d of %d samples whole%s: %s" % (
            whole, spin, self.unwalked_times(), [f for f, _ in hot if not reaches_entry(f[2:])][:3]))
        # walked by the HotSpot walker (frame pointers do not matter to it; whether the
        # subtitle also says "frame pointers: on" depends on when the launched JVM's
        # flags were read, which varies under load: test_launch.py's known flake)
        self.assertIn("Java stacks: HotSpot walker", slurp(self.path("launch.svg")))
        # no advice to restart with it (a JVM started by a wrapper, as the JDK matrix's
        # in-root.sh, says the JAVA_TOOL_OPTIONS it picked up, the flag among them)
        said = "\n".join(l for l in err.splitlines() if not l.startswith("Picked up JAVA_TOOL_OPTIONS:"))
        self.assertNotIn("PreserveFramePointer", said)

    def unwalked_times(self):
        """When the hot thread's samples walked by frame pointers (bare Interpreter
        frames: before jflame had read the launched JVM's layout) came, in s from its
        first sample (launch.stacks)."""
        hot = [(t, frames) for name, _, t, frames in self.stacks_samples("launch") or [] if name == HOT]
        times = [t - hot[0][0] for t, frames in hot if any(l.split()[1:2] == ["Interpreter"] for l in frames)]
        return " (%d walked by frame pointers, at %s s of the hot thread's samples)" % (
            len(times), ", ".join("%.2f" % t for t in times[:12])) if times else ""

    def test_hostile_fifo(self):
        """test_hostile.py's jvmfifo: record -a --attach beside a JVM run as nobody
        with a FIFO at its status path ends in time with its outputs, says the
        refusal once, and the JVM runs on, not stuck on the FIFO."""
        err = self.ran("hostile")
        self.assertTrue(os.path.exists(self.path("hostile.planted")), "the FIFO was not planted")
        steps = self.steps()
        if not self.holds("hostile", "hostile"):
            return
        limit = LIMIT.get(KERNEL, GUEST_LIMIT)
        took = float(steps["hostile"][2]) - float(steps["hostile"][1])
        self.assertLess(took, limit, "record -a --attach -d 3 took %.1f s" % took)
        for o in ("hostile.folded", "hostile.svg"):
            self.assertGreater(os.path.getsize(self.path(o)), 0, o)
        pid = self.pid("hostile")
        status = "/proc/%d/root/tmp/jflame-%d.status" % (pid, pid)
        lines = [l for l in err.splitlines() if l.startswith("jflame: ignored ")]
        mine = [l for l in lines if re.match(r"^jflame: ignored %s: \S" % re.escape(status), l)]
        self.assertEqual(len(mine), 1, "the FIFO's refusal not said once:\n%s" % err)
        self.assertIn("it is a FIFO", mine[0])
        self.assertEqual(sorted({l for l in lines if lines.count(l) > 1}), [], "refusals said more than once")
        self.assertFalse([c for c in err if ord(c) < 0x20 and c not in "\n\t"], "raw control bytes in stderr")
        self.assertTrue(os.path.exists(self.path("hostile.alive")), "the JVM run as nobody died")
        self.assertEqual(slurp(self.path("hostile.stuck")).strip(), "",
                         "threads of the JVM run as nobody blocked opening a FIFO")

    def host_kafka(self):
        """The host's Kafka recording: kernel.host's, when it is there and newer than
        jflame; else made now."""
        if HOST_RES:
            folded = os.path.join(HOST_RES, "kafka.folded")
            if os.path.exists(folded) and os.path.getmtime(folded) > os.path.getmtime(JFLAME) and \
                    slurp(os.path.join(HOST_RES, "kafka.rc"), "").strip() == "0":
                return folded
        res = os.path.join(self.krun.out, "host-kafka")
        self.krun.host_checks(res, "kafka")
        self.assertEqual(slurp(os.path.join(res, "kafka.rc"), "?").strip(), "0", slurp(os.path.join(res, "kafka.err"), ""))
        return os.path.join(res, "kafka.folded")

    def test_kafka_string_format_share(self):
        """The demo's recording: String.format's share of the producer thread within
        5 points of the host's in each guest (the full thread name, as the agent
        would say it)."""
        err = self.ran("kafka")
        if not self.holds("kafka", "kafka"):
            return
        mine, mine_java, prod, others = kafka_share(self.path("kafka.folded"))
        self.assertGreater(prod, 100, "few samples of the producer thread %r:\n%s" % (PRODUCER, err))
        self.assertGreater(mine, 0.2, "String.format %.1f%% of the producer thread" % (100 * mine))
        if KERNEL == "host":
            print("\nkernel host: String.format %.1f%% of the producer thread (%d samples), %.1f%% of its samples "
                  "in Java code" % (100 * mine, prod, 100 * mine_java), file=sys.stderr)
            return
        host, host_java, host_prod, host_others = kafka_share(self.host_kafka())
        print("\nkernel %s: String.format %.1f%% of the producer thread (%d samples), host %.1f%% (%d); of its "
              "samples in Java code (what TCG runs alike) %.1f%%, host %.1f%%"
              % (KERNEL, 100 * mine, prod, 100 * host, host_prod, 100 * mine_java, 100 * host_java), file=sys.stderr)
        settle = self.steps().get("settle-kafka", ["", "", "", "?"])
        unsettled = "" if settle[3] == "0" else " (the example had not settled when it was recorded: %s)" % (
            "; ".join([l for l in slurp(self.path("kafka.out")).splitlines() if "records/s" in l][-4:]))
        compiled = self.steps().get("compile-kafka", ["", "", "", "?"])
        if settle[3] == "0" and compiled[3] != "0":
            unsettled = " (its producer still ran interpreted code when it was recorded: %s)" % (
                "; ".join(slurp(self.path("kafka-probe.err")).splitlines()[-3:]))

        def top(c):
            return "\n".join("  %5.1f%% %s" % (100 * share(n, sum(c.values())), k) for k, n in c.most_common(8))
        # 5 points (#32), once the example has settled and a probe found its producer's
        # own code compiled (checks.sh's compiled): before that probe, the emulated JIT
        # left buildBatch interpreted for minutes in some runs (6.1: 5.05, 6.05 and 10.49
        # points in CI runs, 17% of the producer interpreted in the last); a walker defect
        # shows in the lines below (the C1 stubs' 4.7% [unwind failed] moved it 7 points)
        # and in the whole-stack checks
        bound = 5
        self.assertLess(abs(mine_java - host_java) * 100, bound,
                        "String.format %.1f%% of the producer thread's samples in Java code on %s, %.1f%% on the "
                        "host (%.1f%% and %.1f%% of all its samples)%s; its other samples' last two frames, here:\n%s\n"
                        "and on the host:\n%s" % (100 * mine_java, KERNEL, 100 * host_java, 100 * mine, 100 * host,
                                                   unsettled, top(others), top(host_others)))


if __name__ == "__main__":
    jvmtest.main()
