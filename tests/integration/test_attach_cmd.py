# test_attach_cmd.py - `jflame attach` (HotSpot's attach protocol in C) and the
# agent loading of `jflame record` (none by default; --attach with -p and -a,
# --no-attach), against real JVMs, with Debian's jattach as the referee.
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import jvmtest
from jvmtest import Jvm, read_folded

JFLAME = os.environ.get("JFLAME_BIN", "")
SPIN = "Ljflame/examples/Workload;::spin"
SPIN_FOLDED = "jflame/examples/Workload.spin_[j]"
HOT_THREAD = "jflame-hot-worker-thread-with-a-long-name"
NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


def spin_samples(stacks, pid, inlined=False):
    """Samples of the hot thread of pid whose leaf chain holds Workload.spin,
    named (inlined: with a callee inlined into it, _[i], as well)."""
    root = "[%d] java" % pid
    n = 0
    for frames, count in stacks:
        if root in frames and HOT_THREAD in frames and any(f.startswith(SPIN_FOLDED) for f in frames) and \
                (not inlined or frames[-1].endswith("_[i]")):
            n += count
    return n


class AttachCase(unittest.TestCase):
    def setUp(self):
        jvmtest.check_setup()
        jvmtest.require(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        self.tmp = tempfile.mkdtemp(prefix="jflame-attach-")
        os.chmod(self.tmp, 0o755)
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def jflame(self, *args, timeout=120, prefix=(), env=None):
        full_env = dict(os.environ)
        full_env["JFLAME_AGENT"] = jvmtest.AGENT
        full_env.update(env or {})
        return subprocess.run(list(prefix) + [JFLAME] + list(args), capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL, env=full_env)

    def warm_jvm(self, millis=30000, flags=(), prefix=(), compiled=False):
        """A JVM without the agent that has been running and compiling (it said
        ready after 2000 rounds of its hot loop). compiled: for the cases whose
        assertions name code compiled before the attach, a second more."""
        jvm = Jvm(["hot", str(millis)], jvm_flags=list(flags), prefix=prefix, cwd=self.tmp)
        self.addCleanup(jvm.cleanup)
        self.assertFalse(os.path.exists(jvm.map_path))
        if compiled:
            time.sleep(1.0)  # spin is compiled long before the attach
        return jvm

    def assert_one_line_error(self, r, *needles):
        self.assertNotEqual(r.returncode, 0, r.stderr)
        lines = [l for l in r.stderr.splitlines() if l.strip()]
        self.assertEqual(len(lines), 1, "want one line:\n" + r.stderr)
        self.assertTrue(lines[0].startswith("jflame: "), lines[0])
        for n in needles:
            self.assertIn(n.lower(), lines[0].lower())
        self.assertNotIn("Traceback", r.stderr)


class AttachCommandTest(AttachCase):
    def test_attach_replays_code_compiled_before(self):
        jvm = self.warm_jvm(compiled=True)
        r = self.jflame("attach", str(jvm.pid))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("loaded the agent into pid %d" % jvm.pid, r.stderr)
        # JDK 24+ offer attach protocol 2 (getversion), older JVMs speak 1
        self.assertIn("attach protocol %d" % (2 if jvmtest.java_version() >= 24 else 1), r.stderr)
        # the trigger file is gone from the JVM's working directory and /tmp
        self.assertFalse(os.path.exists(os.path.join(self.tmp, ".attach_pid%d" % jvm.pid)))
        self.assertFalse(os.path.exists("/tmp/.attach_pid%d" % jvm.pid))
        # the map is complete when attach returns: no waiting
        names = [e[2] for e in jvm.map_entries()]
        self.assertIn(SPIN, names)
        self.assertIn("Interpreter", names)
        st = jvm.status()
        self.assertEqual(st["mode"], "attach")
        self.assertEqual(st["state"], "running")
        self.assertEqual(int(st["map_lines"]), len(names))
        # PreserveFramePointer is off in this JVM: said once, with the fix
        self.assertEqual(r.stderr.count("restart it with -XX:+PreserveFramePointer"), 1, r.stderr)
        # a recording now shows the Java frames
        folded = os.path.join(self.tmp, "after.folded")
        r = self.jflame("record", "-p", str(jvm.pid), "-d", "2", "-o", folded)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("loaded the agent", r.stderr)  # already there
        self.assertGreater(spin_samples(read_folded(folded), jvm.pid), 50)
        self.assertTrue(jvm.alive())

    def test_second_attach_says_already_there(self):
        jvm = self.warm_jvm()
        r1 = self.jflame("attach", str(jvm.pid), "unfold,msig")
        self.assertEqual(r1.returncode, 0, r1.stderr)
        lines = len(jvm.map_entries())
        r2 = self.jflame("attach", str(jvm.pid))
        self.assertEqual(r2.returncode, 0, r2.stderr)
        self.assertIn("already loaded in pid %d (options 'msig')" % jvm.pid, r2.stderr)
        self.assertGreaterEqual(len(jvm.map_entries()), lines)
        self.assertEqual(jvm.status()["state"], "running")
        self.assertTrue(jvm.alive())

    def test_attach_as_root_to_jvm_of_unprivileged_user(self):
        jvm = self.warm_jvm(prefix=NOBODY, compiled=True)
        with open("/proc/%d/status" % jvm.pid) as f:
            uid = [l.split()[2] for l in f if l.startswith("Uid:")][0]
        self.assertNotEqual(uid, "0")
        r = self.jflame("attach", str(jvm.pid))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(str(os.stat(jvm.map_path).st_uid), uid)  # written by the JVM as its user
        self.assertIn(SPIN, [e[2] for e in jvm.map_entries()])
        # and an unprivileged user may not attach to root's JVM
        root_jvm = self.warm_jvm()
        r = self.jflame("attach", str(root_jvm.pid), prefix=NOBODY)
        self.assert_one_line_error(r, "not permitted", "pid %d" % root_jvm.pid)
        self.assertFalse(os.path.exists(root_jvm.map_path))

    def test_jattach_referee_same_result(self):
        a = self.warm_jvm()
        b = self.warm_jvm(compiled=True)  # a has run longer still
        ra = jvmtest.jattach(a.pid, "load", jvmtest.AGENT, "true", "unfold")
        self.assertEqual(ra.returncode, 0, ra.stdout + ra.stderr)
        rb = self.jflame("attach", str(b.pid), "unfold")
        self.assertEqual(rb.returncode, 0, rb.stderr)
        sa = a.wait_status(lambda s: s.get("state") == "running")
        sb = b.wait_status(lambda s: s.get("state") == "running")
        for key in ("mode", "options", "state", "agent_version", "preserve_frame_pointer"):
            self.assertEqual(sa[key], sb[key], key)
        for jvm in (a, b):
            names = [e[2] for e in jvm.map_entries()]
            self.assertTrue(any(n == SPIN or n.startswith(SPIN + "->") for n in names))
            self.assertTrue(any("->" in n for n in names))  # unfold reached the agent
        # each sees the other's load: jflame says already there; jattach's second load is harmless
        r = self.jflame("attach", str(a.pid))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("already loaded", r.stderr)
        r = jvmtest.jattach(b.pid, "load", jvmtest.AGENT, "true")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertTrue(a.alive() and b.alive())


class AttachErrorTest(AttachCase):
    def test_missing_pid(self):
        r = self.jflame("attach", "4194000")
        self.assert_one_line_error(r, "no process with pid 4194000")
        r = self.jflame("attach", "12ab")
        self.assert_one_line_error(r, "not a pid")
        self.assertEqual(r.returncode, 2)

    def test_not_java_is_never_signalled(self):
        # SIGQUIT would kill sleep (default action: core): alive afterwards proves none was sent
        p = subprocess.Popen(["sleep", "30"])
        self.addCleanup(p.kill)
        r = self.jflame("attach", str(p.pid))
        self.assert_one_line_error(r, "pid %d is not a Java process" % p.pid)
        time.sleep(0.3)
        self.assertIsNone(p.poll(), "the non-Java process died")
        self.assertFalse(os.path.exists("/tmp/.attach_pid%d" % p.pid))

    def test_attach_disabled(self):
        jvm = Jvm(["hot", "20000"], jvm_flags=["-XX:+DisableAttachMechanism"], cwd=self.tmp)
        self.addCleanup(jvm.cleanup)
        t0 = time.monotonic()
        r = self.jflame("attach", str(jvm.pid))
        self.assert_one_line_error(r, "attach is disabled", "-XX:+DisableAttachMechanism")
        self.assertLess(time.monotonic() - t0, 3, "found out without waiting for a timeout")
        time.sleep(0.3)
        self.assertNotIn("Full thread dump", jvm.stdout(), "SIGQUIT was sent")
        self.assertTrue(jvm.alive())

    def test_no_sigquit_handler_is_told_without_waiting(self):
        # -Xrs: no SIGQUIT handler (its attach listener would start with it, but attach is
        # disabled); -XX:-UsePerfData: no hsperfdata saying its start-up is over, nor that attach
        # is disabled. Once older than the timeout it is no JVM still starting: told at once (it
        # used to be waited for the whole timeout, a hostile process's attach child too)
        jvm = self.warm_jvm(flags=["-Xrs", "-XX:+DisableAttachMechanism", "-XX:-UsePerfData"])
        while time.monotonic() - jvm.started_mono < 3.5:
            time.sleep(0.1)
        t0 = time.monotonic()
        r = self.jflame("attach", "--timeout", "3", str(jvm.pid))
        took = time.monotonic() - t0
        self.assert_one_line_error(r, "pid %d does not handle SIGQUIT" % jvm.pid, "-agentpath")
        self.assertLess(took, 2.0, "waited for the timeout")
        time.sleep(0.3)
        self.assertTrue(jvm.alive(), "the JVM died (SIGQUIT sent to it?)")

    def test_jvm_without_hsperfdata_is_attached(self):
        # -XX:-UsePerfData: ready once it handles SIGQUIT
        jvm = self.warm_jvm(flags=["-XX:-UsePerfData"])
        r = self.jflame("attach", str(jvm.pid))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("loaded the agent into pid %d" % jvm.pid, r.stderr)

    def test_timeout_on_stopped_jvm(self):
        jvm = self.warm_jvm()
        os.kill(jvm.pid, signal.SIGSTOP)
        try:
            t0 = time.monotonic()
            r = self.jflame("attach", "--timeout", "1", str(jvm.pid))
            took = time.monotonic() - t0
        finally:
            os.kill(jvm.pid, signal.SIGCONT)
        self.assert_one_line_error(r, "pid %d is stopped" % jvm.pid)
        self.assertGreaterEqual(took, 0.9)
        self.assertLess(took, 4)
        time.sleep(0.5)
        self.assertTrue(jvm.alive())
        self.assertFalse(os.path.exists(jvm.map_path))

    def test_agent_load_failure_gives_the_jvm_reason(self):
        jvm = self.warm_jvm()
        # a real shared library without Agent_OnAttach: the JVM refuses it and says why
        libjava = os.path.join(jvmtest.JAVA_HOME, "lib", "libjava.so")
        r = self.jflame("attach", "--agent", libjava, str(jvm.pid))
        self.assert_one_line_error(r, "could not load the agent", "Agent_OnAttach")
        self.assertTrue(jvm.alive())
        # a bad agent option is caught before anything reaches the JVM
        r = self.jflame("attach", str(jvm.pid), "bogus")
        self.assert_one_line_error(r, "unknown option 'bogus'")
        self.assertEqual(r.returncode, 2)
        self.assertFalse(os.path.exists(jvm.map_path))

    def test_missing_capabilities_are_named(self):
        jvm = self.warm_jvm(prefix=NOBODY)
        r = self.jflame("attach", str(jvm.pid), prefix=["setpriv", "--bounding-set=-setuid,-setgid"])
        self.assert_one_line_error(r, "missing capabilities CAP_SETUID, CAP_SETGID", "securityContext")
        r = self.jflame("record", "-p", str(jvm.pid), "-d", "1", "-o", os.path.join(self.tmp, "x.folded"),
                        prefix=["setpriv", "--bounding-set=-bpf,-perfmon,-sys_admin"])
        self.assert_one_line_error(r, "CAP_BPF", "CAP_PERFMON", "CAP_SYS_ADMIN")
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "x.folded")))


