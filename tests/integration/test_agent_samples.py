# test_agent_samples.py - the agent's allocation and lock samples (the ring
# /tmp/jflame-<pid>.samples), read by tests/integration/sample_reader.c on real JVMs:
# AllocMix's byte[]:String bytes against its known ratio, LockContend's blocked time
# (on its monitor, and with --lock juc on a ReentrantLock through the agent's Unsafe.park
# wrapper) against the waiter's own measurements, nothing on (and nothing written) while no
# reader beats, and a symlink or another user's file at the ring's path.
import os
import re
import struct
import subprocess
import time
import unittest

import jvmtest
from jvmtest import Jvm

READER = os.environ.get("JFLAME_SAMPLE_READER", "")
NOBODY = 65534
ALLOC_MIX = "jflame.examples.AllocMix"
LOCK_CONTEND = "jflame.examples.LockContend"
READY = "jflame-example: ready"
MAKE_BYTES = "jflame/examples/AllocMix.makeBytes"
MAKE_STRINGS = "jflame/examples/AllocMix.makeStrings"
POST = "jflame/examples/Ledger.post"
JUC_POST = "jflame/examples/LockedLedger.post"
PARK = "java/util/concurrent/locks/LockSupport.park"
WAITER = "jflame/examples/LockContend.waiterLoop"
SIZES = re.compile(r"jflame-example: sizes byte\[\] (\d+) String (\d+) per round byte\[\] (\d+) String (\d+) ratio ([0-9.]+)")
LOCK_TOTALS = re.compile(r"jflame-example: totals monotonic_ns (\d+) blocked_ns (\d+) calls (\d+)")
SAMPLE = re.compile(r"^sample (alloc|lock) (\d+) (\d+) (\d+) (\d+) (\d+) (\S+) (.*)$")
STATS = re.compile(r"^stats (.*)$", re.M)

# struct sample_ring_header (jvmagent/sample_ring.h): the fields read and written here
OFF_HEAD, OFF_DROPPED, OFF_WRITTEN, OFF_ACTIVE, OFF_INTERVAL_ACTIVE, OFF_ERROR = 40, 48, 56, 80, 84, 88
OFF_BEAT, OFF_WANT, OFF_ALLOC_INTERVAL = 352, 360, 364


def ring_header(path):
    with open(path, "rb") as f:
        raw = f.read(4096)
    assert raw[:8] == b"JFLSMP1\0", raw[:8]
    head, dropped = struct.unpack_from("<QQ", raw, OFF_HEAD)
    written = struct.unpack_from("<3Q", raw, OFF_WRITTEN)
    active, interval = struct.unpack_from("<II", raw, OFF_ACTIVE)
    error = raw[OFF_ERROR:OFF_ERROR + 256].split(b"\0")[0].decode()
    beat, = struct.unpack_from("<Q", raw, OFF_BEAT)
    want, = struct.unpack_from("<I", raw, OFF_WANT)
    return dict(head=head, dropped=dropped, written=written, active=active, alloc_interval_active=interval,
                agent_error=error, beat=beat, want=want)


class Sample:
    def __init__(self, m):
        self.kind, self.tid, self.ts = m.group(1), int(m.group(2)), int(m.group(3))
        self.value, self.weight, self.flags = int(m.group(4)), int(m.group(5)), int(m.group(6))
        self.cls = m.group(7)
        self.frames = m.group(8).split(";")  # root first


