# test_perf_map.py - the agent loaded at startup writes a perf map naming the hot
# methods and, by default, their inline chains, ranges that don't overlap and lie
# in executable memory, a status file and events; it turns on DebugNonSafepoints.
import os
import unittest

import jvmtest
from jvmtest import Jvm, read_events

HOT = ["Ljflame/examples/Workload;::spin", "Ljflame/examples/Workload;::mix",
       "Ljflame/examples/HotMath;::scramble"]


def live_code(jvm):
    """Map entries not unloaded according to the events log (later lines win)."""
    unloaded = set()
    for _, kind, rest in read_events(jvm.events_path):
        if kind == "unload":
            unloaded.add(int(rest.split()[0], 16))
    return [e for e in jvm.map_entries() if e[0] not in unloaded]


class PerfMapTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        jvmtest.check_setup()
        # diagnostic flags unlocked so that jcmd VM.flags -all lists DebugNonSafepoints (still off)
        cls.jvm = Jvm(["hot", "6000"], agent_opts="",
                      jvm_flags=["-XX:+PreserveFramePointer", "-XX:+UnlockDiagnosticVMOptions"])
        # status is rewritten every second; wait until it has counted the hot methods
        cls.status = cls.jvm.wait_status(lambda s: s.get("state") == "running" and int(s["compiled_loads"]) > 10)
        cls.entries = cls.jvm.map_entries()
        cls.exec_ranges = jvmtest.exec_ranges(cls.jvm.pid)

    @classmethod
    def tearDownClass(cls):
        cls.jvm.cleanup()

    def test_hot_methods_named(self):
        names = {e[2] for e in self.entries}
        for hot in HOT:
            self.assertIn(hot, names)
        self.assertTrue(any(n.startswith("Ljflame/examples/") for n in names))

    def test_inline_chains_by_default(self):
        # the agent's default: a callee C2 inlines into spin has its own range, outer->inner
        names = {e[2] for e in self.entries}
        chains = sorted(n for n in names if "->" in n)
        self.assertTrue({"Ljflame/examples/Workload;::spin->Ljflame/examples/Workload;::mix",
                         "Ljflame/examples/Workload;::spin->Ljflame/examples/HotMath;::scramble"} & names,
                        chains[:20])
        self.assertEqual(self.status["options"], "")

    def test_debug_non_safepoints_turned_on(self):
        # started without -XX:+DebugNonSafepoints: the agent turned it on at
        # Agent_OnLoad; the JDK's own jcmd is the referee
        self.assertEqual(self.status["debug_non_safepoints"], "on")
        self.assertEqual(jvmtest.vm_flag(self.jvm.pid, "DebugNonSafepoints"), "true")
        self.assertIn("jflame-agent: turned on DebugNonSafepoints", self.jvm.stderr())
        self.assertNotIn("could not turn on DebugNonSafepoints", self.jvm.stderr())

    def test_vm_code_named(self):
        names = {e[2] for e in self.entries}
        self.assertIn("Interpreter", names)
        self.assertTrue(any("StubRoutines" in n or "stub" in n.lower() for n in names))

    def test_live_ranges_do_not_overlap(self):
        live = sorted(live_code(self.jvm))
        self.assertGreater(len(live), 50)
        for (s1, z1, n1), (s2, z2, n2) in zip(live, live[1:]):
            self.assertLessEqual(s1 + z1, s2, "overlap: %x+%x %s and %x %s" % (s1, z1, n1, s2, n2))

    def test_ranges_in_executable_mappings(self):
        for start, size, name in self.entries:
            self.assertTrue(any(lo <= start and start + size <= hi for lo, hi in self.exec_ranges),
                            "%x+%x %s is outside every executable mapping" % (start, size, name))

    def test_status_file(self):
        st = self.status
        self.assertEqual(st["format"], "1")
        self.assertEqual(st["pid"], str(self.jvm.pid))
        self.assertEqual(st["mode"], "onload")
        self.assertEqual(st["map"], self.jvm.map_path)
        self.assertEqual(st["events"], self.jvm.events_path)
        self.assertEqual(st["preserve_frame_pointer"], "on")
        self.assertEqual(st["error"], "")
        self.assertEqual(st["write_errors"], "0")
        for key in ("agent_version", "process_start", "jvm", "compiled_loads", "compiled_unloads",
                    "dynamic_code", "map_lines", "map_bytes", "prologues_with_fp",
                    "prologues_without_fp", "prologues_unknown", "threads", "started_ns", "updated_ns"):
            self.assertIn(key, st)
        self.assertEqual(os.stat(self.jvm.status_path).st_mode & 0o777, 0o644)

    def test_full_thread_names(self):
        st = self.status
        names = {k[len("thread."):]: v for k, v in st.items() if k.startswith("thread.")}
        hot = [tid for tid, name in names.items() if name == "jflame-hot-worker-thread-with-a-long-name"]
        self.assertEqual(len(hot), 1, names)
        with open("/proc/%d/task/%s/comm" % (self.jvm.pid, hot[0])) as f:
            self.assertEqual(f.read().strip(), "jflame-hot-worker-thread-with-a-long-name"[:15])
        self.assertIn("main", names.values())
        self.assertEqual(st["threads_unnamed"], "0")

    def test_events_log_matches_map(self):
        loads = [rest for _, kind, rest in read_events(self.jvm.events_path) if kind == "load"]
        lines = ["%x %x %s" % e for e in self.entries]
        # every map line has its timestamped twin, in the same order
        self.assertEqual(loads[:len(lines)], lines[:len(loads)])
        ns = [e[0] for e in read_events(self.jvm.events_path)]
        self.assertEqual(ns, sorted(ns))


