#!/usr/bin/env bash
# kernels_guest.sh - what bench/kernels.sh runs on each kernel (inside a tests/kernel VM as its
# checks script, or on the host): KafkaStyle --format string-format, agentless, warmed up
# WARM (20) s, then `jflame record -v -p PID -d SECONDS (10)` with the programs the kernel
# takes, and once more with JFLAME_BPF_LEGACY=1 where those are not the legacy ones; each
# recording's stderr and folded stacks into RES (/res). Reads its settings from
# $dir/bench.env when there.
set -u
dir=${JFLAME_TEST_DIR:-/opt/jflame-test}
res=${RES:-/res}
# shellcheck disable=SC1091 # written by bench/kernels.sh next to this script
[[ -f $dir/bench.env ]] && source "$dir/bench.env"
java=${JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
jflame=${JFLAME:-$dir/jflame}
jar=${JAR:-$dir/jflame-examples.jar}
mkdir -p "$res"
"$java" -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints -cp "$jar" jflame.examples.KafkaStyle \
	--format string-format --seconds 900 >"$res/kafka.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
sleep "${WARM:-20}"
uname -r >"$res/release"
"$jflame" record -v -p "$pid" -d "${SECONDS_TO_RECORD:-10}" -o "$res/native.folded" 2>"$res/native.err"
echo "exit $?" >>"$res/native.err"
if ! grep -q "BPF program profile_sample_legacy:" "$res/native.err"; then
	JFLAME_BPF_LEGACY=1 "$jflame" record -v -p "$pid" -d "${SECONDS_TO_RECORD:-10}" -o "$res/legacy.folded" \
		2>"$res/legacy.err"
	echo "exit $?" >>"$res/legacy.err"
fi
