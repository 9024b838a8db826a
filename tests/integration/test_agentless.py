# test_agentless.py - the same picture with and without the agent: one JVM
# (started with -XX:+DebugNonSafepoints, no agent) recorded first as jflame does
# by default (nothing loaded into it: its /tmp files and libraries untouched),
# then with --attach (the agent names compiled code through JVMTI). Each sample
# of the second recording is named both ways (JFLAME_AGENTLESS_CHECK) and the
# two agree for at least 95% of the samples; the two recordings' folded stacks
# agree too: inline chains from the JVM's debug info, stubs from its
# StubCodeDesc list, full Java thread names from its memory.
import collections
import os
import re
import shutil
import tempfile
import time
import unittest

import jvmtest
from jvmtest import Jvm

JFLAME = os.environ.get("JFLAME_BIN", "")
HOT = "jflame-hot-worker-thread-with-a-long-name"
WORK = "jflame-mixed-work-thread-with-a-long-name"
SECONDS = "8"
FREQ = "499"


def jvm_stacks(path, pid):
    """Counter of the JVM's stacks (frames below its "[pid] java" root)."""
    out = collections.Counter()
    for frames, count in jvmtest.read_folded(path):
        if frames and frames[0].startswith("[%d] " % pid):
            out[tuple(frames[1:])] += count
    return out


def touched(pid):
    """What loading an agent would leave: the JVM's files in /tmp (perf map,
    jflame's files, the attach trigger and socket) and its mapped files."""
    tmp = sorted(n for n in os.listdir("/tmp") if re.search(r"(^|\D)%d(\D|$)" % pid, n))
    with open("/proc/%d/maps" % pid) as f:
        libs = sorted({line.split()[5] for line in f if len(line.split()) > 5 and line.split()[5].startswith("/")})
    return tmp, libs


def pprof_lines(p, name):
    """{(file, line)} of the locations of function name in a decoded pprof."""
    strs = p["string_table"]
    funs = {f["id"][0]: f for f in p["function"]}
    out = set()
    for loc in p["location"]:
        for ln in loc.get("line", []):
            f = funs[ln["function_id"][0]]
            if strs[f["system_name"][0]] == name and ln.get("line", [0])[0]:
                out.add((strs[f.get("filename", [0])[0]], ln["line"][0]))
    return out


def shared(a, b):
    """The share of a's samples whose stack (frame for frame) b has too."""
    total = sum(a.values())
    return sum(n for s, n in a.items() if s in b) / total if total else 0.0


