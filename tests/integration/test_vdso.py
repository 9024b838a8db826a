# test_vdso.py - frames in the vDSO named as perf names them: a JVM reading
# the clocks in a hot loop (Workload clock: System.nanoTime() and
# System.currentTimeMillis(), clock_gettime(2) served by the vDSO) recorded
# with `jflame record -p PID`; its samples in the [vdso] mapping are named
# from the kernel's vDSO image (__vdso_clock_gettime, dso [vdso]), none is left
# [unknown] under the clock calls; perf, where installed, names them the same.
import collections
import os
import shutil
import subprocess
import tempfile
import unittest

import jvmtest
from jvmtest import Jvm

JFLAME = os.environ.get("JFLAME_BIN", "")
CLOCK = "jflame-clock-reader"
# the frames that call into the vDSO: libc's wrappers, the JVM's clocks
VDSO_CALLERS = ("clock_gettime", "gettimeofday", "time", "os::javaTimeNanos", "os::javaTimeMillis",
                "os::javaTimeSystemUTC")


def stacks_frames(path):
    """The .stacks (perf script text) samples: [(comm, [(sym, dso) leaf first])]."""
    samples, cur = [], None
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                cur = None
            elif not line[0].isspace():
                cur = (line.split()[0], [])
                samples.append(cur)
            elif cur is not None:
                rest = line.split(None, 1)[1] if len(line.split(None, 1)) > 1 else ""
                cut = rest.rfind(" (")
                cur[1].append((rest[:cut], rest[cut + 2:-1]) if cut >= 0 and rest.endswith(")") else (rest, ""))
    return samples


def perf_vdso_names(perf, pid, tmp):
    """The symbols perf script gives the process's [vdso] frames."""
    data = os.path.join(tmp, "perf.data")
    rec = subprocess.run([perf, "record", "-q", "-F", "499", "-g", "-p", str(pid), "-o", data, "--", "sleep", "2"],
                         capture_output=True, text=True, timeout=60)
    if rec.returncode != 0:
        raise AssertionError("perf record failed: " + rec.stderr)
    script = subprocess.run([perf, "script", "-i", data, "-F", "ip,sym,dso"], capture_output=True, text=True,
                            timeout=120)
    if script.returncode != 0:
        raise AssertionError("perf script failed: " + script.stderr)
    names = collections.Counter()
    for line in script.stdout.splitlines():
        if line.rstrip().endswith("([vdso])"):
            parts = line.split(None, 1)
            names[parts[1].rsplit(" (", 1)[0].strip() if len(parts) > 1 else ""] += 1
    return names


class VdsoTest(unittest.TestCase):
    def setUp(self):
        jvmtest.check_setup()
        jvmtest.require(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        self.tmp = tempfile.mkdtemp(prefix="jflame-vdso-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def test_vdso_frames_named(self):
        jvm = Jvm(["clock", "120000"], wait_ready=False)
        self.addCleanup(jvm.cleanup)
        jvm.wait_output("jflame-workload: ready", 120)
        folded, stacks = os.path.join(self.tmp, "r.folded"), os.path.join(self.tmp, "r.stacks")
        jvmtest.record(["-p", jvm.pid, "-F", "499", "-d", "4", "-o", folded, "-o", stacks])

        clock = [(frames, n) for frames, n in jvmtest.read_folded(folded) if len(frames) > 2 and frames[1] == CLOCK]
        total = sum(n for _, n in clock)
        self.assertGreater(total, 200, "too few samples of the clock thread")
        # a leaf in the vDSO: an exported function, or code no exported symbol
        # covers ("[vdso]", perf's [unknown] in [vdso]: with kvm-clock the vDSO
        # reads the pvclock in a local function)
        in_vdso = sum(n for frames, n in clock if frames[-1].startswith("__vdso_") or frames[-1] == "[vdso]")
        # the clock reads are where it spends its time (most of it in the vDSO)
        self.assertGreater(in_vdso / total, 0.2, "only %d of %d clock samples end in a vDSO frame"
                           % (in_vdso, total))
        self.assertTrue(any("clock_gettime" in frames[-1] for frames, _ in clock if frames[-1].startswith("__vdso_")))
        unknown = [(frames[-2:], n) for frames, n in clock if frames[-1] == "[unknown]" and
                   frames[-2] in VDSO_CALLERS]
        self.assertEqual(unknown, [], "[unknown] leaves under a clock call")

        # the .stacks (perf script text): every [vdso] frame named, as perf does
        vdso = collections.Counter(sym for comm, frames in stacks_frames(stacks) for sym, dso in frames
                                   if dso == "[vdso]")
        self.assertTrue(vdso, "no [vdso] frame in the .stacks")
        self.assertTrue(all(s.startswith("__vdso_") or s == "[vdso]" for s in vdso), vdso)

        perf = shutil.which("perf")
        if perf:  # the referee: perf names the same frames the same (its [unknown] is our [vdso])
            theirs = perf_vdso_names(perf, jvm.pid, self.tmp)
            self.assertTrue(theirs, "perf saw no [vdso] frame")
            named = lambda c: collections.Counter({k: v for k, v in c.items() if k.startswith("__vdso_")})
            self.assertEqual(named(theirs).most_common(1)[0][0], named(vdso).most_common(1)[0][0], (theirs, vdso))
            self.assertEqual("[unknown]" in theirs, "[vdso]" in vdso, (theirs, vdso))


if __name__ == "__main__":
    jvmtest.main()
