#!/usr/bin/env bash
# alloc_overhead.sh [PAIRS]: what allocation profiling costs. The Kafka-style example's
# records/s with `jflame record -e alloc -p PID` running (the agent samples allocations
# every 512 KiB, ALLOC_INTERVAL to change) and with no profiler reading (the agent loaded,
# its events off: the state of a JVM nobody records), interleaved pairs; median ratio,
# samples and drops. WINDOW seconds per run (default 16), FORMAT the example's hot path
# (default string-builder; string-format allocates more).
set -euo pipefail

# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bench_help "$@"

pairs=${1:-6}
window=${WINDOW:-16}
format=${FORMAT:-string-builder}
interval=${ALLOC_INTERVAL:-512k}

require_build "$jflame" "$agent" "$jar"
int_arg PAIRS "$pairs" 3

exec env PYTHONPATH="$root/bench" python3 - "$java" "$agent" "$jar" "$jflame" "$pairs" "$window" "$format" "$interval" <<'PY'
import re, statistics, sys

from benchlib import example_rate, host_line, interleaved_pairs, median_ci

java, agent, jar, jflame, pairs, window, fmt, interval = sys.argv[1:]
pairs, window = int(pairs), int(window)
SUMMARY = re.compile(r"jflame: alloc: (\d+) samples, ([0-9.]+ \S+) \((\d+) dropped")
samples, drops = [], []


def run(recording):
    """One KafkaStyle run: its median records/s over the window (samples and drops noted)."""
    rate, err, _ = example_rate("alloc_overhead", java, agent, jar, "jflame.examples.KafkaStyle",
                                ["--seconds", str(window + 30), "--format", fmt], r"jflame-example: records/s (\d+)",
                                window, jflame=jflame,
                                record=["-e", "alloc", "--alloc-interval", interval] if recording else None)
    m = SUMMARY.search(err)
    if m:
        samples.append(int(m.group(1)))
        drops.append(int(m.group(3)))
    return rate


host_line("alloc_overhead", f"KafkaStyle --format {fmt}, {pairs} pairs, {window} s windows")
base, rec, ratios = interleaved_pairs(pairs, run)
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
