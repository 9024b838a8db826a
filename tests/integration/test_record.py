# test_record.py - `jflame record` end to end: real JVMs with the agent, real eBPF
# sampling; asserts on the frames, the stitching and the counts of what comes out.
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET

import jvmtest
from jvmtest import Jvm, read_folded

JFLAME = os.environ.get("JFLAME_BIN", "")
CPUHOG = os.environ.get("JFLAME_CPUHOG", "")
HOT_THREAD = "jflame-hot-worker-thread-with-a-long-name"
SUMMARY = re.compile(r"jflame: (\d+) samples \((\d+) lost, (\d+) truncated, (\d+) unwind failed, (\d+) failed stack "
                     r"reads\) in ([\d.]+) s; wrote")


def is_java(frame):
    """A Java frame as jflame marks them: compiled _[j], inlined _[i], interpreted _[0]; or the bare
    Interpreter frame of a JVM whose interpreted frames it cannot name."""
    return frame.endswith(("_[j]", "_[i]", "_[0]")) or frame == "Interpreter"


def summary(stderr):
    m = SUMMARY.search(stderr)
    if not m:
        raise AssertionError("no summary line in jflame's output:\n" + stderr)
    samples, lost, truncated, unwind_failed, failed = (int(m.group(i)) for i in range(1, 6))
    return dict(samples=samples, lost=lost, truncated=truncated, unwind_failed=unwind_failed, failed=failed,
                seconds=float(m.group(6)))


