# test_regression.py - record --window --baseline on a real JVM: the Kafka-style
# producer changes from StringBuilder to String.format() mid-run (--switch-after),
# and each baseline (the first window, a saved profile, the previous N) finds it
# within two windows (confirmed in two windows in a row), names String.format, draws the differential graph and
# runs the --on-regression command with the facts. One recorder also pushes to
# a stand-in Pyroscope (/ingest on 127.0.0.1): its windows arrive as always and
# it says once why the regressions are not pushed.
import http.server
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time
import unittest
import xml.etree.ElementTree as ET

import jvmtest

JFLAME = os.environ.get("JFLAME_BIN", "")
WARMUP = 5      # s before recording: the JIT has compiled the hot path
WINDOW = 4      # s
BEFORE = 4      # whole windows before the switch's window
LINE = re.compile(r"^jflame: regression in window (\d+) \((\d{8}T\d{6}Z)\): (.+) (\d+\.\d)% \u2192 (\d+\.\d)% "
                  r"\(\+(\d+\.\d) pts\)$")
FORMAT = ("java/lang/String.format", "java/util/Formatter.format")


def regressions(err):
    """{window: [(frame, before, after, change)]} from record's regression lines."""
    out = {}
    for line in err.splitlines():
        m = LINE.match(line)
        if m:
            out.setdefault(int(m.group(1)), []).append((m.group(3), float(m.group(4)), float(m.group(5)),
                                                        float(m.group(6))))
    return out


def said(text):
    """Every regression and change line, its window's time or file name left out: what record
    and a replay of its windows both say."""
    out = []
    for line in text.splitlines():
        m = re.match(r"^jflame: (regression|change gone) in window (\d+) \([^)]*\): (.*)$", line)
        if m and not m.group(3).startswith("differential graph"):
            out.append((int(m.group(2)), m.group(1), m.group(3)))
    return sorted(out)


class Ingest(http.server.ThreadingHTTPServer):
    """Counts the POSTs to /ingest (each window's pprof), answering 200."""

    def __init__(self):
        self.posts, self.lock = [], threading.Lock()
        super().__init__(("127.0.0.1", 0), IngestHandler)


class IngestHandler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with self.server.lock:
            self.server.posts.append((self.path, len(body)))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


