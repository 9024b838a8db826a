#!/usr/bin/env bash
# always_on.sh [SECONDS] [PAIRS]: what always-on recording costs. Part 1: `jflame
# record -a -F 99 --window 30s --push` (to a local ingest server) next to the
# Kafka-style example and IDLE (default 10) idle JVMs started without the agent
# (jflame attaches to them) for SECONDS (default 600): jflame's CPU share
# (user+sys over wall, from 20 s in) and RSS every 30 s. Part 2: the example's
# records/s with and without always-on recording (5 s windows, pushed), PAIRS
# interleaved pairs (default 6; 0 skips it), median ratio.
set -euo pipefail

# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bench_help "$@"

seconds=${1:-600}
pairs=${2:-6}

require_build "$jflame" "$agent" "$jar"
int_arg SECONDS "$seconds" 60
[[ $pairs == 0 ]] || int_arg PAIRS "$pairs" 3
int_arg IDLE "${IDLE:-10}" 0

exec env PYTHONPATH="$root/bench" IDLE="${IDLE:-10}" python3 - "$java" "$agent" "$jar" "$jflame" "$seconds" "$pairs" <<'PY'
import http.server, os, re, shutil, subprocess, sys, tempfile, threading, time

from benchlib import cleanup, example_rate, example_start, interleaved_pairs, median_ci

java, agent, jar, jflame, seconds, pairs = sys.argv[1:]
seconds, pairs = int(seconds), int(pairs)
RATE = re.compile(r"jflame-example: records/s (\d+)")
HZ = os.sysconf("SC_CLK_TCK")


class Ingest(http.server.ThreadingHTTPServer):
    requests = 0
    bytes = 0


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        self.rfile.read(n)
        self.server.requests += 1
        self.server.bytes += n
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


srv = Ingest(("127.0.0.1", 0), Handler)
threading.Thread(target=srv.serve_forever, daemon=True).start()
url = "http://127.0.0.1:%d" % srv.server_address[1]
out = tempfile.mkdtemp(prefix="jflame-bench-always-")


def kafka(extra_seconds):
    return example_start("always_on", java, agent, jar, "jflame.examples.KafkaStyle",
                         ["--seconds", str(extra_seconds)], jvm_flags=[])


def usage(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    with open("/proc/%d/status" % pid) as f:
        rss = int(re.search(r"^VmRSS:\s+(\d+)", f.read(), re.M).group(1))
    return (int(fields[11]) + int(fields[12])) / HZ, rss


# ---- part 1: CPU share and RSS over `seconds`
p, log = kafka(seconds + 60)
idle = [subprocess.Popen([java, "-Xmx64m", "-cp", jar, "jflame.examples.Workload", "wait", str((seconds + 120) * 1000)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(int(os.environ["IDLE"]))]
time.sleep(5)  # the idle JVMs past their warm-up
rec = subprocess.Popen([jflame, "record", "-a", "-F", "99", "--window", "30s", "--push", url, "--keep", "4",
                        "-o", os.path.join(out, "cpu-%t.pb.gz")], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
series, t0 = [], time.monotonic()
try:
    time.sleep(20)  # past start-up: BPF load, attaches, first symbols
    cpu0, rss0 = usage(rec.pid)
    w0 = time.monotonic()
    series.append((0, rss0))
    while time.monotonic() - w0 < seconds:
        time.sleep(30)
        series.append((time.monotonic() - w0, usage(rec.pid)[1]))
    cpu1, rss1 = usage(rec.pid)
    wall = time.monotonic() - w0
finally:
    rec.terminate()
    _, err = rec.communicate(timeout=60)
    p.terminate()
    p.wait()
    cleanup(p.pid)
    for q in idle:
        q.kill()
        q.wait()
        cleanup(q.pid)
pushed = re.search(r"jflame: pushed (\d+) of (\d+) profiles", err)
windows = len(re.findall(r"^jflame: window \d+", err, re.M))
share = (cpu1 - cpu0) / wall * 100

# ---- part 2: throughput with and without, interleaved
MEASURE = 16


def run(recording):
    return example_rate("always_on", java, agent, jar, "jflame.examples.KafkaStyle",
                        ["--seconds", str(MEASURE + 30)], RATE.pattern, MEASURE, jflame=jflame, jvm_flags=[],
                        record=["-a", "-F", "99", "--window", "5s", "--push", url, "--keep", "2",
                                "-o", os.path.join(out, "t-%t.pb.gz")] if recording else None)[0]


if pairs:
    _, _, ratios = interleaved_pairs(pairs, run)
    med, lo, hi = median_ci(ratios)
shutil.rmtree(out, True)
print(f"== always_on ({os.cpu_count()} CPUs) ==")
print(f"jflame record -a -F 99 --window 30s --push (local server) over {wall:.0f} s next to KafkaStyle and "
      f"{os.environ['IDLE']} idle JVMs: "
      f"{windows} windows, {pushed.group(1) if pushed else '?'} of {pushed.group(2) if pushed else '?'} profiles "
      f"pushed ({srv.requests} requests, {srv.bytes / 1024:.0f} KiB)")
print(f"jflame CPU (user+sys, from 20 s in): {share:.3f}% of one core; target <= 0.15%: "
      f"{'meets' if share <= 0.15 else 'MISSES'}")
print(f"jflame RSS: {series[0][1] / 1024:.1f} MiB at start, {series[-1][1] / 1024:.1f} MiB after {series[-1][0]:.0f} s, "
      f"max {max(r for _, r in series) / 1024:.1f} MiB; by time: "
      + " ".join(f"{t:.0f}s:{r / 1024:.1f}" for t, r in series))
if pairs:
    print(f"KafkaStyle records/s with always-on recording (5 s windows, pushed) / without: median ratio "
          f"{med:.3f} [95% CI {lo:.3f}..{hi:.3f}] over {pairs} pairs")
PY
