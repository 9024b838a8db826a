#!/usr/bin/env bash
# The main job: profiles the bundled Kafka-style producer/broker with `jflame record`
# (agentless: nothing is loaded into the JVM, which runs without frame pointers) and
# writes a mixed-mode flame graph; prints where it is. `demo.sh regression`: the
# same example changes to String.format mid-run and record --baseline finds it.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/deps.sh demo  # what the demo needs; scripts/test.sh installs the tests' too
cmake -S . -B build -DBUILD_TESTING=OFF >/dev/null
cmake --build build -j"$(nproc)" --target jflame jflame-agent jflame-examples >/dev/null

java=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java
out=${JFLAME_DEMO_DIR:-$PWD/out}
format=${FORMAT:-string-format}   # the upgrade regression; FORMAT=string-builder for the fast path
seconds=${SECONDS_TO_RECORD:-10}
mkdir -p "$out"

if [[ ${1:-} == regression ]]; then
	# The upgrade regression as it happens: KafkaStyle starts on the StringBuilder
	# path and changes to String.format() after SWITCH_AFTER seconds; jflame
	# records 5-s windows, compares each with the first and says what grew.
	switch=${SWITCH_AFTER:-30}
	warm=8
	"$java" -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints -cp build/examples/jflame-examples.jar \
		jflame.examples.KafkaStyle --seconds $((switch + 30)) --switch-after "$switch" >"$out/kafka.log" 2>&1 &
	pid=$!
	trap 'kill $pid 2>/dev/null || true' EXIT
	echo "demo: KafkaStyle is pid $pid: StringBuilder now, String.format after ${switch} s; warming up ${warm} s"
	sleep "$warm"
	rm -f "$out"/window-*.folded "$out"/regression-*.svg
	# windows are judged from the 4th on (the first three teach jflame the noise)
	build/native/jflame record -p $pid --window 5 -d $((switch - warm + 15)) --baseline first \
		-o "$out/window-%n.folded" --diff-out "$out/regression-%n.svg" 2>"$out/record.log" || {
		cat "$out/record.log" >&2
		exit 1
	}
	kill -TERM $pid 2>/dev/null || true
	wait $pid 2>/dev/null || true
	trap - EXIT
	grep -E 'regression in window|^jflame: [0-9]+ windows' "$out/record.log" | grep -v 'differential graph' || true
	grep -E 'switched' "$out/kafka.log" | sed 's/^jflame-example: /demo: /' || true
	first=$(grep -E 'regression in window [0-9]+ .*: java/lang/String\.format ' "$out/record.log" | head -1 |
		sed -E 's/.*regression in window ([0-9]+) .*/\1/')
	echo
	echo "windows:            $out/window-N.folded"
	if [[ -n $first ]]; then
		echo "differential graph: $out/regression-$first.svg (window $first, the first to name String.format)"
	else
		echo "differential graph: none (String.format was not named)"
	fi
	exit 0
fi

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
