# test_legacy_bpf.py - the BPF programs older kernels load (profile.bpf.c's
# _legacy twins: no bpf_loop, bpf_task_pt_regs, bpf_get_current_task_btf or
# sched_switch's prev_state), forced here with JFLAME_BPF_LEGACY=1 so that every
# CI run checks them on the host too (tests/kernel/ boots 5.10, 6.1 and 6.12):
# whole, named Java stacks without frame pointers, the walker's depth said once
# and in the subtitle, 1500-deep recursion whole through the walker's tail
# calls, deeper stacks marked [truncated], off-CPU stacks (walked to fewer
# frames, said) and launch mode (the fork tracepoint).
# ctest: first JDK only
import os
import re
import shutil
import tempfile
import unittest

import jvmtest
from jvmtest import Jvm
from test_walker import HOT, UNNAMED, java_region, reaches_entry, thread_stacks

JFLAME = os.environ.get("JFLAME_BIN", "")
LEGACY = {"JFLAME_BPF_LEGACY": "1"}
# the line said once at start, and the same fact in the subtitle
NOTE = re.compile(r"kernel \d+\.\d+, with JFLAME_BPF_LEGACY=1: Java stacks are walked to (\d+) frames"
                  r"(?: in tail calls)? \(2048 with bpf_loop\)")


