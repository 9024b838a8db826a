#!/usr/bin/env python3
"""regress_live.py [--jflame BIN] [--rate HZ] [--effects PERMILLE,...] [--kinds new,crc]: the
live path of the power table (bench/regress_power.py is the offline one). A real KafkaStyle JVM
grows a lasting regression in the middle of a recording: from window BEFORE + 1 on, each producer
thread spends N per mille more of its CPU time

  new  in a new method (KafkaStyle$Producer.validateBatch, under Producer.run), or
  crc  in work it already does (the batch's CRC32C again: the updateBytesCRC32C stub's self
       time and buildBatch's total grow).

Three `jflame record -p PID --window 5s` run at once on it, one a baseline: first, previous:5
and a saved profile of the JVM before (FILE, SAVE seconds). Each row gives the points the
frame grew by (its share in the windows after the change less before, measured on the first
recorder's windows), the samples a window, the windows from the change's window to the first
line naming the frame (1: that window; 2 is the soonest --confirm 2 allows; "-": none), the
windows before the change with a regression line (false alarms), and whether a replay of each
recorder's windows (jflame diff --baseline SPEC DIR) says the same lines as it did live.
The JVM runs with -XX:+DebugNonSafepoints: without it HotSpot's debug information places
samples in an inlined loop at the loop's safepoint, and validateBatch's samples land on its
caller. About 3 minutes a row.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

import benchlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WINDOW = 5
SPECS = ("first", "previous:5", "FILE")
FRAMES = {"new": re.compile(r"KafkaStyle\$Producer\.validateBatch"), "crc": re.compile(r"CRC32C")}
LINE = re.compile(r"^jflame: regression in window (\d+) \([^)]*\): (.*) \S+% → \S+% \(\+[\d.]+ pts( since window \d+)?\)$")
SAID = re.compile(r"^jflame: (regression|change gone) in window (\d+) \([^)]*\): (.*)$")


def lines(text):
    """Every regression and change line, its window's time or file name left out."""
    out = []
    for line in text.splitlines():
        m = SAID.match(line)
        if m:
            out.append("%s %s: %s" % (m.group(1), m.group(2), m.group(3)))
    return out


def share(path, frame):
    """(samples, samples with a frame matching frame) of one folded file."""
    n = x = 0
    with open(path) as fh:
        for line in fh:
            s, c = line.rstrip("\n").rsplit(" ", 1)
            n += int(c)
            if frame.search(s):
                x += int(c)
    return n, x


