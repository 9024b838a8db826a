# test_hostile.py - jflame as root beside hostile processes (hostile_target.py):
# each runs as nobody in its own mount namespace, maps a file named libjvm.so (so
# jflame attaches to it) and plants at every path jflame reads for it (status,
# events, sample ring, perf map, hsperfdata, the file of the code it runs) a
# FIFO, a symlink to a root-only canary (text, ELF), /dev/zero, a 1 GiB sparse
# file, another user's file or garbage, and names itself and its threads with
# escape sequences; a real JVM as nobody has a FIFO at its status path.
# `record -a` and `record -p` must end on time, profile an ordinary JVM beside
# them completely, leave every planted file as it was, report each refusal once
# and never let the canary's content or raw control bytes out. DoneWhenTest is
# issue 17's check: FIFOs at status and hsperfdata, `record -a -d 3` < 10 s.
# For a diagnosis: JFLAME_HOSTILE_KINDS=canary,garbage (kinds to start),
# JFLAME_HOSTILE_VERBOSE=1 (jflame's stderr of each run).
# ctest: first JDK only
import gzip
import hashlib
import json
import os
import re
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import unittest

import jvmtest
from jvmtest import Jvm

JFLAME = os.environ.get("JFLAME_BIN", "")
HOSTILE_LIB = os.environ.get("JFLAME_HOSTILE_LIB", "")
HOSTILE_CANARY = os.environ.get("JFLAME_HOSTILE_CANARY", "")
TARGET = os.path.join(os.path.dirname(os.path.abspath(__file__)), "hostile_target.py")
HOT_THREAD = "jflame-hot-worker-thread-with-a-long-name"
LIMIT = 10.0      # seconds a recording may take, start-up included
KILL_AFTER = 15.0  # then it is SIGKILLed (a hang must not hang the test)
CANARY_SYMBOL = "CanarySymbolQz7xw3"  # in the canary ELF's .symtab only
FOREIGN_TEXT = ("Fake.method", "FOREIGN-STATUS-ERROR", "FOREIGN-RING-ERROR")
# jvmfifo: a real JVM as nobody in its own mount namespace, a FIFO at its status path
KINDS = ("fifo", "canary", "devzero", "sparse", "foreign", "garbage", "elfcanary", "elfforeign", "hsperfforeign",
         "jvmfifo")
# kinds that plant at one path only (the code's file, hsperfdata), so that no
# other file hides what that one reader makes of it
ONLY = {"elfcanary": ("canary", ["lib"]), "elfforeign": ("foreign", ["lib"]), "hsperfforeign": ("foreign", ["hsperf"])}
# a diagnosis may leave kinds out (a FIFO or /dev/zero hangs a jflame without the fixes)
KINDS = tuple(k for k in os.environ.get("JFLAME_HOSTILE_KINDS", ",".join(KINDS)).split(",") if k)
REFUSED = ("fifo", "canary", "devzero", "sparse", "foreign")  # what the one opener refuses
# names with escape sequences (15 bytes at most: the kernel's comm)
COMMS = ("\x1b[31mh-%s", "\x1b]0;pwn\x07%s", "h\n%s")
THREADS = ("\x1b]0;x\x07t-%s", "t\n\x1b[2J%s", "\x1b[31mt-%s")


def run_limited(args, limit=KILL_AFTER):
    """Runs a command in its own process group; SIGKILLs the group after limit
    seconds. Returns (exit code or None when killed, stdout, stderr bytes, seconds)."""
    start = time.monotonic()
    p = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=limit)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate(timeout=30)
        rc = None
    return rc, out, err, time.monotonic() - start


def snapshot(path):
    """What a planted file is: type, mode, owner, size, times and content (of a
    regular file: its hash, or for a big sparse one where its data is)."""
    st = os.lstat(path)
    snap = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid, st.st_size, st.st_mtime_ns,
            st.st_ctime_ns)
    if not stat.S_ISREG(st.st_mode):
        return snap
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        if st.st_size <= 8 << 20:
            h = hashlib.sha256()
            while True:
                b = os.read(fd, 1 << 20)
                if not b:
                    break
                h.update(b)
            return snap + (h.hexdigest(),)
        extents, pos = [], 0
        while pos < st.st_size:
            try:
                data = os.lseek(fd, pos, os.SEEK_DATA)
            except OSError:
                break
            hole = os.lseek(fd, data, os.SEEK_HOLE)
            extents.append((data, hole))
            pos = hole
        return snap + (tuple(extents),)
    finally:
        os.close(fd)


