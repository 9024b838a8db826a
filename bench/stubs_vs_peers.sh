#!/usr/bin/env bash
# stubs_vs_peers.sh: whole stacks through HotSpot's stubs (#34), jflame next to
# async-profiler on the same JVM. StubMix (a thread per family of stubs: TLS with
# AES-GCM, SHA-256/512, MD5, CRC32/CRC32C, Adler32, Base64, RSA, copies, fills,
# compares, math) runs without -XX:+PreserveFramePointer on each JDK of JDKS; it
# is recorded ROUNDS times by each profiler in turn, SECONDS each: jflame agentless
# (`record -p`), jflame with its agent (`--attach`, once loaded it stays) and
# async-profiler (`asprof -e cpu -t -a`, attached). For each: the samples whose
# leaf (below any kernel frames) is a stub (the JVM's own list of its stubs,
# `hotspot_probe --stubs`), the share of them that run from the thread's start
# (java/lang/Thread.run in the stack) with a Java frame right above the stub, by
# family, and [unwind failed]'s share of all samples. Prints a table per JDK.
# Environment: JDKS (default "17 25": Debian's 17, Temurin 25 when installed),
# ROUNDS (3), SECONDS_EACH (8), ASYNC_PROFILER (default /var/tmp/jflame-async-profiler,
# built by bench/build_async_profiler.sh).
set -euo pipefail

# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bench_help "$@"

rounds=${ROUNDS:-3}
seconds=${SECONDS_EACH:-8}
jdks=${JDKS:-17 25}
ap=${ASYNC_PROFILER:-/var/tmp/jflame-async-profiler}
probe=$build/tests/unit/hotspot_probe
int_arg ROUNDS "$rounds" 1
int_arg SECONDS_EACH "$seconds" 2
require_build "$jflame" "$jar" "$probe"
[[ -x $ap/bin/asprof ]] ||
  bench_die "no async-profiler at $ap; build it with: git clone https://github.com/async-profiler/async-profiler && bench/build_async_profiler.sh async-profiler $ap"

homes=()
for v in $jdks; do
  case $v in
  17) homes+=("17=/usr/lib/jvm/java-17-openjdk-amd64") ;;
  25)
    h=$(find /usr/lib/jvm -maxdepth 1 -name 'temurin-25*' | head -1)
    [[ -n $h ]] || h=/usr/lib/jvm/java-25-openjdk-amd64
    homes+=("25=$h")
    ;;
  *) homes+=("$v=/usr/lib/jvm/java-$v-openjdk-amd64") ;;
  esac
done

exec python3 - "$jflame" "$jar" "$probe" "$ap" "$rounds" "$seconds" "${homes[@]}" <<'EOF'
import collections, os, re, signal, subprocess, sys, tempfile, time

jflame, jar, probe, ap, rounds, seconds = sys.argv[1:7]
rounds, seconds = int(rounds), int(seconds)
JAVA_FRAME = re.compile(r"_\[[ji0]\]$")
CONFIGS = ("jflame agentless", "jflame + agent", "async-profiler")


