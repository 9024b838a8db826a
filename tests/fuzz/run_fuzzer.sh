#!/usr/bin/env bash
# Runs one libFuzzer binary for a bounded time on a scratch copy of its seed
# corpus; a crash fails the run and its input is kept in the artifacts dir.
# usage: run_fuzzer.sh FUZZER SEED_DIR ARTIFACT_DIR SECONDS
set -euo pipefail
fuzzer=$1 seeds=$2 artifacts=$3 seconds=$4
work=$(mktemp -d "${TMPDIR:-/tmp}/jflame-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
cp -r "$seeds/." "$work/"
mkdir -p "$artifacts"
# -timeout: one input running longer than 10 s is a hang; -rss_limit_mb: a leak or blow-up
rc=0
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
	-print_final_stats=1 -artifact_prefix="$artifacts/$(basename "$fuzzer")-" "$work" >"$work.log" 2>&1 || rc=$?
grep -E '^(#[0-9]+ +DONE|==[0-9]+==|SUMMARY|stat::number_of_executed_units|Test unit written|.*ERROR)' "$work.log" || true
if ((rc != 0)); then
	tail -n 60 "$work.log"
	rm -f "$work.log"
	echo "jflame: $(basename "$fuzzer") failed (exit $rc); the input is in $artifacts" >&2
	exit 1
fi
rm -f "$work.log"
