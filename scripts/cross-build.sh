#!/usr/bin/env bash
# cross-build.sh [BUILD-DIR]: libjflame-agent.so for arm64 (aarch64) from an x86-64 Debian
# host, with Debian's gcc-aarch64-linux-gnu (scripts/deps.sh) and cmake/aarch64-linux-gnu.cmake.
# The agent alone (JFLAME_AGENT_ONLY) while the eBPF walker is ported to aarch64 (issue 36).
# Prints the library's path.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${1:-$here/build-arm64}
if ! command -v aarch64-linux-gnu-gcc >/dev/null; then
	echo "jflame: aarch64-linux-gnu-gcc not found; install the Debian package 'gcc-aarch64-linux-gnu' (or run scripts/deps.sh)" >&2
	exit 1
fi
cmake -S "$here" -B "$dir" -DCMAKE_TOOLCHAIN_FILE="$here/cmake/aarch64-linux-gnu.cmake" -DJFLAME_AGENT_ONLY=ON >/dev/null
cmake --build "$dir" -j"$(nproc)" >/dev/null
echo "$dir/jvmagent/libjflame-agent.so"
