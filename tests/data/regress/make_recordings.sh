#!/usr/bin/env bash
# make_recordings.sh BUILD: records the windows tests/unit/test_baseline_replay.py
# replays (root, eBPF; run on a quiet machine, about 13 minutes):
#   kafka-steady.tar.xz  125 windows of 5 s of KafkaStyle (StringBuilder, unchanged)
#   kafka-switch.tar.xz   24 windows of 5 s of KafkaStyle --switch-after 62: String.format
#                         from the middle of window 10
# each at 99 Hz, the JVM warmed for 15 s first, written as cpu-N.folded.
set -euo pipefail
build=${1:?usage: make_recordings.sh BUILD (a build tree with native/jflame and examples/)}
java=${JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d /tmp/jflame-regress-data.XXXXXX)
trap 'rm -rf "$work"' EXIT

# record NAME SECONDS KAFKA-ARGS...: SECONDS of 5-s windows after a 15-s warm-up
record() {
	local name=$1 secs=$2
	shift 2
	JAVA=$java bash "$here/record_windows.sh" "$build/native/jflame" "$build/examples/jflame-examples.jar" \
		"$work/$name" "$secs" 5 "$@"
	tar -C "$work/$name" -cJf "$here/$name.tar.xz" .
}
record kafka-switch 120 --switch-after 62
record kafka-steady 625
ls -la "$here"/*.tar.xz
