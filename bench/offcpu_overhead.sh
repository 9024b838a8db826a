#!/usr/bin/env bash
# offcpu_overhead.sh [PAIRS]: the cost of `jflame record -e offcpu` at a high context-switch
# rate: the PingPong example's round trips/s (two threads parking and waking each other,
# two switches a round trip) with and without recording, interleaved pairs, median ratio;
# once with the default --min-block (1us: every block's stack is walked) and once with
# MIN_BLOCK (default 1ms: the blocks are timed and counted, none walked).
set -euo pipefail

# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bench_help "$@"

pairs=${1:-5}
window=${WINDOW:-8}
min_block=${MIN_BLOCK:-1ms}

require_build "$jflame" "$agent" "$jar"
int_arg PAIRS "$pairs" 3

exec env PYTHONPATH="$root/bench" python3 - "$java" "$agent" "$jar" "$jflame" "$pairs" "$window" "$min_block" <<'PY'
import re, statistics, sys

from benchlib import example_rate, host_line, median_ci

java, agent, jar, jflame, pairs, window, min_block = sys.argv[1:]
pairs, window = int(pairs), int(window)
SWITCHES = re.compile(r"^ctxt (\d+)$", re.M)


def ctxt():
    with open("/proc/stat") as f:
        return int(SWITCHES.search(f.read()).group(1))


def run(extra):
    """One PingPong run; median round trips/s over the window, host switches/s, jflame's summary."""
    rate, err, switches = example_rate("offcpu_overhead", java, agent, jar, "jflame.examples.PingPong",
                                       ["--seconds", str(window + 30)], r"jflame-example: roundtrips/s (\d+)",
                                       window, jflame=jflame, record=None if extra is None else ["-e", "offcpu"] + extra,
                                       settle=0 if extra is None else 2, probe=ctxt)
    return rate, switches, err.strip().splitlines()[-1] if err.strip() else ""


configs = {"none": None, "offcpu": [], "offcpu-min": ["--min-block", min_block]}
host_line("offcpu_overhead", f"PingPong, {pairs} rounds, {window} s windows, --min-block {min_block}")
rates = {k: [] for k in configs}
sw = {k: [] for k in configs}
for i in range(pairs):
    names = list(configs)
    names = names[i % 3:] + names[:i % 3]  # rotate the order each round
    for name in names:
        r, s, summ = run(configs[name])
        rates[name].append(r)
        sw[name].append(s)
        print(f"round {i + 1} {name}: {r:,.0f} roundtrips/s, {s:,.0f} switches/s{'; ' + summ if summ else ''}",
              flush=True)
print()
print(f"== offcpu_overhead (PingPong; jflame record -e offcpu -p PID; {pairs} interleaved rounds) ==")
for name in configs:
    print(f"{name}: median {statistics.median(rates[name]):,.0f} roundtrips/s, "
          f"{statistics.median(sw[name]):,.0f} host switches/s")
for name, label in (("offcpu", "default --min-block 1us"), ("offcpu-min", f"--min-block {min_block}")):
    m, lo, hi = median_ci([a / b for a, b in zip(rates[name], rates["none"])])
    print(f"with/without, {label}: median {m:.3f} [95% CI {lo:.3f}, {hi:.3f}] -> throughput loss {(1 - m) * 100:.1f}%")
PY
