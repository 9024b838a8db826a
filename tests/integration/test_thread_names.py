# test_thread_names.py - java.lang.Thread names read from a live JVM's memory without an
# agent (hotspot_probe --threads) against Thread.getName() and each thread's kernel comm.
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import jvmtest
from jvmtest import Jvm

JFLAME = os.environ.get("JFLAME_BIN", "")
# hotspot_probe is built next to the unit tests: build/tests/unit
PROBE = os.environ.get("JFLAME_HOTSPOT_PROBE") or os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(JFLAME or "."))), "tests", "unit", "hotspot_probe")
JAVAC = os.path.join(jvmtest.JAVA_HOME, "bin", "javac")
NAME_MAX = 256  # characters of a name read (HOTSPOT_THREAD_NAME_MAX): longer ones are cut
COMM_MAX = 15   # bytes of a kernel thread name
RENAMED = "renamed-after-start-\u00e9lan-\u4e2d\u6587"

# Threads named as real applications name them, and the kinds of Thread
# objects there are: long names, Latin-1 and UTF-16 strings, a Thread
# subclass two levels deep, ForkJoinPool workers, a thread renamed after it
# started (its comm keeps the old name), main, and from JDK 21 a virtual
# thread spinning on its carrier (the carrier's name is the one read).
SOURCE = r'''
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;

public class ThreadNames {
    static final CountDownLatch done = new CountDownLatch(1);
    static volatile boolean spin = true;

    static void block() {
        try { done.await(); } catch (InterruptedException e) { }
    }

    static class Custom extends Thread {
        Custom(String name) { super(name); }
        public void run() { block(); }
    }

    static class Deeper extends Custom {
        Deeper(String name) { super(name); }
    }

    static String hex(String s) {
        StringBuilder b = new StringBuilder();
        for (byte x : s.getBytes(StandardCharsets.UTF_8)) b.append(String.format("%02x", x & 0xff));
        return b.length() == 0 ? "-" : b.toString();
    }

    static void start(Thread t) {
        t.setDaemon(true);
        t.start();
    }

    public static void main(String[] args) throws Exception {
        String[] names = {
            "kafka-producer-network-thread-1",
            "\u00dcbertragung-thread-\u00df",
            "\u6570\u636e\u5904\u7406\u7ebf\u7a0b-\u5de5\u4f5c\u8005-1",
            "emoji-\ud83d\ude80-rocket-thread",
            "long-" + "x".repeat(300),
            "\u957f".repeat(300),
            "",
            "ctl-\tname",
        };
        for (String n : names)
            start(new Thread(ThreadNames::block, n));
        start(new Custom("custom-subclass-worker-thread"));
        start(new Deeper("deeper-subclass-\u00e9l\u00e8ve-thread"));
        CountDownLatch running = new CountDownLatch(1);
        Thread r = new Thread(() -> { running.countDown(); block(); }, "before-rename");
        start(r);
        running.await(); // its kernel name set: the new one is Java's only
        r.setName("renamed-after-start-\u00e9lan-\u4e2d\u6587");
        ForkJoinPool pool = new ForkJoinPool(2);
        CountDownLatch started = new CountDownLatch(2);
        for (int i = 0; i < 2; i++)
            pool.execute(() -> { started.countDown(); block(); });
        started.await();
        try {
            Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
            Method vstart = Class.forName("java.lang.Thread$Builder").getMethod("start", Runnable.class);
            vstart.invoke(builder, (Runnable) () -> { long x = 0; while (spin) x++; });
        } catch (NoSuchMethodException e) {
            // JDK 17: no virtual threads
        }
        Thread.sleep(200);
        for (Thread t : Thread.getAllStackTraces().keySet())
            System.out.println("java-thread " + hex(t.getName()) + " " + t.getClass().getName());
        // collections after the last look at the Thread objects: a moving collector
        // moves them, and generational ZGC leaves the roots to them stale until it
        // next marks or the JVM loads them again
        for (int i = 0; args.length > 1 && i < Integer.parseInt(args[1]); i++)
            System.gc();
        System.out.println("ready");
        System.out.flush();
        Thread.sleep(Long.parseLong(args[0]) * 1000);
        spin = false;
        done.countDown();
    }
}
'''


def escaped(text):
    """Target text as jflame shows it (text_escape): a control character's
    bytes as \\xHH (the test's names hold no backslash)."""
    return "".join("".join("\\x%02x" % b for b in c.encode()) if ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f else c
                   for c in text)


def unescaped(text):
    """escaped's inverse."""
    return re.sub(rb"\\x([0-9a-f]{2})", lambda m: bytes([int(m.group(1), 16)]), text.encode()).decode()


