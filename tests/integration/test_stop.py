# test_stop.py - every wait on a target is bounded: SIGINT/SIGTERM end `jflame
# record` within 2 s with its outputs while an attach waits on a JVM that never
# answers (-p, -a, --window, with --attach); a second signal ends the wait at once; `jflame
# attach` ends on Ctrl-C. ctest: first JDK only (the waits are jflame's own)
import glob
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import unittest

import jvmtest
from jvmtest import Jvm, read_folded

JFLAME = os.environ.get("JFLAME_BIN", "")
SPIN_FOLDED = "jflame/examples/Workload.spin_[j]"
STOP_BOUND = 2.0  # seconds from the signal to jflame's exit, outputs written

# A process jflame takes for a JVM (a file named libjvm.so is mapped) that
# catches SIGQUIT, so it is sent the attach trigger, and never opens the attach
# socket: it uses CPU (it is sampled, so -a attaches to it) and never answers.
FAKE_JVM = r"""
import mmap, os, signal, sys
signal.signal(signal.SIGQUIT, lambda *a: None)
f = open(os.path.join(sys.argv[1], "libjvm.so"), "w+b")
f.write(b"\0" * 4096); f.flush()
m = mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ)
print("ready", flush=True)
x = 0
while True:
    x = (x * 31 + 7) % 1000003
"""


def spin_samples(stacks, pid):
    root = "[%d] java" % pid
    return sum(n for frames, n in stacks if frames[0] == root and any(f.startswith(SPIN_FOLDED) for f in frames))


class StopTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        jvmtest.check_setup()
        jvmtest.require(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        cls.tmp = tempfile.mkdtemp(prefix="jflame-stop-")
        os.chmod(cls.tmp, 0o755)
        cls.jvms = []
        # busy, with the agent from its start: nothing to attach, named at once
        cls.busy = Jvm(["hot", "120000"], agent_opts="", cwd=cls.tmp)
        cls.jvms.append(cls.busy)
        # a JVM without the agent, frozen: the attach trigger is never answered
        cls.frozen = Jvm(["hot", "120000"], cwd=cls.tmp)
        cls.jvms.append(cls.frozen)
        os.kill(cls.frozen.pid, signal.SIGSTOP)
        fake_dir = os.path.join(cls.tmp, "fake")
        os.mkdir(fake_dir)
        cls.fake = subprocess.Popen([sys.executable, "-c", FAKE_JVM, fake_dir], stdout=subprocess.PIPE,
                                    stdin=subprocess.DEVNULL, cwd=fake_dir, text=True)
        assert cls.fake.stdout.readline().strip() == "ready"

    @classmethod
    def tearDownClass(cls):
        cls.fake.kill()
        cls.fake.wait()
        for jvm in cls.jvms:
            jvm.cleanup()
        shutil.rmtree(cls.tmp, True)

    def setUp(self):
        # a trigger file an attach child killed by a second signal left behind
        for d, pid in ((self.tmp, self.frozen.pid), (os.path.join(self.tmp, "fake"), self.fake.pid)):
            try:
                os.unlink(os.path.join(d, ".attach_pid%d" % pid))
            except FileNotFoundError:
                pass

    def out(self, name):
        return os.path.join(self.tmp, "%s-%s" % (self._testMethodName, name))

    def start(self, *args):
        env = dict(os.environ, JFLAME_AGENT=jvmtest.AGENT)
        return subprocess.Popen([JFLAME] + [str(a) for a in args], stderr=subprocess.PIPE, text=True,
                                stdin=subprocess.DEVNULL, env=env)

    def stop(self, p, *sigs, gap=0.1):
        """Sends the signals (gap seconds apart); returns (exit code, stderr, seconds from the first)."""
        t0 = time.monotonic()
        for i, sig in enumerate(sigs):
            if i:
                time.sleep(gap)
            p.send_signal(sig)
        try:
            _, err = p.communicate(timeout=40)
        except subprocess.TimeoutExpired:
            p.kill()
            _, err = p.communicate()
        return p.returncode, err, time.monotonic() - t0

    def wait_for(self, p, what, timeout=15):
        """Polls until what() is true while jflame runs."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if what():
                return
            self.assertIsNone(p.poll(), "jflame ended early")
            time.sleep(0.05)
        self.fail("never happened: %s" % what)

    def trigger_sent(self, pid, cwd):
        return os.path.exists(os.path.join(cwd, ".attach_pid%d" % pid))

    def assert_busy_recorded(self, folded):
        stacks = read_folded(folded)
        self.assertGreater(spin_samples(stacks, self.busy.pid), 10, stacks[:5])
        return stacks

    def test_sigint_ends_p_while_a_frozen_jvm_is_attached(self):
        folded, svg = self.out("p.folded"), self.out("p.svg")
        p = self.start("record", "--attach", "-p", "%d,%d" % (self.busy.pid, self.frozen.pid), "--attach-timeout", "30",
                       "-o", folded, "-o", svg)
        self.wait_for(p, lambda: self.trigger_sent(self.frozen.pid, self.tmp))
        time.sleep(1.0)
        rc, err, took = self.stop(p, signal.SIGINT)
        self.assertLess(took, STOP_BOUND, err)
        self.assertEqual(rc, 0, err)
        self.assertIn("interrupted while waiting for pid %d to start its attach listener" % self.frozen.pid, err)
        self.assert_busy_recorded(folded)
        self.assertTrue(os.path.getsize(svg) > 0)
        # the attach child cleaned up after itself
        self.assertFalse(self.trigger_sent(self.frozen.pid, self.tmp), "trigger file left behind")

    def test_sigint_ends_a_while_an_attach_is_not_answered(self):
        folded = self.out("a.folded")
        fake_dir = os.path.join(self.tmp, "fake")
        p = self.start("record", "--attach", "-a", "--attach-timeout", "30", "-o", folded)
        self.wait_for(p, lambda: self.trigger_sent(self.fake.pid, fake_dir))
        time.sleep(1.0)
        rc, err, took = self.stop(p, signal.SIGINT)
        self.assertLess(took, STOP_BOUND, err)
        self.assertEqual(rc, 0, err)
        stacks = self.assert_busy_recorded(folded)
        # the unanswered process's samples, held while it was attached to, are written
        self.assertGreater(sum(n for f, n in stacks if f[0].startswith("[%d] " % self.fake.pid)), 5, err)
        self.assertIn("pid %d" % self.fake.pid, err)

    def test_sigterm_ends_window_mode_while_an_attach_waits(self):
        p = self.start("record", "--attach", "-p", "%d,%d" % (self.busy.pid, self.fake.pid), "--attach-timeout", "30",
                       "--window", "60", "-o", self.out("w-%n.folded"))
        self.wait_for(p, lambda: self.trigger_sent(self.fake.pid, os.path.join(self.tmp, "fake")))
        time.sleep(1.0)
        rc, err, took = self.stop(p, signal.SIGTERM)
        self.assertLess(took, STOP_BOUND, err)
        self.assertEqual(rc, 0, err)
        outs = glob.glob(self.out("w-*.folded"))
        self.assertEqual(len(outs), 1, err)
        self.assert_busy_recorded(outs[0])

    def test_second_sigint_ends_the_attach_wait_at_once(self):
        folded = self.out("twice.folded")
        p = self.start("record", "--attach", "-p", "%d,%d" % (self.busy.pid, self.frozen.pid), "--attach-timeout", "30",
                       "-o", folded)
        self.wait_for(p, lambda: self.trigger_sent(self.frozen.pid, self.tmp))
        time.sleep(1.0)
        rc, err, took = self.stop(p, signal.SIGINT, signal.SIGINT, gap=0.05)
        self.assertLess(took, STOP_BOUND, err)
        self.assertEqual(rc, 0, err)
        # killed at the second signal, before its grace was over
        self.assertIn("pid %d" % self.frozen.pid, err)
        self.assertIn("the attach was stopped before it finished", err)
        self.assertNotIn("interrupted while waiting", err)
        self.assert_busy_recorded(folded)

    def start_fake(self, name):
        d = os.path.join(self.tmp, name)
        os.mkdir(d)
        fake = subprocess.Popen([sys.executable, "-c", FAKE_JVM, d], stdout=subprocess.PIPE,
                                stdin=subprocess.DEVNULL, cwd=d, text=True)
        self.addCleanup(fake.stdout.close)
        self.addCleanup(fake.wait)
        self.addCleanup(fake.kill)
        self.assertEqual(fake.stdout.readline().strip(), "ready")
        return d, fake

    def test_a_fifo_at_the_trigger_path_holds_nothing(self):
        # opening a FIFO for writing used to block the attach child outside
        # any wait; it is opened non-blocking now: the attach goes on in /tmp
        # and ends at its own timeout, and the FIFO is left as it was
        d, fake = self.start_fake("fifo")
        fifo = os.path.join(d, ".attach_pid%d" % fake.pid)
        os.mkfifo(fifo)
        folded = self.out("fifo.folded")
        p = self.start("record", "--attach", "-p", fake.pid, "--attach-timeout", "0.5", "-d", "1", "-o", folded)
        rc, err, took = self.stop(p)
        self.assertEqual(rc, 0, err)
        self.assertLess(took, 4, err)
        self.assertNotIn("was stopped after", err)
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))
        stacks = read_folded(folded)
        self.assertGreater(sum(n for f, n in stacks if f[0].startswith("[%d] " % fake.pid)), 5, err)

    def test_a_stuck_attach_child_is_killed_after_its_bound(self):
        # an attach child held outside any of its waits (here: stopped) is
        # killed by the queue after 4 x --attach-timeout + 2 s, and the
        # recording (-d, no signal) ends with its outputs
        d, fake = self.start_fake("stuck")
        folded = self.out("stuck.folded")
        p = self.start("record", "--attach", "-p", fake.pid, "--attach-timeout", "0.5", "-d", "1", "-o", folded)
        child = None
        deadline = time.monotonic() + 5
        while child is None and time.monotonic() < deadline:
            for e in os.listdir("/proc"):
                if e.isdigit():
                    try:
                        with open("/proc/%s/stat" % e) as f:
                            fields = f.read().rsplit(")", 1)[1].split()
                    except OSError:
                        continue
                    if int(fields[1]) == p.pid:
                        child = int(e)
            time.sleep(0.01)
        self.assertIsNotNone(child, "no attach child of jflame seen")
        os.kill(child, signal.SIGSTOP)
        rc, err, took = self.stop(p)
        self.assertEqual(rc, 0, err)
        self.assertLess(took, 8, err)
        self.assertIn("the attach to pid %d was stopped after" % fake.pid, err)
        stacks = read_folded(folded)
        self.assertGreater(sum(n for f, n in stacks if f[0].startswith("[%d] " % fake.pid)), 5, err)

    def test_attach_command_ends_on_sigint(self):
        p = self.start("attach", "--timeout", "30", str(self.frozen.pid))
        self.wait_for(p, lambda: self.trigger_sent(self.frozen.pid, self.tmp))
        time.sleep(0.5)
        rc, err, took = self.stop(p, signal.SIGINT)
        self.assertLess(took, 1.0, err)
        self.assertEqual(rc, 128 + signal.SIGINT, err)
        lines = [l for l in err.splitlines() if l.strip()]
        self.assertEqual(lines, ["jflame: interrupted while waiting for pid %d to start its attach listener"
                                 % self.frozen.pid], err)
        self.assertFalse(self.trigger_sent(self.frozen.pid, self.tmp), "trigger file left behind")

    def test_attach_command_ends_on_sigterm_waiting_for_a_reply(self):
        # the fake's socket: a listener that accepts nothing, so connect and the reply wait
        import socket
        path = "/tmp/.java_pid%d" % self.fake.pid
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        srv.bind(path)
        os.chmod(path, 0o600)
        srv.listen(0)
        self.addCleanup(os.unlink, path)
        self.addCleanup(srv.close)
        p = self.start("attach", "--timeout", "30", str(self.fake.pid))
        time.sleep(1.5)
        rc, err, took = self.stop(p, signal.SIGTERM)
        self.assertLess(took, 1.0, err)
        self.assertEqual(rc, 128 + signal.SIGTERM, err)
        lines = [l for l in err.splitlines() if l.strip()]
        self.assertEqual(len(lines), 1, err)
        self.assertIn("interrupted while waiting for pid %d to answer" % self.fake.pid, lines[0])


if __name__ == "__main__":
    jvmtest.main()
