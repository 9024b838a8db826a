#!/usr/bin/env bash
# regress_honesty.sh [WINDOWS] [WINDOW_SECONDS]: how honest record --baseline is.
# False alarms: KafkaStyle (StringBuilder, unchanged) recorded as WINDOWS (120) windows of
# WINDOW_SECONDS (5) each, after a 15-s warm-up; the windows are then replayed through
# `jflame diff --baseline first` and `previous:N` (PREVIOUS, 5), which judge each window as
# record --baseline does: the share of windows judged with any frame called a significant growth. Detection: KafkaStyle --switch-after recorded with
# --baseline first and previous:N; the windows between the switch's window and the first
# regression line naming String.format.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bench_help "$@"

windows=${1:-120}
win=${2:-5}
previous=${PREVIOUS:-5}
int_arg WINDOWS "$windows" 10
int_arg WINDOW_SECONDS "$win" 1
int_arg PREVIOUS "$previous" 1
require_build "$jflame" "$jar"
require_java

work=$(mktemp -d /tmp/jflame-regress-honesty.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

echo "== false alarms: $windows windows of ${win} s, unchanged KafkaStyle"
"$java" -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints -cp "$jar" jflame.examples.KafkaStyle \
	--seconds $((windows * win + 40)) >"$work/kafka.log" 2>&1 &
jvm=$!
sleep 15
mkdir "$work/w"
"$jflame" record -p "$jvm" -F 99 --window "$win" -d $((windows * win)) -o "$work/w/cpu-%n.folded" 2>"$work/record.log"
kill "$jvm" 2>/dev/null || true
wait "$jvm" 2>/dev/null || true

# each window judged as record --baseline judges it (jflame diff --baseline replays the folder)
for mode in first "previous:$previous"; do
	line=$("$jflame" diff --baseline "$mode" "$work/w" | tee "$work/replay-${mode%%:*}.txt" | tail -1)
	blamed=$(grep -E '^jflame: regression in window' "$work/replay-${mode%%:*}.txt" | grep -v 'more frames' |
		sed -E 's/^jflame: regression in window [0-9]+ \([^)]*\): (.*) [0-9.]+% → .*/\1/' | sort | uniq -c |
		sort -rn | head -3 | awk '{c=$1; $1=""; printf "%s%s (%d)", sep, substr($0,2), c; sep=", "}')
	echo "baseline $mode: ${line#jflame: }; most blamed: ${blamed:-none}"
done

echo "== detection: KafkaStyle switches to String.format after 45 s"
switch=45
"$java" -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints -cp "$jar" jflame.examples.KafkaStyle \
	--seconds $((switch + 60)) --switch-after "$switch" >"$work/kafka2.log" 2>&1 &
jvm=$!
sleep 15
started=15
recorders=()
for mode in first "previous:$previous"; do
	"$jflame" record -p "$jvm" -F 99 --window "$win" -d $((switch - started + 6 * win)) --baseline "$mode" \
		-o "$work/${mode%%:*}-%n.folded" 2>"$work/${mode%%:*}.log" &
	recorders+=($!)
done
wait "${recorders[@]}" || true
kill "$jvm" 2>/dev/null || true
for mode in first "previous:$previous"; do
	sw=$(((switch - started) / win + 1))
	found=$(grep -E "regression in window [0-9]+ .*: java/(lang/String|util/Formatter)\.format " \
		"$work/${mode%%:*}.log" | head -1 | sed -E 's/.*regression in window ([0-9]+) .*/\1/' || true)
	if [[ -n $found ]]; then
		echo "baseline $mode: switch in window $sw, String.format named in window $found (delay $((found - sw)) windows)"
	else
		echo "baseline $mode: switch in window $sw, String.format never named"
	fi
done
