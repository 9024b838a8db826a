#!/usr/bin/env bash
# cost_vs_peers.sh [ROUNDS]: what profiling a fixed amount of Java work costs the machine,
# jflame next to async-profiler and perf. The workload, `Workload work UNITS THREADS` (25000
# units on 2 threads by default, about 20 s of CPU), runs with no profiler, under
# `jflame record -F 99 -o X.folded -- java ...` (the default: the agent,
# -XX:+PreserveFramePointer and -XX:+DebugNonSafepoints in the JVM), with async-profiler as
# an agent (`start,event=cpu,interval=10ms,file=X.collapsed`) and under `perf record -F 99
# -g -o X -- java ...`; ROUNDS rounds (default 5), the order rotating each round, each round
# holding LOCK (default /tmp/jflame-jvm.lock; LOCK= for none; do not wrap the script in
# flock on the same file).
# Counted per run (CPU = user + system time): the JVM's CPU and the profiler process's own
# CPU (jflame, perf; async-profiler works inside the JVM, so its cost is the JVM's extra
# CPU; eBPF programs run on the sampled tasks' time, so jflame's BPF time is in the JVM's).
# Prints per configuration the median total CPU, the extra CPU against no profiler (per
# round, same-round differences) per unit of work and as % of the baseline, spreads,
# wall time and the samples each profiler got. Needs async-profiler built by
# bench/build_async_profiler.sh (ASYNC_PROFILER=DIR, default /var/tmp/jflame-async-profiler)
# and perf. CONFIGS='none jflame ...' picks the configurations; two more split jflame's
# cost: jvm-flags (no profiler, the JVM flags jflame adds) and jflame-agent (those flags and
# jflame's agent, no jflame process). UNITS and THREADS set the work.
set -euo pipefail

# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bench_help "$@"

rounds=${1:-5}
units=${UNITS:-25000}
threads=${THREADS:-2}
configs=${CONFIGS:-none jflame async-profiler perf}
ap=${ASYNC_PROFILER:-/var/tmp/jflame-async-profiler}

int_arg ROUNDS "$rounds" 1
int_arg UNITS "$units" 1
int_arg THREADS "$threads" 1
require_build "$jflame" "$agent" "$jar"
require_java
for c in $configs; do
  case $c in
  none | jvm-flags | jflame-agent) ;;
  jflame) ;;
  async-profiler)
    [[ -f $ap/lib/libasyncProfiler.so ]] ||
      bench_die "no async-profiler at $ap; build it with: git clone https://github.com/async-profiler/async-profiler && bench/build_async_profiler.sh async-profiler $ap"
    ;;
  perf)
    perf --version >/dev/null 2>&1 || bench_die "perf does not run; install linux-perf (scripts/deps.sh) or leave it out: CONFIGS='none jflame async-profiler'"
    ;;
  *) bench_die "unknown configuration '$c' in CONFIGS (none, jflame, async-profiler, perf, jvm-flags, jflame-agent)" ;;
  esac
done

# shellcheck disable=SC2086 # the configurations are words, split on purpose
exec env PYTHONPATH="$root/bench" python3 - "$java" "$jar" "$jflame" "$agent" "$ap" "$rounds" "$units" "$threads" \
  "${LOCK-/tmp/jflame-jvm.lock}" $configs <<'PY'
import fcntl, os, re, shlex, shutil, statistics, subprocess, sys, tempfile, time

from benchlib import cleanup, host_line, median_ci

java, jar, jflame, agent, ap, rounds, units, threads, lock = sys.argv[1:10]
rounds, units, threads = int(rounds), int(units), int(threads)
configs = sys.argv[10:]
HZ = os.sysconf("SC_CLK_TCK")
out = tempfile.mkdtemp(prefix="jflame-bench-peers-")
work = ["-cp", jar, "jflame.examples.Workload", "work", str(units), str(threads)]
aplib = os.path.join(ap, "lib", "libasyncProfiler.so")
# what `jflame record -- java` adds to the java command line, besides its agent
JFLAME_FLAGS = ["-XX:+PreserveFramePointer", "-XX:+UnlockDiagnosticVMOptions", "-XX:+DebugNonSafepoints"]


