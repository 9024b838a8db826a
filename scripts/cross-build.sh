#!/usr/bin/env bash
# cross-build.sh [BUILD-DIR [CMAKE-ARGS...]]: jflame and libjflame-agent.so for arm64 (aarch64)
# from an x86-64 Debian host, with Debian's gcc-aarch64-linux-gnu, the arm64 (multiarch) -dev
# packages (scripts/deps.sh installs both) and cmake/aarch64-linux-gnu.cmake. The BPF object is
# built for __TARGET_ARCH_arm64 against the BTF of Debian's own arm64 kernel
# (scripts/vmlinux-arm64.sh). -DJFLAME_AGENT_ONLY=ON builds the agent alone. Prints the build
# directory.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${1:-$here/build-arm64}
shift || true
if ! command -v aarch64-linux-gnu-gcc >/dev/null; then
	echo "jflame: aarch64-linux-gnu-gcc not found; install the Debian package 'gcc-aarch64-linux-gnu' (or run scripts/deps.sh)" >&2
	exit 1
fi
if ! dpkg-query -W -f='${Status}' libbpf-dev:arm64 2>/dev/null | grep -q 'install ok installed'; then
	echo "jflame: the arm64 libraries are not installed (libbpf-dev:arm64 and the others); run scripts/deps.sh" >&2
	exit 1
fi
cmake -S "$here" -B "$dir" -DCMAKE_TOOLCHAIN_FILE="$here/cmake/aarch64-linux-gnu.cmake" "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)" >/dev/null
echo "$dir"
