#!/usr/bin/env bash
# record_cost.sh [SECONDS]: what `jflame record -a -F 99` costs: BPF run time per sample
# (kernel.bpf_stats_enabled) and jflame's own CPU (user+sys) against wall time, with every CPU busy;
# then the HotSpot walker's BPF time per sample of a JVM whose stack is 20, 200 and 1000 frames deep,
# with and without -XX:+PreserveFramePointer (PART=host or PART=jvm runs one part only).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bench_help "$@"

seconds=${1:-30}
freq=${FREQ:-99}

require_build "$jflame" "$hog"
int_arg SECONDS "$seconds" 5

part=${PART:-all}
if [[ $part != jvm ]]; then
env PYTHONPATH="$root/bench" python3 - "$jflame" "$hog" "$seconds" "$freq" <<'PY'
import json, os, subprocess, sys, tempfile, time

from benchlib import wait_jflame

jflame, hog, seconds, freq = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
ncpu = os.cpu_count()
STATS = "/proc/sys/kernel/bpf_stats_enabled"
old = open(STATS).read().strip()
out = tempfile.mkdtemp(prefix="jflame-bench-")
hogs = [subprocess.Popen([hog, str(seconds + 10)]) for _ in range(ncpu)]  # keep every CPU busy
try:
    with open(STATS, "w") as f:
        f.write("1\n")
    t0 = time.monotonic()
    p = subprocess.Popen([jflame, "record", "-a", "-F", str(freq), "-d", str(seconds), "-o",
                          os.path.join(out, "host.folded")], stderr=subprocess.PIPE, text=True)
    prog = None
    def cpu_ticks(pid):
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime, clock ticks
    time.sleep(3)  # past start-up: BPF load, kallsyms, first symbols
    steady0, steady_t0 = cpu_ticks(p.pid), time.monotonic()
    time.sleep(seconds - 5)
    steady1, steady_t1 = cpu_ticks(p.pid), time.monotonic()
    # the program's counters, read while it is still attached
    shown = json.loads(subprocess.run(["bpftool", "prog", "show", "--json"], capture_output=True,
                                      text=True, check=True).stdout)
    prog = next((x for x in shown if x.get("name") == "profile_sample"), None)
    wall, ru, err = wait_jflame(p, t0, "record_cost")
finally:
    with open(STATS, "w") as f:
        f.write(old + "\n")
    for h in hogs:
        h.kill()
        h.wait()

cpu = ru.ru_utime + ru.ru_stime
summary = err.strip().splitlines()[-1] if err.strip() else ""
samples = int(summary.split()[1]) if summary.startswith("jflame: ") else 0
print(f"== record_cost (jflame record -a -F {freq} -d {seconds}; {ncpu} CPUs busy) ==")
print(f"jflame: {summary}")
if prog and prog.get("run_cnt"):
    per = prog["run_time_ns"] / prog["run_cnt"]
    bpf_share = prog["run_time_ns"] / 1e9 / (seconds - 2) * 100
    print(f"BPF program: {prog['run_cnt']} runs, {per / 1000:.1f} us per sample, "
          f"{bpf_share:.3f}% of one core (run_time_ns over {seconds - 2} s)")
else:
    bpf_share = 0.0
    print("BPF program: no run statistics (kernel.bpf_stats_enabled unsupported?)")
print(f"jflame user+sys: {cpu:.3f} s over {wall:.1f} s wall = {cpu / wall * 100:.3f}% of one core "
      f"(maxrss {ru.ru_maxrss / 1024:.1f} MiB); {samples} samples = {cpu / max(samples, 1) * 1e6:.1f} us CPU per sample")
hz = os.sysconf("SC_CLK_TCK")
steady = (steady1 - steady0) / hz / (steady_t1 - steady_t0) * 100
print(f"jflame steady state (from 3 s to {seconds - 2} s): {steady:.3f}% of one core "
      f"(start-up and writing outputs are the rest)")
