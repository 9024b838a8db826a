#!/usr/bin/env bash
# offcpu_overhead.sh [PAIRS]: the cost of `jflame record -e offcpu` at a high context-switch
# rate: the PingPong example's round trips/s (two threads parking and waking each other,
# two switches a round trip) with and without recording, interleaved pairs, median ratio;
# once with the default --min-block (1us: every block's stack is walked) and once with
# MIN_BLOCK (default 1ms: the blocks are timed and counted, none walked).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bench_help "$@"

pairs=${1:-5}
window=${WINDOW:-8}
min_block=${MIN_BLOCK:-1ms}

require_build "$jflame" "$agent" "$jar"
int_arg PAIRS "$pairs" 3

exec env PYTHONPATH="$root/bench" python3 - "$java" "$agent" "$jar" "$jflame" "$pairs" "$window" "$min_block" <<'PY'
import os, re, statistics, subprocess, sys, tempfile, time

from benchlib import cleanup, median_ci

java, agent, jar, jflame, pairs, window, min_block = sys.argv[1:]
pairs, window = int(pairs), int(window)
RATE = re.compile(r"jflame-example: roundtrips/s (\d+)")
SWITCHES = re.compile(r"^ctxt (\d+)$", re.M)


def ctxt():
    with open("/proc/stat") as f:
        return int(SWITCHES.search(f.read()).group(1))


def run(extra):
    """One PingPong run; median round trips/s over the window, host switches/s, jflame's summary."""
    log = tempfile.NamedTemporaryFile(mode="w+", prefix="jflame-bench-", suffix=".log")
    out = os.path.join(tempfile.gettempdir(), "jflame-bench-offcpu-%d.folded" % os.getpid())
    cmd = [java, "-XX:+PreserveFramePointer", f"-agentpath:{agent}=quiet", "-cp", jar,
           "jflame.examples.PingPong", "--seconds", str(window + 30)]
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    rec, summary = None, ""
    try:
        deadline = time.monotonic() + 60
        while "jflame-example: ready" not in open(log.name).read():
            if p.poll() is not None or time.monotonic() > deadline:
                sys.exit("offcpu_overhead: PingPong did not get ready:\n" + open(log.name).read()[-2000:])
            time.sleep(0.2)
        if extra is not None:
            rec = subprocess.Popen([jflame, "record", "-p", str(p.pid), "-e", "offcpu", "-d", str(window + 2),
                                    "-o", out] + extra, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            time.sleep(2)  # loaded and attached
        seen = len(RATE.findall(open(log.name).read()))
        c0, t0 = ctxt(), time.monotonic()
        time.sleep(window)
        switches = (ctxt() - c0) / (time.monotonic() - t0)
        rates = [int(x) for x in RATE.findall(open(log.name).read())[seen + 1:]]  # skip the first, partial
        if rec:
            _, err = rec.communicate(timeout=60)
            if rec.returncode != 0:
                sys.exit("offcpu_overhead: jflame record failed: " + err)
            summary = err.strip().splitlines()[-1] if err.strip() else ""
        if len(rates) < 3:
            sys.exit("offcpu_overhead: too few roundtrips/s lines in the window")
        return statistics.median(rates), switches, summary
    finally:
        p.terminate()
        p.wait()
        cleanup(p.pid)
        try:
            os.unlink(out)
        except FileNotFoundError:
            pass


configs = {"none": None, "offcpu": [], "offcpu-min": ["--min-block", min_block]}
print(f"offcpu_overhead: PingPong, {pairs} rounds, {window} s windows, --min-block {min_block}; "
      f"{os.cpu_count()} CPUs, load {open('/proc/loadavg').read().split()[0]}", flush=True)
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
