# test_attach.py - loading into a running JVM (Agent_OnAttach) with Debian's jattach
# and with jcmd: earlier compiled code is replayed, a second load is harmless.
import os
import subprocess
import time
import unittest

import jvmtest
from jvmtest import Jvm

SPIN = "Ljflame/examples/Workload;::spin"


class AttachTest(unittest.TestCase):
    def setUp(self):
        jvmtest.check_setup()

    def start_warm_jvm(self):
        jvm = Jvm(["hot", "20000"])  # no agent at startup
        self.addCleanup(jvm.cleanup)
        self.assertFalse(os.path.exists(jvm.map_path), "a map exists before the agent was loaded")
        return jvm

    def test_jattach_replays_compiled_code(self):
        jvm = self.start_warm_jvm()
        r = jvmtest.jattach(jvm.pid, "load", jvmtest.AGENT, "true", "unfold")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        st = jvm.wait_status(lambda s: s.get("state") == "running")
        names = [e[2] for e in jvm.map_entries()]
        # spin was compiled long before the attach: the replay names it
        self.assertTrue(any(n == SPIN or n.startswith(SPIN + "->") for n in names))
        self.assertIn("Interpreter", names)
        self.assertEqual(st["mode"], "attach")
        self.assertEqual(st["options"], "")  # unfold is the default: nothing to write
        self.assertTrue(any("->" in n for n in names))
        # threads that started before the attach are named with their tids
        threads = {k: v for k, v in st.items() if k.startswith("thread.")}
        hot = [k for k, v in threads.items() if v == "jflame-hot-worker-thread-with-a-long-name"]
        self.assertEqual(len(hot), 1, threads)
        self.assertTrue(os.path.exists("/proc/%d/task/%s" % (jvm.pid, hot[0][len("thread."):])))
        self.assertTrue(jvm.alive())

    def test_second_load_is_harmless(self):
        jvm = self.start_warm_jvm()
        r1 = jvmtest.jattach(jvm.pid, "load", jvmtest.AGENT, "true")
        self.assertEqual(r1.returncode, 0, r1.stdout + r1.stderr)
        jvm.wait_status(lambda s: s.get("state") == "running")
        lines_before = len(jvm.map_entries())
        r2 = jvmtest.jattach(jvm.pid, "load", jvmtest.AGENT, "true")
        self.assertEqual(r2.returncode, 0, r2.stdout + r2.stderr)
        time.sleep(0.5)
        self.assertIn("already loaded", jvm.stderr())
        # the map was not truncated or replayed again
        self.assertGreaterEqual(len(jvm.map_entries()), lines_before)
        self.assertEqual(jvm.status()["state"], "running")
        self.assertTrue(jvm.alive())

    def test_jcmd_agent_load(self):
        jcmd = os.path.join(jvmtest.JAVA_HOME, "bin", "jcmd")
        jvmtest.require(os.access(jcmd, os.X_OK), "no jcmd in %s" % jvmtest.JAVA_HOME)
        jvm = self.start_warm_jvm()
        r = subprocess.run([jcmd, str(jvm.pid), "JVMTI.agent_load", jvmtest.AGENT, "msig"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        jvm.wait_status(lambda s: s.get("state") == "running")
        names = [e[2] for e in jvm.map_entries()]
        self.assertIn(SPIN + "(I)J", names)

    def test_bad_option_on_attach_fails_the_load(self):
        jvm = self.start_warm_jvm()
        r = jvmtest.jattach(jvm.pid, "load", jvmtest.AGENT, "true", "unfold,bogus=1")
        out = r.stdout + r.stderr
        self.assertNotEqual(r.returncode, 0, out)
        time.sleep(0.3)
        self.assertIn("jflame-agent: unknown option 'bogus'", jvm.stderr())
        self.assertFalse(os.path.exists(jvm.map_path))
        self.assertTrue(jvm.alive())
        # the JVM can still take a good load afterwards
        r = jvmtest.jattach(jvm.pid, "load", jvmtest.AGENT, "true")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        jvm.wait_status(lambda s: s.get("state") == "running")


if __name__ == "__main__":
    jvmtest.main()