def expected(name):
    """What the probe prints for a Java thread's name: its first NAME_MAX
    characters, escaped."""
    cut, count = [], 0
    for c in name:  # characters as Java counts them: UTF-16 units, a pair not split
        count += 2 if ord(c) > 0xffff else 1
        if count > NAME_MAX:
            break
        cut.append(c)
    return escaped("".join(cut))


def jvm_utf8(name):
    """A name as the JVM gives the kernel: a character past U+FFFF as its two
    UTF-16 surrogates, each in three bytes (modified UTF-8)."""
    out = b""
    for c in name:
        if ord(c) > 0xffff:
            v = ord(c) - 0x10000
            for unit in (0xd800 + (v >> 10), 0xdc00 + (v & 0x3ff)):
                out += chr(unit).encode("utf-8", "surrogatepass")
        else:
            out += c.encode("utf-8")
    return out


def comm(pid, tid):
    try:
        with open("/proc/%d/task/%d/comm" % (pid, tid), "rb") as f:
            return f.read().rstrip(b"\n")
    except OSError:
        return None


class ThreadNamesTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        jvmtest.require(jvmtest.jdk_tool("java"), "no java at %s" % jvmtest.JAVA)
        jvmtest.require(jvmtest.jdk_tool("javac"), "no javac at %s" % JAVAC)
        jvmtest.require(os.access(PROBE, os.X_OK), "hotspot_probe not built (%s)" % PROBE)
        cls.jdk = jvmtest.java_version()
        cls.tmp = tempfile.mkdtemp(prefix="jflame-threads-", dir=os.environ.get("JFLAME_TEST_TMP"))
        with open(os.path.join(cls.tmp, "ThreadNames.java"), "w", encoding="utf-8") as f:
            f.write(SOURCE)
        src = os.path.join(cls.tmp, "ThreadNames.java")
        r = subprocess.run(jvmtest.in_root([JAVAC, "-encoding", "UTF-8", "-d", cls.tmp, src]), capture_output=True,
                           text=True, timeout=120)
        if r.returncode != 0:
            raise AssertionError("javac failed:\n" + r.stdout + r.stderr)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_jvm(self, flags, gcs=0):
        """Starts the program with JVM flags (and gcs System.gc() calls once it
        has listed its threads); (Java's names and classes of its threads, the
        probe's {tid: name or None}, its summary line, the kernel's {tid: comm})."""
        # no jflame code runs in this JVM: without the sanitizer pass's runtime
        # preloaded (ZGC's heap reservation does not fit beside ASan's shadow)
        jvm = Jvm(["120", str(gcs)], jvm_flags=flags, classpath=self.tmp, main="ThreadNames", ready="ready",
                  env={"LD_PRELOAD": ""})
        try:
            java = []
            for line in jvm.stdout().splitlines():
                if line.startswith("java-thread "):
                    _, hexname, klass = line.split(" ")
                    java.append((bytes.fromhex(hexname).decode("utf-8") if hexname != "-" else "", klass))
            r = subprocess.run([PROBE, str(jvm.pid), "--threads"], capture_output=True, timeout=60)
            self.assertEqual(r.returncode, 0, r.stderr.decode(errors="replace"))
            out = r.stdout.decode("utf-8")  # invalid UTF-8 fails here
            probe, summary = {}, None
            for line in out.split("\n"):
                if line.startswith("thread "):
                    _, tid, name = line.split(" ", 2)
                    probe[int(tid)] = None if name == "-" else name
                elif line.startswith("threads "):
                    summary = line.split()
            comms = {tid: comm(jvm.pid, tid) for tid in probe}
            self.assertIsNotNone(summary, out)
            return java, probe, summary, comms, jvm.pid
        finally:
            jvm.cleanup()

    def check_names(self, flags, gcs=0):
        java, probe, summary, comms, pid = self.run_jvm(flags, gcs)
        print("\n%s (JDK %d): %s" % (" ".join(flags) or "default flags", self.jdk, " ".join(summary)))
        for tid in sorted(probe):
            print("  thread %d %s   [comm %r]" % (tid, "-" if probe[tid] is None else probe[tid][:80], comms[tid]))
        # the program's threads are all there, of every kind
        classes = {k for _, k in java}
        for k in ("ThreadNames$Custom", "ThreadNames$Deeper", "java.util.concurrent.ForkJoinWorkerThread"):
            self.assertIn(k, classes)
        if self.jdk >= 21:
            self.assertIn("jdk.internal.misc.CarrierThread", classes)
        # every thread Java lists is read with its name (a control character
        # escaped); a name may be there twice
        named = sorted(n for n in probe.values() if n is not None)
        for name, klass in java:
            want = expected(name)
            if want is None:
                continue
            self.assertIn(want, named, "%s %r not read; read: %r" % (klass, name, named))
            named.remove(want)
        # each name is its very thread's: the kernel's name of a thread is the
        # first 15 bytes of its Java name when it started (main's is "java")
        for tid, name in probe.items():
            c = comms[tid]
            if name is None or c is None:
                continue
            name = unescaped(name)
            ok = (c == jvm_utf8(name)[:COMM_MAX] or (name == "main" and c == b"java") or
                  (name == RENAMED and c == b"before-rename"))
            self.assertTrue(ok, "thread %d read as %r, its comm is %r" % (tid, name, c))
        by_comm = {c: tid for tid, c in comms.items()}
        self.assertIn(b"ctl-\tname", by_comm)
        self.assertEqual(probe[by_comm[b"ctl-\tname"]], "ctl-\\x09name", "a control character is escaped")
        self.assertEqual(probe[by_comm[b"before-rename"]], RENAMED)
        self.assertEqual(probe[by_comm[b"kafka-producer-"]], "kafka-producer-network-thread-1")
        self.assertIsNone(probe[pid], "the launcher's thread runs no Java")
        for tid, c in comms.items():  # the JVM's own threads run no Java either
            if c and (c.startswith(b"GC Thread") or c in (b"VM Thread", b"VM Periodic Tas")):
                self.assertIsNone(probe[tid], c)
        # what it costs: the layout, the thread list and the first name once,
        # then about five reads a Java thread and one for any other; under
        # generational ZGC one more an object (its colour's meaning now), two
        # more a stale pointer (each generation's table: every pointer not loaded
        # since ZGC's last phase change, moved or not), and an object found moved
        # up to four more (the forwarding, its entries)
        tids, reads, first = int(summary[1]), int(summary[5]), int(summary[7])
        forwarded, stale = int(summary[9]), int(summary[11])
        self.assertLessEqual(first, 300)
        self.assertLessEqual(reads - first, 8 * tids + 3 * stale + 4 * forwarded)
        return forwarded

    def test_default(self):
        self.check_names([])

    def test_uncompressed_oops(self):
        self.check_names(["-XX:-UseCompressedOops"])

    def test_uncompressed_class_pointers(self):
        # arrays: the length after the 16-byte header, the bytes right after
        # it (JDK 25) or at the next 8 bytes (JDK 17)
        self.check_names(["-XX:-UseCompressedClassPointers"])

    def test_utf16_only(self):
        self.check_names(["-XX:-CompactStrings"])

    def test_oop_shift_4(self):
        self.check_names(["-XX:+UseSerialGC", "-XX:ObjectAlignmentInBytes=16"])

    def zgc(self, generational=False):
        """The flags of ZGC on this JDK: experimental on 11, generational by
        choice on 21 to 23 (by default from 24, the only one from 25)."""
        flags = ["-XX:+UseZGC"]
        if self.jdk < 15:
            flags = ["-XX:+UnlockExperimentalVMOptions"] + flags
        if generational and 21 <= self.jdk < 24:
            flags.append("-XX:+ZGenerational")
        return flags

    def test_zgc(self):
        # JDK 11, 17: colored addresses, all mapped; JDK 24+: generational ZGC's
        # colored pointers, shifted
        self.check_names(self.zgc())

    def test_zgc_moved(self):
        """Every name read after two collections moved the Thread objects: generational
        ZGC (JDK 21+) leaves the roots to them stale (the old address, a colour that
        says so), and the names are read where its forwarding tables say the objects
        went; the older ZGC (11, 17) heals its roots as it moves the objects."""
        # every name is checked in each try; a collection of ZGC's own between the
        # program's last one and the read (a periodic or warm-up cycle) heals the
        # roots first, and then nothing is stale to follow: tried again
        for attempt in range(3):
            forwarded = self.check_names(self.zgc(generational=True), gcs=2)
            print("  objects found moved through ZGC's forwarding tables: %d" % forwarded)
            if forwarded or self.jdk < 21:
                break
        if self.jdk >= 21:
            self.assertGreater(forwarded, 0, "no stale root followed in 3 tries: the test moved nothing")
        else:
            self.assertEqual(forwarded, 0)

    def test_compact_headers_unsupported(self):
        if self.jdk < 24:
            print("\nno compact object headers before JDK 24: nothing to check")
            return
        java, probe, summary, comms, pid = self.run_jvm(["-XX:+UnlockExperimentalVMOptions",
                                                         "-XX:+UseCompactObjectHeaders"])
        print("\ncompact object headers (JDK %d): %s" % (self.jdk, " ".join(summary)))
        self.assertTrue(java)
        self.assertEqual([n for n in probe.values() if n is not None], [])


if __name__ == "__main__":
    jvmtest.main()
