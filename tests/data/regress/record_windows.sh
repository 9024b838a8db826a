#!/usr/bin/env bash
# record_windows.sh JFLAME JAR OUTDIR SECONDS WINDOW [KAFKA-ARGS...]: records SECONDS of
# KafkaStyle (its JVM warmed for 15 s first) at 99 Hz as WINDOW-second windows, OUTDIR/cpu-N.folded
# (record's messages in OUTDIR.rec, the JVM's in OUTDIR.log). Used by make_recordings.sh (the
# test data) and bench/regress_honesty.sh (the figures). JAVA picks the java binary.
set -euo pipefail
jflame=${1:?usage: record_windows.sh JFLAME JAR OUTDIR SECONDS WINDOW [KAFKA-ARGS...]}
jar=${2:?} out=${3:?} secs=${4:?} win=${5:?}
shift 5
java=${JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
mkdir -p "$out"
"$java" -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints -cp "$jar" jflame.examples.KafkaStyle \
	--seconds $((secs + 40)) "$@" >"$out.log" 2>&1 &
jvm=$!
trap 'kill "$jvm" 2>/dev/null || true; wait "$jvm" 2>/dev/null || true' EXIT
sleep 15
"$jflame" record -p "$jvm" -F 99 --window "$win" -d "$secs" -o "$out/cpu-%n.folded" 2>"$out.rec"
