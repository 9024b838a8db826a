#!/usr/bin/env bash
# lock_overhead.sh [PAIRS]: what `jflame record -e lock` costs a park-heavy JVM: the PingPong
# example's round trips/s (two threads parking and waking each other, tens of thousands of
# Unsafe.park calls a second) with a lock recording running (every park goes through the
# agent's Unsafe.park wrapper) and with no reader (the agent loaded, park the JVM's own),
# interleaved pairs; median ratio. WINDOW seconds per run (default 8); BLOCKER=object makes
# PingPong park with a blocker that is not a lock (the wrapper's class checks then run).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bench_help "$@"

pairs=${1:-5}
window=${WINDOW:-8}
blocker=${BLOCKER:-none}

require_build "$jflame" "$agent" "$jar"
require_java
int_arg PAIRS "$pairs" 3

exec env PYTHONPATH="$root/bench" python3 - "$java" "$agent" "$jar" "$jflame" "$pairs" "$window" "$blocker" <<'PY'
import os, re, statistics, subprocess, sys, tempfile, time

from benchlib import cleanup, median_ci

java, agent, jar, jflame, pairs, window, blocker = sys.argv[1:]
pairs, window = int(pairs), int(window)
RATE = re.compile(r"jflame-example: roundtrips/s (\d+)")


def run(recording):
    """One PingPong run; median round trips/s over the window, jflame's lock summary line."""
    log = tempfile.NamedTemporaryFile(mode="w+", prefix="jflame-bench-", suffix=".log")
    out = os.path.join(tempfile.gettempdir(), "jflame-bench-lock-%d.folded" % os.getpid())
    cmd = [java, "-XX:+PreserveFramePointer", f"-agentpath:{agent}=quiet", "-cp", jar,
           "jflame.examples.PingPong", "--seconds", str(window + 30), "--blocker", blocker]
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    rec, summary = None, ""
    try:
        deadline = time.monotonic() + 60
        while "jflame-example: ready" not in open(log.name).read():
            if p.poll() is not None or time.monotonic() > deadline:
                sys.exit("lock_overhead: PingPong did not get ready:\n" + open(log.name).read()[-2000:])
            time.sleep(0.2)
        if recording:
            rec = subprocess.Popen([jflame, "record", "-p", str(p.pid), "-e", "lock", "-d", str(window + 2),
                                    "-o", out], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            time.sleep(2)  # attached, park bound
            if "park_hook=on" not in open("/tmp/jflame-%d.status" % p.pid).read():
                time.sleep(1.2)  # the status file is rewritten once a second
                if "park_hook=on" not in open("/tmp/jflame-%d.status" % p.pid).read():
                    sys.exit("lock_overhead: the agent did not bind Unsafe.park")
        seen = len(RATE.findall(open(log.name).read()))
        time.sleep(window)
        rates = [int(x) for x in RATE.findall(open(log.name).read())[seen + 1:]]  # skip the first, partial
        if rec:
            _, err = rec.communicate(timeout=60)
            # PingPong parks on no lock: "no lock samples" (exit 1) is the expected outcome
            if rec.returncode not in (0, 1):
                sys.exit("lock_overhead: jflame record failed: " + err)
            summary = err.strip().splitlines()[-1] if err.strip() else ""
        if len(rates) < 3:
            sys.exit("lock_overhead: too few roundtrips/s lines in the window")
        return statistics.median(rates), summary
    finally:
        p.terminate()
        p.wait()
        cleanup(p.pid)
        try:
            os.unlink(out)
        except FileNotFoundError:
            pass


print(f"lock_overhead: PingPong --blocker {blocker}, {pairs} pairs, {window} s windows; "
      f"{os.cpu_count()} CPUs, load {open('/proc/loadavg').read().split()[0]}", flush=True)
base, rec, ratios = [], [], []
for i in range(pairs):
    order = (False, True) if i % 2 == 0 else (True, False)
    got = {}
    for r in order:
        got[r] = run(r)
    base.append(got[False][0])
    rec.append(got[True][0])
    ratios.append(got[True][0] / got[False][0])
    print(f"pair {i + 1}: without {got[False][0]:,.0f}  with -e lock {got[True][0]:,.0f}  ratio {ratios[-1]:.3f}"
          f"{'; ' + got[True][1] if got[True][1] else ''}", flush=True)
m, lo, hi = median_ci(ratios)
print()
print(f"== lock_overhead (PingPong --blocker {blocker}; jflame record -e lock -p PID; {pairs} interleaved pairs) ==")
print(f"roundtrips/s median: without {statistics.median(base):,.0f}, with -e lock {statistics.median(rec):,.0f}")
print(f"with/without per pair: median {m:.4f} [95% CI {lo:.4f}, {hi:.4f}] -> loss {(1 - m) * 100:.2f}%")
PY
