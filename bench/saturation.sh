#!/usr/bin/env bash
# saturation.sh [SECONDS]: the sample rate at which jflame's user space saturates one core
# (issue 31, item 6), and what it does past that: samples lost (counted) and whether the
# recording still ends on time. For each target and each rate in RATES (default
# "99 499 999 2999 4999 9999 19999 49999"), ROUNDS (3) runs of
# `jflame record -F RATE -d SECONDS -o X.folded` (SECONDS default 10), the rate order rotating
# each round. Targets (TARGETS, default "jvm fake host"):
#   jvm   record -p PID of a real JVM, agentless: KafkaStyle --format string-format with
#         -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints (after its ready line);
#   fake  record -p PID of the fake hostile JVM (jflame_fake_jvm --frames 2000 --threads 3: it runs
#         as nobody, 2000 code-cache stub frames on each spinning thread, their names rewritten);
#   host  record -a beside that fake JVM (the whole host).
# Per run: samples handled per second and lost (jflame's summary line), jflame's cores
# (user+sys from wait4's rusage of the jflame child over its wall time: its user space and the
# system calls it makes; the BPF program runs on the sampled tasks' time), how late it ended
# (wall time minus -d, start-up included; on time: <= 1 s) and its peak RSS (VmHWM from
# /proc/PID/status every 20 ms). One table per target, medians over the rounds; then the first
# rate at which jflame reaches ~1 core (>= 0.9) or loses more than 1% of its samples
# (interpolated between the two rates around it: the -F and the samples/s handled there), what
# happens past it (lost %, samples/s, cores, lateness), and jflame's CPU per sample handled
# (a least-squares line through every run: fixed seconds + us per sample; one core = 1 / that).
# Then the long-run memory figure (issue 31, item 3): peak RSS of `record -a -F LONG_FREQ (99)
# -d LONG_SECONDS (60)` beside the fake JVM against the same beside plain busy processes
# (one jflame_cpuhog per CPU), LONG_ROUNDS (1) pairs alternating the order, and their ratio
# (requirement <= 1.5x). LONG_SECONDS=0 skips it.
# QUICK=1: a smoke run (RATES "999 9999", SECONDS 3, ROUNDS 1, LONG_SECONDS 5); explicit
# settings still win. The default run takes about 16 minutes on 2 CPUs. Every process the
# script starts (JVM, fake JVM, hogs, jflame) is killed on exit, on errors and on signals too.
set -euo pipefail

# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bench_help "$@"

fake=${FAKE_JVM:-$build/tests/integration/fakejvm/jflame_fake_jvm}
if [[ ${QUICK:-0} == 1 ]]; then
  seconds=${1:-3}
  rates=${RATES:-999 9999}
  rounds=${ROUNDS:-1}
  long_seconds=${LONG_SECONDS:-5}
else
  seconds=${1:-10}
  rates=${RATES:-99 499 999 2999 4999 9999 19999 49999}
  rounds=${ROUNDS:-3}
  long_seconds=${LONG_SECONDS:-60}
fi
long_rounds=${LONG_ROUNDS:-1}
long_freq=${LONG_FREQ:-99}
targets=${TARGETS:-jvm fake host}

int_arg SECONDS "$seconds" 1
int_arg ROUNDS "$rounds" 1
int_arg LONG_SECONDS "$long_seconds" 0
int_arg LONG_ROUNDS "$long_rounds" 1
int_arg LONG_FREQ "$long_freq" 1
for r in $rates; do
  int_arg "a rate in RATES" "$r" 1
  ((r <= 50000)) || bench_die "jflame's -F goes up to 50000 (got $r in RATES)"
done
for t in $targets; do
  [[ $t == jvm || $t == fake || $t == host ]] || bench_die "TARGETS holds jvm, fake and/or host (got '$t')"
done
require_build "$jflame" "$jar" "$fake" "$hog"
[[ " $targets " == *" jvm "* ]] && require_java
((EUID == 0)) || bench_die "run it as root (jflame records -p and -a; the fake JVM drops to nobody itself)"

exec env PYTHONPATH="$root/bench" python3 - "$jflame" "$java" "$jar" "$fake" "$hog" "$seconds" "$rounds" \
  "$long_seconds" "$long_rounds" "$long_freq" "$rates" "$targets" <<'PY'
import os, re, select, signal, statistics, subprocess, sys, tempfile, time, shutil

from benchlib import cleanup, host_line

