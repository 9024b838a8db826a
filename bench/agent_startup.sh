#!/usr/bin/env bash
# agent_startup.sh [RUNS]: wall time of a short JVM workload without the agent, with it (inline chains, the default)
# and with =nounfold, interleaved in rotating order on the same machine; prints medians, ratios, the "at most 3%
# slower" verdict, and inlining on against off (time and bytes per compiled method).
set -euo pipefail

# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bench_help "$@"

runs=${1:-15}
work=${WORK:-startup 300}          # Workload mode and argument
jvm_opts=${JVM_OPTS:-}             # extra JVM flags for every run (A and B alike)

require_build "$agent" "$jar"
require_java
int_arg RUNS "$runs" 3

exec env PYTHONPATH="$root/bench" python3 - "$java" "$agent" "$jar" "$runs" "$work" "$jvm_opts" <<'PY'
import math, os, shlex, statistics, subprocess, sys, tempfile, time

from benchlib import cleanup, cleanup_all, events_size, median_ci, status_of

java, agent, jar, runs, work, jvm_opts = sys.argv[1:]
runs = int(runs)
extra = shlex.split(jvm_opts)
TARGET = 1.03
configs = [("none", None), ("agent", ""), ("agent=nounfold", "=nounfold")]  # agent: inline chains unfolded (default)
created = set()




def run(opt):
    """One JVM run; returns (wall s, cpu s, status dict or None)."""
    cmd = [java] + extra
    if opt is not None:
        cmd.append(f"-agentpath:{agent}{opt}")
    cmd += ["-cp", jar, "jflame.examples.Workload"] + work.split()
    with tempfile.TemporaryFile() as out:
        t0 = time.monotonic_ns()
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
        created.add(p.pid)
        _, wstatus, ru = os.wait4(p.pid, 0)
        wall = (time.monotonic_ns() - t0) / 1e9
        p.returncode = os.waitstatus_to_exitcode(wstatus)
        st = status_of(p.pid) if opt is not None else None
        if st is not None:
            st["events_bytes"] = str(events_size(p.pid))
        cleanup(p.pid)
        if p.returncode != 0:
            out.seek(0)
            sys.stderr.write(out.read().decode(errors="replace")[-4000:])
            sys.exit(f"agent_startup: JVM exited with {p.returncode}: {' '.join(cmd)}")
    if opt is not None:
        if st is None:
            sys.exit(f"agent_startup: the agent wrote no /tmp/jflame-{p.pid}.status: {' '.join(cmd)}")
        if st.get("error") or st.get("write_errors", "0") != "0" or st.get("state") != "exited":
            sys.exit(f"agent_startup: agent status reports trouble (state={st.get('state')} "
                     f"write_errors={st.get('write_errors')} error={st.get('error')!r}): {' '.join(cmd)}")
    return wall, ru.ru_utime + ru.ru_stime, st



def iqr_pct(xs):
    q = statistics.quantiles(xs, n=4)
    return 100 * (q[2] - q[0]) / statistics.median(xs)


try:
    version = subprocess.run([java, "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    load0 = open("/proc/loadavg").read().split()[0]
    print(f"agent_startup: {version}; {os.cpu_count()} CPUs; load {load0}")
    print(f"workload: java {' '.join(extra + ['-cp', 'jflame-examples.jar', 'jflame.examples.Workload'] + work.split())}")
    print(f"{runs} rounds of none / agent (inlining on) / agent=nounfold, order rotated each round; wall = monotonic clock "
          f"around fork..wait4, cpu = user+sys of the JVM (wait4 rusage)")
    for _, opt in configs:  # warm-up: page cache, CDS archive; not counted
        run(opt)

    wall = {name: [] for name, _ in configs}
    cpu = {name: [] for name, _ in configs}
    methods = {name: [] for name, _ in configs}
    sts = {name: [] for name, _ in configs}
    for r in range(runs):
        order = configs[r % 3:] + configs[:r % 3]
        for name, opt in order:
            w, c, st = run(opt)
            wall[name].append(w)
            cpu[name].append(c)
            if st:
                methods[name].append(int(st["compiled_loads"]) + int(st["dynamic_code"]))
                sts[name].append(st)
        print(f"round {r + 1:2d}: " + "  ".join(
            f"{name} {wall[name][-1]:.3f}s/{cpu[name][-1]:.3f}cpu" for name, _ in configs), flush=True)

    load1 = open("/proc/loadavg").read().split()[0]
    base_w = statistics.median(wall["none"])
    base_c = statistics.median(cpu["none"])
    lines = []
    lines.append(f"== agent_startup ({version}; Workload {work}; {runs} interleaved rounds; "
                 f"{os.cpu_count()} CPUs, load {load0} -> {load1}) ==")
    lines.append(f"{'config':<13} {'wall med':>9} {'IQR':>6} {'ratio':>7} {'pair-ratio med [95% CI]':>26} "
                 f"{'cpu med':>8} {'cpu ratio':>9} {'methods':>7}  target <=3% slower")
    for name, _ in configs:
        wm = statistics.median(wall[name])
        cm = statistics.median(cpu[name])
        meth = f"{statistics.median(methods[name]):.0f}" if methods[name] else "-"
        if name == "none":
            lines.append(f"{name:<13} {wm:8.3f}s {iqr_pct(wall[name]):5.1f}% {'-':>7} {'-':>26} "
                         f"{cm:7.3f}s {'-':>9} {meth:>7}  -")
            continue
        pairs = [a / b for a, b in zip(wall[name], wall["none"])]
        pm, lo, hi = median_ci(pairs)
        ratio = wm / base_w
        if hi <= TARGET:
            verdict = "yes"
        elif lo > TARGET:
            verdict = "NO"
        else:
            verdict = ("yes" if pm <= TARGET else "no") + " (CI straddles 1.03: within noise)"
        lines.append(f"{name:<13} {wm:8.3f}s {iqr_pct(wall[name]):5.1f}% {ratio:7.3f} "
                     f"{f'{pm:.3f} [{lo:.3f}, {hi:.3f}]':>26} {cm:7.3f}s {cm / base_c:9.3f} {meth:>7}  {verdict}")
    lines.append("ratio = median(with)/median(none); pair-ratio = median over rounds of with/none in the same round; "
                 "verdict uses the pair-ratio median and its CI")
    # inlining on (the default) against off: same rounds, same machine state
    on, off = "agent", "agent=nounfold"
    wm, wlo, whi = median_ci([a / b for a, b in zip(wall[on], wall[off])])
    cm, clo, chi = median_ci([a / b for a, b in zip(cpu[on], cpu[off])])
    lines.append(f"inlining on/off ({on} / {off}, per round): wall {wm:.3f} [95% CI {wlo:.3f}, {whi:.3f}], "
                 f"cpu {cm:.3f} [{clo:.3f}, {chi:.3f}]")
    for name in (on, off):
        comp = statistics.median(int(s["compiled_loads"]) for s in sts[name])
        mb = statistics.median(int(s["map_bytes"]) / int(s["compiled_loads"]) for s in sts[name])
        eb = statistics.median(int(s["events_bytes"]) / int(s["compiled_loads"]) for s in sts[name])
        ml = statistics.median(int(s["map_lines"]) / int(s["compiled_loads"]) for s in sts[name])
        lines.append(f"  {name:<15} {comp:6.0f} compiled methods; per compiled method: map {mb:6.1f} B "
                     f"({ml:.2f} lines), events log {eb:6.1f} B (stubs' lines included)")
    print()
    print("\n".join(lines))
finally:
    cleanup_all(created)
PY
