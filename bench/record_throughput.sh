#!/usr/bin/env bash
# record_throughput.sh [PAIRS]: the Kafka-style example's records/s with and without
# `jflame record -p PID -F 99` running, interleaved pairs; median ratio (target: < 1% loss).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bench_help "$@"

pairs=${1:-6}
window=${WINDOW:-16}
format=${FORMAT:-string-builder}

require_build "$jflame" "$agent" "$jar"
int_arg PAIRS "$pairs" 3

exec env PYTHONPATH="$root/bench" python3 - "$java" "$agent" "$jar" "$jflame" "$pairs" "$window" "$format" <<'PY'
import os, re, statistics, subprocess, sys, tempfile, time

from benchlib import cleanup, median_ci

java, agent, jar, jflame, pairs, window, fmt = sys.argv[1:]
pairs, window = int(pairs), int(window)
RATE = re.compile(r"jflame-example: records/s (\d+)")


def run(recording):
    """One KafkaStyle run; records/s lines during the measured window, median."""
    log = tempfile.NamedTemporaryFile(mode="w+", prefix="jflame-bench-", suffix=".log")
    cmd = [java, "-XX:+PreserveFramePointer", f"-agentpath:{agent}=quiet", "-cp", jar,
           "jflame.examples.KafkaStyle", "--seconds", str(window + 30), "--format", fmt]
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    rec = None
    try:
        deadline = time.monotonic() + 60
        while "jflame-example: ready" not in open(log.name).read():
            if p.poll() is not None or time.monotonic() > deadline:
                sys.exit("record_throughput: KafkaStyle did not get ready:\n" + open(log.name).read()[-2000:])
            time.sleep(0.2)
        seen = len(RATE.findall(open(log.name).read()))
        if recording:
            rec = subprocess.Popen([jflame, "record", "-p", str(p.pid), "-F", "99", "-d", str(window),
                                    "-o", os.path.join(tempfile.gettempdir(), f"jflame-bench-{p.pid}.folded")],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(window)
        rates = [int(x) for x in RATE.findall(open(log.name).read())[seen + 1:]]  # skip the first, partial
        if rec:
            _, err = rec.communicate(timeout=60)
            if rec.returncode != 0:
                sys.exit("record_throughput: jflame record failed: " + err)
        if len(rates) < 3:
            sys.exit("record_throughput: too few records/s lines in the window")
        return statistics.median(rates)
    finally:
        p.terminate()
        p.wait()
        cleanup(p.pid)
        try:
            os.unlink(os.path.join(tempfile.gettempdir(), f"jflame-bench-{p.pid}.folded"))
        except FileNotFoundError:
            pass


print(f"record_throughput: KafkaStyle --format {fmt}, {pairs} pairs, {window} s windows; "
      f"{os.cpu_count()} CPUs, load {open('/proc/loadavg').read().split()[0]}", flush=True)
base, rec, ratios = [], [], []
for i in range(pairs):
    order = (False, True) if i % 2 == 0 else (True, False)
    got = {r: run(r) for r in order}
    base.append(got[False])
    rec.append(got[True])
    ratios.append(got[True] / got[False])
    print(f"pair {i + 1}: without {got[False]:,.0f}  with {got[True]:,.0f}  ratio {ratios[-1]:.3f}", flush=True)
m, lo, hi = median_ci(ratios)
loss = (1 - m) * 100
print()
print(f"== record_throughput (KafkaStyle {fmt}; jflame record -p PID -F 99; {pairs} interleaved pairs) ==")
print(f"records/s median: without {statistics.median(base):,.0f}, with recording {statistics.median(rec):,.0f}")
verdict = "MISSES" if hi < 0.99 else "meets" if m >= 0.99 else "within noise (median loss over 1%, CI reaches 1%)"
print(f"with/without per pair: median {m:.4f} [95% CI {lo:.4f}, {hi:.4f}] -> loss {loss:.2f}%; target < 1%: {verdict}")
PY
