# test_target_text.py - target text is data: thread, method and process names
# with control characters, and an agent status file's values, reach jflame's
# outputs and terminal escaped (\xHH), never raw. ctest: first JDK only
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET

import jvmtest
from jvmtest import Jvm, read_folded

JFLAME = os.environ.get("JFLAME_BIN", "")
# examples/src/jflame/examples/ControlNames.java: its thread names and hot method
THREAD = "evil\x1b[31mred\x1b[0m;semi\nline\x07bell"
THREAD_SHOWN = r"evil\x1b[31mred\x1b[0m;semi\x0aline\x07bell"
# a native busy process's name (prctl PR_SET_NAME, 15 bytes at most): a
# terminal escape, ';', a newline, BEL, a lone C1 byte and a byte not in UTF-8
COMM = b"py\x1b[31m;\n\x07\x9b\xff"
COMM_SHOWN = r"py\x1b[31m;\x0a\x07\x9b\xff"
BUSY = ("import ctypes, sys\n"
        "ctypes.CDLL(None).prctl(15, %r, 0, 0, 0)\n"
        "print('ready', flush=True)\n"
        "while True:\n"
        "    pass\n" % COMM)

# A process that plants its own alloc sample ring (jvmagent/sample_ring.h,
# format 1) as an agent would, its agent_error, class and frames holding
# control characters; once jflame asks for samples (want), it writes records.
RING = r"""
import ctypes, os, struct, time
class Header(ctypes.Structure):
    _fields_ = [("magic", ctypes.c_char * 8), ("version", ctypes.c_uint32), ("header_size", ctypes.c_uint32),
                ("data_size", ctypes.c_uint64), ("process_start", ctypes.c_uint64), ("pid", ctypes.c_int32),
                ("reserved0", ctypes.c_uint32), ("head", ctypes.c_uint64), ("dropped", ctypes.c_uint64),
                ("written", ctypes.c_uint64 * 3), ("active", ctypes.c_uint32),
                ("alloc_interval_active", ctypes.c_uint32), ("agent_error", ctypes.c_char * 256),
                ("tail", ctypes.c_uint64), ("reader_beat_ns", ctypes.c_uint64), ("want", ctypes.c_uint32),
                ("alloc_interval", ctypes.c_uint32), ("lock_min_ns", ctypes.c_uint64),
                ("reserved1", ctypes.c_uint64 * 8), ("lock_short", ctypes.c_uint64)]
DATA = 131072
path = "/tmp/jflame-%d.samples" % os.getpid()
h = Header(magic=b"JFLSMP1", version=1, header_size=4096, data_size=DATA, pid=os.getpid(), active=1,
           alloc_interval_active=524288, agent_error=b"\x1b[31mhostile\x1b[0m\x07 error\n\x9b")
fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
os.ftruncate(fd, 4096 + DATA)
os.pwrite(fd, bytes(h), 0)
print("ready", flush=True)
want_at = Header.want.offset
while struct.unpack("<I", os.pread(fd, 4, want_at))[0] == 0:
    time.sleep(0.01)
head = 0
for i in range(20):
    body = b"ev\x1b[2Jil/Cl\x07ss;x\x00" + b"p/Frame\x1b[31m.m\x9b\x00" + b"p/Main.main\x00"
    size = (40 + len(body) + 7) // 8 * 8
    rec = struct.pack("<IHHiIQQQ", size, 1, 2, os.getpid(), 0, time.monotonic_ns(), 64, 524288) + body
    os.pwrite(fd, rec.ljust(size, b"\x00"), 4096 + head)
    head += size
    os.pwrite(fd, struct.pack("<Q", head), Header.head.offset)
    time.sleep(0.05)
print("written", flush=True)
while True:
    time.sleep(1)
"""


def folded_frame(name):
    """A name as a folded frame: ';' would split the stack, so it is ':'."""
    return name.replace(";", ":")


def pprof_strings(path):
    """The string table of a .pb.gz (Profile field 6), read with a minimal
    protobuf reader: the file is binary, its strings are what must be clean."""
    with gzip.open(path) as f:
        buf = f.read()
    strings, i = [], 0

    def varint():
        nonlocal i
        v, shift = 0, 0
        while True:
            b = buf[i]
            i += 1
            v |= (b & 0x7f) << shift
            shift += 7
            if b < 0x80:
                return v

    while i < len(buf):
        key = varint()
        field, wire = key >> 3, key & 7
        if wire == 0:
            varint()
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        elif wire == 2:
            n = varint()
            if field == 6:
                strings.append(buf[i:i + n])
            i += n
        else:
            raise AssertionError("%s: wire type %d at %d" % (path, wire, i))
    return strings


class TargetTextTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        jvmtest.check_setup()
        jvmtest.require(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        cls.tmp = tempfile.mkdtemp(prefix="jflame-text-")
        cls.jvm = Jvm(["60000"], main="jflame.examples.ControlNames", jvm_flags=["-XX:+PreserveFramePointer"],
                      cwd=cls.tmp)
        cls.busy = subprocess.Popen([sys.executable, "-c", BUSY], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        if cls.busy.stdout.readline().strip() != b"ready":
            raise AssertionError("the busy process did not start")
        with open("/proc/%d/comm" % cls.busy.pid, "rb") as f:
            assert f.read().rstrip(b"\n") == COMM, "prctl(PR_SET_NAME) did not name the busy process"

    @classmethod
    def tearDownClass(cls):
        cls.busy.kill()
        cls.busy.wait()
        cls.busy.stdout.close()
        cls.jvm.cleanup()
        shutil.rmtree(cls.tmp, True)

    def out(self, name):
        return os.path.join(self.tmp, name)

    def jflame(self, *args, timeout=120):
        env = dict(os.environ)
        env["JFLAME_AGENT"] = jvmtest.AGENT
        return subprocess.run([JFLAME] + list(args), capture_output=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, env=env)

    def assert_clean(self, what, data, allowed="\n\t"):
        """Valid UTF-8 with no control character (C0, DEL, C1) but the format's own."""
        try:
            text = data.decode("utf-8") if isinstance(data, bytes) else data
        except UnicodeDecodeError as e:
            raise AssertionError("%s is not UTF-8 (%s): %r" % (what, e, data[max(0, e.start - 40):e.start + 40]))
        for i, c in enumerate(text):
            if (ord(c) < 0x20 and c not in allowed) or 0x7f <= ord(c) <= 0x9f:
                raise AssertionError("%s holds the control character %r at %d: %r" % (what, c, i, text[max(0, i - 40):i + 40]))
        return text

    def test_record_outputs_and_terminal_escape_names(self):
        outs = {ext: self.out("names" + ext) for ext in (".folded", ".stacks", ".svg", ".pb.gz", ".json", ".html")}
        args = ["record", "-p", "%d,%d" % (self.jvm.pid, self.busy.pid), "-d", "3"]
        for path in outs.values():
            args += ["-o", path]
        r = self.jflame(*args)
        err = self.assert_clean("jflame record's standard error", r.stderr)
        self.assertEqual(r.returncode, 0, err)
        self.assert_clean("jflame record's standard output", r.stdout)

        # folded: every line a stack and a count; the names escaped, ';' as ':'
        with open(outs[".folded"], "rb") as f:
            self.assert_clean(".folded", f.read())
        stacks = read_folded(outs[".folded"])
        busy_root = "[%d] %s" % (self.busy.pid, folded_frame(COMM_SHOWN))
        busy = sum(n for frames, n in stacks if frames[0] == busy_root)
        self.assertGreater(busy, 50, "no samples under %r: %s" % (busy_root, sorted({f[0] for f, _ in stacks})))
        # the thread of a process without threads is the process: its name too
        self.assertTrue(any(frames[0] == busy_root and frames[1] == folded_frame(COMM_SHOWN) for frames, _ in stacks))
        jvm_root = "[%d] java" % self.jvm.pid
        evil = [(f, n) for f, n in stacks if f[0] == jvm_root and f[1] == folded_frame(THREAD_SHOWN)]
        self.assertGreater(sum(n for _, n in evil), 50,
                           "no samples of thread %r:\n%s" % (THREAD_SHOWN, sorted({f[1] for f, _ in stacks if f[0] == jvm_root})))
        self.assertTrue(any(any("ControlNames" in fr for fr in f) for f, _ in evil), evil[:3])
        # each line: one stack, its frames as many as written (no split, no joined line)
        with open(outs[".folded"], "rb") as f:
            lines = f.read().split(b"\n")
        self.assertEqual(lines[-1], b"")
        self.assertEqual(len(lines) - 1, len(stacks))

        # the text outputs: clean, and the names there as escapes
        for ext in (".stacks", ".svg", ".json", ".html"):
            with open(outs[ext], "rb") as f:
                text = self.assert_clean(ext, f.read())
            for needle in (r"evil\x1b[31mred", r"py\x1b[31m"):
                if ext in (".json", ".html"):  # names in JSON: a backslash is written \\
                    needle = json.dumps(needle)[1:-1]
                self.assertTrue(needle in text, "%s: %r not in it" % (ext, needle))
        ET.parse(outs[".svg"])
        with open(outs[".json"]) as f:
            doc = json.load(f)
        names = [fr["name"] for fr in doc["shared"]["frames"]]
        self.assertIn(folded_frame(THREAD_SHOWN), names)
        self.assertIn(busy_root, names)
        for name in names:
            self.assert_clean("speedscope frame", name, allowed="")

        # pprof: a binary file, whose strings are what must be clean
        strings = pprof_strings(outs[".pb.gz"])
        for s in strings:
            self.assert_clean("a pprof string", s, allowed="")
        self.assertTrue(any(b"evil\\x1b[31mred" in s for s in strings))

    def test_record_all_escapes_names(self):
        folded = self.out("all.folded")
        r = self.jflame("record", "-a", "-d", "3", "-o", folded)
        err = self.assert_clean("jflame record -a's standard error", r.stderr)
        self.assertEqual(r.returncode, 0, err)
        with open(folded, "rb") as f:
            self.assert_clean("-a .folded", f.read())
        stacks = read_folded(folded)
        roots = {f[0] for f, _ in stacks}
        self.assertIn("[%d] %s" % (self.busy.pid, folded_frame(COMM_SHOWN)), roots)
        threads = {f[1] for f, _ in stacks if f[0] == "[%d] java" % self.jvm.pid}
        self.assertIn(folded_frame(THREAD_SHOWN), threads)

    def test_attach_names_a_process_escaped(self):
        # not a JVM: the error names the process, by its name escaped
        r = self.jflame("attach", str(self.busy.pid))
        err = self.assert_clean("jflame attach's error", r.stderr)
        self.assertNotEqual(r.returncode, 0, err)
        self.assertIn("not a Java process", err)
        self.assertIn(COMM_SHOWN, err)

    def test_attach_status_values_escaped(self):
        # a status file the target wrote itself, its values holding escapes
        # (in the file's own \xHH form, and raw): shown escaped
        status = self.jvm.status_path
        self.assertFalse(os.path.exists(status), "the JVM has an agent already")
        with open(status, "wb") as f:
            f.write(b"format=1\npid=%d\nstate=running\nmode=attach\n"
                    b"options=\\x1b]0;pwned\\x07\x1b[2Jx\n"
                    b"error=\\x1b[31magent failed\\x1b[0m\\nsecond line\n" % self.jvm.pid)
        try:
            r = self.jflame("attach", str(self.jvm.pid))
        finally:
            os.unlink(status)
        err = self.assert_clean("jflame attach's message", r.stderr)
        self.assertEqual(r.returncode, 0, err)
        self.assertIn(r"already loaded", err)
        self.assertIn(r"\x1b]0;pwned\x07\x1b[2Jx", err)

    def test_alloc_ring_text_escaped(self):
        planter = subprocess.Popen([sys.executable, "-c", RING], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
        ring = "/tmp/jflame-%d.samples" % planter.pid

        def stop():
            planter.kill()
            planter.wait()
            planter.stdout.close()
            if os.path.exists(ring):
                os.unlink(ring)
        self.addCleanup(stop)
        self.assertEqual(planter.stdout.readline().strip(), b"ready")
        folded = self.out("ring.folded")
        r = self.jflame("record", "-p", str(planter.pid), "-e", "alloc", "--no-attach", "-d", "3", "-o", folded)
        err = self.assert_clean("jflame record -e alloc's standard error", r.stderr)
        self.assertEqual(planter.stdout.readline().strip(), b"written", err)
        # the agent's error, as the ring holds it: one warning line, escaped
        self.assertIn(r"the agent in pid %d: \x1b[31mhostile\x1b[0m\x07 error\x0a\x9b" % planter.pid, err)
        with open(folded, "rb") as f:
            self.assert_clean("-e alloc .folded", f.read())
        stacks = read_folded(folded)
        leaves = {f[-1] for f, _ in stacks}
        self.assertIn(r"ev\x1b[2Jil/Cl\x07ss:x_[a]", leaves, err)
        self.assertTrue(any(r"p/Frame\x1b[31m.m\x9b" in f for f, _ in stacks), stacks[:3])


if __name__ == "__main__":
    jvmtest.main()
