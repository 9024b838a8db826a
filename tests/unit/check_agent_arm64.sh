#!/usr/bin/env bash
# check_agent_arm64.sh READELF-AARCH64 CHECK-GLIBC: the agent cross-builds for arm64
# (scripts/cross-build.sh) and the library is what an arm64 JVM loads: an AArch64
# shared object, no glibc newer than 2.17 (jvmagent/glibc_compat.h), capstone not linked.
set -euo pipefail
readelf=$1 check_glibc=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir=$(mktemp -d /tmp/jflame-arm64.XXXXXX)
trap 'rm -rf "$dir"' EXIT
agent=$(bash "$here/scripts/cross-build.sh" "$dir")
machine=$("$readelf" -h "$agent" | sed -n 's/^ *Machine: *//p')
if [[ $machine != AArch64 ]]; then
	echo "agent_arm64: $agent is built for '$machine', not AArch64" >&2
	exit 1
fi
if "$readelf" -d "$agent" | grep -q 'NEEDED.*capstone'; then
	echo "agent_arm64: $agent links capstone; it must dlopen it (jvmagent/prologue_check.c)" >&2
	exit 1
fi
python3 "$check_glibc" "$readelf" "$agent"
echo "agent_arm64: $agent: AArch64, capstone loaded at run time"