class AgentlessTest(unittest.TestCase):
    def setUp(self):
        jvmtest.check_setup()
        jvmtest.require(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        self.tmp = tempfile.mkdtemp(prefix="jflame-agentless-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def out(self, name):
        return os.path.join(self.tmp, name)

    def test_same_stacks_with_and_without_the_agent(self):
        jvm = Jvm(["mixed", "600000"], jvm_flags=["-XX:+UnlockDiagnosticVMOptions", "-XX:+DebugNonSafepoints"],
                  wait_ready=False)
        self.addCleanup(jvm.cleanup)
        jvm.wait_output("jflame-workload: ready", 240)
        time.sleep(6)  # compilation settles: both recordings see the same code
        before = touched(jvm.pid)
        self.assertFalse(any("libjflame-agent" in l for l in before[1]))

        agentless, agent = self.out("agentless.folded"), self.out("agent.folded")
        r = jvmtest.record(["-p", jvm.pid, "-F", FREQ, "-d", SECONDS, "-o", agentless, "-o", self.out("a.svg"),
                            "-o", self.out("a.pb.gz")])
        self.assertNotIn("loaded the agent", r.stderr)
        self.assertEqual(touched(jvm.pid), before, "the agentless recording changed the JVM's /tmp files or libraries")
        with open(self.out("a.svg")) as f:
            svg = f.read()
        self.assertIn("HotSpot walker", svg)
        self.assertNotIn("safepoints only", svg)  # -XX:+DebugNonSafepoints: exact placement

        # with the agent, each sample's compiled and stub frames are named
        # from the JVM's memory as well and compared (JFLAME_AGENTLESS_CHECK)
        # inlined frames carry their own source lines (their scope's bci): mix's
        # lines are inside mix, in Workload.java
        with open(os.path.join(jvmtest.SOURCE_DIR, "examples/src/jflame/examples/Workload.java")) as f:
            src = f.read().splitlines()
        first = next(i for i, l in enumerate(src, 1) if "static int mix(int x)" in l)
        last = next(i for i, l in enumerate(src, 1) if i > first and l == "    }")
        lines = pprof_lines(jvmtest.protoc_pprof(self.out("a.pb.gz")), "jflame/examples/Workload.mix_[i]")
        self.assertTrue(lines, "no line for an inlined mix")
        self.assertEqual({f for f, _ in lines}, {"Workload.java"}, lines)
        self.assertTrue(all(first < n < last for _, n in lines), (first, last, sorted(lines)))

        r = jvmtest.record(["-p", jvm.pid, "--attach", "-F", FREQ, "-d", SECONDS, "-o", agent],
                           env={"JFLAME_AGENTLESS_CHECK": "1"})
        self.assertIn("loaded the agent into pid %d" % jvm.pid, r.stderr)
        m = re.search(r"agentless check: (\d+) of (\d+) samples", r.stderr)
        self.assertTrue(m, r.stderr)
        alike, checked = int(m.group(1)), int(m.group(2))
        self.assertGreater(checked, 2000, r.stderr)
        print("\n%s: samples named alike by the agent and from the JVM's memory: %.1f%% (%d of %d)"
              % (os.path.basename(jvmtest.JAVA_HOME), 100 * alike / checked, alike, checked))
        self.assertGreaterEqual(alike / checked, 0.95, r.stderr)
        self.assertTrue(any("libjflame-agent" in l for l in touched(jvm.pid)[1]))

        a, b = jvm_stacks(agentless, jvm.pid), jvm_stacks(agent, jvm.pid)
        self.assertGreater(sum(a.values()), 2000, "too few samples without the agent")
        self.assertGreater(sum(b.values()), 2000, "too few samples with the agent")
        # not a trivial agreement: the agentless stacks have inlined frames,
        # of the callees C2 inlines into the hot loop
        inl = collections.Counter(f for s, n in a.items() for f in s if f.endswith("_[i]") for _ in range(n))
        self.assertTrue({"jflame/examples/Workload.mix_[i]", "jflame/examples/HotMath.scramble_[i]"} & set(inl),
                        inl.most_common(10))
        # the Java threads under their full names, both ways
        for stacks in (a, b):
            threads = {s[0] for s in stacks}
            self.assertIn(HOT, threads)
            self.assertIn(WORK, threads)
        ab, ba = shared(a, b), shared(b, a)
        overlap = sum(min(n / sum(a.values()), b[s] / sum(b.values())) for s, n in a.items())
        print("\n%s: agentless samples whose stack the agent's recording has too: %.1f%% (of %d); the agent's "
              "found agentless: %.1f%% (of %d); distribution overlap %.1f%%; %d distinct stacks agentless, %d "
              "with the agent" % (os.path.basename(jvmtest.JAVA_HOME), 100 * ab, sum(a.values()), 100 * ba,
                                  sum(b.values()), 100 * overlap, len(a), len(b)))
        only_a = sorted(((n, s) for s, n in a.items() if s not in b), reverse=True)[:3]
        only_b = sorted(((n, s) for s, n in b.items() if s not in a), reverse=True)[:3]
        self.assertGreaterEqual(ab, 0.95, "agentless stacks the agent's recording lacks: %s" % only_a)
        self.assertGreaterEqual(ba, 0.95, "the agent's stacks the agentless recording lacks: %s" % only_b)


if __name__ == "__main__":
    unittest.main(verbosity=2)
