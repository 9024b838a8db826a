#!/usr/bin/env bash
# toolkit_throughput.sh [ROUNDS]: `jflame collapse` and `jflame svg` on the large
# deterministic inputs of gen_inputs.py: MB/s (one thread) and peak memory,
# median of ROUNDS runs (default 5), against the targets of issue 5.
# JFLAME_BIN picks the binary (default build/native/jflame). CPU s (user +
# system) is printed beside wall time: on a shared machine it is the steadier.
set -euo pipefail

# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bench_help "$@"

jflame=${JFLAME_BIN:-$jflame}
rounds=${1:-5}
inputs=${JFLAME_BENCH_INPUTS:-/tmp/jflame-bench-inputs}

require_build "$jflame"
int_arg ROUNDS "$rounds" 1
python3 "$root/bench/gen_inputs.py" "$inputs" >/dev/null

exec python3 - "$jflame" "$inputs" "$rounds" <<'PY'
import os, resource, statistics, subprocess, sys, time

jflame, inputs, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
cases = [
    ("collapse", ["collapse", os.path.join(inputs, "big.perf"), "-o", os.devnull], "big.perf", 400),
    ("collapse --all", ["collapse", "--all", os.path.join(inputs, "big.perf"), "-o", os.devnull], "big.perf", 400),
    ("svg", ["svg", os.path.join(inputs, "big.folded"), "-o", os.path.join(inputs, "big.svg")], "big.folded", 250),
]
print("toolkit_throughput: %d rounds; inputs in %s (gen_inputs.py, deterministic)" % (rounds, inputs))
print("%-16s %10s %10s %8s %10s %8s %12s %10s" % ("command", "input MB", "median s", "MB/s", "CPU s", "CPU MB/s",
                                                    "peak RSS MB", "target"))
for name, args, inp, target in cases:
    size = os.path.getsize(os.path.join(inputs, inp)) / 1e6
    times, rss, cpu = [], [], []
    for _ in range(rounds):
        t0 = time.monotonic()
        pid = os.fork()
        if pid == 0:
            os.execv(jflame, [jflame] + args)
        _, status, usage = os.wait4(pid, 0)
        times.append(time.monotonic() - t0)
        rss.append(usage.ru_maxrss / 1024)
        cpu.append(usage.ru_utime + usage.ru_stime)
        if status != 0:
            sys.exit("toolkit_throughput: jflame %s failed (status %d)" % (" ".join(args), status))
    med, cmed = statistics.median(times), statistics.median(cpu)
    print("%-16s %10.1f %10.3f %8.0f %10.3f %8.0f %12.0f %10s" % (name, size, med, size / med, cmed, size / cmed,
                                                                 statistics.median(rss), "%d MB/s" % target))
    print("  runs: %s" % ", ".join("%.3f" % t for t in times))
svg = os.path.join(inputs, "big.svg")
print("svg output: %.2f MB (minwidth pruning keeps it small enough for a browser)" % (os.path.getsize(svg) / 1e6))
PY