class SamplesTest(unittest.TestCase):
    def setUp(self):
        jvmtest.check_setup()
        jvmtest.require(os.access(READER, os.X_OK), "sample reader not built (JFLAME_SAMPLE_READER=%r)" % READER)

    def jvm(self, main, args, **kw):
        jvm = Jvm(args, main=main, ready=READY, **kw)
        self.addCleanup(jvm.cleanup)
        return jvm

    def read(self, path, seconds, *asks):
        """Runs the reader; returns (samples, stats dict, its output)."""
        r = subprocess.run([READER, path, str(seconds)] + list(asks), capture_output=True, text=True,
                           timeout=seconds + 60)
        self.assertEqual(r.returncode, 0, "reader failed: " + r.stderr)
        samples = [Sample(m) for m in (SAMPLE.match(l) for l in r.stdout.splitlines()) if m]
        m = STATS.search(r.stdout)
        self.assertTrue(m, r.stdout[-2000:])
        stats = dict(kv.split("=", 1) for kv in m.group(1).split(" ") if "=" in kv)
        return samples, stats, r.stdout

    def not_preempted(self, jvm):
        time.sleep(0.2)
        self.assertNotIn("by another copy of the agent", jvm.stderr(),
                         "another jflame agent got into this JVM first (a concurrent `jflame record -a`?)")

    def thread_tid(self, jvm, name):
        st = jvm.wait_status(lambda s: any(v == name for k, v in s.items() if k.startswith("thread.")))
        return int([k for k, v in st.items() if k.startswith("thread.") and v == name][0].split(".", 1)[1])

    def test_alloc_bytes_per_class_onload(self):
        jvm = self.jvm(ALLOC_MIX, ["--seconds", "40"], agent_opts="")
        st = jvm.status()
        self.assertEqual(st["samples_path"], jvm.samples_path)
        tid = self.thread_tid(jvm, "alloc-mix")
        samples, stats, out = self.read(jvm.samples_path, 4, "alloc", "interval=65536")
        self.assertEqual(stats["seen_active"], "1", out[-2000:])
        self.assertEqual(stats["active"], "0", "still on after the reader stopped asking")
        self.assertEqual(stats["agent_error"], "")
        self.assertTrue(samples and all(s.kind == "alloc" for s in samples))
        classes = set(s.cls for s in samples)
        self.assertIn("byte[]", classes)
        self.assertIn("java/lang/String", classes)
        bytes_ = [s for s in samples if s.cls == "byte[]" and s.frames[-1] == MAKE_BYTES]
        strings = [s for s in samples if s.cls == "java/lang/String" and s.frames[-1] == MAKE_STRINGS]
        self.assertGreater(len(bytes_), 1000)
        self.assertGreater(len(strings), 300)
        # the String's backing arrays: byte[] under String's constructor, below makeStrings
        backing = [s for s in samples if s.cls == "byte[]" and MAKE_STRINGS in s.frames]
        self.assertTrue(backing and all(MAKE_BYTES not in s.frames for s in backing))
        self.assertTrue(any("java/lang/String.<init>" in s.frames for s in backing))
        # frames root first: a Thread.run root, the loop above the allocating method
        self.assertEqual(bytes_[0].frames[0], "java/lang/Thread.run", bytes_[0].frames)
        self.assertIn("jflame/examples/AllocMix.loop", bytes_[0].frames)
        self.assertTrue(all(s.tid == tid for s in bytes_ + strings), "tids: %s, alloc-mix is %d"
                        % (sorted(set(s.tid for s in bytes_ + strings)), tid))
        m = SIZES.search(jvm.stdout())
        byte_size, string_size, ratio = int(m.group(1)), int(m.group(2)), float(m.group(5))
        # the sizes the workload assumes are the JVM's
        self.assertEqual(set(s.value for s in bytes_), {byte_size})
        self.assertEqual(set(s.value for s in strings), {string_size})
        got = sum(s.weight for s in bytes_) / sum(s.weight for s in strings)
        self.assertAlmostEqual(got / ratio, 1.0, delta=0.10,
                               msg="byte[]:String bytes %.3f, the workload's ratio %.3f" % (got, ratio))
        print("alloc: %d byte[] and %d String samples, ratio %.3f (workload %.3f), dropped %s"
              % (len(bytes_), len(strings), got, ratio, stats["dropped"]))
        # the JVM runs on and exits normally; its ring goes with it
        self.assertTrue(jvm.alive())
        jvm.proc.send_signal(15)
        self.assertIn(jvm.wait(), (0, 143))
        self.assertIn("jflame-example: total byte_arrays", jvm.stdout())
        self.assertFalse(os.path.exists(jvm.samples_path))

    def test_lock_blocked_time_on_attach(self):
        self.lock_on_attach([], "jflame/examples/Ledger", POST, None)

    def test_juc_lock_blocked_time_on_attach(self):
        """The same with a ReentrantLock: the agent's Unsafe.park wrapper, set up
        after attach, gives the waiter's parks; park is the JVM's own again after."""
        jvm = self.lock_on_attach(["--lock", "juc"], "java/util/concurrent/locks/ReentrantLock$NonfairSync", PARK,
                                  JUC_POST)
        st = jvm.wait_status(lambda s: s.get("park_hook") == "off" and s.get("lock_events") == "off")
        self.assertEqual(st["error"], "")

    def lock_on_attach(self, args, cls, leaf, through):
        jvm = self.jvm(LOCK_CONTEND, ["--seconds", "40"] + args)
        r = jvmtest.jattach(jvm.pid, "load", jvmtest.AGENT, "true")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.not_preempted(jvm)
        st = jvm.wait_status(lambda s: s.get("state") == "running")
        self.assertEqual(st["samples_path"], jvm.samples_path)
        waiter = self.thread_tid(jvm, "ledger-waiter")
        samples, stats, out = self.read(jvm.samples_path, 6, "lock", "min-ns=100000")
        self.assertEqual(stats["seen_active"], "2", out[-2000:])
        self.assertEqual(stats["active"], "0")
        mine = [s for s in samples if s.tid == waiter]
        self.assertGreater(len(mine), 100)
        for s in mine:
            self.assertEqual(s.kind, "lock")
            self.assertEqual(s.cls, cls)
            self.assertEqual(s.frames[-1], leaf, s.frames)
            if through:
                self.assertIn(through, s.frames)
            self.assertIn(WAITER, s.frames)
            self.assertEqual(s.value, s.weight)
            self.assertGreaterEqual(s.value, 100000)
        # the waiter's own blocked time between two of its totals lines inside the
        # recording, against the waits that ended between them (CLOCK_MONOTONIC both)
        totals = [(int(a), int(b)) for a, b, _ in LOCK_TOTALS.findall(jvm.stdout())]
        first, last = min(s.ts for s in mine), max(s.ts for s in mine)
        inside = [t for t in totals if first + 200e6 < t[0] < last - 200e6]
        self.assertGreaterEqual(len(inside), 10, "too few totals lines inside the recording")
        (t0, b0), (t1, b1) = inside[0], inside[-1]
        measured = b1 - b0
        recorded = sum(s.weight for s in mine if t0 < s.ts <= t1)
        self.assertGreater(measured, (t1 - t0) * 0.6, "the waiter was not blocked most of the time")
        self.assertAlmostEqual(recorded / measured, 1.0, delta=0.15,
                               msg="recorded %.3f s blocked, the waiter measured %.3f s" % (recorded / 1e9,
                                                                                           measured / 1e9))
        print("lock: %d samples, recorded %.3f s, measured %.3f s over %.3f s, short %s"
              % (len(mine), recorded / 1e9, measured / 1e9, (t1 - t0) / 1e9, stats["lock_short"]))
        self.assertTrue(jvm.alive())
        self.assertNotIn("Re-registering", jvm.stdout() + jvm.stderr())
        return jvm

    def test_off_without_reader(self):
        jvm = self.jvm(ALLOC_MIX, ["--seconds", "40"], agent_opts="")
        path = jvm.samples_path
        time.sleep(1.5)
        h = ring_header(path)
        # nobody asked: no event on, nothing sampled, though AllocMix allocates over 1 GB/s
        self.assertEqual((h["active"], h["head"], h["written"], h["dropped"]), (0, 0, (0, 0, 0), 0), h)
        # a reader that asks, then vanishes without saying so (killed): on at once,
        # off again once its last beat is over 5 s old
        fd = os.open(path, os.O_RDWR)
        try:
            os.pwrite(fd, struct.pack("<I", 65536), OFF_ALLOC_INTERVAL)
            os.pwrite(fd, struct.pack("<I", 1), OFF_WANT)
            os.pwrite(fd, struct.pack("<Q", time.clock_gettime_ns(time.CLOCK_MONOTONIC)), OFF_BEAT)
        finally:
            os.close(fd)
        time.sleep(0.5)
        h = ring_header(path)
        self.assertEqual(h["active"], 1, h)
        self.assertEqual(h["alloc_interval_active"], 65536, h)
        self.assertGreater(h["written"][1], 0)
        time.sleep(6)
        h = ring_header(path)
        self.assertEqual(h["active"], 0, h)
        written = h["written"][1]
        time.sleep(0.5)
        self.assertEqual(ring_header(path)["written"][1], written, "samples still written")
        self.assertTrue(jvm.alive())

    def test_another_agent_holds_allocation_sampling(self):
        # one JVMTI environment at a time may sample allocations: another agent has it
        holder = os.environ.get("JFLAME_ALLOC_HOLDER", "")
        jvmtest.require(os.path.isfile(holder), "alloc holder not built (JFLAME_ALLOC_HOLDER=%r)" % holder)
        jvm = self.jvm(LOCK_CONTEND, ["--seconds", "40"], agent_opts="", jvm_flags=["-agentpath:" + holder])
        self.assertIn("alloc-holder: holding allocation sampling", jvm.stderr())
        samples, stats, out = self.read(jvm.samples_path, 2, "alloc", "lock")
        self.assertIn("another JVMTI agent samples allocations", stats["agent_error"] + out[-300:])
        self.assertEqual(stats["seen_active"], "2", out[-2000:])  # lock on, alloc not
        self.assertEqual(stats["written_alloc"], "0")
        self.assertTrue(any(s.kind == "lock" and s.cls == "jflame/examples/Ledger" for s in samples))
        self.assertTrue(jvm.alive())

    def plant_and_attach(self, kind):
        jvm = self.jvm(ALLOC_MIX, ["--seconds", "40"])
        victim = os.path.join("/tmp", "jflame-victim-%d" % os.getpid())
        with open(victim, "w") as f:
            f.write("do not touch\n")
        self.addCleanup(os.unlink, victim)
        path = jvm.samples_path
        if kind == "symlink":
            os.symlink(victim, path)
        else:
            with open(path, "w") as f:
                f.write("someone else's file\n")
            os.chown(path, NOBODY, NOBODY)
        self.addCleanup(lambda: os.path.lexists(path) and os.unlink(path))
        r = jvmtest.jattach(jvm.pid, "load", jvmtest.AGENT, "true")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.not_preempted(jvm)
        st = jvm.wait_status(lambda s: s.get("state") == "running")
        with open(victim) as f:
            self.assertEqual(f.read(), "do not touch\n")
        return jvm, st

    def test_symlink_at_ring_path_replaced_not_followed(self):
        jvm, st = self.plant_and_attach("symlink")
        self.assertFalse(os.path.islink(jvm.samples_path), jvm.stderr())
        self.assertEqual(st["samples_path"], jvm.samples_path)
        samples, stats, out = self.read(jvm.samples_path, 1, "alloc")
        self.assertTrue(samples, out[-2000:])
        self.assertTrue(jvm.alive())

    def test_foreign_file_at_ring_path_left_alone(self):
        jvmtest.require(os.geteuid() == 0, "chown to another user needs root")
        jvm, st = self.plant_and_attach("foreign")
        path = jvm.samples_path
        self.assertEqual(os.lstat(path).st_uid, NOBODY)
        with open(path) as f:
            self.assertEqual(f.read(), "someone else's file\n")
        err = jvm.stderr()
        self.assertIn("jflame-agent: refusing %s: owned by another user" % path, err)
        self.assertEqual(err.count("refusing"), 1)
        self.assertNotIn("standing down", err)
        # the rest works: the map, the status (with the reason), the JVM
        self.assertEqual(st["samples_path"], "")
        self.assertIn("no sample ring", st["error"])
        self.assertTrue(jvm.map_entries())
        self.assertTrue(jvm.alive())
        jvm.proc.send_signal(15)
        jvm.wait()
        self.assertIn("jflame-example: total byte_arrays", jvm.stdout())


if __name__ == "__main__":
    jvmtest.main()