jflame, java, jar, fake, hog = sys.argv[1:6]
seconds, rounds, long_seconds, long_rounds, long_freq = (int(x) for x in sys.argv[6:11])
rates = sorted(int(x) for x in sys.argv[11].split())
targets = sys.argv[12].split()
NAME = "saturation"
NCPU = os.cpu_count()
SUMMARY = re.compile(r"jflame: (\d+) samples \((\d+) lost, .*\) in ([0-9.]+) s")
MAXRATE = "/proc/sys/kernel/perf_event_max_sample_rate"
CORES_AT, LOST_AT, ON_TIME = 0.9, 1.0, 1.0  # saturated: >= 0.9 cores or > 1% lost; on time: <= 1 s late

started = []  # every process started here, each its own session: killed (its group) on the way out
tmp = tempfile.mkdtemp(prefix="jflame-bench-saturation-")


def on_signal(sig, _frame):
    raise SystemExit(128 + sig)


for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
    signal.signal(s, on_signal)


def start(cmd, **kw):
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, start_new_session=True, **kw)
    started.append(p)
    return p


def stop(p):
    """SIGKILL to p's process group, then reaps p (unless wait4 did already)."""
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    if p.returncode is None:
        p.wait()
    if p in started:
        started.remove(p)
    cleanup(p.pid)


def kill_all():
    for p in list(started):
        stop(p)


def max_rate():
    with open(MAXRATE) as f:
        return int(f.read())


