#!/usr/bin/env bash
# lock_overhead.sh [PAIRS]: what `jflame record -e lock` costs a park-heavy JVM: the PingPong
# example's round trips/s (two threads parking and waking each other, tens of thousands of
# Unsafe.park calls a second) with a lock recording running (every park goes through the
# agent's Unsafe.park wrapper) and with no reader (the agent loaded, park the JVM's own),
# interleaved pairs; median ratio. WINDOW seconds per run (default 8); BLOCKER=object makes
# PingPong park with a blocker that is not a lock (the wrapper's class checks then run).
set -euo pipefail

# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bench_help "$@"

pairs=${1:-5}
window=${WINDOW:-8}
blocker=${BLOCKER:-none}

require_build "$jflame" "$agent" "$jar"
require_java
int_arg PAIRS "$pairs" 3

exec env PYTHONPATH="$root/bench" python3 - "$java" "$agent" "$jar" "$jflame" "$pairs" "$window" "$blocker" <<'PY'
import statistics, sys, time

from benchlib import example_rate, host_line, interleaved_pairs, median_ci

java, agent, jar, jflame, pairs, window, blocker = sys.argv[1:]
pairs, window = int(pairs), int(window)
summaries = []


def park_bound(pid):
    """Exits unless the agent's status says Unsafe.park is bound to its wrapper."""
    for _ in range(2):  # the status file is rewritten once a second
        if "park_hook=on" in open(f"/tmp/jflame-{pid}.status").read():
            return
        time.sleep(1.2)
    sys.exit("lock_overhead: the agent did not bind Unsafe.park")


def run(recording):
    """One PingPong run: its median round trips/s over the window (jflame's last line noted)."""
    # PingPong parks on no lock: "no lock samples" (exit 1) is the expected outcome
    rate, err, _ = example_rate("lock_overhead", java, agent, jar, "jflame.examples.PingPong",
                                ["--seconds", str(window + 30), "--blocker", blocker],
                                r"jflame-example: roundtrips/s (\d+)", window, jflame=jflame,
                                record=["-e", "lock"] if recording else None, settle=2 if recording else 0,
                                settled=park_bound, exit_codes=(0, 1))
    if recording and err.strip():
        summaries.append(err.strip().splitlines()[-1])
    return rate


host_line("lock_overhead", f"PingPong --blocker {blocker}, {pairs} pairs, {window} s windows")
base, rec, ratios = interleaved_pairs(pairs, run)
if summaries:
    print("jflame's last line, last run: " + summaries[-1])
m, lo, hi = median_ci(ratios)
print()
print(f"== lock_overhead (PingPong --blocker {blocker}; jflame record -e lock -p PID; {pairs} interleaved pairs) ==")
print(f"roundtrips/s median: without {statistics.median(base):,.0f}, with -e lock {statistics.median(rec):,.0f}")
print(f"with/without per pair: median {m:.4f} [95% CI {lo:.4f}, {hi:.4f}] -> loss {(1 - m) * 100:.2f}%")
PY
