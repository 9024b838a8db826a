#!/usr/bin/env bash
# record_postprocess.sh [SECONDS]: a whole-host recording (default 60 s) with a JVM and a native
# program busy: time spent outside the recording window (start-up, writing outputs) and peak memory.
set -euo pipefail

# shellcheck source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bench_help "$@"

seconds=${1:-60}

require_build "$jflame" "$agent" "$jar" "$hog"
int_arg SECONDS "$seconds" 5

exec env PYTHONPATH="$root/bench" python3 - "$java" "$agent" "$jar" "$jflame" "$hog" "$seconds" <<'PY'
import os, subprocess, sys, tempfile, time

from benchlib import cleanup, wait_jflame

java, agent, jar, jflame, hog, seconds = sys.argv[1:]
seconds = int(seconds)
out = tempfile.mkdtemp(prefix="jflame-bench-")
jvm = subprocess.Popen([java, "-XX:+PreserveFramePointer", f"-agentpath:{agent}=quiet,unfold", "-cp", jar,
                        "jflame.examples.KafkaStyle", "--seconds", str(seconds + 60)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
native = subprocess.Popen([hog, str(seconds + 30)])
try:
    time.sleep(8)  # let the JVM warm up
    outputs = [os.path.join(out, n) for n in ("host.svg", "host.folded", "host.stacks")]
    args = [jflame, "record", "-a", "-d", str(seconds)]
    for o in outputs:
        args += ["-o", o]
    t0 = time.monotonic()
    p = subprocess.Popen(args, stderr=subprocess.PIPE, text=True)
    wall, ru, err = wait_jflame(p, t0, "record_postprocess")
finally:
    jvm.terminate()
    native.kill()
    jvm.wait()
    native.wait()
    cleanup(jvm.pid)

sizes = ", ".join(f"{os.path.basename(o)} {os.path.getsize(o) / 1e6:.1f} MB" for o in outputs)
stacks = sum(1 for _ in open(outputs[1]))
print(f"== record_postprocess (jflame record -a -d {seconds}, KafkaStyle + a native hog busy; {os.cpu_count()} CPUs) ==")
print(err.strip().splitlines()[-1] if err.strip() else "")
print(f"wall {wall:.2f} s for a {seconds} s recording: {wall - seconds:.2f} s outside the window (start-up + outputs)")
print(f"jflame CPU user+sys {ru.ru_utime + ru.ru_stime:.2f} s; peak memory (maxrss) {ru.ru_maxrss / 1024:.1f} MiB")
print(f"outputs: {sizes}; {stacks} distinct stacks")
for o in outputs:
    os.unlink(o)
os.rmdir(out)
PY
