#!/usr/bin/env bash
# regress_honesty.sh [WINDOWS] [WINDOW_SECONDS]: how honest record --baseline is.
# False alarms: KafkaStyle (StringBuilder, unchanged) recorded as WINDOWS (120) windows of
# WINDOW_SECONDS (5) each, after a 15-s warm-up. Detection: KafkaStyle --switch-after 45
# recorded the same way. Both folders are then replayed through `jflame diff --baseline
# first` and `previous:N` (PREVIOUS, 5), with --confirm 1 (every window on its own) and 2
# (the default), which judge each window as record --baseline does: the share of windows
# judged with a regression (false alarms), and the windows between the switch's window
# (the first with String.format in it) and the first regression line naming it.
# KEEP=1 keeps the recorded windows (the folder is printed at the end).
set -euo pipefail

# shellcheck source=common.sh
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
trap '[[ -n ${KEEP:-} ]] || rm -rf "$work"' EXIT

echo "== false alarms: $windows windows of ${win} s, unchanged KafkaStyle"
# record NAME SECONDS KAFKA-ARGS...: windows of the example after a 15-s warm-up
record() {
	local name=$1 secs=$2
	shift 2
	JAVA=$java bash "$root/tests/data/regress/record_windows.sh" "$jflame" "$jar" "$work/$name" "$secs" "$win" "$@"
}
record steady $((windows * win))
for mode in first "previous:$previous"; do
	for confirm in 1 2; do
		out="$work/replay-${mode%%:*}-$confirm.txt"
		line=$("$jflame" diff --baseline "$mode" --confirm "$confirm" "$work/steady" | tee "$out" | tail -1)
		blamed=$(grep -E '^jflame: regression in window' "$out" | grep -v 'more frames' | grep -v 'differential graph' |
			sed -E 's/^jflame: regression in window [0-9]+ \([^)]*\): (.*) [0-9.]+% → .*/\1/' | sort | uniq -c |
			sort -rn | head -3 | awk '{c=$1; $1=""; printf "%s%s (%d)", sep, substr($0,2), c; sep=", "}' || true)
		echo "baseline $mode --confirm $confirm: ${line#jflame: }; most blamed: ${blamed:-none}"
	done
done

switch=45
echo "== detection: KafkaStyle switches to String.format after $switch s"
record switch $((switch + 6 * win)) --switch-after $((switch + 15))
sw=$(grep -l -E 'java/(lang/String|util/Formatter)\.format' "$work"/switch/cpu-*.folded | sed -E 's/.*cpu-([0-9]+)\.folded/\1/' |
	sort -n | head -1 || true)
for mode in first "previous:$previous"; do
	for confirm in 1 2; do
		found=$("$jflame" diff --baseline "$mode" --confirm "$confirm" "$work/switch" |
			grep -E "regression in window [0-9]+ .*: java/(lang/String|util/Formatter)\.format " | head -1 |
			sed -E 's/.*regression in window ([0-9]+) .*/\1/' || true)
		if [[ -n $found && -n $sw ]]; then
			echo "baseline $mode --confirm $confirm: switch in window $sw, String.format named in window $found (delay $((found - sw)) windows)"
		else
			echo "baseline $mode --confirm $confirm: switch in window ${sw:-none}, String.format never named"
		fi
	done
done
[[ -z ${KEEP:-} ]] || echo "windows kept in $work (steady/, switch/)"
