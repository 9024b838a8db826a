#!/usr/bin/env bash
# window_store.sh [ROUNDS] [SECONDS]: one window of `jflame record` with every output on
# (svg, folded, stacks, pb.gz, json, jfr, html) on KafkaStyle, two jflame binaries A
# (BEFORE=/path/to/jflame, e.g. an older build) and B (this build) in interleaved rounds
# (default 7 rounds of 20 s, at FREQ Hz, default 1999: the sample log and the stores grow
# with the samples): peak memory (maxrss) and the time to close the window
# (from the end of the recording, -v's "recorded ... to T", to jflame's exit: the drain,
# every output written), medians and the per-round B/A ratios with their 95% CI.
set -euo pipefail

# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bench_help "$@"

rounds=${1:-7}
seconds=${2:-20}
before=${BEFORE:-}
freq=${FREQ:-1999}

require_build "$jflame" "$agent" "$jar"
require_java
int_arg ROUNDS "$rounds" 1
int_arg SECONDS "$seconds" 2
int_arg FREQ "$freq" 1
[[ -n $before && -x $before ]] || bench_die "set BEFORE=/path/to/jflame (the binary to compare with, e.g. a build of the previous commit)"

exec env PYTHONPATH="$root/bench" python3 - "$java" "$jar" "$before" "$jflame" "$rounds" "$seconds" "$freq" <<'PY'
import os, re, shutil, statistics, subprocess, sys, tempfile, time

from benchlib import cleanup, example_start, host_line, median_ci

java, jar, before, after, rounds, seconds, freq = sys.argv[1:]
rounds, seconds = int(rounds), int(seconds)
script = "window_store"
RECORDED = re.compile(r"recorded from [\d.]+ to ([\d.]+) s of CLOCK_MONOTONIC")
EXTS = ("svg", "folded", "stacks", "pb.gz", "json", "jfr", "html")
host_line(script, f"{rounds} rounds of a {seconds}-s window at {freq} Hz, every output on, A={before} B={after}")
jvm, log = example_start(script, java, None, jar, "jflame.examples.KafkaStyle", ["--seconds", "86400"])
out = tempfile.mkdtemp(prefix="jflame-bench-")


def one(binary):
    """A recording by binary: (peak memory MiB, close s, distinct stacks)."""
    args = [binary, "record", "-v", "-p", str(jvm.pid), "-F", freq, "-d", str(seconds)]
    for e in EXTS:
        args += ["-o", os.path.join(out, "w." + e)]
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    end = time.monotonic()
    m = RECORDED.search(err)
    if os.waitstatus_to_exitcode(status) != 0 or not m:
        sys.exit(f"{script}: {binary} failed:\n{err[-3000:]}")
    stacks = sum(1 for _ in open(os.path.join(out, "w.folded")))
    return ru.ru_maxrss / 1024, end - float(m.group(1)), stacks


try:
    time.sleep(10)  # warm up
    res = {"A": [], "B": []}
    for i in range(rounds):
        order = ("A", "B") if i % 2 == 0 else ("B", "A")
        for k in order:
            res[k].append(one(before if k == "A" else after))
        a, b = res["A"][-1], res["B"][-1]
        print(f"round {i + 1}: A {a[0]:.1f} MiB close {a[1] * 1000:.0f} ms ({a[2]} stacks)  "
              f"B {b[0]:.1f} MiB close {b[1] * 1000:.0f} ms ({b[2]} stacks)", flush=True)
finally:
    jvm.terminate()
    jvm.wait()
    cleanup(jvm.pid)
    shutil.rmtree(out, ignore_errors=True)

print(f"== {script} ({rounds} rounds, {seconds}-s window at {freq} Hz, KafkaStyle, outputs {' '.join(EXTS)}) ==")
for name, idx, unit, scale in (("peak memory", 0, "MiB", 1), ("close time", 1, "ms", 1000)):
    ma = statistics.median(x[idx] for x in res["A"]) * scale
    mb = statistics.median(x[idx] for x in res["B"]) * scale
    r, lo, hi = median_ci([b[idx] / a[idx] for a, b in zip(res["A"], res["B"])])
    print(f"{name}: A {ma:.1f} {unit}, B {mb:.1f} {unit}; B/A {r:.3f} [95% CI {lo:.3f}, {hi:.3f}]")
print(f"distinct stacks: A {statistics.median(x[2] for x in res['A']):.0f}, B {statistics.median(x[2] for x in res['B']):.0f}")
PY