def run(a, kind, permille, tmp):
    """One JVM, three recorders: the row's cells."""
    d = os.path.join(tmp, "%s-%d" % (kind, permille))
    os.makedirs(d)
    warm = 15
    recs = a.before + a.after
    grow_at = warm + a.save + 1 + a.before * WINDOW + WINDOW / 2.0
    t0 = time.monotonic()
    jvm, log = benchlib.example_start(
        "regress_live", a.java, None, a.jar, "jflame.examples.KafkaStyle",
        ["--seconds", str(int(grow_at + a.after * WINDOW + 30)), "--grow-after", str(int(grow_at)),
         "--grow-permille", str(permille), "--grow-in", kind],
        jvm_flags=("-XX:+PreserveFramePointer", "-XX:+UnlockDiagnosticVMOptions", "-XX:+DebugNonSafepoints"))
    try:
        time.sleep(max(0.0, t0 + warm - time.monotonic()))
        saved = os.path.join(d, "saved.folded")
        r = subprocess.run([a.jflame, "record", "-p", str(jvm.pid), "-F", str(a.rate), "-d", str(a.save),
                            "-o", saved], capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if r.returncode != 0:
            sys.exit("regress_live: saving the profile failed: " + r.stderr.strip())
        procs = {}
        for spec in SPECS:
            out = os.path.join(d, spec.replace(":", "-"))
            os.mkdir(out)
            procs[spec] = (out, subprocess.Popen(
                [a.jflame, "record", "-p", str(jvm.pid), "-F", str(a.rate), "--window", str(WINDOW),
                 "-d", str(recs * WINDOW), "--baseline", saved if spec == "FILE" else spec,
                 "-o", os.path.join(out, "cpu-%n.folded")],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        started = time.monotonic() - t0
        said = {}
        for spec, (out, p) in procs.items():
            _, err = p.communicate(timeout=recs * WINDOW + 120)
            if p.returncode != 0:
                sys.exit("regress_live: jflame record --baseline %s failed: %s" % (spec, err[-2000:]))
            said[spec] = err
        if "grew by %d per mille" % permille not in open(log.name).read():
            sys.exit("regress_live: the JVM did not grow:\n" + open(log.name).read()[-2000:])
    finally:
        jvm.kill()
        jvm.wait()
        benchlib.cleanup(jvm.pid)
    change = int((grow_at - started) // WINDOW) + 1
    frame = FRAMES[kind]
    cells = []
    fa = 0
    alarms = []
    same = True
    for spec, (out, _) in procs.items():
        named = sorted({int(m.group(1)) for m in map(LINE.match, said[spec].splitlines())
                        if m and frame.search(m.group(2))})
        hits = [w for w in named if w >= change]
        cells.append(str(hits[0] - change + 1) if hits else "-")
        early = [m for m in map(LINE.match, said[spec].splitlines()) if m and int(m.group(1)) < change]
        fa += len({int(m.group(1)) for m in early})
        alarms += ["%s window %s: %s" % (spec, m.group(1), m.group(2)) for m in early]
        r = subprocess.run([a.jflame, "diff", "--baseline", os.path.join(d, "saved.folded") if spec == "FILE" else spec,
                            out], capture_output=True, text=True)
        same = same and r.returncode == 0 and lines(r.stdout) == lines(said[spec])
    first = os.path.join(d, "first")
    before = [share(os.path.join(first, "cpu-%d.folded" % w), frame) for w in range(2, change)]
    after = [share(os.path.join(first, "cpu-%d.folded" % w), frame) for w in range(change + 1, recs + 1)
             if os.path.exists(os.path.join(first, "cpu-%d.folded" % w))]
    pts = 100.0 * (sum(x for _, x in after) / max(1, sum(n for n, _ in after))
                   - sum(x for _, x in before) / max(1, sum(n for n, _ in before)))
    ns = sorted(n for n, _ in before + after)
    return pts, ns[len(ns) // 2] if ns else 0, change, cells, fa, alarms, same


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jflame", default=os.path.join(ROOT, "build", "native", "jflame"))
    ap.add_argument("--jar", default=os.path.join(ROOT, "build", "examples", "jflame-examples.jar"))
    ap.add_argument("--java", default=os.environ.get("JAVA", "/usr/lib/jvm/java-17-openjdk-amd64/bin/java"))
    ap.add_argument("--rate", type=int, default=39, help="Hz (39: about 250 samples a 5-s window of KafkaStyle)")
    ap.add_argument("--effects", default="30,70,140", help="per mille of the producers' CPU, comma-separated")
    ap.add_argument("--kinds", default="new,crc")
    ap.add_argument("--before", type=int, default=16, help="windows before the change")
    ap.add_argument("--after", type=int, default=10, help="windows from the change's on")
    ap.add_argument("--save", type=int, default=30, help="seconds of the saved profile (FILE)")
    a = ap.parse_args()
    try:
        effects = [int(v) for v in a.effects.split(",")]
    except ValueError:
        sys.exit("regress_live: --effects takes per mille numbers, e.g. 30,70,140")
    kinds = a.kinds.split(",")
    if any(k not in FRAMES for k in kinds) or any(not 0 < e < 900 for e in effects) or a.rate < 1 \
            or a.before < 4 or a.after < 3 or a.save < 5:
        sys.exit("regress_live: --kinds takes new,crc; --effects 1-899; --rate 1 or more; --before 4, --after 3 "
                 "and --save 5 at least")
    for path, what in ((a.jflame, "jflame (cmake --build build)"), (a.java, "java (JAVA=...)")):
        if not os.access(path, os.X_OK):
            sys.exit("regress_live: no %s at %s" % (what, path))
    if not os.path.exists(a.jar):
        sys.exit("regress_live: no examples jar at %s (cmake --build build)" % a.jar)
    benchlib.host_line("regress_live", "KafkaStyle growing a lasting regression under three live baselines")
    print("\n| change | per mille | pts measured | samples/window | " + " | ".join(SPECS)
          + " | false alarms before | replay same |")
    print("| --- | --- | --- | --- | " + " | ".join("---" for _ in SPECS) + " | --- | --- |", flush=True)
    tmp = tempfile.mkdtemp(prefix="jflame-regress-live-")
    alarms = []
    try:
        for kind in kinds:
            for e in effects:
                pts, n, change, cells, fa, said, same = run(a, kind, e, tmp)
                alarms += ["%s %d: %s" % (kind, e, line) for line in said]
                print("| %s | %d | %+.1f | %d | %s | %d of %d windows | %s |" % (
                    kind, e, pts, n, " | ".join(cells), fa, 3 * (change - 1), "yes" if same else "NO"), flush=True)
        print("\nfalse alarms (frames named before the change):" + ("".join("\n  " + x for x in alarms) or " none"))
    finally:
        subprocess.run(["rm", "-rf", tmp], check=False)


if __name__ == "__main__":
    main()
