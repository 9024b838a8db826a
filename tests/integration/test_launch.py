# test_launch.py - `jflame record -- java ...`: the JVM is started with the agent
# and the flags it needs, recorded until it exits or -d, and its exit code passes through.
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import jvmtest
from jvmtest import read_folded

JFLAME = os.environ.get("JFLAME_BIN", "")
SPIN_FOLDED = "jflame/examples/Workload.spin_[j]"
HOT_THREAD = "jflame-hot-worker-thread-with-a-long-name"


class LaunchTest(unittest.TestCase):
    def setUp(self):
        jvmtest.check_setup()
        jvmtest.require(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        self.tmp = tempfile.mkdtemp(prefix="jflame-launch-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def out(self, name):
        return os.path.join(self.tmp, name)

    def launch(self, record_args, command, timeout=120):
        return jvmtest.record(record_args + ["--"] + command, timeout=timeout, check=False, launch=True, cwd=self.tmp)

    def workload(self, *args):
        return [jvmtest.JAVA, "-cp", jvmtest.JAR, "jflame.examples.Workload"] + [str(a) for a in args]

    def hot_pid(self, stacks):
        pids = {frames[0] for frames, _ in stacks if len(frames) > 1 and frames[1] == HOT_THREAD}
        self.assertEqual(len(pids), 1, pids)
        return int(pids.pop().split("]")[0][1:])

    def test_exit_code_passes_through_and_outputs_are_written(self):
        folded, svg = self.out("l.folded"), self.out("l.svg")
        r = self.launch(["-o", folded, "-o", svg], self.workload("hot", 3000, 7))
        self.assertEqual(r.returncode, 7, r.stderr)
        self.assertIn("jflame-workload: ready", r.stdout)  # the JVM's own output is untouched
        stacks = read_folded(folded)
        pid = self.hot_pid(stacks)
        hot = [(f, n) for f, n in stacks if f[0] == "[%d] java" % pid and f[1] == HOT_THREAD]
        spin = sum(n for f, n in hot if any(x.startswith(SPIN_FOLDED) for x in f))
        self.assertGreater(spin, 150, r.stderr)
        # launched with -XX:+PreserveFramePointer: stacks through compiled code reach the thread's start
        whole = sum(n for f, n in hot if any(x.startswith(SPIN_FOLDED) for x in f) and "start_thread" in f)
        self.assertGreater(whole, spin * 0.9)
        with open(svg) as f:
            self.assertIn("frame pointers: on", f.read())
        self.assertNotIn("PreserveFramePointer", r.stderr)
        self.assertTrue(os.path.exists("/tmp/jflame-%d.status" % pid))
        st = jvmtest.read_status("/tmp/jflame-%d.status" % pid)
        self.assertEqual(st["mode"], "onload")
        self.assertEqual(st["state"], "exited")
        self.assertEqual(st["preserve_frame_pointer"], "on")
        for p in ("/tmp/perf-%d.map", "/tmp/jflame-%d.events", "/tmp/jflame-%d.status"):
            os.unlink(p % pid)

    def test_duration_ends_recording_then_waits_for_the_jvm(self):
        folded = self.out("d.folded")
        t0 = time.monotonic()
        r = self.launch(["-d", "1", "-o", folded], self.workload("hot", 3500))
        took = time.monotonic() - t0
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("waiting for", r.stderr)
        self.assertGreater(took, 3.0)
        m = [l for l in r.stderr.splitlines() if " samples (" in l]
        self.assertTrue(m and " in 1.0 s" in m[0], r.stderr)
        self.assertTrue(read_folded(folded))

    def test_wrapper_script_child_jvm_is_followed(self):
        # a JVM started by a script (not exec'd): found through fork-following,
        # given the agent through JAVA_TOOL_OPTIONS; the script's exit code passes through
        script = self.out("run.sh")
        with open(script, "w") as f:
            f.write("#!/bin/sh\n%s\nexit 5\n" % " ".join(self.workload("hot", 3000)))
        os.chmod(script, 0o755)
        folded = self.out("w.folded")
        r = self.launch(["-o", folded], [script])
        self.assertEqual(r.returncode, 5, r.stderr)
        self.assertIn("Picked up JAVA_TOOL_OPTIONS", r.stderr)
        stacks = read_folded(folded)
        pid = self.hot_pid(stacks)
        spin = sum(n for f, n in stacks if f[0] == "[%d] java" % pid and any(x.startswith(SPIN_FOLDED) for x in f))
        self.assertGreater(spin, 100, r.stderr)
        for p in ("/tmp/perf-%d.map", "/tmp/jflame-%d.events", "/tmp/jflame-%d.status"):
            if os.path.exists(p % pid):
                os.unlink(p % pid)

    def test_sigterm_stops_both_and_still_writes(self):
        folded = self.out("t.folded")
        env = dict(os.environ, JFLAME_AGENT=jvmtest.AGENT)
        env.update(jvmtest.JVM_ENV)
        p = subprocess.Popen([JFLAME, "record", "-o", folded, "--"] + self.workload("hot", 60000),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=self.tmp)
        time.sleep(3)
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
        # the JVM got the SIGTERM too and ended with it (143 = 128 + SIGTERM)
        self.assertEqual(p.returncode, 143, err)
        self.assertTrue(read_folded(folded), err)

    def test_bad_launches(self):
        r = self.launch(["-o", self.out("x.folded")], ["/nonexistent/java"])
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("cannot run '/nonexistent/java'", r.stderr)
        self.assertFalse(os.path.exists(self.out("x.folded")))
        r = subprocess.run([JFLAME, "record", "-p", "1", "--", "java"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 2)
        self.assertIn("not both", r.stderr)


if __name__ == "__main__":
    jvmtest.main()
