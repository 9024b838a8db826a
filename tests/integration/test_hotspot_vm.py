# test_hotspot_vm.py - hotspot_vm on live JVMs (hotspot_probe), the agent's perf map and the
# source as referees: layout in the JVM's mappings, nmethods named as the agent does, lines.
import os
import re
import subprocess
import sys
import time
import unittest

import jvmtest
from jvmtest import Jvm

JFLAME = os.environ.get("JFLAME_BIN", "")
# hotspot_probe is built next to the unit tests: build/tests/unit
PROBE = os.environ.get("JFLAME_HOTSPOT_PROBE") or os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(JFLAME or "."))), "tests", "unit", "hotspot_probe")
SOURCE = os.path.join(jvmtest.SOURCE_DIR, "examples", "src", "jflame", "examples", "KafkaStyle.java")
PRODUCER = "Ljflame/examples/KafkaStyle$Producer;::"
# small methods the producer calls for every record: compiled on their own
METHODS = ["mix64", "putInt", "putLong", "ensure"]


def source_lines(name):
    """The lines of method `name` of KafkaStyle.java: (declaration, closing
    brace, lines with a statement), 1-based."""
    with open(SOURCE) as f:
        text = f.read().split("\n")
    decl = next(i for i, l in enumerate(text) if re.search(r"\b%s\(.*\) (throws [\w, ]+ )?\{$" % name, l))
    indent = len(text[decl]) - len(text[decl].lstrip())
    end = next(i for i in range(decl + 1, len(text)) if text[i] == " " * indent + "}")
    body = [i + 1 for i in range(decl + 1, end) if text[i].strip() not in ("", "}")]
    return decl + 1, end + 1, body


def mapping_spans(pid):
    """/proc/PID/maps as (start, end, perms) with adjacent mappings merged into
    spans (the code cache is reserved as one range, committed piecemeal)."""
    spans = []
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            addr, perms = line.split()[:2]
            lo, hi = (int(x, 16) for x in addr.split("-"))
            if spans and spans[-1][1] == lo:
                spans[-1][1] = hi
            else:
                spans.append([lo, hi])
    return spans


def inside(spans, lo, hi):
    return any(s <= lo and hi <= e for s, e in spans)


class HotspotVmTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        jvmtest.check_setup()
        jvmtest.require(os.access(PROBE, os.X_OK), "hotspot_probe not built (%s)" % PROBE)
        cls.jdk = jvmtest.java_version()
        # no PreserveFramePointer: the tables do not need it
        cls.jvm = Jvm(["--seconds", "120", "--format", "string-format"], agent_opts="",
                      main="jflame.examples.KafkaStyle", ready="jflame-example: ready")
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if sum(";::" in e[2] for e in cls.jvm.map_entries()) >= 200:
                break
            time.sleep(0.5)
        args = [PROBE, str(cls.jvm.pid)]
        for m in METHODS:
            args += ["--method", PRODUCER + m]
        r = subprocess.run(args, capture_output=True, text=True, timeout=60)
        cls.probe_rc, cls.probe_err = r.returncode, r.stderr
        cls.out = r.stdout.splitlines()
        cls.spans = mapping_spans(cls.jvm.pid)
        cls.exec_ranges = jvmtest.exec_ranges(cls.jvm.pid)
        cls.entries = cls.jvm.map_entries()  # after the probe: every nmethod it saw is in it

    @classmethod
    def tearDownClass(cls):
        cls.jvm.cleanup()

    def setUp(self):
        self.assertEqual(self.probe_rc, 0, self.probe_err)

    def lines(self, key):
        return [l.split()[1:] for l in self.out if l.split()[0] == key]

    def value(self, key):
        return self.lines(key)[0]

    def test_version_and_layout(self):
        self.assertEqual(int(self.value("jdk")[0]), self.jdk)
        self.assertEqual(self.value("walker"), ["1"])
        layout = dict(kv.split("=") for kv in self.value("layout"))
        # JDK 23 made CodeBlob's code bounds int offsets and _frame_complete_offset an int16_t
        new = self.jdk >= 23
        self.assertEqual(layout["blob_code_offsets"], "1" if new else "0")
        self.assertEqual(int(self.value("frame_complete_size")[0]), 2 if new else 4)
        if self.jdk in (17, 25):  # HeapBlock::Header._length: size_t in 17, uint32_t in 25
            self.assertEqual(int(layout["heapblock_size"]), 16 if self.jdk == 17 else 8)
        self.assertLessEqual(int(layout["blob_header"]), 512)

    def test_ranges_in_mappings(self):
        code_lo, code_hi = (int(x, 16) for x in self.value("code"))
        heaps = [(int(h[1], 16), int(h[2], 16)) for h in self.lines("heap")]
        self.assertGreaterEqual(len(heaps), 1)
        self.assertTrue(inside(self.spans, code_lo, code_hi), "code cache %x-%x" % (code_lo, code_hi))
        for lo, hi in heaps:
            self.assertTrue(code_lo <= lo < hi <= code_hi, "heap %x-%x" % (lo, hi))
            self.assertTrue(inside(self.spans, lo, hi), "heap %x-%x is not mapped" % (lo, hi))
        for h in self.lines("heap"):  # segment maps: one byte a segment, mapped
            self.assertTrue(inside(self.spans, int(h[3], 16), int(h[3], 16) + 1), "segmap %s" % h[3])
        i_lo, i_hi = (int(x, 16) for x in self.value("interp"))
        self.assertTrue(any(lo <= i_lo < i_hi <= hi for lo, hi in heaps), "interpreter %x-%x" % (i_lo, i_hi))
        self.assertTrue(any(lo <= i_lo and i_hi <= hi for lo, hi in self.exec_ranges),
                        "interpreter %x-%x is not executable" % (i_lo, i_hi))
        # the agent's "Interpreter" entry is that very code
        interp = [e for e in self.entries if e[2] == "Interpreter"]
        self.assertTrue(interp)
        self.assertTrue(any(i_lo <= s and s + z <= i_hi for s, z, _ in interp), (interp, i_lo, i_hi))

    def test_nmethods_named_as_the_agent_does(self):
        at = {}
        for start, _, name in self.entries:  # later lines win: an address reused
            at[start] = name.split("->")[0]
        nms = [(int(n[0], 16), n[2]) for n in self.lines("nmethod")]
        self.assertEqual(self.value("nmethods")[0], str(len(nms)))
        same = [n for n in nms if at.get(n[0]) == n[1]]
        differ = [(hex(a), name, at.get(a)) for a, name in nms if at.get(a) != name]
        print("\n%d nmethods walked, %d named as the agent does; first differences: %s"
              % (len(nms), len(same), differ[:10]))
        self.assertGreaterEqual(len(nms), 50)
        self.assertGreaterEqual(len(same), 0.95 * len(nms), differ[:20])
        self.assertTrue(any(name.startswith(PRODUCER) for _, name in nms))

    def test_line_numbers(self):
        checked = 0
        for m in METHODS:
            name = PRODUCER + m
            found = [l for l in self.out if l.startswith("method %s " % name)]
            if not found or found[0].endswith(" not found"):
                continue
            self.assertIn("source KafkaStyle.java", found[0])
            decl, end, body = source_lines(m)
            lines = [int(l.split()[3]) for l in self.out if l.startswith("line %s " % name)]
            self.assertTrue(lines, name)
            # bci 0 is the first statement; every bytecode is on a line of the
            # body (a void method's return on its closing brace), each
            # statement has code
            self.assertEqual(lines[0], body[0], name)
            self.assertTrue(all(decl < l <= end for l in lines), (name, lines, decl, end))
            self.assertTrue(set(body) <= set(lines), (name, sorted(set(lines)), body))
            print("%s: bci 0..%d on lines %s" % (name, len(lines) - 1, sorted(set(lines))))
            checked += 1
        self.assertGreaterEqual(checked, 1, "none of %s was compiled on its own" % METHODS)

    def test_stubs_unwound_from_their_code(self):
        """Every stub of the StubCodeDesc list analysed for unwinding (stub_cfa,
        #34): its instructions reached from its entry, where the caller's frame
        is known at each; what is left unreached is data (constant tables) or
        a second entry."""
        r = subprocess.run([PROBE, str(self.jvm.pid), "--stubs"], capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        stubs = {}
        for line in r.stdout.splitlines():
            f = line.split()
            if f[0] == "stub" and f[4] == "insns":
                stubs.setdefault(f[1], []).append(dict(zip(f[4::2], map(int, f[5::2]))))
        total = [l for l in r.stdout.splitlines() if l.startswith("stubs ")][0].split()
        t = dict(zip(total[::2], map(int, total[1::2])))
        print("\nJDK %d: %d stubs, %d instructions, %d without a rule, %d reached twice differently"
              % (self.jdk, t["stubs"], t["insns"], t["unknown"], t["conflicts"]), file=sys.stderr)
        self.assertGreaterEqual(t["stubs"], 100, r.stdout[-2000:])
        self.assertEqual(t["unread"], 0, r.stdout[-2000:])
        # Loom's continuation stubs (cont_thaw, cont_returnBarrier: JDK 21 on) move
        # rsp to frames they copy back; they are left to the walker's heuristics
        unknown = sum(st["unknown"] for n, v in stubs.items() if not n.startswith("cont_") for st in v)
        self.assertLess(unknown, t["insns"] * 0.002, r.stdout[-3000:])
        # the families the issue names, whole: every instruction reached and ruled
        for name in ("sha256_implCompressMB", "sha512_implCompressMB", "md5_implCompressMB", "updateBytesCRC32C",
                     "updateBytesAdler32", "aescrypt_encryptBlock", "counterMode_AESCrypt", "multiplyToLen",
                     "jbyte_fill", "generic_arraycopy", "call_stub"):
            for st in stubs.get(name, []):
                self.assertGreater(st["insns"], 0, name)
                # at most the one instruction between aligning rsp and saving the old
                # one (in a register then: the walker reads only rsp and rbp)
                self.assertLessEqual(st["unknown"], 1, (name, st))
                self.assertLess(st["unreached"], 64, (name, st))


class NotAJvmTest(unittest.TestCase):
    def test_one_line(self):
        jvmtest.require(os.access(PROBE, os.X_OK), "hotspot_probe not built (%s)" % PROBE)
        r = subprocess.run([PROBE, str(os.getpid())], capture_output=True, text=True, timeout=30)
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(r.stderr, "jflame: pid %d is not a HotSpot JVM (no libjvm.so)\n" % os.getpid())


if __name__ == "__main__":
    jvmtest.main()
