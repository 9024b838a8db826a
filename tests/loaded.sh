#!/usr/bin/env bash
# loaded.sh [BUILD] [CTEST ARGS...]: the integration tests of one build (default build/, its
# JDK 17 ones) run while every core is kept busy by a spinning shell loop of the same
# priority, as on a shared machine: a statistical threshold must hold by design (enough
# samples, the kernel's own accounting as referee), not by an idle machine. Prints
# ctest's summary and exits with its status; the burners end with it.
set -euo pipefail
cd "$(dirname "$0")/.."

build=${1:-build}
shift || true
[[ -f $build/CTestTestfile.cmake ]] || {
	echo "jflame: loaded.sh: no tests in $build; build it with cmake -S . -B $build -DBUILD_TESTING=ON" >&2
	exit 2
}
burners=()
# shellcheck disable=SC2317 # run by the trap
stop_burners() {
	if ((${#burners[@]})); then
		kill "${burners[@]}" 2>/dev/null || true
	fi
}
trap stop_burners EXIT
for ((i = 0; i < $(nproc); i++)); do
	bash -c 'exec -a jflame-burner bash -c "while :; do :; done"' &
	burners+=($!)
done
echo "jflame: loaded.sh: ${#burners[@]} burners (one per core) running; load $(cut -d' ' -f1 /proc/loadavg)"
select=(-L '^jdk17$')
(($#)) && select=("$@")
rc=0
(cd "$build" && ctest --output-on-failure "${select[@]}") || rc=$?
echo "jflame: loaded.sh: load at the end $(cut -d' ' -f1 /proc/loadavg)"
exit $rc
