#!/usr/bin/env bash
# alloc_overhead.sh [PAIRS]: what allocation profiling costs. The Kafka-style example's
# records/s with `jflame record -e alloc -p PID` running (the agent samples allocations
# every 512 KiB, ALLOC_INTERVAL to change) and with no profiler reading (the agent loaded,
# its events off: the state of a JVM nobody records), interleaved pairs; median ratio,
# samples and drops. WINDOW seconds per run (default 16), FORMAT the example's hot path
# (default string-builder; string-format allocates more).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
jflame=$root/build/native/jflame
agent=$root/build/jvmagent/libjflame-agent.so
jar=$root/build/examples/jflame-examples.jar
java=${JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
pairs=${1:-6}
window=${WINDOW:-16}
format=${FORMAT:-string-builder}
interval=${ALLOC_INTERVAL:-512k}

if [[ ! -x $jflame || ! -f $agent || ! -f $jar ]]; then
  echo "alloc_overhead: build missing; build with: cmake -S $root -B $root/build && make -C $root/build -j2" >&2
  exit 1
fi
if ! [[ $pairs =~ ^[0-9]+$ ]] || ((pairs < 3)); then
  echo "alloc_overhead: PAIRS must be an integer >= 3 (got '$pairs')" >&2
  exit 1
fi

exec env PYTHONPATH="$root/bench" python3 - "$java" "$agent" "$jar" "$jflame" "$pairs" "$window" "$format" "$interval" <<'PY'
import os, re, statistics, subprocess, sys, tempfile, time

from benchlib import cleanup, median_ci

java, agent, jar, jflame, pairs, window, fmt, interval = sys.argv[1:]
pairs, window = int(pairs), int(window)
RATE = re.compile(r"jflame-example: records/s (\d+)")
SUMMARY = re.compile(r"jflame: alloc: (\d+) samples, ([0-9.]+ \S+) \((\d+) dropped")
samples, drops = [], []


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
                sys.exit("alloc_overhead: KafkaStyle did not get ready:\n" + open(log.name).read()[-2000:])
            time.sleep(0.2)
        seen = len(RATE.findall(open(log.name).read()))
        if recording:
            rec = subprocess.Popen([jflame, "record", "-e", "alloc", "--alloc-interval", interval, "-p", str(p.pid),
                                    "-d", str(window),
                                    "-o", os.path.join(tempfile.gettempdir(), f"jflame-bench-{p.pid}.folded")],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(window)
        rates = [int(x) for x in RATE.findall(open(log.name).read())[seen + 1:]]  # skip the first, partial
        if rec:
            _, err = rec.communicate(timeout=60)
            if rec.returncode != 0:
                sys.exit("alloc_overhead: jflame record failed: " + err)
            m = SUMMARY.search(err)
            if m:
                samples.append(int(m.group(1)))
                drops.append(int(m.group(3)))
        if len(rates) < 3:
            sys.exit("alloc_overhead: too few records/s lines in the window")
        return statistics.median(rates)
    finally:
        p.terminate()
        p.wait()
        cleanup(p.pid)
        try:
            os.unlink(os.path.join(tempfile.gettempdir(), f"jflame-bench-{p.pid}.folded"))
        except FileNotFoundError:
            pass


print(f"alloc_overhead: KafkaStyle --format {fmt}, {pairs} pairs, {window} s windows; "
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
print(f"== alloc_overhead (KafkaStyle {fmt}; jflame record -e alloc --alloc-interval {interval} -p PID; "
      f"{pairs} interleaved pairs) ==")
if samples:
    print(f"allocation samples per {window} s run: median {statistics.median(samples):,.0f}; "
          f"dropped: {sum(drops)} in all runs")
print(f"records/s median: without {statistics.median(base):,.0f}, with recording {statistics.median(rec):,.0f}")
print(f"with/without per pair: median {m:.4f} [95% CI {lo:.4f}, {hi:.4f}] -> loss {loss:.2f}%")
PY
