# test_frame_pointer.py - the PreserveFramePointer check: the flag's real value
# however it was set, prologue counts from the compiled code, the warning when off.
import os
import tempfile
import unittest

import jvmtest
from jvmtest import Jvm

WARNING = "jflame-agent: PreserveFramePointer is off"


class FramePointerTest(unittest.TestCase):
    def setUp(self):
        jvmtest.check_setup()

    def run_jvm(self, flags=(), env=None):
        jvm = Jvm(["hot", "2500"], agent_opts="", jvm_flags=flags, env=env, wait_ready=False)
        self.addCleanup(jvm.cleanup)
        self.assertEqual(jvm.wait(), 0, jvm.stderr())
        return jvm, jvm.status()

    def test_flag_on(self):
        jvm, st = self.run_jvm(["-XX:+PreserveFramePointer"])
        self.assertEqual(st["preserve_frame_pointer"], "on")
        with_fp, without = int(st["prologues_with_fp"]), int(st["prologues_without_fp"])
        self.assertGreater(with_fp, 10)
        self.assertGreaterEqual(with_fp / (with_fp + without), 0.95, st)
        self.assertNotIn(WARNING, jvm.stderr())

    def test_flag_off_warns_and_counts(self):
        jvm, st = self.run_jvm(["-XX:-PreserveFramePointer"])
        self.assertEqual(st["preserve_frame_pointer"], "off")
        self.assertGreater(int(st["prologues_without_fp"]), 10)
        self.assertLessEqual(int(st["prologues_with_fp"]), int(st["prologues_without_fp"]) // 10)
        err = jvm.stderr()
        self.assertEqual(err.count(WARNING), 1, err)
        # it matters to frame-pointer walkers, not to jflame's HotSpot walker
        self.assertIn("frame-pointer stack walkers (perf, bcc)", err)
        self.assertIn("jflame walks HotSpot's frames itself", err)

    def test_default_is_off(self):
        _, st = self.run_jvm()
        self.assertEqual(st["preserve_frame_pointer"], "off")

    def test_flag_from_java_tool_options(self):
        jvm, st = self.run_jvm(env={"JAVA_TOOL_OPTIONS": "-XX:+PreserveFramePointer"})
        self.assertEqual(st["preserve_frame_pointer"], "on")
        self.assertNotIn(WARNING, jvm.stderr())

    def test_flag_from_argument_file(self):
        fd, path = tempfile.mkstemp(suffix=".args")
        self.addCleanup(os.unlink, path)
        with os.fdopen(fd, "w") as f:
            f.write("-XX:+PreserveFramePointer\n")
        _, st = self.run_jvm(["@" + path])
        self.assertEqual(st["preserve_frame_pointer"], "on")

    def test_flag_from_flags_file(self):
        fd, path = tempfile.mkstemp(suffix=".flags")
        self.addCleanup(os.unlink, path)
        with os.fdopen(fd, "w") as f:
            f.write("+PreserveFramePointer\n")
        _, st = self.run_jvm(["-XX:Flags=" + path])
        self.assertEqual(st["preserve_frame_pointer"], "on")


if __name__ == "__main__":
    jvmtest.main()