class RecordCase(unittest.TestCase):
    def setUp(self):
        jvmtest.check_setup()
        jvmtest.require(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        self.tmp = tempfile.mkdtemp(prefix="jflame-record-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def out(self, name):
        return os.path.join(self.tmp, name)

    def record(self, *args, timeout=120):
        return jvmtest.record(args, timeout=timeout)

    def jvm(self, mode, millis, agent_opts="", flags=("-XX:+PreserveFramePointer",)):
        jvm = Jvm([mode, str(millis)], agent_opts=agent_opts, jvm_flags=list(flags))
        self.addCleanup(jvm.cleanup)
        return jvm

    def hot_jvm(self):
        """A JVM in the hot loop with the agent and -XX:+PreserveFramePointer,
        one for the file: the cases that only record it share it."""
        return jvmtest.shared_jvm("hot", ["hot", "600000"], agent_opts="", jvm_flags=["-XX:+PreserveFramePointer"])

    def thread_stacks(self, stacks, pid, thread):
        root = "[%d] java" % pid
        return [(frames, n) for frames, n in stacks if frames[0] == root and len(frames) > 1 and frames[1] == thread]


class JavaRecordTest(RecordCase):
    def test_hot_method_dominates_its_thread(self):
        jvm = self.hot_jvm()
        folded, svg, stacks_out = self.out("hot.folded"), self.out("hot.svg"), self.out("hot.stacks")
        r = self.record("-p", str(jvm.pid), "-d", "3", "-o", folded, "-o", svg, "-o", stacks_out)
        s = summary(r.stderr)
        stacks = read_folded(folded)
        total = sum(n for _, n in stacks)
        # counts add up to samples taken minus samples lost
        self.assertEqual(total, s["samples"] - s["lost"], r.stderr)
        self.assertGreater(total, 100)
        hot = self.thread_stacks(stacks, jvm.pid, HOT_THREAD)
        hot_total = sum(n for _, n in hot)
        self.assertGreater(hot_total, total * 0.5, "the hot thread (full Java name) should dominate")
        named = sum(n for frames, n in hot if any(is_java(f) for f in frames))
        self.assertGreaterEqual(named / hot_total, 0.9, "samples of the hot thread with a named Java frame")
        spin = sum(n for frames, n in hot if "jflame/examples/Workload.spin_[j]" in frames)
        self.assertGreaterEqual(spin / hot_total, 0.8, "Workload.spin should be on most hot samples")
        # the process frame, then the thread frame, then the Java frames
        frames = max(hot, key=lambda x: x[1])[0]
        self.assertEqual(frames[0], "[%d] java" % jvm.pid)
        self.assertEqual(frames[1], HOT_THREAD)
        with open(svg) as f:
            self.assertIn("frame pointers: on", f.read())

        # the SVG parses as XML and holds the frames
        root = ET.parse(svg).getroot()
        titles = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}title")]
        # flamegraph.pl shows frames without their _[j] annotation; the colour tells the kind
        self.assertTrue(any(t.startswith("jflame/examples/Workload.spin (") for t in titles), titles[:20])
        self.assertTrue(any(t.startswith(HOT_THREAD) for t in titles))

        # the .stacks output is perf script text with one block per sample
        with open(stacks_out) as f:
            text = f.read()
        blocks = [b for b in text.split("\n\n") if b.strip()]
        self.assertEqual(len(blocks), total)
        head = blocks[0].splitlines()[0]
        self.assertRegex(head, r"^.+ \d+/\d+ \[\d{3}\] \d+\.\d{6}: \d+ (cpu-clock|cycles):$")
        # in time order, whichever CPU's buffer or queue a sample came through
        times = jvmtest.stacks_times(stacks_out)
        self.assertEqual(len(times), total)
        self.assertEqual(times, sorted(times), "the .stacks samples are not in time order")
        self.assertIn("Ljflame/examples/Workload;::spin (/tmp/perf-%d.map)" % jvm.pid, text)

    def test_pprof_speedscope_and_heatmap_outputs(self):
        jvm = self.hot_jvm()
        out = {ext: self.out("hot" + ext) for ext in (".folded", ".pb.gz", ".json", ".html")}
        args = ["-p", str(jvm.pid), "-d", "2"]
        for path in out.values():
            args += ["-o", path]
        r = self.record(*args)
        stacks = sorted(read_folded(out[".folded"]))
        total = sum(n for _, n in stacks)
        self.assertGreater(total, 50)
        # pprof and speedscope read back (with jflame convert) to the same stacks
        back = self.out("pprof.folded")
        subprocess.run([JFLAME, "convert", out[".pb.gz"], "-o", back], check=True, capture_output=True)
        self.assertEqual(sorted(read_folded(back)), stacks)
        back = self.out("speedscope.folded")
        subprocess.run([JFLAME, "convert", out[".json"], "-o", back], check=True, capture_output=True)
        period = 1000000000 // 99  # speedscope weights are cpu nanoseconds: samples x 1e9/rate
        self.assertEqual(sorted((f, n // period) for f, n in read_folded(back)), stacks)
        with open(out[".json"]) as f:
            doc = json.load(f)
        self.assertEqual(doc["profiles"][0]["unit"], "nanoseconds")
        # the heat map embeds every sample (no idle task in a -p recording)
        with open(out[".html"]) as f:
            page = f.read()
        self.assertTrue('"total":%d,' % total in page, "the heat map's total is not %d" % total)
        self.assertFalse("<script src" in page, "the heat map loads a script")
        # names without their _[j] annotation (the colour tells the kind), as in the SVG
        self.assertTrue('"jflame/examples/Workload.spin"' in page, "no Workload.spin in the heat map")

    def test_syscalls_stitched_under_java_frames(self):
        jvm = self.jvm("io", 15000)
        folded = self.out("io.folded")
        self.record("-p", str(jvm.pid), "-d", "3", "-o", folded)
        stacks = self.thread_stacks(read_folded(folded), jvm.pid, "jflame-io-writer")
        stitched = writes = in_kernel = 0
        for frames, n in stacks:
            java = [i for i, f in enumerate(frames) if is_java(f)]
            kernel = [i for i, f in enumerate(frames) if f.endswith("_[k]")]
            in_kernel += n if kernel else 0
            if java and kernel and max(java) < min(kernel):
                stitched += n
                # the kernel part is the write system call
                if any(f in ("ksys_write_[k]", "vfs_write_[k]", "do_syscall_64_[k]") for f in frames[min(kernel):]):
                    writes += n
        total = sum(n for _, n in stacks)
        # how much of the thread is the syscall depends on the host's write path (a third here
        # on 6.18, the rest JNI and libc: FileOutputStream.writeBytes' own work); what must hold
        # is that the samples in the kernel sit on the thread's Java frames
        self.assertGreater(stitched, max(20, 0.15 * total), "few stacks with kernel frames on top of Java frames")
        self.assertGreaterEqual(stitched, 0.9 * in_kernel, "kernel samples not under Java frames: %d of %d"
                                % (in_kernel - stitched, in_kernel))
        self.assertGreater(writes, 0.7 * stitched, "the kernel frames on top of Java should be the write syscall")
        self.assertTrue(any("jflame/examples/Workload.writeRecord" in f or "java/io/FileOutputStream" in f
                            for frames, _ in stacks for f in frames))

    def test_gc_threads_show_demangled_gc_frames(self):
        jvm = self.jvm("alloc", 15000, flags=("-XX:+PreserveFramePointer", "-XX:+UseG1GC", "-Xmx256m"))
        folded = self.out("gc.folded")
        self.record("-p", str(jvm.pid), "-d", "4", "-o", folded)
        stacks = read_folded(folded)
        gc = [(frames, n) for frames, n in stacks
              if len(frames) > 1 and (frames[1].startswith("GC Thread") or frames[1].startswith("G1 "))]
        self.assertTrue(gc, "no samples in GC threads")
        frames = [f for fr, _ in gc for f in fr]
        self.assertTrue(any(re.match(r"^G1\w*::\w+", f) for f in frames), sorted(set(frames))[:40])
        # demangled without parameter lists, no raw _Z names
        self.assertFalse(any(f.startswith("_Z") for f in frames))

    def test_inlined_methods_are_i_frames(self):
        jvm = self.jvm("hot", 15000, agent_opts="unfold")
        folded = self.out("inl.folded")
        self.record("-p", str(jvm.pid), "-d", "3", "-o", folded)
        stacks = self.thread_stacks(read_folded(folded), jvm.pid, HOT_THREAD)
        inl = [frames for frames, _ in stacks if any(f.endswith("_[i]") for f in frames)]
        self.assertTrue(inl)
        # an inlined frame sits right above its compiled caller
        frames = inl[0]
        i = next(k for k, f in enumerate(frames) if f.endswith("_[i]"))
        self.assertTrue(frames[i - 1].endswith("_[j]") or frames[i - 1].endswith("_[i]"), frames)
        names = {f for fr in inl for f in fr if f.endswith("_[i]")}
        self.assertTrue(names & {"jflame/examples/Workload.mix_[i]", "jflame/examples/HotMath.scramble_[i]"}, names)


class NativeRecordTest(RecordCase):
    def test_c_program_symbolized_with_all(self):
        jvmtest.require(os.access(CPUHOG, os.X_OK), "cpuhog not built")
        hog = subprocess.Popen([CPUHOG, "8"])
        self.addCleanup(hog.wait)
        self.addCleanup(hog.kill)
        other = subprocess.Popen(["bash", "-c", "while :; do :; done"])  # another busy process
        self.addCleanup(other.wait)
        self.addCleanup(other.kill)
        time.sleep(0.5)
        folded = self.out("host.folded")
        self.record("-a", "-d", "3", "-o", folded)
        stacks = read_folded(folded)
        mine = [(frames, n) for frames, n in stacks if frames[0] == "[%d] jflame_cpuhog" % hog.pid]
        total = sum(n for _, n in mine)
        self.assertGreater(total, 50)
        chain = sum(n for frames, n in mine if "main" in frames and "hog_outer" in frames and "hog_inner" in frames)
        self.assertGreaterEqual(chain / total, 0.9, mine[:5])
        frames = max(mine, key=lambda x: x[1])[0]
        self.assertLess(frames.index("main"), frames.index("hog_outer"))
        self.assertLess(frames.index("hog_outer"), frames.index("hog_inner"))
        # other processes are there too: it was a whole-host recording
        self.assertTrue(any(f[0] == "[%d] bash" % other.pid for f, _ in stacks))


    def test_exec_during_recording(self):
        jvmtest.require(os.access(CPUHOG, os.X_OK), "cpuhog not built")
        # a shell that becomes the native program halfway through the recording
        sh = subprocess.Popen(["bash", "-c", "sleep 1.5; exec \"$0\" 4", CPUHOG])
        self.addCleanup(sh.wait)
        self.addCleanup(sh.kill)
        time.sleep(0.3)
        folded = self.out("exec.folded")
        self.record("-p", str(sh.pid), "-d", "4", "-o", folded)
        stacks = read_folded(folded)
        mine = [(frames, n) for frames, n in stacks if frames[0] == "[%d] jflame_cpuhog" % sh.pid]
        total = sum(n for _, n in mine)
        self.assertGreater(total, 30, stacks[:5])
        named = sum(n for frames, n in mine if "hog_inner" in frames)
        self.assertGreaterEqual(named / total, 0.9, mine[:5])


class EndingTest(RecordCase):
    def test_sigint_still_writes_outputs(self):
        jvm = self.hot_jvm()
        folded, svg = self.out("int.folded"), self.out("int.svg")
        p = subprocess.Popen([JFLAME, "record", "-p", str(jvm.pid), "-o", folded, "-o", svg],
                             stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
        time.sleep(2.5)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, err)
        s = summary(err)
        self.assertEqual(sum(n for _, n in read_folded(folded)), s["samples"] - s["lost"])
        ET.parse(svg)
        self.assertEqual([f for f in os.listdir(self.tmp) if ".svg." in f or ".folded." in f], [])

    def test_sigterm_still_writes_outputs(self):
        jvm = self.hot_jvm()
        folded = self.out("term.folded")
        p = subprocess.Popen([JFLAME, "record", "-p", str(jvm.pid), "-o", folded],
                             stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
        time.sleep(2)
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, err)
        self.assertGreater(len(read_folded(folded)), 0)

    def test_sigint_writes_the_svg_to_standard_output(self):
        # -o -: the flame graph on standard output once the recording ends, no file named '-'
        jvm = self.hot_jvm()
        p = subprocess.Popen([JFLAME, "record", "-p", str(jvm.pid), "-o", "-"], cwd=self.tmp,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
        time.sleep(2)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        self.assertEqual(p.returncode, 0, err)
        root = ET.fromstring(out)
        self.assertTrue(root.tag.endswith("svg"))
        self.assertIn(b"wrote standard output", err)
        self.assertEqual(os.listdir(self.tmp), [])

    def test_target_exit_ends_recording(self):
        jvm = self.jvm("hot", 4000)
        folded = self.out("exit.folded")
        start = time.monotonic()
        r = self.record("-p", str(jvm.pid), "-o", folded, timeout=60)
        self.assertLess(time.monotonic() - start, 30)
        s = summary(r.stderr)
        self.assertEqual(sum(n for _, n in read_folded(folded)), s["samples"] - s["lost"])
        self.assertGreater(s["samples"], 50)


class BadInputTest(RecordCase):
    def fails(self, args, expect):
        r = subprocess.run([JFLAME] + args, capture_output=True, text=True, timeout=60)
        self.assertNotEqual(r.returncode, 0)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertIn(expect, lines[0])
        self.assertTrue(lines[0].startswith("jflame: "), lines[0])
        return r

    def test_bad_input(self):
        self.fails(["record", "-p", "999999999"], "-p takes process ids")
        self.fails(["record", "-p", "4194000"], "no process with pid 4194000")
        self.fails(["record"], "say what to record")
        self.fails(["record", "-a", "-p", "1"], "not both")
        self.fails(["record", "-a", "-F", "0"], "-F takes samples per second")
        self.fails(["record", "-a", "-d", "soon"], "-d takes a duration")
        self.fails(["record", "-a", "-o", self.out("x.png")], "cannot tell the format")
        self.fails(["record", "-a", "--frobnicate"], "unknown option")
        self.fails(["record", "-a", "-d"], "needs a value")
        self.fails(["recrod"], "unknown command 'recrod'")
        self.assertEqual(os.listdir(self.tmp), [])

    def test_help(self):
        r = subprocess.run([JFLAME, "record", "--help"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0)
        self.assertIn("Examples:", r.stdout)
        r = subprocess.run([JFLAME, "--help"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0)
        self.assertIn("record", r.stdout)


if __name__ == "__main__":
    jvmtest.main()
