# test_jfr_fixtures.py - the JFR fixtures in tests/data/jfr/ (recordings by async-profiler and
# by JDK Flight Recorder) against two referees: the JDK's `jfr` tool here, and the stored view of
# async-profiler's converter (which CI cannot build: tests/data/jfr/make_fixtures.sh made it).
import collections
import glob
import os
import re
import subprocess
import unittest

import jfr_view
from jfr_check import span_ns

DATA = os.environ.get("JFLAME_TEST_DATA", os.path.join(os.path.dirname(__file__), "..", "data"))
DIR = os.path.join(DATA, "jfr")
JFR = os.environ.get("JFLAME_JFR", "/usr/lib/jvm/java-17-openjdk-amd64/bin/jfr")
JFLAME = os.environ.get("JFLAME_BIN", "jflame")

# what each view's stacks must show (README.md says it): a leaf frame pattern for every stack
# of the views that add one, and the frame marks that must occur in the view
LEAF = {
    "alloc": re.compile(r";(byte|int|char|long|java\.[\w.$]+|jdk\.[\w.$]+|jflame\.[\w.$]+)(\[\])*_\[[ik]\]$"),
    "lock": re.compile(r";[\w.$]+_\[i\]$"),
}


def summary(path):
    """`jfr summary PATH`: {event type: count}"""
    out = subprocess.run([JFR, "summary", path], check=True, capture_output=True, text=True).stdout
    assert re.search(r"^ Chunks: [1-9]", out, re.M), out
    return {m[0]: int(m[1]) for m in re.findall(r"^ ([\w.]+) +(\d+) +\d+ *$", out, re.M)}


def views():
    """[(recording, view, collapsed file)] of the stored converter views"""
    out = []
    for path in sorted(glob.glob(os.path.join(DIR, "*.collapsed"))):
        name, view, _ = os.path.basename(path).rsplit(".", 2)
        out.append((os.path.join(DIR, name + ".jfr"), view, path))
    return out