total = steady + bpf_share
print(f"total steady state: jflame {steady:.3f}% + BPF {bpf_share:.3f}% = {total:.3f}% of one core; "
      f"target < 0.5%: {'meets' if total < 0.5 else 'MISSES'}")
print(f"including start-up and outputs over this {seconds} s run: {cpu / wall * 100 + bpf_share:.3f}%")
PY
fi
[[ $part == host ]] && exit 0
exec env PYTHONPATH="$root/bench" python3 - "$jflame" "$java" "$jar" "${ROUNDS:-3}" <<'PY'
# The walker's cost per sample by stack depth: Stacks deep D (descend() kept
# out of line, so D Java frames), one busy thread sampled at 499 Hz; the BPF
# program's run_time_ns / run_cnt read while it is attached. Configurations
# rotate within each round; medians over rounds.
import json, os, statistics, subprocess, sys, tempfile, time
jflame, java, jar, rounds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
STATS = "/proc/sys/kernel/bpf_stats_enabled"
old = open(STATS).read().strip()
out = tempfile.mkdtemp(prefix="jflame-bench-")
configs = [(d, pfp, walker) for d in (20, 200, 1000) for pfp in (False, True) for walker in (True,)]
configs += [(d, True, False) for d in (20, 200, 1000)]  # perf's way: frame pointers, for scale
res = {c: [] for c in configs}

def bpf_prog():
    shown = json.loads(subprocess.run(["bpftool", "prog", "show", "--json"], capture_output=True, text=True,
                                      check=True).stdout)
    return next((x for x in shown if x.get("name") == "profile_sample"), None)

def one(depth, pfp, walker):
    flags = ["-XX:CompileCommand=quiet", "-XX:CompileCommand=dontinline,jflame.examples.Stacks::descend"]
    if pfp:
        flags.append("-XX:+PreserveFramePointer")
    jvm = subprocess.Popen([java] + flags + ["-cp", jar, "jflame.examples.Stacks", "deep", str(depth), "60000"],
                           stdout=subprocess.PIPE, text=True)
    try:
        line = jvm.stdout.readline()
        if "ready" not in line:
            sys.exit("record_cost: the JVM did not start: %r" % line)
        time.sleep(1)
        args = [jflame, "record", "-p", str(jvm.pid), "-F", "499", "-d", "6", "--no-attach",
                "-o", os.path.join(out, "d.folded")] + ([] if walker else ["--no-walker"])
        p = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
        time.sleep(5)
        prog = bpf_prog()
        err = p.communicate()[1]
        if p.returncode != 0:
            sys.exit("record_cost: jflame failed: " + err)
        return prog["run_time_ns"] / prog["run_cnt"] / 1000 if prog and prog.get("run_cnt") else float("nan")
    finally:
        jvm.kill()
        jvm.wait()
        for f in ("/tmp/perf-%d.map" % jvm.pid, "/tmp/jflame-%d.events" % jvm.pid, "/tmp/jflame-%d.status" % jvm.pid):
            try:
                os.unlink(f)
            except OSError:
                pass

try:
    with open(STATS, "w") as f:
        f.write("1\n")
    for r in range(rounds):
        order = configs[r % len(configs):] + configs[:r % len(configs)]
        for c in order:
            res[c].append(one(*c))
finally:
    with open(STATS, "w") as f:
        f.write(old + "\n")

print(f"== record_cost: HotSpot walker, BPF us per sample of a JVM thread (Stacks deep D, 499 Hz, "
      f"median of {rounds}) ==")
print("%-8s %-28s %10s %s" % ("depth", "walk", "us/sample", "runs"))
for c in configs:
    d, pfp, walker = c
    name = ("HotSpot walker" if walker else "frame pointers (--no-walker)") + (", PFP" if pfp else ", no PFP")
    print("%-8d %-28s %10.2f %s" % (d, name, statistics.median(res[c]), " ".join("%.2f" % x for x in res[c])))
w200 = statistics.median(res[(200, False, True)])
print(f"walker at 200 frames without PreserveFramePointer: {w200:.2f} us per sample; target < 10 us: "
      f"{'meets' if w200 < 10 else 'MISSES'}")
PY
