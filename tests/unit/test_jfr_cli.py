# test_jfr_cli.py - `jflame convert -o x.jfr` refereed by the JDK's own `jfr` tool: every
# file it writes is read by `jfr summary` and `jfr print --json`, and the stacks rebuilt from
# the events by docs/toolkit.md's rules, with their counts, equal the folded input.
import collections
import gzip
import os
import unittest

import cli_test
from cli_test import DATA, CliCase, slurp
from jfr_check import JFR, folded_counts, frame_name, jfr_events, jfr_summary, rebuild, span_ns

CONVERT = os.path.join(DATA, "convert")


# --- a pprof profile by hand (protobuf wire format), for the alloc and lock views ----
def _var(v):
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7f | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _field(num, payload):
    return _var(num << 3 | 2) + _var(len(payload)) + payload


def _packed(num, values):
    return _field(num, b"".join(_var(v) for v in values))


def pprof_bytes(types, stacks):
    """A profile of sample types [(type, unit)] and stacks [(frames root first, [values])]."""
    strings, funs, body = [""], {}, bytearray()

    def s(x):
        if x not in strings:
            strings.append(x)
        return strings.index(x)

    for ty, un in types:
        body += _field(1, _var(1 << 3) + _var(s(ty)) + _var(2 << 3) + _var(s(un)))
    for frames, values in stacks:
        ids = [funs.setdefault(f, len(funs) + 1) for f in frames]
        body += _field(2, _packed(1, list(reversed(ids))) + _packed(2, values))
    for name, i in funs.items():
        body += _field(4, _var(1 << 3) + _var(i) + _field(4, _var(1 << 3) + _var(i)))
        body += _field(5, _var(1 << 3) + _var(i) + _var(2 << 3) + _var(s(name)) + _var(3 << 3) + _var(s(name)))
    for x in strings:
        body += _field(6, x.encode())
    return gzip.compress(bytes(body))