def command(config):
    """The command line of one configuration, its output file, and whether the JVM is a
    grandchild (started by the profiler process)."""
    if config == "none":
        return [java] + work, None
    if config == "jvm-flags":
        return [java] + JFLAME_FLAGS + work, None
    if config == "jflame-agent":
        return [java, f"-agentpath:{agent}"] + JFLAME_FLAGS + work, None
    if config == "jflame":
        f = os.path.join(out, "jflame.folded")
        return [jflame, "record", "-F", "99", "-o", f, "--", java] + work, f
    if config == "async-profiler":
        f = os.path.join(out, "async-profiler.collapsed")
        return [java, f"-agentpath:{aplib}=start,event=cpu,interval=10ms,file={f}"] + work, f
    f = os.path.join(out, "perf.data")
    return ["perf", "record", "-F", "99", "-g", "-o", f, "--", java] + work, f


def stat(pid):
    """utime + stime and cutime + cstime of pid, in seconds, from /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        v = f.read().rsplit(")", 1)[1].split()
    return (int(v[11]) + int(v[12])) / HZ, (int(v[13]) + int(v[14])) / HZ


def children(pid):
    """The children of pid (of any of its threads)."""
    kids = []
    try:
        for t in os.listdir(f"/proc/{pid}/task"):
            kids += [int(c) for c in open(f"/proc/{pid}/task/{t}/children").read().split()]
    except OSError:
        pass
    return kids


def samples(config, log, f):
    """The samples the profiler reports: jflame's summary line, perf's "(N samples)", the sum
    of async-profiler's collapsed counts; None without a profiler."""
    if config == "jflame":
        m = re.search(r"^jflame: (\d+) samples", log, re.M)
        return int(m.group(1)) if m else 0
    if config == "perf":
        m = re.search(r"\((\d+) samples\)", log)
        return int(m.group(1)) if m else 0
    if config == "async-profiler":
        n = 0
        if os.path.exists(f):
            for line in open(f, errors="replace"):
                n += int(line.rsplit(" ", 1)[1]) if line.strip() else 0
        return n
    return None


def run(config):
    """One run: (total CPU s, JVM CPU s, profiler process CPU s, wall s, samples), or None when
    some other jflame loaded its agent into a JVM that should have none (record -a elsewhere)."""
    cmd, f = command(config)
    started = time.time()
    logf = os.path.join(out, "run.log")
    with open(logf, "w") as log:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    grandchild = config in ("jflame", "perf")
    jvm = p.pid
    if grandchild:  # the JVM the profiler starts: for the agent's files and the checks
        while p.poll() is None and not children(p.pid):
            time.sleep(0.05)
        jvm = (children(p.pid) or [0])[0]
    # Wait for the exit without reaping: the zombie's /proc/PID/stat still holds its own
    # CPU (all its threads) apart from its reaped children's (the JVM under jflame or perf).
    os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)
    wall = time.monotonic() - t0
    own, _ = stat(p.pid)
    _, status, ru = os.wait4(p.pid, 0)
    text = open(logf, errors="replace").read()
    code = os.waitstatus_to_exitcode(status)
    if code != 0 or f"jflame-workload: done {units} units" not in text:
        shown = "".join(c if c == "\n" or c.isprintable() else "\\x%02x" % ord(c) for c in text[-2000:])
        sys.exit(f"cost_vs_peers: {config} run failed (exit {code}): {shlex.join(cmd)}\n{shown}")
    total = ru.ru_utime + ru.ru_stime  # the process and its reaped children (microseconds)
    prof = own if grandchild else 0.0  # async-profiler's cost is inside the JVM
    n = samples(config, text, f)
    if f and os.path.exists(f):
        os.unlink(f)
    if config in ("jflame", "jflame-agent"):
        cleanup(jvm)
        return total, total - prof, prof, wall, n
    try:  # the agent's status file, written during this run (not one left by an old process with this pid)
        intruded = os.stat(f"/tmp/jflame-{jvm}.status").st_mtime >= started
    except FileNotFoundError:
        intruded = False
    if intruded:
        cleanup(jvm)
        return None
    return total, total - prof, prof, wall, n


