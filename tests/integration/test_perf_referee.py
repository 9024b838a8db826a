# test_perf_referee.py - Linux perf as the referee: `perf record -g` + `perf script`
# resolve the hot thread's JIT samples to the names in our map, never [unknown],
# inline chains (outer->inner) by default and none with nounfold.
import os
import shutil
import subprocess
import tempfile
import unittest

import jvmtest
from jvmtest import Jvm

HOT_COMM = "jflame-hot-worker-thread-with-a-long-name"[:15]


def perf_samples(script_text):
    """perf script text -> list of (comm, [(addr, sym, dso)...])"""
    samples, cur = [], None
    for line in script_text.splitlines():
        if not line.strip():
            cur = None
            continue
        if not line[0].isspace():
            cur = (line.split()[0] if not line.startswith(HOT_COMM) else HOT_COMM, [])
            samples.append(cur)
            continue
        if cur is None:
            continue
        parts = line.split(None, 1)
        addr = int(parts[0], 16)
        rest = parts[1] if len(parts) > 1 else ""
        dso = rest[rest.rfind("(") + 1:-1] if rest.endswith(")") else ""
        sym = rest[:rest.rfind("(")].strip() if rest.endswith(")") else rest
        cur[1].append((addr, sym, dso))
    return samples


class PerfRefereeTest(unittest.TestCase):
    def run_perf(self, agent_opts):
        perf = shutil.which("perf")
        jvmtest.require(perf, "perf not installed (scripts/deps.sh installs linux-perf)")
        jvm = Jvm(["hot", "8000"], agent_opts=agent_opts, jvm_flags=["-XX:+PreserveFramePointer"])
        self.addCleanup(jvm.cleanup)
        tmp = tempfile.mkdtemp(prefix="jflame-perf-")
        self.addCleanup(shutil.rmtree, tmp, True)
        data = os.path.join(tmp, "perf.data")
        rec = subprocess.run([perf, "record", "-q", "-F", "499", "-g", "-p", str(jvm.pid), "-o", data,
                              "--", "sleep", "2"], capture_output=True, text=True, timeout=60)
        self.assertEqual(rec.returncode, 0, rec.stderr)
        script = subprocess.run([perf, "script", "-i", data], capture_output=True, text=True, timeout=120)
        self.assertEqual(script.returncode, 0, script.stderr)
        entries = jvm.map_entries()
        return perf_samples(script.stdout), entries

    def check(self, samples, entries, java_frame):
        hot = [frames for comm, frames in samples if comm == HOT_COMM]
        self.assertGreater(len(hot), 200, "too few samples of the hot thread")
        named = [f for f in hot if any(java_frame in sym for _, sym, _ in f)]
        self.assertGreaterEqual(len(named) / len(hot), 0.9,
                                "only %d of %d hot samples carry a named Java frame" % (len(named), len(hot)))
        ranges = sorted((s, s + z) for s, z, _ in entries)
        jit_frames = unknown = 0
        for frames in hot:
            for addr, sym, dso in frames:
                if any(lo <= addr < hi for lo, hi in ranges):
                    jit_frames += 1
                    if sym.startswith("[unknown]"):
                        unknown += 1
                    self.assertTrue(dso.startswith("/tmp/perf-"), (hex(addr), sym, dso))
        self.assertGreater(jit_frames, 0)
        self.assertEqual(unknown, 0, "%d of %d JIT frames are [unknown]" % (unknown, jit_frames))

    def test_perf_resolves_unfolded_chains_by_default(self):
        samples, entries = self.run_perf("")
        self.check(samples, entries, "Ljflame/examples/Workload;::spin")
        chains = {sym for _, frames in samples for _, sym, _ in frames if "->" in sym}
        self.assertTrue(any("Workload;::spin->" in c for c in chains), sorted(chains)[:10])

    def test_perf_resolves_jit_frames_nounfold(self):
        samples, entries = self.run_perf("nounfold")
        self.check(samples, entries, "Ljflame/examples/Workload;::spin")
        self.assertFalse(any("->" in sym for _, frames in samples for _, sym, _ in frames))


if __name__ == "__main__":
    jvmtest.main()