class Fixtures(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.recordings = sorted(glob.glob(os.path.join(DIR, "*.jfr")))
        cls.summaries = {p: summary(p) for p in cls.recordings}
        cls.events = {}  # recording -> every event the views read, as jfr print --json gives them
        for p in cls.recordings:
            types = sorted({t for r, v, _ in views() if r == p for t in jfr_view.VIEW_EVENTS[v]})
            cls.events[p] = jfr_view.jfr_json(JFR, p, types)

    def test_set(self):
        """both producers, both JDKs, every view; each recording has a view; small enough for git"""
        names = [os.path.basename(p) for p in self.recordings]
        self.assertGreaterEqual(len(names), 8, names)
        for prefix in ("ap-cpu-jdk17", "ap-cpu-jdk25", "ap-alloc-", "ap-lock-", "ap-wall-", "jdk-"):
            self.assertTrue(any(n.startswith(prefix) for n in names), prefix)
        self.assertEqual({r for r, _, _ in views()}, set(self.recordings))
        self.assertEqual({v for _, v, _ in views()}, {"cpu", "alloc", "lock", "wall"})
        total = sum(os.path.getsize(p) for p in glob.glob(os.path.join(DIR, "*")))
        self.assertLess(total, 700_000)
        with open(os.path.join(DIR, "README.md"), encoding="utf-8") as f:
            readme = f.read()
        for p in self.recordings:
            self.assertIn(os.path.basename(p), readme)

    def test_producers(self):
        """async-profiler's recordings declare its profiler.* types; the JDK's do not"""
        for p in self.recordings:
            ap = os.path.basename(p).startswith("ap-")
            self.assertEqual(jfr_view.is_async_profiler(JFR, p), ap, p)
            self.assertEqual(any(t.startswith("profiler.") for t in self.summaries[p]), ap, p)

    def test_json_reads_every_event(self):
        """jfr print --json gives as many events of each type as jfr summary counts"""
        for p, events in self.events.items():
            for t in {e["type"] for e in events} | {t for r, v, _ in views() if r == p
                                                     for t in jfr_view.VIEW_EVENTS[v]}:
                with self.subTest(recording=os.path.basename(p), type=t):
                    self.assertEqual(sum(e["type"] == t for e in events), self.summaries[p].get(t, 0))

    def test_converter_view_equals_jdk_view(self):
        """the JDK's stacks and counts, folded by async-profiler's rules, equal the stored
        converter output line for line (thread frames without the tid= the JDK does not print)"""
        for p, view, path in views():
            with self.subTest(view=os.path.basename(path)):
                conv = jfr_view.norm_threads(jfr_view.read_folded(path))
                jdk = jfr_view.fold(self.events[p], jfr_view.is_async_profiler(JFR, p), view)
                self.assertTrue(conv)
                self.assertEqual(sorted((jdk - conv).items()), [])
                self.assertEqual(sorted((conv - jdk).items()), [])

    def test_jflame_mapping(self):
        """the mapping bench/jfr_referee.sh uses: the same events as jflame's folded stacks
        hold them (roots, per-sample marks, CLASS_[a]/_[l] leaves with slashes) fold back
        into the converter's stored view"""
        for p, view, path in views():
            with self.subTest(view=os.path.basename(path)):
                ap = jfr_view.is_async_profiler(JFR, p)
                mine = jfr_view.as_jflame(self.events[p], ap, view)
                self.assertTrue(all(s.startswith("[4242] java;") for s in mine))
                if view in ("alloc", "lock"):
                    self.assertTrue(all(re.search(r"/?[\w$]+(\[\])*_\[%s\]$" % view[0], s) for s in mine))
                conv = jfr_view.norm_threads(jfr_view.read_folded(path))
                back = jfr_view.jflame_as_converter(mine)
                if view == "alloc":
                    conv, back = jfr_view.norm_leaves(conv), jfr_view.norm_leaves(back)
                self.assertEqual(sorted((back - conv).items()), [])
                self.assertEqual(sorted((conv - back).items()), [])

    def test_jflame_reads_fixtures(self):
        """jflame convert --sample-index VIEW of every fixture, through the same mapping, is
        the converter's stored view: the same threads, frames, marks and counts. Two naming
        choices differ on purpose and are mapped: jflame marks C1 code _[j] (it has no _[1]),
        and writes a hidden class's name with slashes (the JDK stores it dotted)."""
        def lambdas(folded):
            out = collections.Counter()
            for stack, n in folded.items():
                out[";".join(f.replace(".", "/") if "$$Lambda" in f else f for f in stack.split(";"))] += n
            return out

        for p, view, path in views():
            with self.subTest(view=os.path.basename(path)):
                r = subprocess.run([JFLAME, "convert", "--sample-index", view, p, "-t", "folded", "-o", "-"],
                                   capture_output=True)
                self.assertEqual(r.returncode, 0, r.stderr)
                mine = collections.Counter()
                for line in r.stdout.decode("utf-8", "replace").splitlines():
                    stack, n = line.rsplit(" ", 1)
                    mine[stack] += int(n)
                conv = jfr_view.norm_threads(jfr_view.read_folded(path))
                conv = collections.Counter({k.replace("_[1]", "_[j]"): n for k, n in conv.items()})
                back = jfr_view.jflame_as_converter(mine)
                if view == "alloc":
                    conv, back = jfr_view.norm_leaves(conv), jfr_view.norm_leaves(back)
                conv, back = lambdas(conv), lambdas(back)
                self.assertEqual(sorted((back - conv).items()), [])
                self.assertEqual(sorted((conv - back).items()), [])

    def test_jflame_lock_nanoseconds(self):
        """the lock views' weights: the nanoseconds waited, as the JDK's jfr tool reads each
        event's duration (jflame's pprof output, its second sample type)"""
        for p, view, path in views():
            if view != "lock":
                continue
            with self.subTest(view=os.path.basename(path)):
                pb = subprocess.run([JFLAME, "convert", "--sample-index", "lock", p, "-t", "pprof", "-o", "-"],
                                    capture_output=True, check=True).stdout
                r = subprocess.run([JFLAME, "convert", "--sample-index", "1", "-", "-t", "folded", "-o", "-"],
                                   input=pb, capture_output=True, check=True)
                got = sum(int(line.rsplit(b" ", 1)[1]) for line in r.stdout.splitlines())
                want = sum(span_ns(e["values"]["duration"]) for e in self.events[p]
                           if e["type"] in jfr_view.VIEW_EVENTS["lock"] and e["values"].get("stackTrace"))
                self.assertGreater(want, 0)
                self.assertEqual(got, want)

    def test_totals_from_summary(self):
        """a view's total is the summary's count of its events (less those without a stack);
        a wall view's total is the sum of its events' samples"""
        for p, view, path in views():
            with self.subTest(view=os.path.basename(path)):
                total = sum(jfr_view.read_folded(path).values())
                ap = os.path.basename(p).startswith("ap-")
                types = ["profiler.WallClockSample"] if view == "wall" and ap else \
                    ["jdk.ExecutionSample"] if view == "cpu" else jfr_view.VIEW_EVENTS[view]
                events = [e for e in self.events[p] if e["type"] in types]
                stackless = sum(1 for e in events if e["values"].get("stackTrace") is None)
                if view == "wall":
                    self.assertEqual(total, sum(int(e["values"]["samples"]) for e in events))
                    self.assertGreater(total, sum(self.summaries[p].get(t, 0) for t in types))
                else:
                    self.assertEqual(total + stackless, sum(self.summaries[p].get(t, 0) for t in types))
                self.assertGreater(total, 0)

    def test_conventions(self):
        """what README.md says the converter prints: a [thread tid=N] root, no process root,
        Java frames pkg/Class.method, the allocated or lock class as the leaf, kernel frames
        _[k] in async-profiler's CPU views and never in the JDK's, C1 frames _[1]"""
        marks = {}
        for p, view, path in views():
            lines = jfr_view.read_folded(path)
            ap = os.path.basename(p).startswith("ap-")
            for stack in lines:
                frames = stack.split(";")
                self.assertRegex(frames[0], r"^\[(.+ )?tid=\d+\]$", path)
                for f in frames[1:]:
                    m = re.search(r"_\[([0ji1k])\]$", f)
                    marks.setdefault((ap, view), set()).add(m[1] if m else "")
                if view in LEAF and frames[-1] != "no_Java_frame":
                    self.assertRegex(stack, LEAF[view], path)
        self.assertIn("k", marks[(True, "cpu")])
        self.assertIn("1", marks[(True, "cpu")])
        self.assertNotIn("k", marks[(False, "cpu")])
        self.assertNotIn("1", marks[(False, "cpu")])
        # C/C++ frames carry no mark in async-profiler's views, the JDK records none
        self.assertIn("", marks[(True, "cpu")])
        self.assertNotIn("", marks[(False, "cpu")])
        # the waiter blocked on Ledger's monitor, and on the ReentrantLock in the juc run
        lock = jfr_view.read_folded(os.path.join(DIR, "ap-lock-jdk17.lock.collapsed"))
        waiter = sum(n for s, n in lock.items() if s.startswith("[ledger-waiter ")
                     and s.endswith(";jflame/examples/Ledger.post_[j];jflame.examples.Ledger_[i]"))
        self.assertGreater(waiter, 0.9 * sum(lock.values()))
        juc = jfr_view.read_folded(os.path.join(DIR, "ap-lockjuc-jdk17.lock.collapsed"))
        self.assertTrue(any("ReentrantLock.lock_[" in s and s.startswith("[ledger-waiter ") for s in juc))


class JflameReferee(unittest.TestCase):
    """async-profiler's converter as the referee of the .jfr jflame writes, in CI (which cannot
    build the converter): tests/data/jfr/jflame/make_referee.sh stored what the converter made
    of jflame's .jfr of tests/data/convert/NAME.folded; jflame must still write those bytes,
    and the converter's stacks must be NAME.folded's (roots and thread kept as frames)."""

    def test_converter_reads_jflame_jfr(self):
        import tempfile
        ref = os.path.join(DIR, "jflame")
        for name in ("jvm", "sampled"):
            with self.subTest(name):
                src = os.path.join(DATA, "convert", name + ".folded")
                with tempfile.TemporaryDirectory(prefix="jflame-jfr-ref-") as tmp:
                    out = os.path.join(tmp, name + ".jfr")
                    env = dict(os.environ, SOURCE_DATE_EPOCH="1790000000")
                    subprocess.run([JFLAME, "convert", src, "-o", out], check=True, env=env)
                    with open(out, "rb") as a, open(os.path.join(ref, name + ".jfr"), "rb") as b:
                        self.assertEqual(a.read(), b.read(), "jflame writes another %s.jfr than the converter "
                                         "read: run tests/data/jfr/jflame/make_referee.sh" % name)
                conv = jfr_view.norm_threads(jfr_view.read_folded(os.path.join(ref, name + ".converter.collapsed")))
                mine = jfr_view.jflame_as_converter(jfr_view.read_folded(src), roots_kept=True)
                self.assertTrue(conv)
                self.assertEqual(sorted((mine - conv).items()), [])
                self.assertEqual(sorted((conv - mine).items()), [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