def ap_engine():
    """What async-profiler's cpu event uses here: perf_events when it can open them, else
    ctimer (timer_create), else wall-clock sampling (its own rule in selectEngine)."""
    r = subprocess.run([java, f"-agentpath:{aplib}=list", "-version"], capture_output=True, text=True)
    listed = r.stdout + r.stderr
    if "Perf events:" in listed:
        return "perf_events (cpu-clock)"
    return "ctimer (timer_create)" if re.search(r"^\s*ctimer$", listed, re.M) else "wall clock"


host_line("cost_vs_peers", f"Workload work {units} {threads}, {rounds} rounds of {' '.join(configs)}")
if "async-profiler" in configs:
    version = open(os.path.join(ap, "VERSION")).read().strip() if os.path.exists(os.path.join(ap, "VERSION")) else "?"
    print(f"async-profiler {version} from {ap}; its cpu event uses {ap_engine()}", flush=True)
res = {c: [] for c in configs}
redone = 0
try:
    for r in range(rounds):
        order = configs[r % len(configs):] + configs[:r % len(configs)]
        lockf = open(lock, "a") if lock else None
        try:
            if lockf:
                fcntl.flock(lockf, fcntl.LOCK_EX)
            for c in order:
                for attempt in range(3):
                    got = run(c)
                    if got:
                        break
                    redone += 1
                    print(f"round {r + 1} {c}: another jflame loaded its agent into this JVM (record -a elsewhere?); "
                          "running it again", flush=True)
                else:
                    sys.exit("cost_vs_peers: another jflame keeps loading its agent into the JVMs; stop it and rerun")
                total, jvm, prof, wall, n = got
                res[c].append((total, jvm, prof, wall, n))
                print(f"round {r + 1} {c:15s} total {total:7.2f} s CPU (JVM {jvm:6.2f} + profiler {prof:5.2f}), "
                      f"wall {wall:5.1f} s" + (f", {n} samples" if n is not None else ""), flush=True)
        finally:
            if lockf:
                lockf.close()
finally:
    shutil.rmtree(out, ignore_errors=True)


def med(xs):
    return statistics.median(xs)


print(f"== cost_vs_peers (Workload work {units} {threads}; {rounds} rounds; {os.cpu_count()} CPUs) ==")
print("commands (X: a temporary file):")
for c in configs:
    print(f"  {c:15s} {shlex.join(command(c)[0]).replace(out + '/', 'X/')}")
if redone:
    print(f"{redone} runs redone: another jflame had loaded its agent into a JVM that should have had none")
print("CPU = user + system s; total = JVM + profiler process; extra = total - none's total of the same round")
base = res.get("none")
head = f"{'config':15s} {'total s':>8s} {'JVM s':>7s} {'prof s':>7s} {'extra s':>8s} {'[95% CI]':>15s} {'us/unit':>8s} " \
       f"{'% of base':>9s} {'wall s':>7s} {'samples':>8s} {'us/sample':>9s}"
print(head)
for c in configs:
    rows = res[c]
    total, jvm, prof, wall = (med([x[i] for x in rows]) for i in range(4))
    n = [x[4] for x in rows if x[4] is not None]
    line = f"{c:15s} {total:8.2f} {jvm:7.2f} {prof:7.2f}"
    if base and c != "none":
        extra = [x[0] - b[0] for x, b in zip(rows, base)]
        e, lo, hi = median_ci(extra)
        per_sample = f"{e / med(n) * 1e6:9.0f}" if n and med(n) else f"{'-':>9s}"
        line += (f" {e:8.2f} {f'{lo:.2f}..{hi:.2f}':>15s} {e / units * 1e6:8.1f} "
                 f"{e / med([b[0] for b in base]) * 100:8.2f}% {wall:7.1f} {f'{med(n):.0f}' if n else '-':>8} {per_sample}")
    else:
        _, lo, hi = median_ci([x[0] for x in rows])
        line += (f" {'-':>8s} {f'{lo:.2f}..{hi:.2f}':>15s} {'-':>8s} {'-':>9s} {wall:7.1f} "
                 f"{f'{med(n):.0f}' if n else '-':>8} {'-':>9s}")
    print(line)
print("[95% CI]: distribution-free interval of the median extra (of the total for none; min..max up to 5 "
      "rounds); us/unit: extra CPU per unit of work; us/sample: extra CPU per sample the profiler took, start-up "
      "and output included")
PY