def vm_hwm(pid):
    """Peak RSS (VmHWM, KB) of pid so far; 0 when gone. Not wait4's ru_maxrss: after python's
    fork and exec it holds this (python) process's peak too."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def start_jvm(secs):
    log = open(os.path.join(tmp, "jvm.log"), "w+")
    p = start([java, "-XX:+UnlockDiagnosticVMOptions", "-XX:+DebugNonSafepoints", "-cp", jar,
               "jflame.examples.KafkaStyle", "--format", "string-format", "--seconds", str(secs)],
              stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while "jflame-example: ready" not in open(log.name).read():
        if p.poll() is not None or time.monotonic() > deadline:
            sys.exit(f"{NAME}: KafkaStyle did not get ready:\n" + open(log.name).read()[-2000:])
        time.sleep(0.2)
    return p, p.pid


def start_fake():
    p = start([fake, "--frames", "2000", "--threads", "3"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    line, deadline = b"", time.monotonic() + 10
    while not line.endswith(b"\n") and time.monotonic() < deadline:
        if select.select([p.stdout], [], [], 0.5)[0]:
            b = os.read(p.stdout.fileno(), 256)
            if not b:
                break
            line += b
    m = re.match(rb"fake-jvm: ready pid=(\d+)\n", line)
    if not m:
        sys.exit(f"{NAME}: the fake JVM did not start: {line!r}")
    pid = int(m.group(1))
    with open(f"/proc/{pid}/status") as f:
        uid = [l.split()[1] for l in f if l.startswith("Uid:")][0]
    if uid == "0":
        sys.exit(f"{NAME}: the fake JVM runs as root; it should have dropped to nobody")
    return p, pid


def start_hogs(secs):
    return [start([hog, str(secs)], stdout=subprocess.DEVNULL) for _ in range(NCPU)]


def record(target, freq, d):
    """One `jflame record TARGET -F freq -d d`: a dict of its figures. Exits when it fails."""
    out = os.path.join(tmp, "x.folded")
    err = tempfile.TemporaryFile(dir=tmp)
    cmd = [jflame, "record"] + target + ["-F", str(freq), "-d", str(d), "-o", out]
    t0 = time.monotonic()
    p = start(cmd, stdout=subprocess.DEVNULL, stderr=err)
    hwm, killed = 0, False
    while True:
        hwm = max(hwm, vm_hwm(p.pid))
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() - t0 > d + 60 and not killed:
            os.killpg(p.pid, signal.SIGKILL)
            killed = True
        time.sleep(0.02)
    wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    started.remove(p)
    err.seek(0)
    text = err.read().decode(errors="replace")
    err.close()
    m = SUMMARY.search(text)
    if killed or p.returncode != 0 or not m:
        sys.exit(f"{NAME}: {' '.join(cmd)} failed (exit {p.returncode}{', killed 60 s past -d' if killed else ''}):\n"
                 + text[-2000:])
    samples, lost, secs = int(m.group(1)), int(m.group(2)), float(m.group(3))
    cpu = ru.ru_utime + ru.ru_stime
    return {"rate": samples / secs, "samples": samples, "lost": lost,
            "lost%": 100.0 * lost / max(1, samples + lost), "cores": cpu / wall, "cpu": cpu,
            "late": wall - d, "rss": hwm / 1024.0, "summary": m.group(0)}


def sweep(label, target):
    """ROUNDS rounds over the rates, the order rotating each round: {rate: [figures per round]}."""
    res = {f: [] for f in rates}
    for r in range(rounds):
        k = r % len(rates)
        for f in rates[k:] + rates[:k]:
            x = record(target, f, seconds)
            res[f].append(x)
            print(f"{label} -F {f} round {r + 1}: {x['rate']:,.0f} samples/s, {x['lost']} lost ({x['lost%']:.1f}%), "
                  f"{x['cores']:.3f} cores ({x['cpu']:.2f} s CPU), {x['late']:+.2f} s late, "
                  f"peak RSS {x['rss']:.1f} MB", flush=True)
            time.sleep(0.5)
    return res


def med(xs, k):
    return statistics.median(x[k] for x in xs)


def table(res):
    lines = ["| -F | samples/s handled | lost % | jflame cores | late by (s) | peak RSS MB |",
             "|---:|---:|---:|---:|---:|---:|"]
    for f in rates:
        xs = res[f]
        cores = " ".join(f"{x['cores']:.3f}" for x in xs)
        lines.append(f"| {f} | {med(xs, 'rate'):,.0f} | {med(xs, 'lost%'):.1f} | {med(xs, 'cores'):.3f}"
                     f"{f' ({cores})' if len(xs) > 1 else ''} | {med(xs, 'late'):.2f} | {med(xs, 'rss'):.1f} |")
    return lines


def span(vals, fmt):
    lo, hi = fmt.format(min(vals)), fmt.format(max(vals))
    return lo if lo == hi else lo + "–" + hi


def saturation(label, res):
    """The saturation line and the past-it line of one target, from the medians."""
    m = [(f, med(res[f], "rate"), med(res[f], "cores"), med(res[f], "lost%"), max(x["late"] for x in res[f]))
         for f in rates]
    # jflame's CPU against the samples it handled, every run: cpu = fixed + per-sample x samples
    runs = [x for f in rates for x in res[f]]
    fit = None
    if len({x["samples"] for x in runs}) > 1:
        per, fixed = statistics.linear_regression([x["samples"] for x in runs], [x["cpu"] for x in runs])
        if per > 0:
            fit = (f"cost ({label}): {per * 1e6:.1f} us of jflame CPU per sample handled, {fixed:.2f} s fixed "
                   f"(least squares over the {len(runs)} runs): one core would handle about {1 / per:,.0f} samples/s")
    fits = [fit] if fit else []
    hit = next((i for i, (_, _, c, l, _) in enumerate(m) if c >= CORES_AT or l > LOST_AT), None)
    if hit is None:
        f, sps, c, l, late = m[-1]
        return [f"saturation ({label}): not reached up to -F {f}: {sps:,.0f} samples/s handled with "
                f"{c:.2f} cores of jflame, {l:.1f}% lost, at most {late:.2f} s late"] + fits
    f1, s1, c1, l1, _ = m[hit]
    why = []
    if c1 >= CORES_AT:
        why.append(f"{c1:.2f} cores")
    if l1 > LOST_AT:
        why.append(f"{l1:.1f}% lost")
    if hit == 0:
        est_f, est_s, how = f1, s1, f"already at the lowest rate, -F {f1}: {', '.join(why)}"
    else:
        f0, s0, c0, l0, _ = m[hit - 1]
        ts = []
        if c1 >= CORES_AT and c1 > c0:
            ts.append((CORES_AT - c0) / (c1 - c0))
        if l1 > LOST_AT and l1 > l0:
            ts.append((LOST_AT - l0) / (l1 - l0))
        t = min(1.0, max(0.0, min(ts))) if ts else 1.0
        est_f, est_s = f0 + t * (f1 - f0), s0 + t * (s1 - s0)
        how = (f"between -F {f0} ({s0:,.0f} samples/s, {c0:.2f} cores, {l0:.1f}% lost) and -F {f1} "
               f"({', '.join(why)})")
    if c1 >= CORES_AT:
        lines = [f"saturation ({label}): jflame's user space reaches ~1 core at about {est_s:,.0f} samples/s "
                 f"(-F {est_f:,.0f} on this {NCPU}-CPU machine; {how})"]
    else:
        lines = [f"saturation ({label}): jflame falls behind (more than {LOST_AT:.0f}% of samples lost) at about "
                 f"{est_s:,.0f} samples/s (-F {est_f:,.0f} on this {NCPU}-CPU machine; {how}) before its user "
                 f"space reaches one core ({c1:.2f} cores at -F {f1})"]
    past = m[hit:]
    late = max(x[4] for x in past)
    lines.append(f"past it ({label}, -F {past[0][0]}..{past[-1][0]}): {span([x[3] for x in past], '{:.1f}')}% of "
                 f"samples lost (counted in the summary), {span([x[1] for x in past], '{:,.0f}')} samples/s handled, "
                 f"{span([x[2] for x in past], '{:.2f}')} cores of jflame, ended at most {late:.2f} s after -d: "
                 f"{'on time' if late <= ON_TIME else 'LATE'} (on time: <= {ON_TIME:.0f} s)")
    return lines + fits


def long_run():
    """Pairs of `record -a` beside the fake JVM and beside busy hogs, the order alternating."""
    got = {"fake": [], "plain": []}
    for r in range(long_rounds):
        for side in (("fake", "plain") if r % 2 == 0 else ("plain", "fake")):
            if side == "fake":
                bg = [start_fake()[0]]
            else:
                bg = start_hogs(long_seconds + 30)
            try:
                time.sleep(1)
                x = record(["-a"], long_freq, long_seconds)
            finally:
                for p in bg:
                    stop(p)
            got[side].append(x)
            print(f"long run {r + 1}, record -a beside {'the fake JVM' if side == 'fake' else f'{NCPU} cpuhogs'}: "
                  f"peak RSS {x['rss']:.1f} MB, {x['samples']} samples, {x['lost']} lost, {x['late']:+.2f} s late",
                  flush=True)
            time.sleep(0.5)
    return got


rate0 = max_rate()
host_line(NAME, f"jflame record -F RATE -d {seconds} on {', '.join(targets)}; rates {' '.join(map(str, rates))}, "
          f"{rounds} round(s); long run {long_seconds} s x {long_rounds}; perf_event_max_sample_rate {rate0}")
results, long_res = {}, None
labels = {"jvm": "real JVM, record -p (KafkaStyle string-format, agentless)",
          "fake": "fake hostile JVM, record -p (2000 stub frames x 3 threads, names rewritten)",
          "host": "record -a beside the fake hostile JVM"}
try:
    for t in targets:
        if t == "jvm":
            p, pid = start_jvm(rounds * len(rates) * (seconds + 6) + 120)
        else:
            p, pid = start_fake()
        try:
            time.sleep(1)
            results[t] = sweep(t, ["-p", str(pid)] if t != "host" else ["-a"])
        finally:
            stop(p)
    if long_seconds > 0:
        long_res = long_run()
finally:
    kill_all()
    shutil.rmtree(tmp, ignore_errors=True)

rate1 = max_rate()
print(f"== {NAME}: jflame record -F RATE -d {seconds}, medians of {rounds} round(s); {NCPU} CPUs ==")
for t in targets:
    print(f"\n{t}: {labels[t]}")
    print("\n".join(table(results[t])))
    print("\n".join(saturation(t, results[t])))
if rate1 != rate0:
    print(f"\nnote: the kernel lowered perf_event_max_sample_rate from {rate0} to {rate1} during the run "
          "(perf interrupts took too long): rates above it were capped")
if long_res:
    f, pl = statistics.median(x["rss"] for x in long_res["fake"]), statistics.median(x["rss"] for x in long_res["plain"])
    pairs = " ".join(f"{a['rss'] / b['rss']:.2f}" for a, b in zip(long_res["fake"], long_res["plain"]))
    ratio = f / pl
    print(f"\nlong run: record -a -F {long_freq} -d {long_seconds}, peak RSS beside the fake JVM {f:.1f} MB, beside "
          f"{NCPU} cpuhogs {pl:.1f} MB: {ratio:.2f}x (pairs: {pairs}); requirement <= 1.5x: "
          f"{'meets' if ratio <= 1.5 else 'MISSES'}; at most "
          f"{max(x['late'] for v in long_res.values() for x in v):.2f} s late")
PY