class RecordAttachTest(AttachCase):
    def test_record_p_is_agentless(self):
        # -XX:+DebugNonSafepoints: inlined callees placed exactly, in the hot loop too
        jvm = self.warm_jvm(flags=["-XX:+UnlockDiagnosticVMOptions", "-XX:+DebugNonSafepoints"], compiled=True)
        folded, svg = os.path.join(self.tmp, "l.folded"), os.path.join(self.tmp, "l.svg")
        r = self.jflame("record", "-p", str(jvm.pid), "-d", "2", "-o", folded, "-o", svg)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotRegex(r.stderr, r"loaded the agent|agent copied|could not load the agent|attach listener")
        self.assertFalse(os.path.exists(jvm.map_path))
        self.assertFalse(os.path.exists(jvm.status_path))
        self.assertFalse(os.path.exists("/tmp/.attach_pid%d" % jvm.pid))
        self.assertFalse(os.path.exists(os.path.join(self.tmp, ".attach_pid%d" % jvm.pid)))
        with open("/proc/%d/maps" % jvm.pid) as f:
            self.assertNotIn("libjflame-agent", f.read())
        # named from the JVM's memory: the hot method, its inlined callees, the thread
        stacks = read_folded(folded)
        self.assertGreater(spin_samples(stacks, jvm.pid), 50)
        self.assertGreater(spin_samples(stacks, jvm.pid, inlined=True), 10)
        with open(svg) as f:
            text = f.read()
        self.assertIn("Java stacks: HotSpot walker", text)
        # both given: one line, exit 2, nothing recorded
        r = self.jflame("record", "--attach", "--no-attach", "-p", str(jvm.pid), "-d", "1", "-o", folded)
        self.assert_one_line_error(r, "--attach", "--no-attach")
        self.assertEqual(r.returncode, 2)

    def test_record_p_attach_loads_the_agent_and_warns_once(self):
        jvm = self.warm_jvm()
        folded, svg = os.path.join(self.tmp, "p.folded"), os.path.join(self.tmp, "p.svg")
        r = self.jflame("record", "-p", str(jvm.pid), "--attach", "-d", "2", "-o", folded, "-o", svg)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("loaded the agent into pid %d" % jvm.pid, r.stderr)
        # the HotSpot walker does not need frame pointers: no warning
        self.assertNotIn("PreserveFramePointer", r.stderr)
        self.assertGreater(spin_samples(read_folded(folded), jvm.pid), 50)
        with open(svg) as f:
            text = f.read()
        self.assertIn("Java stacks: HotSpot walker", text)
        self.assertNotIn("WARNING frame pointers", text)
        # walked by frame pointers, as perf does, it still matters: said once
        r = self.jflame("record", "-p", str(jvm.pid), "-d", "2", "--no-walker", "-o", folded, "-o", svg)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr.count("restart it with -XX:+PreserveFramePointer"), 1, r.stderr)
        with open(svg) as f:
            self.assertIn("WARNING frame pointers: off", f.read())

    def test_stale_map_of_an_earlier_process_is_not_taken_for_an_agent(self):
        jvm = self.warm_jvm()
        # a map left by an earlier process with this pid (perf-map-agent, a killed JVM)
        with open(jvm.map_path, "w") as f:
            f.write("7f0000000000 100 Lstale/Old;::method\n")
        old = time.time() - 3600
        os.utime(jvm.map_path, (old, old))
        folded = os.path.join(self.tmp, "s.folded")
        r = self.jflame("record", "-p", str(jvm.pid), "--attach", "-d", "2", "-o", folded)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("loaded the agent into pid %d" % jvm.pid, r.stderr)
        self.assertGreater(spin_samples(read_folded(folded), jvm.pid), 50)

    def test_no_attach_leaves_the_jvm_alone(self):
        jvm = self.warm_jvm()
        folded = os.path.join(self.tmp, "n.folded")
        r = self.jflame("record", "--no-attach", "-p", str(jvm.pid), "-d", "1.5", "-o", folded)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertFalse(os.path.exists(jvm.map_path))
        self.assertFalse(os.path.exists(jvm.status_path))
        # named from the JVM's memory all the same
        self.assertGreater(spin_samples(read_folded(folded), jvm.pid), 30)
        # alloc samples need the agent: --no-attach keeps it out, and says so
        r = self.jflame("record", "--no-attach", "-e", "alloc", "-p", str(jvm.pid), "-d", "6", "-o", folded)
        self.assertFalse(os.path.exists(jvm.map_path))
        self.assertIn("has no jflame agent (--no-attach): alloc and lock samples need it", r.stderr)

    def test_record_all_attach_gives_jvms_started_meanwhile_the_agent(self):
        folded = os.path.join(self.tmp, "a.folded")
        env = dict(os.environ, JFLAME_AGENT=jvmtest.AGENT)
        rec = subprocess.Popen([JFLAME, "record", "-a", "--attach", "-d", "7", "-o", folded], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL, env=env)
        try:
            time.sleep(1.5)
            # outlives the recording on a slow machine too (cleanup ends it)
            jvm = Jvm(["hot", "60000"], jvm_flags=["-XX:+PreserveFramePointer"], cwd=self.tmp)
            self.addCleanup(jvm.cleanup)
            _, err = rec.communicate(timeout=60)
        finally:
            if rec.poll() is None:
                rec.kill()
        self.assertEqual(rec.returncode, 0, err)
        self.assertIn("loaded the agent into pid %d" % jvm.pid, err)
        stacks = read_folded(folded)
        named = spin_samples(stacks, jvm.pid)
        self.assertGreater(named, 100, err)
        # samples taken while the attach ran were kept back and named too
        unnamed = sum(n for frames, n in stacks if "[%d] java" % jvm.pid in frames and HOT_THREAD in frames
                      and frames[-1] == "[unknown]")
        self.assertLess(unnamed, named * 0.05, err)


if __name__ == "__main__":
    jvmtest.main()
