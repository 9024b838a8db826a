#!/usr/bin/env bash
# record_throughput.sh [PAIRS]: the Kafka-style example's records/s with and without
# `jflame record -p PID -F 99` running, interleaved pairs; median ratio (target: < 1% loss).
set -euo pipefail

# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bench_help "$@"

pairs=${1:-6}
window=${WINDOW:-16}
format=${FORMAT:-string-builder}

require_build "$jflame" "$agent" "$jar"
int_arg PAIRS "$pairs" 3

exec env PYTHONPATH="$root/bench" python3 - "$java" "$agent" "$jar" "$jflame" "$pairs" "$window" "$format" <<'PY'
import statistics, sys

from benchlib import example_rate, host_line, interleaved_pairs, median_ci

java, agent, jar, jflame, pairs, window, fmt = sys.argv[1:]
pairs, window = int(pairs), int(window)


def run(recording):
    """One KafkaStyle run: its median records/s over the window."""
    return example_rate("record_throughput", java, agent, jar, "jflame.examples.KafkaStyle",
                        ["--seconds", str(window + 30), "--format", fmt], r"jflame-example: records/s (\d+)",
                        window, jflame=jflame, record=["-F", "99"] if recording else None)[0]


host_line("record_throughput", f"KafkaStyle --format {fmt}, {pairs} pairs, {window} s windows")
base, rec, ratios = interleaved_pairs(pairs, run)
m, lo, hi = median_ci(ratios)
loss = (1 - m) * 100
print()
print(f"== record_throughput (KafkaStyle {fmt}; jflame record -p PID -F 99; {pairs} interleaved pairs) ==")
print(f"records/s median: without {statistics.median(base):,.0f}, with recording {statistics.median(rec):,.0f}")
verdict = "MISSES" if hi < 0.99 else "meets" if m >= 0.99 else "within noise (median loss over 1%, CI reaches 1%)"
print(f"with/without per pair: median {m:.4f} [95% CI {lo:.4f}, {hi:.4f}] -> loss {loss:.2f}%; target < 1%: {verdict}")
PY