class Hostile:
    """One hostile process (hostile_target.py) in its own mount namespace."""

    def __init__(self, label, status, index, canary_dir, canary):
        kind, only = ONLY.get(label, (label, None))
        self.label, self.kind, self.status, self.only = label, kind, status, only
        spec = {
            "kind": kind, "status": status, "only": only, "lib": HOSTILE_LIB, "canary_lib": HOSTILE_CANARY,
            "canary": canary, "canary_file": os.path.join(canary_dir, "canary-%d.txt" % index),
            "canary_elf": os.path.join(canary_dir, "canary-%d.so" % index),
            "comm": COMMS[index % 3] % label, "threads": [THREADS[index % 3] % label],
            "spin": 2000000, "sleep": 0.05,
        }
        self.canary_files = [spec["canary_file"], spec["canary_elf"]] if kind == "canary" else []
        env = dict(os.environ)
        env.pop("LD_PRELOAD", None)
        self.proc = subprocess.Popen(["unshare", "--mount", "--propagation", "private", sys.executable, TARGET,
                                      json.dumps(spec)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, start_new_session=True, env=env)
        ready, _, _ = select.select([self.proc.stdout], [], [], 20)
        line = self.proc.stdout.readline() if ready else b""
        if not line:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGKILL)
            why = self.proc.stderr.read().decode("utf-8", "replace")
            self.kill()
            raise AssertionError("hostile process %s did not start: %s" % (kind, why))
        info = json.loads(line)
        self.pid, self.paths = info["pid"], info["paths"]

    def files(self):
        return list(self.paths.values()) + self.canary_files

    def kill(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(30)
        self.proc.stdout.close()
        self.proc.stderr.close()


class HostileCase(unittest.TestCase):
    def setUp(self):
        jvmtest.check_setup()
        jvmtest.require(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        jvmtest.require(os.path.isfile(HOSTILE_LIB) and os.path.isfile(HOSTILE_CANARY),
                        "hostile test libraries not built (JFLAME_HOSTILE_LIB=%r)" % HOSTILE_LIB)
        jvmtest.require(os.geteuid() == 0, "the hostile-target test runs jflame as root (processes as nobody, "
                        "mount namespaces)")
        jvmtest.require(shutil.which("unshare") and shutil.which("mount"), "unshare and mount (util-linux)")
        self.tmp = tempfile.mkdtemp(prefix="jflame-hostile-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        # the canaries live where only root can read them, outside /tmp (so the
        # hostile processes, whose /tmp is their own, see them at the same path)
        self.canary_dir = tempfile.mkdtemp(prefix="jflame-hostile-canary-", dir="/var/tmp")
        self.addCleanup(shutil.rmtree, self.canary_dir, True)
        os.chmod(self.canary_dir, 0o700)
        self.canary = "CANARY-%s" % os.urandom(8).hex()
        self.hostiles = []
        self.extra_files = []
        self.t0 = time.monotonic()

    def start(self, kind, status):
        h = Hostile(kind, status, len(self.hostiles), self.canary_dir, self.canary)
        self.addCleanup(h.kill)
        self.hostiles.append(h)
        return h

    def out(self, name):
        return os.path.join(self.tmp, name)

    def snapshot_all(self):
        files = [p for h in self.hostiles for p in h.files()] + self.extra_files
        return {p: snapshot(p) for p in files}

    def record(self, args):
        rc, out, err, secs = run_limited([JFLAME, "record"] + [str(a) for a in args])
        print("[+%.1f s] jflame record %s: %s in %.1f s" % (time.monotonic() - self.t0, args[0],
              "exit %d" % rc if rc is not None else "killed", secs), file=sys.stderr)
        if os.environ.get("JFLAME_HOSTILE_VERBOSE"):
            sys.stderr.write(err.decode("utf-8", "replace"))
        return rc, err, secs

    # ---- the checks ---------------------------------------------------------------

    def check_ended(self, what, rc, err, secs, outputs):
        text = err.decode("utf-8", "replace")[-4000:]
        with self.subTest(check="ends in time", run=what):
            self.assertIsNotNone(rc, "%s hung: SIGKILLed after %.0f s; stderr:\n%s" % (what, KILL_AFTER, text))
            self.assertLess(secs, LIMIT, "%s took %.1f s; stderr:\n%s" % (what, secs, text))
        with self.subTest(check="exit code 0", run=what):
            self.assertEqual(rc, 0, "%s exited %s; stderr:\n%s" % (what, rc, text))
        with self.subTest(check="outputs written", run=what):
            missing = [o for o in outputs if not os.path.isfile(o) or os.path.getsize(o) == 0]
            self.assertEqual(missing, [], "%s left outputs missing or empty; stderr:\n%s" % (what, text))

    def check_untouched(self, what, before):
        with self.subTest(check="planted files untouched", run=what):
            changed = {}
            for path, snap in before.items():
                try:
                    now = snapshot(path)
                except OSError as e:
                    now = str(e)
                if now != snap:
                    changed[path] = (snap, now)
            self.assertEqual(changed, {}, "%s changed planted files (before, after)" % what)

    def output_bytes(self, path):
        with open(path, "rb") as f:
            data = f.read()
        return gzip.decompress(data) if path.endswith(".gz") else data

    def check_secrets(self, what, err, outputs):
        texts = {"stderr": err}
        texts.update({o: self.output_bytes(o) for o in outputs if os.path.isfile(o)})
        with self.subTest(check="no canary content", run=what):
            for name, data in texts.items():
                self.assertNotIn(self.canary.encode(), data, "the canary file's content is in %s" % name)
        with self.subTest(check="no canary ELF symbols", run=what):
            for name, data in texts.items():
                self.assertNotIn(CANARY_SYMBOL.encode(), data, "the root-only ELF's symbols are in %s" % name)
        with self.subTest(check="no other user's file content", run=what):
            for name, data in texts.items():
                for s in FOREIGN_TEXT:
                    self.assertNotIn(s.encode(), data, "another user's planted file was read: %r in %s" % (s, name))
            foreign = [h.pid for h in self.hostiles if h.kind == "foreign"]
            for pid in foreign:
                # a foreign hsperfdata saying -XX:+DisableAttachMechanism was believed
                self.assertNotIn(b"attach is disabled in pid %d" % pid, err)

    def check_text(self, what, err, outputs):
        with self.subTest(check="no raw control bytes in stderr", run=what):
            bad = sorted({c for c in err if c < 0x20 and c not in (0x0a, 0x09)})
            self.assertEqual(bad, [], "raw control bytes in jflame's stderr:\n%r" % err[-3000:])
        with self.subTest(check="no raw control bytes in outputs", run=what):
            for o in outputs:
                if o.endswith((".folded", ".stacks", ".svg")) and os.path.isfile(o):
                    data = self.output_bytes(o)
                    self.assertNotIn(b"\x1b", data, o)
                    self.assertNotIn(b"\x07", data, o)
        with self.subTest(check="folded lines well-formed", run=what):
            for o in outputs:
                if o.endswith(".folded") and os.path.isfile(o):
                    with open(o, "rb") as f:
                        bad = [l for l in f.read().split(b"\n") if l and not re.match(rb"^\[\d+\] .+ \d+$", l)]
                    self.assertEqual(bad[:5], [], "lines broken by a target's name in %s" % o)

    def check_jvm(self, what, jvm, folded):
        with self.subTest(check="ordinary JVM profiled", run=what):
            with open(folded, "rb") as f:
                lines = f.read().decode("utf-8", "replace").split("\n")
            root = "[%d] java;" % jvm.pid
            stacks = []
            for line in lines:
                if line.startswith(root):
                    frames, _, n = line.rpartition(" ")
                    stacks.append((frames.split(";"), int(n)))
            total = sum(n for _, n in stacks)
            self.assertGreater(total, 50, "few samples of the ordinary JVM")
            hot = [(fr, n) for fr, n in stacks if fr[1] == HOT_THREAD]
            hot_total = sum(n for _, n in hot)
            self.assertGreater(hot_total, total * 0.5, "its hot thread, by its Java name, should dominate")
            named = sum(n for fr, n in hot if any(f.endswith(("_[j]", "_[i]", "_[0]")) for f in fr))
            self.assertGreaterEqual(named / hot_total, 0.9, "samples of its hot thread with a named Java frame")
            spin = sum(n for fr, n in hot if any(f.startswith("jflame/examples/Workload.spin_[") for f in fr))
            self.assertGreaterEqual(spin / hot_total, 0.8, "Workload.spin should be on most hot samples")

    def ignored(self, err):
        return [l for l in err.decode("utf-8", "replace").splitlines() if l.startswith("jflame: ignored ")]

    def check_refusals(self, what, err, paths):
        """Each (kind, path regex) refusal is reported on one line, each line once."""
        lines = self.ignored(err)
        for label, pattern in paths:
            with self.subTest(check="refusal reported", run=what, path=label):
                self.assertTrue(any(re.match(r"^jflame: ignored %s: \S" % pattern, l) for l in lines),
                                "no 'jflame: ignored' line for %s (%s); stderr:\n%s"
                                % (label, pattern, err.decode("utf-8", "replace")[-6000:]))
        with self.subTest(check="each refusal once", run=what):
            dup = sorted({l for l in lines if lines.count(l) > 1})
            self.assertEqual(dup, [], "refusals reported more than once")

    def tmp_path(self, h, name):
        return re.escape("/proc/%d/root/tmp/" % h.pid) + "?" + name


class HostileRecordTest(HostileCase):
    def test_record_beside_hostile_processes(self):
        for kind in [k for k in KINDS if k != "jvmfifo"]:
            for status in (True, False) if kind not in ONLY else (False,):
                self.start(kind, status)
        jvm = Jvm(["hot", "60000"], jvm_flags=["-XX:+PreserveFramePointer"])
        self.addCleanup(jvm.cleanup)
        # an allocating JVM (at lower priority) for -p -e alloc, which writes nothing without samples
        allocator = Jvm(["alloc", "60000"], jvm_flags=["-Xmx64m"], prefix=["nice", "-n", "10"], wait_ready=False)
        self.addCleanup(allocator.cleanup)
        # a real JVM as nobody with its own /tmp, a FIFO at its agent status path before jflame attaches
        # (the build tree may be under /tmp: the jar is kept open as fd 3, as test_container does)
        nobody_jvm = None if "jvmfifo" not in KINDS else Jvm(["hot", "60000"], classpath="/proc/self/fd/3", prefix=[
            "unshare", "--mount", "--propagation", "private", "sh", "-c",
            "exec 3<'%s' && " % jvmtest.JAR +
            "mount -t tmpfs -o mode=1777,size=64m jflame-hostile-jvm /tmp && mkfifo -m 644 /tmp/jflame-$$.status && "
            "chown 65534:65534 /tmp/jflame-$$.status && "
            'exec setpriv --reuid=65534 --regid=65534 --clear-groups "$0" "$@"'])
        if nobody_jvm:
            self.addCleanup(nobody_jvm.cleanup)
            nobody_status = "/proc/%d/root/tmp/jflame-%d.status" % (nobody_jvm.pid, nobody_jvm.pid)
            self.assertTrue(stat.S_ISFIFO(os.lstat(nobody_status).st_mode))
            self.extra_files.append(nobody_status)
        time.sleep(0.3)
        before = self.snapshot_all()

        # the whole host, attaching (the agent's files and hsperfdata are read then)
        outs = [self.out("all" + ext) for ext in (".folded", ".svg", ".stacks", ".pb.gz")]
        args = ["-a", "--attach", "-d", "3"]
        for o in outs:
            args += ["-o", o]
        rc, err, secs = self.record(args)
        self.check_ended("record -a", rc, err, secs, outs)
        self.check_untouched("record -a", before)
        self.check_secrets("record -a", err, outs)
        self.check_text("record -a", err, outs)
        if os.path.isfile(outs[0]):
            self.check_jvm("record -a", jvm, outs[0])
            with self.subTest(check="hostile processes recorded, their code named", run="record -a"):
                # the recording goes on for them: the file they map is read as it is mapped
                with open(outs[0], "rb") as f:
                    lines = f.read().split(b"\n")
                missing = [h.label for h in self.hostiles
                           if not any(l.startswith(b"[%d] " % h.pid) and b";hostile_spin;" in l for l in lines)]
                self.assertEqual(missing, [], "hostile processes without samples in hostile_spin")
        expect = []
        for h in self.hostiles:
            if h.kind not in REFUSED or h.only == ["lib"]:
                continue
            if h.only == ["hsperf"]:
                expect.append(("%s hsperfdata of %d" % (h.label, h.pid),
                               self.tmp_path(h, "hsperfdata_nobody/%d" % h.pid)))
            elif h.status:
                expect.append(("%s status of %d" % (h.kind, h.pid), self.tmp_path(h, "jflame-%d\\.status" % h.pid)))
            else:
                expect.append(("%s perf map or events of %d" % (h.kind, h.pid),
                               self.tmp_path(h, "(perf-%d\\.map|jflame-%d\\.events)" % (h.pid, h.pid))))
                expect.append(("%s hsperfdata of %d" % (h.kind, h.pid),
                               self.tmp_path(h, "hsperfdata_nobody/%d" % h.pid)))
        if nobody_jvm:
            expect.append(("FIFO status of the JVM run as nobody", re.escape(nobody_status)))
        self.check_refusals("record -a", err, expect)

        # the same processes by pid, with the agent's sample ring read too (-e alloc)
        # (not waited for: it allocates from its start, and only says ready after seconds of it)
        self.assertTrue(allocator.alive(), "the allocating JVM exited: " + allocator.stderr()[-2000:])
        outs = [self.out("pids-cpu.folded"), self.out("pids-alloc.folded"), self.out("pids-cpu.svg")]
        pids = ",".join(str(h.pid) for h in self.hostiles) + ",%d,%d" % (jvm.pid, allocator.pid)
        pids += ",%d" % nobody_jvm.pid if nobody_jvm else ""
        rc, err, secs = self.record(["-p", pids, "-d", "3", "-e", "cpu,alloc", "-o", self.out("pids-%e.folded"),
                                     "-o", self.out("pids-cpu.svg")])
        self.check_ended("record -p", rc, err, secs, outs)
        self.check_untouched("record -p", before)
        self.check_secrets("record -p", err, outs)
        self.check_text("record -p", err, outs)
        if os.path.isfile(outs[0]):
            self.check_jvm("record -p", jvm, outs[0])
        # a sparse ring is no refusal (the agent's own is sparse until written): its header is
        expect = [("%s sample ring of %d" % (h.kind, h.pid), self.tmp_path(h, "jflame-%d\\.samples" % h.pid))
                  for h in self.hostiles if h.kind in REFUSED and h.kind != "sparse" and not h.status and not h.only]
        self.check_refusals("record -p", err, expect)
        with self.subTest(check="sparse sample ring rejected", run="record -p"):
            for h in self.hostiles:
                if h.kind == "sparse" and not h.status:
                    self.assertIn(b"jflame-%d.samples is not an agent's sample ring" % h.pid, err)
        self.assertTrue(jvm.alive(), "the ordinary JVM died")
        if not nobody_jvm:
            return
        self.assertTrue(nobody_jvm.alive(), "the JVM run as nobody died")
        with self.subTest(check="the JVM run as nobody is not stuck on its FIFO"):
            # the agent jflame loaded into it must not open the FIFO at its status path
            # blocking (the JVM's Attach Listener would wait there for good)
            stuck = []
            for tid in os.listdir("/proc/%d/task" % nobody_jvm.pid):
                try:
                    with open("/proc/%d/task/%s/stack" % (nobody_jvm.pid, tid)) as f:
                        if "fifo_open" in f.read():
                            with open("/proc/%d/task/%s/comm" % (nobody_jvm.pid, tid)) as c:
                                stuck.append(c.read().strip())
                except OSError:
                    pass
            self.assertEqual(stuck, [], "threads of the JVM run as nobody blocked opening a FIFO")


class DoneWhenTest(HostileCase):
    def test_fifos_at_status_and_hsperfdata(self):
        """Issue 17's 'done when': `jflame record -a -d 3` beside a process with
        FIFOs at its status and hsperfdata paths ends in under 10 s with its outputs."""
        self.start("fifo", True)
        before = self.snapshot_all()
        outs = [self.out("fifo.folded"), self.out("fifo.svg")]
        rc, err, secs = self.record(["-a", "-d", "3", "-o", outs[0], "-o", outs[1]])
        self.check_ended("record -a beside FIFOs", rc, err, secs, outs)
        self.check_untouched("record -a beside FIFOs", before)


if __name__ == "__main__":
    jvmtest.main()