class LegacyBpfTest(unittest.TestCase):
    def setUp(self):
        jvmtest.check_setup()
        jvmtest.require(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        self.tmp = tempfile.mkdtemp(prefix="jflame-legacy-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def out(self, name):
        return os.path.join(self.tmp, name)

    def jvm(self, args, main="jflame.examples.Workload", ready="jflame-workload: ready", flags=()):
        j = Jvm(args, agent_opts=None, jvm_flags=["-XX:+UnlockDiagnosticVMOptions", "-XX:+DebugNonSafepoints"] +
                list(flags), wait_ready=False, main=main)
        self.addCleanup(j.cleanup)
        j.wait_output(ready, 240)
        return j

    def record(self, *args, **kw):
        return jvmtest.record(list(args) + ["-v"], env=LEGACY, **kw)

    def said_once(self, r):
        lines = [l for l in r.stderr.splitlines() if NOTE.search(l)]
        self.assertEqual(len(lines), 1, r.stderr[-3000:])
        self.assertTrue(lines[0].startswith("jflame: kernel "), lines)
        # the legacy programs are the ones loaded, and no other set
        self.assertRegex(r.stderr, r"BPF program profile_sample_legacy: \d+ instructions verified")
        self.assertNotRegex(r.stderr, r"BPF program profile_sample: ")
        return int(NOTE.search(lines[0]).group(1))

    def test_whole_named_stacks_and_depth_said(self):
        jvm = self.jvm(["hot", "120000"], flags=["-XX:+DisableAttachMechanism"])
        folded, svg = self.out("cpu.folded"), self.out("cpu.svg")
        r = self.record("-p", str(jvm.pid), "-d", "4", "-o", folded, "-o", svg)
        frames = self.said_once(r)
        self.assertGreaterEqual(frames, 64)
        with open(svg) as f:
            self.assertRegex(f.read(), NOTE)
        stacks = thread_stacks(folded, jvm.pid, HOT)
        total = sum(c for _, c in stacks)
        self.assertGreater(total, 150)
        whole = sum(c for f, c in stacks if reaches_entry(f) and not any(x in UNNAMED for x in java_region(f)))
        self.assertGreaterEqual(whole / total, 0.95, [f for f, _ in stacks if not reaches_entry(f)][:3])
        self.assertTrue(any("jflame/examples/Workload.spin_[j]" in f for f, _ in stacks))

    def deep(self, depth):
        jvm = self.jvm(["deep", str(depth), "120000"], main="jflame.examples.Stacks", ready="jflame-stacks: ready",
                       flags=["-XX:CompileCommand=quiet", "-XX:CompileCommand=dontinline,jflame.examples.Stacks::descend",
                              "-XX:CompileCommand=dontinline,jflame.examples.Stacks::bottom"])
        folded = self.out("deep.folded")
        r = self.record("-p", str(jvm.pid), "-d", "4", "-o", folded)
        stacks = [(f, c) for f, c in thread_stacks(folded, jvm.pid, "jflame-deep-%d" % depth)
                  if any(x.startswith("jflame/examples/Stacks.bottom_[") for x in f)]
        total = sum(c for _, c in stacks)
        self.assertGreater(total, 100, "too few samples at the bottom of the recursion")
        return r, stacks, total

    def test_recursion_within_the_depth_whole_deeper_marked_truncated(self):
        # 1500 frames: past the first program's frames, through its tail calls
        r, stacks, total = self.deep(1500)
        frames = self.said_once(r)
        self.assertEqual(frames, 2048, "CPU samples are walked as deep as with bpf_loop")
        whole = sum(c for f, c in stacks if reaches_entry(f) and "[truncated]" not in f and
                    sum(1 for x in f if x.startswith("jflame/examples/Stacks.descend_[")) >= 1500)
        self.assertGreaterEqual(whole / total, 0.95, [len(f) for f, _ in stacks][:5])
        r, stacks, total = self.deep(frames + 100)
        cut = sum(c for f, c in stacks if f and f[0] == "[truncated]")
        self.assertGreaterEqual(cut / total, 0.95, [f[:2] for f, _ in stacks][:5])
        # the frames kept are the leaf's: the walker's depth of them
        kept = max(sum(1 for x in f if x.startswith("jflame/examples/Stacks.")) for f, _ in stacks)
        self.assertGreaterEqual(kept, frames - 16)
        m = re.search(r"(\d+) truncated", r.stderr)
        self.assertTrue(m and int(m.group(1)) >= cut, r.stderr)

    def test_offcpu_stacks(self):
        jvm = self.jvm(["--seconds", "600"], main="jflame.examples.SleepSpin", ready="jflame-example: ready")
        folded = self.out("off.folded")
        r = self.record("-p", str(jvm.pid), "-d", "4", "-e", "offcpu", "-o", folded)
        # off-CPU samples come from tracepoints: no tail calls, the first program's frames
        m = re.search(r"jflame: kernel \d+\.\d+, with JFLAME_BPF_LEGACY=1: Java stacks are walked to (\d+) frames "
                      r"\(2048 with bpf_loop\)", r.stderr)
        self.assertTrue(m and 64 <= int(m.group(1)) < 2048, r.stderr[-2000:])
        self.assertRegex(r.stderr, r"BPF program offcpu_switch_legacy: \d+ instructions verified")
        self.assertRegex(r.stderr, r"BPF program offcpu_sys_exit_legacy: \d+ instructions verified")
        root = "[%d] java" % jvm.pid
        stacks = [(f, n) for f, n in jvmtest.read_folded(folded) if f[0] == root and len(f) > 1 and f[1] == "sleep-spin"]
        total = sum(n for _, n in stacks)
        sleep = sum(n for f, n in stacks if any(x.startswith("java/lang/Thread.sleep") for x in f) and
                    any(x.endswith("_[k]") for x in f))
        # folded counts are microseconds: the thread sleeps ~90% of 4 s (less on a loaded machine)
        self.assertGreater(sleep, 0.5 * 4e6, stacks[:3])
        self.assertGreater(sleep / total, 0.6, stacks[:3])

    def test_launch_follows_the_wrapper_fork(self):
        # a shell wrapper forks java: the fork tracepoint (follow_fork_legacy) selects it
        folded = self.out("launch.folded")
        java = " ".join([jvmtest.JAVA, "-cp", jvmtest.JAR, "jflame.examples.Workload", "hot", "4000"])
        r = jvmtest.record(["-v", "-o", folded, "--", "/bin/sh", "-c", java + "; true"], env=LEGACY, launch=True,
                           timeout=180)
        self.assertRegex(r.stderr, r"BPF program follow_fork_legacy: \d+ instructions verified")
        spin = sum(n for f, n in jvmtest.read_folded(folded) if any("Workload.spin_[" in x for x in f))
        self.assertGreater(spin, 100)

    def test_agent_events_alone_load_no_walker(self):
        # -e lock alone: the sampler only finds processes, so its program is loaded
        # with the walker known dead (pids_only): a few hundred instructions verified
        # where the CPU recording's are 100k and more on 5.10, no tail-call program,
        # no depth said; the lock samples are the agent's, as ever
        jvm = self.jvm(["--seconds", "600"], main="jflame.examples.LockContend", ready="jflame-example: ready")
        folded = self.out("lock.folded")
        r = self.record("-e", "lock", "-p", str(jvm.pid), "-d", "3", "-o", folded)
        m = re.search(r"BPF program profile_sample_legacy: (\d+) instructions verified", r.stderr)
        self.assertTrue(m, r.stderr[-3000:])
        self.assertLess(int(m.group(1)), 2000, "the walker was verified for a recording that does not walk")
        self.assertNotRegex(r.stderr, r"BPF program profile_walk_more: ")
        self.assertFalse(NOTE.search(r.stderr), "a walker's depth said for the agent's stacks")
        waits = sum(n for f, n in jvmtest.read_folded(folded) if f[-1] == "jflame/examples/Ledger_[l]")
        self.assertGreater(waits, 1e6, "under a second of lock waits in 3 s of LockContend")


if __name__ == "__main__":
    unittest.main(verbosity=2)
