#!/usr/bin/env bash
# The main job, until `jflame record` exists: runs the bundled Java workload with the
# agent, lets Linux perf sample it through our map, and shows what the agent wrote.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/deps.sh
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc)" >/dev/null

java=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java
agent=$PWD/build/jvmagent/libjflame-agent.so
out=${JFLAME_DEMO_DIR:-$PWD/out}
mkdir -p "$out"

"$java" -XX:+PreserveFramePointer -agentpath:"$agent"=unfold \
	-cp build/examples/jflame-examples.jar jflame.examples.Workload hot 6000 >"$out/workload.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
until grep -q 'jflame-workload: ready' "$out/workload.log"; do
	kill -0 $pid 2>/dev/null || { cat "$out/workload.log" >&2; exit 1; }
	sleep 0.1
done

perf record -q -F 499 -g -p $pid -o "$out/perf.data" -- sleep 3 2>/dev/null
wait $pid
trap - EXIT

map=/tmp/perf-$pid.map
echo
echo "== what the agent wrote for JVM $pid"
echo "map:    $map ($(wc -l <"$map") entries)"
echo "events: /tmp/jflame-$pid.events"
echo "status: /tmp/jflame-$pid.status"
grep -E '^(preserve_frame_pointer|prologues_with_fp|prologues_without_fp|compiled_loads|dynamic_code)=' \
	/tmp/jflame-$pid.status | sed 's/^/  /'
echo
echo "== a few map entries for the workload's hot code (inlined chains joined by ->)"
grep -E 'jflame/examples' "$map" | head -8 | sed 's/^/  /'
echo
echo "== perf resolves the samples with our map (top symbols):"
perf report -i "$out/perf.data" --no-children --sort sym --stdio 2>/dev/null |
	grep -E '^ +[0-9.]+%' | head -8
echo
echo "perf data: $out/perf.data  (perf script -i $out/perf.data)"
echo "map:       $map"