class Jfr(CliCase):
    prefix = "jflame-jfr-"

    @classmethod
    def setUpClass(cls):
        # the referee is part of the test: without it the test fails (scripts/deps.sh installs it)
        assert os.access(JFR, os.X_OK), "no JDK jfr tool at %s (Debian: openjdk-17-jdk-headless)" % JFR

    def convert(self, src, name="out.jfr", *extra):
        r = cli_test.run(["convert", src, "-o", self.p(name)] + list(extra))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(slurp(self.p(name))[:4], b"FLR\0")
        return self.p(name)

    def assert_cpu_equal(self, jfr, folded_bytes):
        want = folded_counts(folded_bytes)
        got = collections.Counter(rebuild(e, "sampledThread") for e in jfr_events(jfr, "jdk.ExecutionSample"))
        self.assertEqual(got, want)
        self.assertEqual(jfr_summary(jfr).get("jdk.ExecutionSample"), sum(want.values()))

    def test_folded_inputs_round_trip(self):
        """every folded input of tests/data/convert small enough (a stack of count N is N
        events) gives its stacks and counts back"""
        for f in ("jvm.folded", "sampled.folded"):
            with self.subTest(f):
                src = os.path.join(CONVERT, f)
                self.assert_cpu_equal(self.convert(src, f + ".jfr"), slurp(src))

    def test_read_back_by_jflame(self):
        """jflame reads its own .jfr back to the stacks and counts it was written from
        (roots kept as frames are not added again; no thread root where none was written),
        and the alloc and lock views' bytes and nanoseconds as pprof's second value"""
        for f in ("jvm.folded", "sampled.folded"):
            with self.subTest(f):
                src = os.path.join(CONVERT, f)
                jfr = self.convert(src, f + ".jfr")
                r = cli_test.run(["convert", jfr, "-t", "folded", "-o", "-"])
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(folded_counts(r.stdout), folded_counts(slurp(src)))
        stacks = [(["[7] svc", "main", "a/App.run_[j]", "byte[]_[a]"], [3, 3072]),
                  (["[7] svc", "io", "b/Io.read_[0]", "java/lang/String_[a]"], [1, 24])]
        src = self.p("alloc.pb.gz")
        with open(src, "wb") as f:
            f.write(pprof_bytes([("alloc_samples", "count"), ("alloc_space", "bytes")], stacks))
        jfr = self.convert(src, "alloc.jfr")
        for index, col in (("alloc", 0), (None, 0)):
            args = ["convert", jfr, "-t", "folded", "-o", "-"] + (["--sample-index", index] if index else [])
            r = cli_test.run(args)
            if index is None:  # cpu, the default: the file has none
                self.assertNotEqual(r.returncode, 0)
                continue
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(folded_counts(r.stdout), {";".join(f): v[col] for f, v in stacks})
        r = cli_test.run(["convert", jfr, "--sample-index", "alloc", "-o", self.p("back.pb.gz")])
        self.assertEqual(r.returncode, 0, r.stderr)
        r = cli_test.run(["convert", self.p("back.pb.gz"), "--sample-index", "1", "-t", "folded", "-o", "-"])
        self.assertEqual(folded_counts(r.stdout), {";".join(f): v[1] for f, v in stacks})

    def test_svg_and_diff_read_jfr(self):
        """svg draws a .jfr as its folded stacks; diff takes .jfr files and folders of them"""
        src = os.path.join(CONVERT, "jvm.folded")
        jfr = self.convert(src, "jvm.jfr")
        want = sorted((f["name"], f["count"]) for f in cli_test.svg_frames(cli_test.run(["svg", src]).stdout)[1])
        r = cli_test.run(["svg", jfr])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(sorted((f["name"], f["count"]) for f in cli_test.svg_frames(r.stdout)[1]), want)
        for side in ("a", "b"):
            os.mkdir(self.p(side))
            self.convert(src, os.path.join(side, "w1.jfr"))
        for args in ([jfr, src, "--report"], [self.p("a"), self.p("b"), "--report"]):
            r = cli_test.run(["diff"] + args)
            self.assertEqual(r.returncode, 0, (args, r.stderr))
            self.assertIn(b"81 samples", r.stdout)
            self.assertIn(b"0 significant changes", r.stdout)
            self.assertNotIn(b" significant ", r.stdout.split(b"\n0 significant")[0])

    def test_marks_roots_and_odd_names(self):
        """frame types by mark, roots with and without the thread, bytes that are not UTF-8,
        a long name without ';', names with dots where the split must not lose them"""
        long_name = "x" * 70000
        text = ("[Pod]p;[Con]c;[7] svc;worker-1;java/lang/Thread.run_[j];a/B.c_[i];a/B$1.lambda$0_[0];"
                "JVM_Sleep;Monitor::wait;__x64_sys_nanosleep_[k] 3\n"
                "[7] svc;main;.dotfirst_[j];x._[i];_[j];Interpreter_[0] 2\n"
                "[7] svc 4\n"
                "[8] other;main;pkg/C.m_[j] 1\n"
                "plain;stack;without;roots 5\n"
                "[Pod]only;[Con]no-process;f 1\n"
                + long_name + " 1\n").encode() + b"bad\xff\xfebytes;caf\xc3\xa9;\xe2\x82 6\n"
        src = self.p("odd.folded")
        with open(src, "wb") as f:
            f.write(text)
        jfr = self.convert(src)
        self.assert_cpu_equal(jfr, text)
        ev = jfr_events(jfr, "jdk.ExecutionSample")
        types = {frame_name(fr): fr["type"] for e in ev for fr in e["values"]["stackTrace"]["frames"]}
        self.assertEqual(types["JVM_Sleep"], "Native")
        self.assertEqual(types["Monitor::wait"], "C++")
        self.assertEqual(types["__x64_sys_nanosleep_[k]"], "Kernel")
        self.assertEqual(types["a/B.c_[i]"], "Inlined")
        java = [fr["method"] for e in ev for fr in e["values"]["stackTrace"]["frames"]
                if fr["method"]["name"] == "run"][0]
        self.assertEqual((java["type"]["name"], java["type"]["package"]["name"]), ("java/lang/Thread", "java/lang"))
        threads = {e["values"]["sampledThread"]["javaName"] for e in ev if e["values"]["sampledThread"]}
        self.assertEqual(threads, {"worker-1", "main"})

    def test_perf_script_timeline(self):
        """perf script input: one event per sample at its time, on its thread"""
        src = os.path.join(DATA, "collapse", "sys-pid.perf")
        jfr = self.convert(src)
        folded = cli_test.run(["convert", src, "-o", "-", "-t", "folded"]).stdout
        ev = jfr_events(jfr, "jdk.ExecutionSample")
        self.assertEqual(collections.Counter(rebuild(e, "sampledThread") for e in ev), folded_counts(folded))
        self.assertTrue(all(e["values"]["sampledThread"]["javaName"].count(" tid: ") == 1 for e in ev))
        self.assertGreater(len({e["values"]["startTime"] for e in ev}), 1)

    def test_alloc_and_lock_views(self):
        """an allocation profile (pprof alloc_samples/alloc_space) becomes
        jdk.ObjectAllocationSample, a lock profile jdk.JavaMonitorEnter; the class leaves
        the stack for objectClass / monitorClass; weights split without losing a byte"""
        stacks = [(["[7] svc", "main", "a/App.main", "a/App.make", "byte[]_[a]"], [3, 3000001]),
                  (["[7] svc", "main", "a/App.main", "java/lang/String_[a]"], [1, 24]),
                  (["a/Other.run", "a/Other.alloc"], [2, 64])]
        src = self.p("alloc.pb.gz")
        with open(src, "wb") as f:
            f.write(pprof_bytes([("alloc_samples", "count"), ("alloc_space", "bytes")], stacks))
        jfr = self.convert(src)
        ev = jfr_events(jfr, "jdk.ObjectAllocationSample")
        counts, weights = collections.Counter(), collections.Counter()
        for e in ev:
            k = rebuild(e, "eventThread", "objectClass", "_[a]")
            counts[k] += 1
            weights[k] += e["values"]["weight"]
        self.assertEqual(counts, {";".join(f): v[0] for f, v in stacks})
        self.assertEqual(weights, {";".join(f): v[1] for f, v in stacks})
        self.assertEqual(jfr_summary(jfr).get("jdk.ObjectAllocationSample"), 6)

        stacks = [(["[7] svc", "main", "a/App.lock", "java/lang/Object_[l]"], [4, 1000003]),
                  (["[7] svc", "w", "a/App.other", "a/Lock_[l]"], [1, 77])]
        src = self.p("lock.pb.gz")
        with open(src, "wb") as f:
            f.write(pprof_bytes([("contentions", "count"), ("delay", "nanoseconds")], stacks))
        jfr = self.convert(src, "lock.jfr")
        counts, spans = collections.Counter(), collections.Counter()
        for e in jfr_events(jfr, "jdk.JavaMonitorEnter"):
            k = rebuild(e, "eventThread", "monitorClass", "_[l]")
            counts[k] += 1
            spans[k] += span_ns(e["values"]["duration"])
        self.assertEqual(counts, {";".join(f): v[0] for f, v in stacks})
        self.assertEqual(spans, {";".join(f): v[1] for f, v in stacks})

    def test_offcpu_and_wall_views(self):
        """off-CPU and wall profiles (pprof samples/count with off_cpu or wall nanoseconds)
        become async-profiler's profiler.WallClockSample, SLEEPING or RUNNABLE, the
        nanoseconds split over the samples as timeSpan"""
        stacks = [(["[7] svc", "main", "a/App.sleep_[j]", "do_nanosleep_[k]"], [3, 30000002]),
                  (["[7] svc", "io", "read_[k]"], [1, 5])]
        for weight, state in (("off_cpu", "STATE_SLEEPING"), ("wall", "STATE_RUNNABLE")):
            with self.subTest(weight):
                src = self.p(weight + ".pb.gz")
                with open(src, "wb") as f:
                    f.write(pprof_bytes([("samples", "count"), (weight, "nanoseconds")], stacks))
                jfr = self.convert(src, weight + ".jfr")
                counts, spans = collections.Counter(), collections.Counter()
                ev = jfr_events(jfr, "profiler.WallClockSample")
                for e in ev:
                    k = rebuild(e, "sampledThread")
                    counts[k] += e["values"]["samples"]
                    spans[k] += span_ns(e["values"]["timeSpan"])
                self.assertEqual(counts, {";".join(f): v[0] for f, v in stacks})
                self.assertEqual(spans, {";".join(f): v[1] for f, v in stacks})
                self.assertEqual({e["values"]["state"] for e in ev}, {state})

    def test_type_name_and_errors(self):
        """-t jfr to standard output; too many samples and empty input: one line, no file"""
        src = os.path.join(CONVERT, "sampled.folded")
        r = cli_test.run(["convert", src, "-o", "-", "-t", "jfr"])
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.p("stdout.jfr"), "wb") as f:
            f.write(r.stdout)
        self.assert_cpu_equal(self.p("stdout.jfr"), slurp(src))
        self.one_line_error(cli_test.run(["convert", os.path.join(CONVERT, "evented.folded"), "-o",
                                          self.p("out.jfr")]), "too many")
        self.one_line_error(cli_test.run(["convert", "-", "-o", self.p("out.jfr")], b""), "empty")
        self.assertEqual([f for f in os.listdir(self.tmp) if f.startswith("out")], [])


if __name__ == "__main__":
    unittest.main()
