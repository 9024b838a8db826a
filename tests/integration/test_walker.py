# test_walker.py - the HotSpot stack walker on real JVMs: whole, named stacks
# without -XX:+PreserveFramePointer (Linux perf with the JDK's own perf map as
# the referee), interpreted and never-compiled methods named _[0], inlined
# callees _[i], deep recursion whole or marked [truncated], and no stale names
# after a class is unloaded and another takes its place; interpreted frames'
# source lines in .stacks, pprof (decoded by Google's protoc) and speedscope.
import collections
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest

import jvmtest
from jvmtest import Jvm

JFLAME = os.environ.get("JFLAME_BIN", "")
HOT = "jflame-hot-worker-thread-with-a-long-name"
UNNAMED = ("Interpreter", "[unknown]", "[unwind failed]")


def thread_stacks(folded, pid, thread):
    """(frames below the thread frame, count) of one thread of one process."""
    out = []
    for frames, count in jvmtest.read_folded(folded):
        i = next((k for k, f in enumerate(frames) if f.startswith("[%d] " % pid)), None)
        if i is not None and len(frames) > i + 1 and frames[i + 1].startswith(thread):
            out.append((frames[i + 2:], count))
    return out


def reaches_entry(frames):
    """The stack runs from the thread's start (libc's start_thread, or the
    launcher's JavaMain) to Java's Thread.run."""
    root = frames[:8]
    return (any(f.startswith("start_thread") or f.startswith("JavaMain") for f in root) and
            any(f.startswith("java/lang/Thread.run_[") for f in frames))


def java_region(frames):
    """The frames from the first Java call (call_stub) to the last Java frame."""
    first = next((i for i, f in enumerate(frames) if "call_stub" in f), None)
    last = max((i for i, f in enumerate(frames) if re.search(r"_\[[ji0]\]$", f)), default=None)
    if first is None or last is None:
        return []
    return frames[first + 1:last + 1]


def pprof_lines(p):
    """{(function name, file, line): summed sample counts} over every frame of
    every sample, and the names of functions with a line."""
    strs = p["string_table"]
    funs = {f["id"][0]: f for f in p["function"]}
    locs = {l["id"][0]: l for l in p["location"]}
    out = collections.Counter()
    for s in p["sample"]:
        for lid in s["location_id"]:
            ln = locs[lid]["line"][0]
            f = funs[ln["function_id"][0]]
            out[(strs[f["system_name"][0]], strs[f.get("filename", [0])[0]], ln.get("line", [0])[0])] += \
                s["value"][0]
    return out


def stacks_samples(path):
    """A .stacks file (perf script text) as (header, frames leaf first)."""
    samples, cur = [], None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                cur = None
            elif not line[0].isspace():
                cur = (line, [])
                samples.append(cur)
            elif cur is not None and not re.match(r"^\s+\S*:\d+$", line):  # not a srcline
                cur[1].append(line.strip())
    return samples


