#!/usr/bin/env bash
# Runs jflame's whole test suite: installs dependencies, builds, runs ctest, then
# builds and runs everything again under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/deps.sh
jobs=$(nproc)
passed=0 failed=0 status=0

run_suite() { # build-dir, build target ("" for all), ctest label ("" for all), cmake args...
	local dir=$1 target=$2 label=$3
	shift 3
	cmake -S . -B "$dir" "$@" >/dev/null
	cmake --build "$dir" -j"$jobs" ${target:+--target "$target"} >/dev/null
	local log="$dir/ctest.log" rc=0
	(cd "$dir" && ctest --output-on-failure ${label:+-L "^$label\$"}) 2>&1 | tee "$log" || rc=1
	local line
	line=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1 || true)
	if [[ $line =~ ([0-9]+)\ tests?\ failed\ out\ of\ ([0-9]+) ]]; then
		failed=$((failed + BASH_REMATCH[1]))
		passed=$((passed + BASH_REMATCH[2] - BASH_REMATCH[1]))
	else
		failed=$((failed + 1))
	fi
	((rc == 0)) || status=1
}

echo "== tests (build/)"
run_suite build "" "" -DJFLAME_SANITIZE=OFF
echo "== tests under ASan + UBSan (build-asan/)"
run_suite build-asan "" "" -DJFLAME_SANITIZE=ON -DJFLAME_FUZZ=OFF
# every parser's libFuzzer target, ${JFLAME_FUZZ_SECONDS:-15} s each (clang, ASan + UBSan)
echo "== libFuzzer runs (build-fuzz/)"
CTEST_PARALLEL_LEVEL=$jobs CC=clang run_suite build-fuzz jflame_fuzzers fuzzrun -DJFLAME_SANITIZE=OFF -DJFLAME_FUZZ=ON \
	-DJFLAME_FUZZ_SECONDS="${JFLAME_FUZZ_SECONDS:-15}"

echo "tests: $passed passed, $failed failed"
exit $status