def start(home, out):
    p = subprocess.Popen([home + "/bin/java", "-cp", jar, "jflame.examples.StubMix", "--seconds", "3600"],
                         stdout=open(out, "w"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if "jflame-example: ready" in open(out).read():
            return p
        if p.poll() is not None:
            sys.exit("stubs_vs_peers: StubMix exited (%s)" % out)
        time.sleep(0.5)
    p.kill()
    sys.exit("stubs_vs_peers: StubMix not ready in 120 s (%s)" % out)


def read(path, config):
    """(frames, count) of the StubMix threads; async-profiler's thread frame
    '[stub-x tid=N]' made 'stub-x', its frames below the thread as jflame's."""
    out = []
    for line in open(path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        if not stack:
            continue
        f = stack.split(";")
        if config == "async-profiler":
            m = re.match(r"\[(.*) tid=\d+\]$", f[0])
            if not m:
                continue
            f = ["java", m.group(1)] + f[1:]
        if len(f) > 1:
            out.append((f[1:], int(n)))
    return out


def measure(stacks, stubs, per, tot):
    for f, n in stacks:
        tot["samples"] += n
        if "[unwind failed]" in f:
            tot["failed"] += n
        thread = f[0]
        if not thread.startswith("stub-"):
            continue
        user = [x for x in f if not x.endswith("_[k]")]
        leaf = user[-1] if user else None
        if leaf not in stubs:
            continue
        fam = thread[5:]
        whole = any(x.startswith("java/lang/Thread.run") for x in f)
        caller = len(user) > 1 and JAVA_FRAME.search(user[-2]) is not None
        per[fam][0] += n
        per[fam][1] += n if whole and caller else 0


tmp = tempfile.mkdtemp(prefix="jflame-stubs-bench-")
for pair in sys.argv[7:]:
    v, home = pair.split("=", 1)
    if not os.path.exists(home + "/bin/java"):
        print("JDK %s: no %s, left out" % (v, home))
        continue
    jvm = start(home, os.path.join(tmp, "jvm-%s.out" % v))
    try:
        r = subprocess.run([probe, str(jvm.pid), "--stubs"], capture_output=True, text=True, timeout=60)
        stubs = {l.split()[1] for l in r.stdout.splitlines() if l.startswith("stub ")}
        per = {c: collections.defaultdict(lambda: [0, 0]) for c in CONFIGS}
        tot = {c: collections.Counter() for c in CONFIGS}
        for k in range(rounds):
            for c in CONFIGS:
                out = os.path.join(tmp, "%s-%d-%s" % (v, k, c.replace(" ", "_").replace("+", "")))
                if c == "async-profiler":
                    cmd = [ap + "/bin/asprof", "-d", str(seconds), "-e", "cpu", "-t", "-a", "-o", "collapsed",
                           "-f", out, str(jvm.pid)]
                else:
                    cmd = [jflame, "record", "-p", str(jvm.pid), "-d", str(seconds), "-o", out + ".folded"]
                    if c == "jflame + agent":
                        cmd.insert(2, "--attach")
                    out += ".folded"
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=seconds + 120)
                if r.returncode != 0:
                    sys.exit("stubs_vs_peers: %s failed (exit %d): %s" % (" ".join(cmd), r.returncode, r.stderr[-800:]))
                measure(read(out, c), stubs, per[c], tot[c])
        fams = sorted({f for c in CONFIGS for f in per[c]})
        print("\nJDK %s (%s), %d stubs; %d x %d s each; stub leaves whole with their Java caller:" % (
            v, home, len(stubs), rounds, seconds))
        print("%-12s" % "family" + "".join("%22s" % c for c in CONFIGS))
        for fam in fams:
            print("%-12s" % fam + "".join("%22s" % ("%d/%d %5.1f%%" % (per[c][fam][1], per[c][fam][0],
                                                    100.0 * per[c][fam][1] / per[c][fam][0]) if per[c][fam][0] else "-")
                                          for c in CONFIGS))
        line = "%-12s" % "all"
        for c in CONFIGS:
            a = sum(x[0] for x in per[c].values())
            b = sum(x[1] for x in per[c].values())
            line += "%22s" % ("%d/%d %5.1f%%" % (b, a, 100.0 * b / a) if a else "-")
        print(line)
        print("%-12s" % "unwind fail" + "".join("%22s" % ("%d/%d %5.2f%%" % (
            tot[c]["failed"], tot[c]["samples"], 100.0 * tot[c]["failed"] / max(1, tot[c]["samples"])))
            for c in CONFIGS))
    finally:
        jvm.send_signal(signal.SIGTERM)
        try:
            jvm.wait(30)
        except subprocess.TimeoutExpired:
            jvm.kill()
print("\nfiles in %s" % tmp)
EOF