class ExitTest(unittest.TestCase):
    def test_status_says_exited_and_map_stays(self):
        jvmtest.check_setup()
        jvm = Jvm(["hot", "1500"], agent_opts="")
        try:
            self.assertEqual(jvm.wait(), 0)
            st = jvm.status()
            self.assertEqual(st["state"], "exited")
            self.assertGreater(int(st["map_lines"]), 100)
            self.assertEqual(len(jvm.map_entries()), int(st["map_lines"]))
        finally:
            jvm.cleanup()


class UnloadTest(unittest.TestCase):
    def test_unloaded_code_is_recorded(self):
        jvmtest.check_setup()
        jvm = Jvm(["unload", "6"], agent_opts="",
                  wait_ready=False)
        try:
            self.assertEqual(jvm.wait(), 0, jvm.stderr())
            self.assertIn("unloaded 6", jvm.stdout())
            st = jvm.status()
            events = read_events(jvm.events_path)
            unloads = [rest.split() for _, kind, rest in events if kind == "unload"]
            self.assertGreater(int(st["compiled_unloads"]), 0)
            self.assertEqual(len(unloads), int(st["compiled_unloads"]))
            loads = {}
            for ns, kind, rest in events:
                if kind == "load":
                    start, size, _ = rest.split(" ", 2)
                    loads.setdefault(start, []).append(int(size, 16))
            # an unload names the whole range that had been loaded at that address
            known = [u for u in unloads if u[0] in loads]
            self.assertEqual(len(known), len(unloads))
            for start, size in known:
                self.assertGreater(int(size, 16), 0, start)
            # unloaded Disposable code was named before it went away
            names = [e[2] for e in jvm.map_entries()]
            self.assertTrue(any("Workload$Disposable;::work" in n for n in names))
        finally:
            jvm.cleanup()


class ThreadsTest(unittest.TestCase):
    def test_short_lived_threads_named_in_events(self):
        jvmtest.check_setup()
        jvm = Jvm(["threads", "40"], agent_opts="", wait_ready=False)
        try:
            self.assertEqual(jvm.wait(), 0, jvm.stderr())
            events = read_events(jvm.events_path)
            started = {}
            ended = set()
            for _, kind, rest in events:
                if kind == "thread":
                    tid, _, name = rest.partition(" ")
                    started[tid] = name
                elif kind == "thread_end":
                    ended.add(rest.strip())
            short = {t: n for t, n in started.items() if n.startswith("jflame-short-lived-thread-")}
            self.assertEqual(sorted(short.values()),
                             sorted("jflame-short-lived-thread-%d" % i for i in range(40)))
            self.assertTrue(set(short) <= ended)
            self.assertEqual(len(set(short)), 40)
        finally:
            jvm.cleanup()


if __name__ == "__main__":
    jvmtest.main()