class WalkerTest(unittest.TestCase):
    def setUp(self):
        jvmtest.check_setup()
        jvmtest.require(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        self.tmp = tempfile.mkdtemp(prefix="jflame-walker-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def out(self, name):
        return os.path.join(self.tmp, name)

    def record(self, *args, timeout=180):
        return jvmtest.record(args, timeout=timeout)

    def jvm(self, args, agent_opts=None, flags=(), stacks=False, ready=None, thread=None):
        """A JVM running the workload; ready: the line it says when warmed up;
        thread: wait only until it runs that thread instead (nothing to warm up)."""
        kw = {}
        if stacks:
            kw = {"main": "jflame.examples.Stacks"}
        j = Jvm(args, agent_opts=agent_opts, jvm_flags=list(flags), wait_ready=False, **kw)
        self.addCleanup(j.cleanup)
        if thread:
            j.wait_thread(thread, 60)
        else:
            # an interpreted (-Xint) warm-up on a loaded machine takes a while
            j.wait_output(ready or ("jflame-stacks: ready" if stacks else "jflame-workload: ready"), 240)
        return j

    def perf_reach(self, jvm):
        """Linux perf's frame-pointer stacks of the hot thread, named by the
        JDK's own perf map (jcmd Compiler.perfmap): the share that reaches
        Thread.run. The map is removed afterwards."""
        perf = shutil.which("perf")
        jvmtest.require(perf, "perf not installed (scripts/deps.sh installs linux-perf)")
        jcmd = os.path.join(jvmtest.JAVA_HOME, "bin", "jcmd")
        data = self.out("perf.data")
        rec = subprocess.run([perf, "record", "-q", "-F", "299", "-g", "-p", str(jvm.pid), "-o", data, "--",
                              "sleep", "3"], capture_output=True, text=True, timeout=60)
        self.assertEqual(rec.returncode, 0, rec.stderr)
        pm = subprocess.run([jcmd, str(jvm.pid), "Compiler.perfmap"], capture_output=True, text=True, timeout=60)
        self.assertEqual(pm.returncode, 0, pm.stdout + pm.stderr)
        try:
            script = subprocess.run([perf, "script", "-i", data], capture_output=True, text=True, timeout=120)
            self.assertEqual(script.returncode, 0, script.stderr)
        finally:
            os.unlink(jvm.map_path)
        hot = reach = 0
        for block in script.stdout.split("\n\n"):
            lines = block.strip().splitlines()
            if not lines or not lines[0].startswith(HOT[:15]):
                continue
            hot += 1
            text = "\n".join(lines[1:])
            if "Thread.run" in text and "start_thread" in text:
                reach += 1
        self.assertGreater(hot, 50, "perf saw too few samples of the hot thread")
        return reach / hot

    def test_whole_named_stacks_without_frame_pointers_after_attach(self):
        jvm = self.jvm(["hot", "120000"])  # no agent, no -XX:+PreserveFramePointer
        perf_share = self.perf_reach(jvm)
        time.sleep(0.2)
        # jcmd's map is gone (else jflame would take it for an agent's and not attach)
        self.assertFalse(os.path.exists(jvm.map_path), "the JDK's perf map came back: %s" % jvm.map_path)
        folded = self.out("cpu.folded")
        r = self.record("-p", str(jvm.pid), "--attach", "-d", "4", "-o", folded, "-o", self.out("cpu.svg"))
        self.assertIn("loaded the agent", r.stderr)
        # the walker does not need the flag: no advice to restart with it
        self.assertNotIn("PreserveFramePointer", r.stderr)
        stacks = thread_stacks(folded, jvm.pid, HOT)
        total = sum(c for _, c in stacks)
        self.assertGreater(total, 150, "too few samples of the hot thread")
        whole = sum(c for f, c in stacks if reaches_entry(f) and not any(x in UNNAMED for x in java_region(f)))
        share = whole / total
        print("\nhot thread stacks reaching Thread.run and start_thread, every Java frame named: "
              "jflame %.1f%% (%d/%d); perf + Compiler.perfmap %.1f%%" % (100 * share, whole, total,
                                                                          100 * perf_share))
        self.assertGreaterEqual(share, 0.95, [f for f, _ in stacks if not reaches_entry(f)][:3])
        self.assertTrue(any("jflame/examples/Workload.spin_[j]" in f for f, _ in stacks))
        with open(self.out("cpu.svg")) as f:
            svg = f.read()
        self.assertIn("HotSpot walker", svg)
        self.assertNotIn("restart it with -XX:+PreserveFramePointer", svg)

    def test_whole_named_stacks_without_any_agent(self):
        # attach disabled, and not asked for: compiled frames are named from the
        # JVM's own nmethods and their debug info, the thread from its Thread object
        jvm = self.jvm(["hot", "120000"], flags=["-XX:+DisableAttachMechanism"])
        folded, svg = self.out("noagent.folded"), self.out("noagent.svg")
        r = self.record("-p", str(jvm.pid), "-d", "4", "-o", folded, "-o", svg)
        self.assertFalse(os.path.exists(jvm.map_path), "an agent was loaded")
        self.assertNotRegex(r.stderr, r"loaded the agent|agent copied|could not load the agent|attach listener")
        # no -XX:+DebugNonSafepoints: the graph says how inlined frames are placed
        with open(svg) as f:
            self.assertIn("inlining placed at safepoints only in pid %d" % jvm.pid, f.read())
        # --attach: the attach fails, and jflame says what that costs
        r = self.record("-p", str(jvm.pid), "--attach", "-d", "1", "-o", self.out("attach.folded"))
        self.assertIn("no agent in pid %d, so compiled Java frames are named from the JVM's memory" % jvm.pid, r.stderr)
        stacks = thread_stacks(folded, jvm.pid, HOT)
        total = sum(c for _, c in stacks)
        self.assertGreater(total, 150)
        whole = sum(c for f, c in stacks if reaches_entry(f) and not any(x in UNNAMED for x in java_region(f)))
        self.assertGreaterEqual(whole / total, 0.95, [f for f, _ in stacks][:3])
        spin = sum(c for f, c in stacks if "jflame/examples/Workload.spin_[j]" in f)
        self.assertGreaterEqual(spin / total, 0.8, [f for f, _ in stacks][:3])

    def test_xint_names_interpreted_frames(self):
        # interpreted only: nothing is compiled, so no warm-up to wait for (the
        # workload's "ready" comes after 2000 rounds of its hot loop, minutes
        # when interpreted on a loaded machine); the hot loop runs from the
        # hot thread's start
        jvm = self.jvm(["hot", "120000"], agent_opts="", flags=["-Xint"], thread=HOT)
        folded, stacks_out = self.out("xint.folded"), self.out("xint.stacks")
        pprof, speedscope = self.out("xint.pb.gz"), self.out("xint.json")
        self.record("-p", str(jvm.pid), "-d", "4", "-o", folded, "-o", stacks_out, "-o", pprof, "-o", speedscope)
        # .stacks carries each interpreted frame's source line, as perf script -F+srcline does
        with open(os.path.join(jvmtest.SOURCE_DIR, "examples/src/jflame/examples/Workload.java")) as f:
            src = f.read().splitlines()
        first = next(i for i, l in enumerate(src, 1) if "static long spin(int rounds)" in l)
        last = next(i for i, l in enumerate(src, 1) if i > first and l == "    }")
        with open(stacks_out) as f:
            text = f.read()
        spin_lines = [int(n) for n in re.findall(r"Ljflame/examples/Workload;::spin \(\[interpreted\]\)\n  Workload\.java:(\d+)",
                                                 text)]
        self.assertGreater(len(spin_lines), 50)
        self.assertTrue(all(first < n < last for n in spin_lines), (first, last, sorted(set(spin_lines))))
        # pprof: each line of spin is a Location with its Line.line, of one
        # Function whose filename is the source file; the same counts as .stacks
        lines = pprof_lines(jvmtest.protoc_pprof(pprof))
        spin_pprof = {n: c for (name, file, n), c in lines.items() if name == "jflame/examples/Workload.spin_[0]" and n}
        self.assertEqual(spin_pprof, dict(collections.Counter(spin_lines)))
        self.assertEqual({file for (name, file, n) in lines if name == "jflame/examples/Workload.spin_[0]"},
                         {"Workload.java"})
        self.assertIn(("java/lang/Thread.run_[0]", "Thread.java"), {(name, file) for (name, file, n) in lines if n})
        self.assertFalse([k for k in lines if k[2] and not k[0].endswith("_[0]")], "a line on a frame not interpreted")
        # speedscope: the frames' file and line; folded output has no lines
        with open(speedscope) as f:
            frames = json.load(f)["shared"]["frames"]
        spin_frames = [fr for fr in frames if fr["name"] == "jflame/examples/Workload.spin_[0]"]
        self.assertEqual({fr["line"] for fr in spin_frames if "line" in fr}, set(spin_lines))
        self.assertTrue(all(fr["file"] == "Workload.java" for fr in spin_frames))
        with open(folded, "rb") as f:
            self.assertNotIn(b"\x1f", f.read())
        stacks = thread_stacks(folded, jvm.pid, HOT)
        total = sum(c for _, c in stacks)
        self.assertGreater(total, 150)
        named = unnamed = 0
        for frames, c in stacks:
            for f in java_region(frames):
                if f.endswith("_[0]"):
                    named += c
                elif f == "Interpreter":
                    unnamed += c
        self.assertGreater(named, 0)
        print("\n-Xint: %d interpreted frames named, %d not" % (named, unnamed))
        self.assertGreaterEqual(named / (named + unnamed), 0.99)
        spin = sum(c for f, c in stacks if "jflame/examples/Workload.spin_[0]" in f)
        self.assertGreaterEqual(spin / total, 0.8)
        self.assertGreaterEqual(sum(c for f, c in stacks if reaches_entry(f)) / total, 0.95)

    def test_huge_method_is_interpreted_and_named(self):
        jvm = self.jvm(["huge", "120000"], agent_opts="", stacks=True)
        folded = self.out("huge.folded")
        self.record("-p", str(jvm.pid), "-d", "4", "-o", folded)
        stacks = thread_stacks(folded, jvm.pid, "jflame-huge-method")
        total = sum(c for _, c in stacks)
        self.assertGreater(total, 150)
        huge = sum(c for f, c in stacks if "jflame/examples/Stacks.huge_[0]" in f)
        self.assertGreaterEqual(huge / total, 0.9, [f for f, _ in stacks][:3])
        self.assertFalse(any("Stacks.huge_[j]" in f for f, _ in stacks), "the huge method was compiled")

    def deep(self, depth):
        jvm = self.jvm(["deep", str(depth), "120000"], agent_opts="", stacks=True,
                       flags=["-XX:CompileCommand=quiet", "-XX:CompileCommand=dontinline,jflame.examples.Stacks::descend",
                              "-XX:CompileCommand=dontinline,jflame.examples.Stacks::bottom"])
        folded = self.out("deep.folded")
        r = self.record("-p", str(jvm.pid), "-d", "4", "-o", folded, "-o", self.out("deep.svg"))
        stacks = [(f, c) for f, c in thread_stacks(folded, jvm.pid, "jflame-deep-%d" % depth)
                  if any(x.startswith("jflame/examples/Stacks.bottom_[") for x in f)]
        total = sum(c for _, c in stacks)
        self.assertGreater(total, 100, "too few samples at the bottom of the recursion")
        return r, stacks, total

    def test_1500_deep_recursion_recorded_whole(self):
        _, stacks, total = self.deep(1500)
        whole = sum(c for f, c in stacks if reaches_entry(f) and "[truncated]" not in f and
                    sum(1 for x in f if x.startswith("jflame/examples/Stacks.descend_[")) >= 1500)
        self.assertGreaterEqual(whole / total, 0.95, [len(f) for f, _ in stacks][:5])

    def test_3000_deep_recursion_marked_truncated(self):
        r, stacks, total = self.deep(3000)
        cut = sum(c for f, c in stacks if f and f[0] == "[truncated]")
        self.assertGreaterEqual(cut / total, 0.95, [f[:2] for f, _ in stacks][:5])
        m = re.search(r"(\d+) truncated", r.stderr)
        self.assertTrue(m and int(m.group(1)) >= cut, r.stderr)
        with open(self.out("deep.svg")) as f:
            svg = f.read()
        m = re.search(r"(\d+) truncated", svg)
        self.assertTrue(m and int(m.group(1)) >= cut)

    def inlined(self, jvm):
        folded = self.out("inline.folded")
        self.record("-p", str(jvm.pid), "-d", "3", "-o", folded)
        stacks = thread_stacks(folded, jvm.pid, HOT)
        pairs = sum(c for f, c in stacks
                    if any(a == "jflame/examples/Workload.spin_[j]" and b == "jflame/examples/Workload.mix_[i]"
                           for a, b in zip(f, f[1:])))
        self.assertGreater(pairs, 0, [f for f, _ in stacks][:3])
        folded2 = self.out("noinline.folded")
        self.record("-p", str(jvm.pid), "-d", "2", "-o", folded2, "--no-inline")
        self.assertFalse(any(x.endswith("_[i]") for f, _ in thread_stacks(folded2, jvm.pid, HOT) for x in f))

    def test_inlined_callee_by_default_at_startup(self):
        self.inlined(self.jvm(["hot", "120000"], agent_opts=""))

    def test_inlined_callee_by_default_after_attach(self):
        # attached before the hot code is compiled: code compiled after an
        # attach has exact inline chains (the agent turned DebugNonSafepoints on)
        jvm = self.jvm(["idle-then-hot", "3000", "120000"], stacks=True, ready="jflame-stacks: ready idle")
        r = subprocess.run([JFLAME, "attach", str(jvm.pid)], capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        jvm.wait_output("jflame-workload: ready", 60)
        self.inlined(jvm)

    def test_attach_turns_on_debug_non_safepoints(self):
        jvm = self.jvm(["hot", "120000"], flags=["-XX:+UnlockDiagnosticVMOptions"])  # DebugNonSafepoints off
        jcmd = os.path.join(jvmtest.JAVA_HOME, "bin", "jcmd")

        def flag():
            r = subprocess.run([jcmd, str(jvm.pid), "VM.flags", "-all"], capture_output=True, text=True, timeout=60)
            self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
            m = re.search(r"\bbool DebugNonSafepoints\s+= (\w+)", r.stdout)
            self.assertTrue(m, r.stdout[:2000])
            return m.group(1)

        self.assertEqual(flag(), "false")  # VM.flags -all lists it: diagnostic flags unlocked
        r = subprocess.run([JFLAME, "attach", str(jvm.pid)], capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(flag(), "true")  # the JDK's own jcmd is the referee
        self.assertEqual(jvm.wait_status(lambda s: "debug_non_safepoints" in s)["debug_non_safepoints"], "on")
        self.assertNotIn("could not turn on DebugNonSafepoints", jvm.stderr())

    def test_unloaded_class_name_never_reused(self):
        jvm = self.jvm(["tenants", "2500", "Old1,New2,Old3"], flags=["-Xint"], stacks=True,
                       ready="jflame-stacks: ready Old1")
        stacks = self.out("tenants.stacks")
        self.record("-p", str(jvm.pid), "-o", stacks, timeout=120)  # until the JVM exits
        out = jvm.stdout()
        for tag in ("Old1", "New2"):
            self.assertRegex(out, r"unloaded %s true" % tag, "the class was not unloaded: the test proves nothing")
        starts = {m.group(1): int(m.group(2)) / 1e9 for m in re.finditer(r"ready (\w+) (\d+)", out)}
        ends = {m.group(1): int(m.group(3)) / 1e9 for m in re.finditer(r"unloaded (\w+) (\w+) (\d+)", out)}
        seen = {"Old1": 0, "New2": 0, "Old3": 0}
        for header, frames in stacks_samples(stacks):
            if not header.startswith("jflame-tenants"):
                continue
            t = float(re.search(r" (\d+\.\d+): ", header).group(1))
            text = "\n".join(frames)
            for tag in seen:
                if "Tenant%s;::run%s" % (tag, tag) in text:
                    seen[tag] += 1
                    # a tenant's name only while it ran
                    self.assertTrue(starts[tag] - 0.05 <= t <= ends[tag] + 0.05,
                                    "a sample at %.3f s names Tenant%s, which ran %.3f..%.3f s" %
                                    (t, tag, starts[tag], ends[tag]))
        for tag, n in seen.items():
            self.assertGreater(n, 20, "too few samples name Tenant%s: %r" % (tag, seen))


if __name__ == "__main__":
    jvmtest.main()
