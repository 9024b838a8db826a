# test_safety.py - files in the shared /tmp: a symlink planted at the map path and a
# map owned by another user are refused with a message; the JVM runs on unharmed.
import os
import shutil
import subprocess
import tempfile
import time
import unittest

import jvmtest
from jvmtest import Jvm

NOBODY = 65534


class SafetyTest(unittest.TestCase):
    def setUp(self):
        jvmtest.check_setup()
        self.victim_dir = tempfile.mkdtemp(prefix="jflame-victim-")
        self.addCleanup(shutil.rmtree, self.victim_dir, True)
        self.victim = os.path.join(self.victim_dir, "precious")
        with open(self.victim, "w") as f:
            f.write("do not touch\n")

    def plant(self, path, kind):
        if os.path.lexists(path):
            os.unlink(path)
        if kind == "symlink":
            os.symlink(self.victim, path)
        else:
            with open(path, "w") as f:
                f.write("someone else's map\n")
            os.chown(path, NOBODY, NOBODY)
        self.addCleanup(lambda: os.path.lexists(path) and os.unlink(path))

    def assert_victim_untouched(self):
        with open(self.victim) as f:
            self.assertEqual(f.read(), "do not touch\n")

    def attach_refused(self, kind, which):
        jvmtest.require(os.geteuid() == 0 or kind == "symlink", "chown to another user needs root")
        jvm = Jvm(["hot", "6000"])
        self.addCleanup(jvm.cleanup)
        path = jvm.map_path if which == "map" else jvm.events_path
        self.plant(path, kind)
        r = jvmtest.jattach(jvm.pid, "load", jvmtest.AGENT, "true")
        self.assertNotEqual(r.returncode, 0, "the load should fail: " + r.stdout)
        time.sleep(0.3)
        err = jvm.stderr()
        expect = "it is a symbolic link" if kind == "symlink" else "owned by uid %d" % NOBODY
        self.assertIn("jflame-agent: refusing %s: %s" % (path, expect), err)
        self.assertIn("standing down", err)
        self.assert_victim_untouched()
        if kind == "foreign":
            st = os.lstat(path)
            self.assertEqual(st.st_uid, NOBODY)
            with open(path) as f:
                self.assertEqual(f.read(), "someone else's map\n")
        # the JVM is unharmed: it finishes its work and exits cleanly
        self.assertTrue(jvm.alive())
        self.assertEqual(jvm.wait(), 0)
        status = jvmtest.read_status(jvm.status_path)
        self.assertEqual(status["state"], "stood_down")
        self.assertIn("refusing", status["error"])

    def test_symlink_at_map_path_on_attach(self):
        self.attach_refused("symlink", "map")

    def test_foreign_map_on_attach(self):
        self.attach_refused("foreign", "map")

    def test_symlink_at_events_path_on_attach(self):
        self.attach_refused("symlink", "events")

    def test_symlink_at_map_path_at_startup(self):
        # In a new pid namespace the JVM is pid 1, so its map path is known before it starts.
        unshare = shutil.which("unshare")
        jvmtest.require(unshare and os.geteuid() == 0, "unshare --pid needs root")
        self.plant("/tmp/perf-1.map", "symlink")
        for p in ("/tmp/jflame-1.status", "/tmp/jflame-1.events"):
            self.addCleanup(lambda p=p: os.path.lexists(p) and os.unlink(p))
        env = dict(os.environ)
        env.update(jvmtest.JVM_ENV)
        r = subprocess.run([unshare, "--pid", "--fork", "--mount-proc", jvmtest.JAVA,
                            "-agentpath:" + jvmtest.AGENT, "-cp", jvmtest.JAR, "jflame.examples.Workload",
                            "hot", "1000"], capture_output=True, text=True, timeout=120, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("jflame-workload: ready", r.stdout)
        self.assertIn("jflame-agent: refusing /tmp/perf-1.map: it is a symbolic link; remove it", r.stderr)
        self.assertTrue(os.path.islink("/tmp/perf-1.map"))
        self.assert_victim_untouched()

    def test_hard_link_refused(self):
        jvm = Jvm(["hot", "6000"])
        self.addCleanup(jvm.cleanup)
        other = os.path.join(self.victim_dir, "hardlink-target")
        with open(other, "w") as f:
            f.write("x\n")
        try:
            os.link(other, jvm.map_path)
        except OSError as e:
            jvmtest.require(False, "cannot hard-link into /tmp: %s" % e)
        self.addCleanup(lambda: os.path.lexists(jvm.map_path) and os.unlink(jvm.map_path))
        r = jvmtest.jattach(jvm.pid, "load", jvmtest.AGENT, "true")
        self.assertNotEqual(r.returncode, 0)
        time.sleep(0.3)
        self.assertIn("hard links", jvm.stderr())
        with open(other) as f:
            self.assertEqual(f.read(), "x\n")
        self.assertTrue(jvm.alive())


if __name__ == "__main__":
    jvmtest.main()