class RegressionWindowTest(unittest.TestCase):
    def setUp(self):
        jvmtest.check_setup()
        jvmtest.require(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        self.tmp = tempfile.mkdtemp(prefix="jflame-regress-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def out(self, *name):
        return os.path.join(self.tmp, *name)

    def test_switch_to_string_format_is_found_by_each_baseline(self):
        base = self.out("base.folded")
        # the switch falls in the middle of window BEFORE + 1 of the recorders
        # started after the saved profile
        switch = WARMUP + 4 + 1 + BEFORE * WINDOW + WINDOW // 2
        jvm = jvmtest.Jvm(["--seconds", str(switch + 5 * WINDOW + 10), "--switch-after", str(switch)],
                          main="jflame.examples.KafkaStyle", ready="jflame-example: broker on",
                          jvm_flags=["-XX:+UnlockDiagnosticVMOptions", "-XX:+DebugNonSafepoints"])
        self.addCleanup(jvm.kill)
        t0 = time.monotonic()
        time.sleep(WARMUP)
        # a saved profile of the StringBuilder path (what a release's profile would be)
        jvmtest.record(["-p", jvm.pid, "-F", "99", "-d", "4", "-o", base])
        modes = {"first": "first", "file": base, "previous": "previous:3"}
        ingest = Ingest()
        threading.Thread(target=ingest.serve_forever, daemon=True).start()
        self.addCleanup(ingest.server_close)
        self.addCleanup(ingest.shutdown)
        procs = {}
        for name, spec in modes.items():
            os.mkdir(self.out(name))
            hook = "env | grep ^JFLAME_ > %s/hook-$JFLAME_WINDOW.env" % self.out(name)
            args = [JFLAME, "record", "-p", str(jvm.pid), "-F", "99", "--window", str(WINDOW),
                    "-d", str((BEFORE + 4) * WINDOW), "--baseline", spec,
                    "-o", self.out(name, "cpu-%n.folded"), "--diff-out", self.out(name, "diff-%n.svg"),
                    "--on-regression", hook]
            if name == "previous":
                args += ["--push", "http://127.0.0.1:%d" % ingest.server_address[1], "--app", "kafka"]
            procs[name] = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                           stderr=subprocess.PIPE, text=True)
        started = time.monotonic() - t0
        results = {}
        for name, p in procs.items():
            _, err = p.communicate(timeout=(BEFORE + 4) * WINDOW + 60)
            self.assertEqual(p.returncode, 0, err[-3000:])
            results[name] = err
        self.assertIn("switched to format string-format", jvm.stdout())
        # the window the switch fell in (recorders started together, give or take)
        switch_window = int((switch - started) // WINDOW) + 1
        self.assertGreater(switch_window, 2, (switch, started))
        for name, err in results.items():
            regs = regressions(err)
            print("\n%s: switch in window %d; regression lines by window: %s" % (
                name, switch_window, {w: [f[0] for f in v][:3] for w, v in sorted(regs.items())}))
            # String.format grew from nothing in the window of the switch or the next
            found = sorted(w for w, v in regs.items() if any(f[0] in FORMAT for f in v))
            self.assertTrue(found, "%s: String.format never named:\n%s" % (name, err[-3000:]))
            self.assertLessEqual(found[0] - switch_window, 1, (name, found, switch_window))
            self.assertGreaterEqual(found[0], switch_window, (name, found, switch_window))
            first = found[0]
            fmt = [f for f in regs[first] if f[0] in FORMAT][0]
            # before: (almost) none; previous:3 holds the switch's own window by
            # the time the growth is confirmed (two windows in a row, the default)
            self.assertLess(fmt[1], 1.0 if name != "previous" else fmt[2] / 2, fmt)
            self.assertGreater(fmt[3], 10.0, fmt)  # a clear change
            # names are normalized: no frame-type marks, no pid roots in the lines
            for v in regs.values():
                for f in v:
                    self.assertNotRegex(f[0], r"_\[[ji0]\]$|^\[\d+\] ")
            # its differential graph, said in a line, is a valid SVG with String.format in it
            self.assertIn("regression in window %d (" % first, err)
            svg = self.out(name, "diff-%d.svg" % first)
            self.assertIn("differential graph %s" % svg, err)
            titles = [t.text or "" for t in ET.parse(svg).getroot().iter("{http://www.w3.org/2000/svg}title")]
            self.assertTrue(any(t.startswith("java/lang/String.format") for t in titles), titles[:20])
            # the command ran with the facts in its environment
            env_file = self.out(name, "hook-%d.env" % first)
            deadline = time.monotonic() + 10
            while not os.path.exists(env_file) and time.monotonic() < deadline:
                time.sleep(0.1)
            with open(env_file) as f:
                env = dict(l.rstrip("\n").split("=", 1) for l in f if "=" in l)
            self.assertEqual(env["JFLAME_WINDOW"], str(first))
            self.assertEqual(env["JFLAME_DIFF"], svg)
            self.assertIn(self.out(name, "cpu-%d.folded" % first), env["JFLAME_FILES"].split())
            self.assertGreaterEqual(int(env["JFLAME_REGRESSIONS"]), 1)
            self.assertTrue(env["JFLAME_FRAME"])
            self.assertRegex(env["JFLAME_CHANGE"], r"^\+\d+\.\d$")
            # no window before the switch's blamed String.format
            self.assertFalse([w for w in found if w < switch_window], found)
        # the same windows replayed (jflame diff --baseline SPEC DIR) say the same: every line of
        # the window judge and of the lasting-change tracker, window by window
        for name, err in results.items():
            r = subprocess.run([JFLAME, "diff", "--baseline", modes[name], self.out(name)], capture_output=True,
                               text=True, timeout=120)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(said(r.stdout), said(err), "%s: replay\n%s\nrecord\n%s" % (name, r.stdout, err[-3000:]))
        # --push with --baseline: every window pushed, and one line says why the
        # regressions are not (Pyroscope takes no annotations)
        err = results["previous"]
        pushed = re.search(r"jflame: pushed (\d+) of (\d+) profiles to Pyroscope \((\d+) failed", err)
        self.assertTrue(pushed, err[-2000:])
        self.assertEqual(pushed.group(1), pushed.group(2), pushed.group(0))
        self.assertGreaterEqual(int(pushed.group(1)), BEFORE + 3, pushed.group(0))
        self.assertEqual(len(ingest.posts), int(pushed.group(1)), ingest.posts)
        self.assertTrue(all(p.startswith("/ingest?") and n > 0 for p, n in ingest.posts), ingest.posts)
        self.assertEqual(err.count("jflame: regressions are not pushed: Pyroscope's API takes profiles and "
                                   "labels only, no annotations"), 1, err[-2000:])
        for name in ("first", "file"):
            self.assertNotIn("regressions are not pushed", results[name])
        # the report on the same windows agrees (and exits 3 with --fail-above)
        before, after = self.out("first", "cpu-2.folded"), self.out("first", "cpu-%d.folded" % (switch_window + 2))
        r = subprocess.run([JFLAME, "diff", "--report", "--fail-above", "5", before, after], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(r.returncode, 3, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r"(?m)^ *\+\d+\.\d pts .* significant +java/lang/String\.format$")


if __name__ == "__main__":
    jvmtest.main()
