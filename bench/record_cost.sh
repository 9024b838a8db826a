#!/usr/bin/env bash
# record_cost.sh [SECONDS]: what `jflame record -a -F 99` costs: BPF run time per sample
# (kernel.bpf_stats_enabled) and jflame's own CPU (user+sys) against wall time, with every CPU busy;
# then the HotSpot walker's BPF time per sample of a JVM whose stack is 20, 200 and 1000 frames deep,
# with and without -XX:+PreserveFramePointer (PART=host or PART=jvm runs one part only).
# PART=pid (only when asked): `jflame record -p PID -F 99` on a busy two-thread JVM (Workload work;
# PID_WORKLOAD=kafka: KafkaStyle; the agent loaded at its start, or with PID_AGENT=0 none: a plain JVM
# with -XX:+DebugNonSafepoints, named from its memory), ROUNDS (3) runs of PID_SECONDS (60):
# jflame's user+sys CPU until the first sample is taken, its peak RSS (VmHWM), and its steady-state
# CPU from STEADY_FROM (20) s to the end; then per round a 16-s `-F 5000` run: jflame's user time per
# sample from 5 s to 15 s; medians.
set -euo pipefail

# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bench_help "$@"

seconds=${1:-30}
freq=${FREQ:-99}

require_build "$jflame" "$hog"
int_arg SECONDS "$seconds" 5

part=${PART:-all}
if [[ $part == pid ]]; then
require_build "$jflame" "$agent" "$jar"
require_java
pid_seconds=${PID_SECONDS:-60}
steady_from=${STEADY_FROM:-20}
int_arg PID_SECONDS "$pid_seconds" 5
int_arg STEADY_FROM "$steady_from" 1
((steady_from + 2 <= pid_seconds)) || bench_die "STEADY_FROM must be at least 2 s before PID_SECONDS"
exec env PYTHONPATH="$root/bench" python3 - "$jflame" "$java" "$agent" "$jar" "$pid_seconds" "$freq" \
  "${ROUNDS:-3}" "$steady_from" <<'PY'
# The first sample: the moment the profile_sample program's run_cnt (kernel.bpf_stats_enabled) turns
# nonzero, read through the bpf syscall every 2 ms; jflame's CPU is read just before each look, so the
# figure is jflame's CPU when it had loaded and attached everything the first sample needs.
import ctypes, os, re, statistics, subprocess, sys, tempfile, time

from benchlib import cleanup, example_start, host_line, wait_jflame

jflame, java, agent, jar = sys.argv[1:5]
seconds, freq, rounds, steady_from = (int(x) for x in sys.argv[5:9])
libc = ctypes.CDLL(None, use_errno=True)
SYS_BPF, PROG_GET_NEXT_ID, PROG_GET_FD_BY_ID, OBJ_GET_INFO_BY_FD = 321, 11, 13, 15
INFO_SIZE, INFO_NAME, INFO_RUN_CNT = 232, 64, 200  # struct bpf_prog_info: its size, name, run_cnt
HZ = os.sysconf("SC_CLK_TCK")


def bpf(cmd, attr):
    return libc.syscall(SYS_BPF, cmd, ctypes.byref(attr), ctypes.sizeof(attr))


def prog_ids():
    ids, attr = [], (ctypes.c_uint32 * 4)()
    while bpf(PROG_GET_NEXT_ID, attr) == 0:
        ids.append(attr[1])
        attr[0] = attr[1]
    return ids


def prog_info(prog_id):
    """(name, run_cnt) of a BPF program, None when it is gone."""
    fd = bpf(PROG_GET_FD_BY_ID, (ctypes.c_uint32 * 4)(prog_id))
    if fd < 0:
        return None
    info = (ctypes.c_uint8 * INFO_SIZE)()
    attr = (ctypes.c_uint32 * 4)(fd, INFO_SIZE)
    ctypes.c_uint64.from_buffer(attr, 8).value = ctypes.addressof(info)
    rc = bpf(OBJ_GET_INFO_BY_FD, attr)
    os.close(fd)
    if rc != 0:
        return None
    name = bytes(info[INFO_NAME:INFO_NAME + 16]).split(b"\0")[0].decode()
    return name, ctypes.c_uint64.from_buffer(info, INFO_RUN_CNT).value


def cpu_s(pid):
    """The CPU time of every thread of pid (user + system), in ns precision: the sum of the
    threads' /proc/PID/task/TID/schedstat run times (utime + stime count 10-ms ticks)."""
    ns = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                ns += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass
    return ns / 1e9


def one(jvm_pid, out):
    """(CPU s at the first sample, peak RSS MiB, steady % of a core, total CPU s, summary line)."""
    known = set(prog_ids())
    t0 = time.monotonic()
    p = subprocess.Popen([jflame, "record", "-p", str(jvm_pid), "-F", str(freq), "-d", str(seconds), "-o",
                          os.path.join(out, "pid.folded")], stderr=subprocess.PIPE, text=True)
    first, mine = None, []
    while first is None and time.monotonic() - t0 < 30 and p.poll() is None:
        cpu = cpu_s(p.pid)
        for i in set(prog_ids()) - known:
            known.add(i)
            if (prog_info(i) or ("",))[0] == "profile_sample":
                mine.append(i)
        if any((prog_info(i) or ("", 0))[1] for i in mine):
            first = cpu
        time.sleep(0.002)
    time.sleep(max(0, steady_from - (time.monotonic() - t0)))
    s0, st0 = cpu_s(p.pid), time.monotonic()
    time.sleep(max(1, seconds - 1 - (time.monotonic() - t0)))  # to a second before its end
    s1, st1 = cpu_s(p.pid), time.monotonic()
    _, ru, err = wait_jflame(p, t0, "record_cost")
    if first is None:
        sys.exit("record_cost: no sample seen in 30 s (kernel.bpf_stats_enabled unsupported?)")
    summary = err.strip().splitlines()[-1] if err.strip() else ""
    return first, ru.ru_maxrss / 1024, (s1 - s0) / (st1 - st0) * 100, ru.ru_utime + ru.ru_stime, summary


