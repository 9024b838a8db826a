#!/usr/bin/env bash
# The main job: profiles the bundled Kafka-style producer/broker with `jflame record`
# (agentless: nothing is loaded into the JVM, which runs without frame pointers) and
# writes a mixed-mode flame graph; prints where it is.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/deps.sh
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc)" >/dev/null

java=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java
out=${JFLAME_DEMO_DIR:-$PWD/out}
format=${FORMAT:-string-format}   # the upgrade regression; FORMAT=string-builder for the fast path
seconds=${SECONDS_TO_RECORD:-10}
mkdir -p "$out"

# a plain JVM; -XX:+DebugNonSafepoints lets its debug info place inlined frames exactly
"$java" -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints -cp build/examples/jflame-examples.jar \
	jflame.examples.KafkaStyle --seconds $((seconds + 40)) --format "$format" >"$out/kafka.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
echo "demo: KafkaStyle (--format $format) is pid $pid; waiting for it to warm up"
until grep -q 'jflame-example: ready' "$out/kafka.log"; do
	kill -0 $pid 2>/dev/null || { cat "$out/kafka.log" >&2; exit 1; }
	sleep 0.2
done

build/native/jflame record -p $pid -d "$seconds" -o "$out/kafka.svg" -o "$out/kafka.folded"
kill -TERM $pid 2>/dev/null || true
wait $pid 2>/dev/null || true
trap - EXIT

echo
grep 'records/s' "$out/kafka.log" | tail -1 | sed 's/^/demo: /'
awk '{n=$NF; all+=n} /kafka-producer-network-thread/ {prod+=n; if (/java\/lang\/String.format_/) fmt+=n; if (/_\[k\]/) k+=n}
	END {printf "demo: %d samples; producer thread %d, of which String.format %.0f%%, kernel %.0f%%\n", all, prod, 100*fmt/(prod?prod:1), 100*k/(prod?prod:1)}' "$out/kafka.folded"
echo
echo "flame graph: $out/kafka.svg"
echo "folded:      $out/kafka.folded"
