#!/usr/bin/env bash
# Runs jflame's whole test suite: installs dependencies, builds, runs ctest, then
# builds and runs everything again under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/deps.sh
jobs=$(nproc)
# The kernel tests' root file system (Debian's 5.10, 6.1 and 6.12 kernels, the JRE:
# tests/kernel/rootfs.sh, cached in /var/cache/jflame-kernel) is built while jflame
# compiles; the kernel tests wait for it (a lock), and build it themselves when this failed.
mkdir -p build
bash tests/kernel/rootfs.sh >build/kernel-rootfs.log 2>&1 &
# and the arm64 guest's (Debian's arm64 kernel and JRE: tests/kernel/rootfs-arm64.sh)
bash tests/kernel/rootfs-arm64.sh >build/kernel-rootfs-arm64.log 2>&1 &
passed=0 failed=0 status=0

run_suite() { # build-dir, build target ("" for all), ctest label selection ("" for all), cmake args...
	local dir=$1 target=$2 select=$3
	shift 3
	cmake -S . -B "$dir" -DBUILD_TESTING=ON "$@" >/dev/null # the demo's build/ has them off
	cmake --build "$dir" -j"$jobs" ${target:+--target "$target"} >/dev/null
	local log="$dir/ctest${log_suffix:-}.log" rc=0
	# shellcheck disable=SC2086 # the selection is options, split on purpose
	(cd "$dir" && ctest --output-on-failure $select) 2>&1 | tee "$log" || rc=1
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

# The sanitizer pass runs every JDK 17 integration test (label sanitizer-pass).
# When JDK 25 is installed it gives the normal build its integration run, so the
# normal pass leaves the JDK 17 ones to the sanitizer pass (each test still runs
# on every JDK, and under the sanitizers); without JDK 25 it runs them twice.
# The kernel tests (tests/kernel/README.md) run in the normal pass: kernel.host with
# the others, then Debian's 5.10, 6.1 and 6.12 under qemu, every mode in each, two
# guests at a time (single-threaded TCG: one host core each) and nothing else beside
# them; then the JDK matrix (tests/jdk/README.md: JDK 11 and 21 in their own Debian
# roots, 21 with ZGC and Parallel too), one at a time.
normal="-LE ^(kernel-vm|jdk-matrix)\$"
if compgen -G "/usr/lib/jvm/temurin-25*" >/dev/null; then
	normal="-LE ^(sanitizer-pass|kernel-vm|jdk-matrix)\$"
	echo "jflame: JDK 25 found: the JDK 17 integration tests run once, in the sanitizer pass"
fi
echo "== tests (build/)"
run_suite build "" "$normal" -DJFLAME_SANITIZE=OFF
echo "== kernel tests in qemu guests (build/)"
log_suffix=-kernel-vm run_suite build "" "-L ^kernel-vm\$ -j2" -DJFLAME_SANITIZE=OFF
echo "== the JDK matrix (build/)"
log_suffix=-jdk-matrix run_suite build "" "-L ^jdk-matrix\$" -DJFLAME_SANITIZE=OFF
echo "== tests under ASan + UBSan (build-asan/)"
run_suite build-asan "" "" -DJFLAME_SANITIZE=ON -DJFLAME_FUZZ=OFF
# every parser's libFuzzer target, ${JFLAME_FUZZ_SECONDS:-10} s each in CI (clang, ASan + UBSan; 15 by hand: tests/fuzz)
echo "== libFuzzer runs (build-fuzz/)"
CTEST_PARALLEL_LEVEL=$jobs CC=clang run_suite build-fuzz jflame_fuzzers "-L ^fuzzrun\$" -DJFLAME_SANITIZE=OFF -DJFLAME_FUZZ=ON \
	-DJFLAME_FUZZ_SECONDS="${JFLAME_FUZZ_SECONDS:-10}"

echo "tests: $passed passed, $failed failed"
exit $status
