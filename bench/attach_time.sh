#!/usr/bin/env bash
# attach_time.sh [ROUNDS]: `jflame attach` into a JVM with a warm code cache (~7000 compiled methods), per JDK:
# wall time until the map is complete, map entries vs the JVM's nmethods, and the safepoints/handshakes the target
# logs during the attach vs an equally long quiet window before it; `jattach ... load` of the same agent as referee.
set -euo pipefail

# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bench_help "$@"

rounds=${1:-7}
# the JVMs to measure: Java 17 and, when installed, Temurin 25
javas=${JAVAS:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java /usr/lib/jvm/temurin-25-jdk-amd64/bin/java}
target_opts=${TARGET_OPTS:--XX:+PreserveFramePointer -Xcomp -XX:TieredStopAtLevel=1}
jattach=${JATTACH-$(command -v jattach || true)}   # JATTACH= (empty) skips the referee

require_build "$jflame" "$agent" "$jar"
int_arg ROUNDS "$rounds" 3
found=()
for j in $javas; do
  if [[ -x $j && -x $(dirname "$j")/jcmd ]]; then
    found+=("$j")
  else
    echo "attach_time: skipping $j (no such JDK, or it has no jcmd)" >&2
  fi
done
((${#found[@]} > 0)) || bench_die "no JDK found; set JAVAS='/path/to/bin/java ...' or run scripts/deps.sh"

# The JVM's share of the replay: a do-nothing agent that times GenerateEvents, loaded with jattach after each run.
replay_dir=$(mktemp -d)
trap 'rm -rf "$replay_dir"' EXIT
replay=
java_home=$(dirname "$(dirname "$(readlink -f "${found[0]}")")")
if [[ -n $jattach ]] && command -v cc >/dev/null &&
  cc -O2 -shared -fPIC -I"$java_home/include" -I"$java_home/include/linux" \
    -o "$replay_dir/libreplay.so" "$root/bench/replay_agent.c"; then
  replay=$replay_dir/libreplay.so
else
  echo "attach_time: no replay floor (needs jattach and cc)" >&2
fi

PYTHONPATH="$root/bench" python3 - "$jflame" "$agent" "$jar" "$rounds" "$target_opts" "$jattach" "$replay" \
  "$root/bench/AttachTarget.java" "${found[@]}" <<'PY'
import os, re, select, shlex, shutil, signal, statistics, subprocess, sys, tempfile, time

from benchlib import cleanup, cleanup_all, median_ci, status_of

jflame, agent, jar, rounds, target_opts, jattach, replay, target_src, *javas = sys.argv[1:]
rounds = int(rounds)
opts = shlex.split(target_opts)
QUIET_S = 1.0     # idle time between "ready" and the attach: the "1 s before" window
AFTER_S = 1.0     # idle time after the attach returns, before jcmd: the "1 s from attach" window
IDLE_MS = 60_000  # the target's sleep; we kill it long before
MAX_RETRIES = 3   # per round, when another process attached to our JVM first
tmpdir = tempfile.mkdtemp(prefix="jflame-attach-bench-")
created = set()
foreign = 0

EVENT = re.compile(r'^\[(\d+)ns\].*?(Safepoint|Handshake) "([^"]+)".*?(?:Total|Total completion time): (\d+) ns')


def short_version(java):
    out = subprocess.run([java, "-version"], capture_output=True, text=True, cwd=tmpdir).stderr
    m = re.search(r'version "([^"]+)"', out)
    vendor = "Temurin" if "Temurin" in out else "OpenJDK"
    return f"{vendor} {m.group(1) if m else '?'}", out.splitlines()[0]


jdks = [(java, *short_version(java)) for java in javas]
tools = [("jflame", None)] + ([("jattach", jattach)] if jattach else [])
configs = [(java, label, tool, exe) for java, label, _ in jdks for tool, exe in tools]


def count_lines(path):
    try:
        with open(path, "rb") as f:
            return sum(1 for _ in f)
    except FileNotFoundError:
        return 0


def read_events(log):
    """(kind, name, end_ns, dur_ns) of every safepoint and handshake the JVM logged."""
    ev = []
    try:
        with open(log) as f:
            for line in f:
                m = EVENT.match(line)
                if m:
                    ev.append((m.group(2), m.group(3), int(m.group(1)), int(m.group(4))))
    except FileNotFoundError:
        pass
    return ev


def in_window(ev, kind, a, b):
    """Events of that kind overlapping [a, b] (monotonic ns): (count, total ns, max ns, names)."""
    hit = [(n, d) for k, n, end, d in ev if k == kind and end - d < b and end > a]
    return len(hit), sum(d for _, d in hit), max((d for _, d in hit), default=0), sorted({n for n, _ in hit})


def stop(p):
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def one_run(java, tool, exe, n):
    """One fresh target JVM, one attach. Returns a dict of figures, or None when another process attached first."""
    global foreign
    log = os.path.join(tmpdir, f"safepoint-{n}.log")
    err = os.path.join(tmpdir, f"jvm-{n}.err")
    cmd = [java] + opts + [f"-Xlog:safepoint=info,handshake=info:file={log}:timenanos,uptimenanos",
                           "-cp", jar, target_src, str(IDLE_MS)]
    with open(err, "wb") as errf:
        # cwd = our temp dir: the attach's .attach_pid file lands there
        p = subprocess.Popen(cmd, cwd=tmpdir, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=errf)
    created.add(p.pid)
    try:
        # ---- wait until the JVM says its JIT went quiet
        deadline = time.monotonic() + 120
        buf = b""
        while not re.search(rb"attach-target: ready[^\n]*\n", buf):
            if time.monotonic() > deadline or p.poll() is not None:
                raise RuntimeError(f"the target never said ready (exit {p.poll()}): {' '.join(cmd)}\n"
                                   + open(err, errors="replace").read()[-3000:])
            r, _, _ = select.select([p.stdout], [], [], 1.0)
            if r:
                buf += os.read(p.stdout.fileno(), 4096)
        ready = time.monotonic_ns()
        line = re.search(rb"attach-target: ready[^\n]*", buf).group().decode()
        clock_skew = ready - int(line.split()[2])  # JVM nanoTime vs ours: same clock, so small and >= 0
        jit_busy = "jit-busy" in line
        time.sleep(QUIET_S)
        if status_of(p.pid) is not None:   # another process (a `jflame record -a`?) loaded the agent first
            foreign += 1
            return None

        # ---- the attach
        if tool == "jflame":
            acmd = [jflame, "attach", "--agent", agent, str(p.pid)]
        else:
            acmd = [exe, str(p.pid), "load", agent, "true"]
        t0 = time.monotonic_ns()
        res = subprocess.run(acmd, stdin=subprocess.DEVNULL, capture_output=True, text=True)
        t1 = time.monotonic_ns()
        lines_now = count_lines(f"/tmp/perf-{p.pid}.map")
        st = status_of(p.pid)
        out = (res.stdout + res.stderr).strip()
        if res.returncode != 0:
            raise RuntimeError(f"{' '.join(acmd)} failed ({res.returncode}): {out}")
        if tool == "jflame" and "already loaded" in out:
            foreign += 1
            return None
        if st is None or st.get("mode") != "attach" or st.get("state") != "running" or st.get("error") \
                or st.get("write_errors", "0") != "0":
            raise RuntimeError(f"agent status reports trouble after {' '.join(acmd)}: {st} / {out}")
        if int(st["started_ns"]) < t0:
            foreign += 1
            return None

        # ---- after: does the map grow, what does the JVM say it has compiled
        time.sleep(AFTER_S)
        lines_later = count_lines(f"/tmp/perf-{p.pid}.map")
        jcmd = os.path.join(os.path.dirname(java), "jcmd")
        # cwd: jcmd is a JVM too; should someone attach to it as it exits, their .attach_pid file lands in tmpdir
        cl = subprocess.run([jcmd, str(p.pid), "Compiler.codelist"], capture_output=True, text=True, cwd=tmpdir)
        nmethods = sum(1 for l in cl.stdout.splitlines() if re.match(r"^\d+ ", l))
        floor = None
        if replay:  # last, outside the windows: the JVM's own GenerateEvents time with a do-nothing listener
            rout = os.path.join(tmpdir, f"replay-{n}.txt")
            subprocess.run([jattach, str(p.pid), "load", replay, "true", rout], capture_output=True)
            try:
                with open(rout) as f:
                    floor = {k: int(v) for k, v in (kv.split("=") for kv in f.read().split())}
                os.unlink(rout)
            except (FileNotFoundError, ValueError):
                pass
    finally:
        stop(p)
        cleanup(p.pid)
    ev = read_events(log)
    d = t1 - t0
    fig = {
        "wall": d / 1e9,
        "pre_agent": (int(st["started_ns"]) - t0) / 1e9,        # process, attach protocol, dlopen
        "agent": (int(st["updated_ns"]) - int(st["started_ns"])) / 1e9,  # Agent_OnAttach: set-up, replay, flush
        "map_now": lines_now, "map_status": int(st["map_lines"]), "map_later": lines_later,
        "loads": int(st["compiled_loads"]), "dynamic": int(st["dynamic_code"]), "nmethods": nmethods,
        "skew_ms": clock_skew / 1e6, "jit_busy": jit_busy, "logged": len(ev),
        "tool_out": out, "floor": floor,
    }
    for kind in ("Safepoint", "Handshake"):
        fig[kind] = {
            "quiet": in_window(ev, kind, t0 - d, t0),
            "attach": in_window(ev, kind, t0, t1),
            "1s-before": in_window(ev, kind, t0 - int(QUIET_S * 1e9), t0),
            "1s-from": in_window(ev, kind, t0, t0 + int(AFTER_S * 1e9)),
        }
    for f in (log, err):
        os.unlink(f)
    return fig


def run(cfg, n):
    java, label, tool, exe = cfg
    for _ in range(MAX_RETRIES + 1):
        fig = one_run(java, tool, exe, n)
        if fig is not None:
            return fig
        print(f"  ({label} {tool}: another process attached to our JVM first; round redone)", flush=True)
    sys.exit("attach_time: other processes keep attaching to the target JVMs (a `jflame record -a` running?)")


def fmt_ms(xs):
    return f"{statistics.median(xs) * 1e3:6.1f}"


try:
    load0 = open("/proc/loadavg").read().split()[0]
    print(f"attach_time: {os.cpu_count()} CPUs; load {load0}; JDKs: " + "; ".join(v for _, _, v in jdks))
    print(f"target: java {' '.join(opts)} -cp jflame-examples.jar bench/AttachTarget.java "
          f"(javac in memory + Workload startup 5, then idle); attach {QUIET_S:.0f} s after its JIT went quiet")
    print(f"tools: jflame attach --agent libjflame-agent.so PID" +
          (f"; {os.path.basename(jattach)} PID load libjflame-agent.so true" if jattach else "; jattach: not installed"))
    print(f"{rounds} rounds of {len(configs)} fresh JVMs each, order rotated each round; wall = monotonic clock "
          f"around the attach command")
    n = 0
    for java, label, _ in jdks:  # warm-up: page cache, CDS archive; not counted
        run((java, label, "jflame", None), n)
        n += 1
    res = {c: [] for c in configs}
    for r in range(rounds):
        order = configs[r % len(configs):] + configs[:r % len(configs)]
        parts = []
        for cfg in order:
            fig = run(cfg, n)
            n += 1
            res[cfg].append(fig)
            sp = fig["Safepoint"]["attach"]
            parts.append(f"{cfg[1].split()[1].split('.')[0]}/{cfg[2]} {fig['wall'] * 1e3:.0f}ms "
                         f"{fig['map_now']}e sp{sp[0]}")
        print(f"round {r + 1:2d}: " + "  ".join(parts), flush=True)

    load1 = open("/proc/loadavg").read().split()[0]
    L = []
    L.append(f"== attach_time ({rounds} rounds, fresh JVM each; target -Xcomp C1 javac+Workload, idle; "
             f"{os.cpu_count()} CPUs, load {load0} -> {load1}) ==")
    L.append(f"{'jvm / tool':<26} {'wall med [min, max] ms':>22} {'pre-agent':>9} {'agent':>6} {'entries':>7} "
             f"{'nmethods':>8} {'us/entry':>8} {'agent us/e':>10}  map complete at return")
    for cfg in configs:
        rs = res[cfg]
        wall = [f["wall"] for f in rs]
        entries = statistics.median(f["map_now"] for f in rs)
        complete = sum(f["map_now"] == f["map_status"] == f["loads"] + f["dynamic"] for f in rs)
        same_nm = sum(f["loads"] == f["nmethods"] for f in rs)
        grew = sum(f["map_later"] > f["map_now"] for f in rs)
        usper = statistics.median(f["wall"] / f["map_now"] * 1e6 for f in rs)
        agent_usper = statistics.median(f["agent"] / f["map_now"] * 1e6 for f in rs)
        L.append(f"{cfg[1] + ' / ' + cfg[2]:<26} {statistics.median(wall) * 1e3:7.1f} "
                 f"[{min(wall) * 1e3:5.1f}, {max(wall) * 1e3:5.1f}] {fmt_ms([f['pre_agent'] for f in rs]):>9} "
                 f"{fmt_ms([f['agent'] for f in rs]):>6} {entries:7.0f} "
                 f"{statistics.median(f['nmethods'] for f in rs):8.0f} {usper:8.2f} {agent_usper:10.2f}  "
                 f"{complete}/{len(rs)} file=status=loads+stubs, {same_nm}/{len(rs)} loads=nmethods, "
                 f"grew after in {grew}")
    L.append("pre-agent = attach command start -> agent start (process start, attach handshake, Attach Listener "
             "thread, dlopen); agent = Agent_OnAttach (status started_ns -> updated_ns: set-up, replay, write); "
             "entries = map lines when the command returned; nmethods = jcmd Compiler.codelist 1 s later")
    if replay:
        L.append("")
        L.append("the JVM's share: after each run, a do-nothing JVMTI agent (bench/replay_agent.c) replays the same "
                 "JVM's code; JVM replay = its two GenerateEvents calls, jflame's own = agent - JVM replay")
        L.append(f"{'jvm / tool':<26} {'JVM replay ms':>13} {'stubs+nmethods':>14} {'us/entry':>8}   "
                 f"{'jflame own ms med [95% CI]':>27} {'us/entry':>8} {'share of agent':>14}")
        for cfg in configs:
            rs = [f for f in res[cfg] if f["floor"]]
            if not rs:
                L.append(f"{cfg[1] + ' / ' + cfg[2]:<26} (replay agent did not report)")
                continue
            fl = [(f["floor"]["dynamic_ns"] + f["floor"]["compiled_ns"]) / 1e9 for f in rs]
            own = [f["agent"] - x for f, x in zip(rs, fl)]
            pm, lo, hi = median_ci(own)
            cnt = statistics.median(f["floor"]["dynamic"] + f["floor"]["compiled"] for f in rs)
            L.append(f"{cfg[1] + ' / ' + cfg[2]:<26} {statistics.median(fl) * 1e3:13.1f} {cnt:14.0f} "
                     f"{statistics.median(x / f['map_now'] * 1e6 for f, x in zip(rs, fl)):8.2f}   "
                     f"{f'{pm * 1e3:.1f} [{lo * 1e3:.1f}, {hi * 1e3:.1f}]':>27} "
                     f"{statistics.median(o / f['map_now'] * 1e6 for f, o in zip(rs, own)):8.2f} "
                     f"{statistics.median(o / f['agent'] * 100 for f, o in zip(rs, own)):13.0f}%")
        L.append("(the replay agent runs second in the JVM; with the order swapped by hand the JVM replay time "
                 "moved within its own noise, about +-10 ms on a loaded 2-CPU VM)")
    if jattach:
        for java, label, _ in jdks:
            a, b = res[(java, label, "jflame", None)], res[(java, label, "jattach", jattach)]
            pm, lo, hi = median_ci([x["wall"] / y["wall"] for x, y in zip(a, b)])
            L.append(f"{label}: jflame/jattach wall pair-ratio {pm:.3f} [95% CI {lo:.3f}, {hi:.3f}]")
    L.append("")
    L.append(f"{'jvm / tool':<26} {'window':<9} {'safepoints':>10} {'rounds>0':>8} {'total ms':>15} "
             f"{'longest':>7}  {'handshakes':>10} {'total ms':>15}  names")
    L.append(f"{'':<26} {'':<9} {'med (max)':>10} {'':>8} {'med (max)':>15} {'ms':>7}  {'med (max)':>10} "
             f"{'med (max)':>15}")
    for cfg in configs:
        rs = res[cfg]
        for w in ("quiet", "attach", "1s-before", "1s-from"):
            s = [f["Safepoint"][w] for f in rs]
            h = [f["Handshake"][w] for f in rs]
            names = sorted({x for e in s + h for x in e[3]})
            L.append(f"{cfg[1] + ' / ' + cfg[2]:<26} {w:<9} "
                     f"{f'{statistics.median(e[0] for e in s):.0f} ({max(e[0] for e in s)})':>10} "
                     f"{f'{sum(e[0] > 0 for e in s)}/{len(s)}':>8} "
                     f"{f'{statistics.median(e[1] for e in s) / 1e6:.3f} ({max(e[1] for e in s) / 1e6:.3f})':>15} "
                     f"{max(e[2] for e in s) / 1e6:7.3f}  "
                     f"{f'{statistics.median(e[0] for e in h):.0f} ({max(e[0] for e in h)})':>10} "
                     f"{f'{statistics.median(e[1] for e in h) / 1e6:.3f} ({max(e[1] for e in h) / 1e6:.3f})':>15}  "
                     f"{' '.join(names) or '-'}")
    for cfg in configs:
        rs = res[cfg]
        pause = [(f["Safepoint"]["attach"][1] - f["Safepoint"]["quiet"][1]
                  + f["Handshake"]["attach"][1] - f["Handshake"]["quiet"][1]) / 1e6 for f in rs]
        pm, lo, hi = median_ci(pause)
        L.append(f"{cfg[1] + ' / ' + cfg[2]:<26} pause added by the attach (safepoint+handshake total, attach - "
                 f"quiet window, per round): median {pm:.3f} ms [95% CI {lo:.3f}, {hi:.3f}], "
                 f"{statistics.median(pause) / statistics.median(f['wall'] * 1e3 for f in rs) * 100:.2f}% "
                 f"of the attach's wall time")
    L.append("windows: attach = the command's wall time; quiet = as long, just before it; 1s-before/1s-from = "
             "the second before the attach and the second from its start (both idle otherwise). Safepoint "
             "'Total' and handshake 'Total completion time' from -Xlog:safepoint,handshake with timenanos, "
             "which is CLOCK_MONOTONIC like the script's clock")
    skew = [f["skew_ms"] for rs in res.values() for f in rs]
    busy = sum(f["jit_busy"] for rs in res.values() for f in rs)
    L.append(f"checks: JVM nanoTime -> script clock {min(skew):.1f}..{max(skew):.1f} ms (same clock); "
             f"JIT still busy at ready in {busy} runs; other attachers got there first {foreign} times (redone)")
    print()
    print("\n".join(L))
finally:
    cleanup_all(created, tmpdir)
PY