def per_sample(jvm_pid, out, hz=5000, secs=16):
    """jflame's user time per sample at hz, from 5 s to a second before the end (steady state)."""
    t0 = time.monotonic()
    p = subprocess.Popen([jflame, "record", "-p", str(jvm_pid), "-F", str(hz), "-d", str(secs), "-o",
                          os.path.join(out, "fast.folded")], stderr=subprocess.PIPE, text=True)
    time.sleep(5)
    u0, c0, w0 = ticks(p.pid), cpu_s(p.pid), time.monotonic()
    time.sleep(secs - 6)
    u1, c1, w1 = ticks(p.pid), cpu_s(p.pid), time.monotonic()
    _, ru, err = wait_jflame(p, t0, "record_cost")
    summary = err.strip().splitlines()[-1] if err.strip() else ""
    m = re.match(r"jflame: (\d+) samples .* in ([0-9.]+) s", summary)
    if not m:
        sys.exit("record_cost: no summary from the %d Hz recording: %r" % (hz, summary))
    rate = int(m.group(1)) / float(m.group(2))
    # user time: the run time (ns) times the user share of the ticks
    user = (c1 - c0) * (u1[0] - u0[0]) / max(1, (u1[0] - u0[0]) + (u1[1] - u0[1]))
    return user / (rate * (w1 - w0)) * 1e6, rate


def ticks(pid):
    """(utime, stime) of pid in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        v = f.read().rsplit(")", 1)[1].split()
    return int(v[11]), int(v[12])


what = os.environ.get("PID_WORKLOAD", "busy")
with_agent = os.environ.get("PID_AGENT", "1") != "0"
if what == "kafka":
    name = "KafkaStyle"
else:
    name = "a busy two-thread JVM (Workload work, 2 threads)"
name += ", the agent in the JVM" if with_agent else ", no agent (agentless)"
plain = ["-XX:+UnlockDiagnosticVMOptions", "-XX:+DebugNonSafepoints"]
host_line("record_cost", f"jflame record -p PID -F {freq} -d {seconds} on {name}, {rounds} rounds")
STATS = "/proc/sys/kernel/bpf_stats_enabled"
old = open(STATS).read().strip()
out = tempfile.mkdtemp(prefix="jflame-bench-")
if what == "kafka":
    jvm, log = example_start("record_cost", java, agent if with_agent else None, jar, "jflame.examples.KafkaStyle",
                             ["--seconds", str((seconds + 25) * rounds + 60)],
                             jvm_flags=("-XX:+PreserveFramePointer",) if with_agent else plain)
else:
    jvm = subprocess.Popen([java] + ([f"-agentpath:{agent}=quiet"] if with_agent else plain) +
                           ["-cp", jar, "jflame.examples.Workload", "work", "1000000000", "2"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(5)  # the JIT settles
res, fast = [], []
try:
    with open(STATS, "w") as f:
        f.write("1\n")
    time.sleep(3)
    for r in range(rounds):
        res.append(one(jvm.pid, out))
        fast.append(per_sample(jvm.pid, out))
        print(f"round {r + 1}: first sample at {res[-1][0]:.2f} s CPU, peak RSS {res[-1][1]:.1f} MiB, steady "
              f"{res[-1][2]:.3f}% of a core; {res[-1][4]}; at 5 kHz ({fast[-1][1]:.0f} samples/s) "
              f"{fast[-1][0]:.2f} us user time per sample", flush=True)
finally:
    with open(STATS, "w") as f:
        f.write(old + "\n")
    jvm.kill()
    jvm.wait()
    cleanup(jvm.pid)


def med(k):
    return statistics.median(x[k] for x in res)


def spread(k, fmt):
    return " ".join(fmt % x[k] for x in res)


print(f"== record_cost: jflame record -p PID -F {freq} -d {seconds}, {name}, median of {rounds} ==")
print(f"CPU before the first sample: {med(0):.2f} s (user+sys; {spread(0, '%.2f')}); target <= 0.2 s: "
      f"{'meets' if med(0) <= 0.2 else 'MISSES'}")
print(f"peak RSS (VmHWM): {med(1):.1f} MiB ({spread(1, '%.1f')}); target <= 30 MiB: "
      f"{'meets' if med(1) <= 30 else 'MISSES'}")
print(f"steady state ({steady_from} s to {seconds - 1} s): {med(2):.3f}% of one core ({spread(2, '%.3f')}); "
      f"target <= 0.1%: {'meets' if med(2) <= 0.1 else 'MISSES'}")
print(f"whole run: {med(3):.2f} s user+sys ({spread(3, '%.2f')})")
us = statistics.median(x[0] for x in fast)
print(f"user time per sample at -F 5000 (steady, {statistics.median(x[1] for x in fast):.0f} samples/s): {us:.2f} us "
      f"({' '.join('%.2f' % x[0] for x in fast)}); target <= 1 us: {'meets' if us <= 1 else 'MISSES'}")
PY
fi
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
