#!/usr/bin/env bash
# in-root.sh - runs a command (a JVM) in a JDK's Debian root file system made by
# tests/jdk/rootfs.sh, on this machine's kernel, as a chroot'd container would.
#
#   tests/jdk/in-root.sh ROOT COMMAND [ARG]...
#
# In a mount namespace of its own: /proc, /sys and /dev from the host; /tmp and
# the directories the tests use (this source tree and JFLAME_IN_ROOT_DIRS,
# colon-separated, e.g. the build directory) bound at the same paths, so the
# command's arguments (-agentpath:, -cp) name the same files inside and its
# /tmp/perf-PID.map and attach socket are where the host's tools look. Every
# step execs the next: the command keeps this script's pid (what a test waits
# on and records). Runs as root (unshare, mount, chroot).
set -euo pipefail
(($# >= 2)) || { echo "in-root: usage: in-root.sh ROOT COMMAND [ARG]..." >&2; exit 2; }
root=$(realpath "$1")
shift
[[ -x $root/bin/sh ]] || { echo "in-root: $root is no root file system (no /bin/sh): make one with tests/jdk/rootfs.sh" >&2; exit 2; }
src=$(cd "$(dirname "$0")/../.." && pwd)
dirs=("$src")
IFS=: read -r -a extra <<<"${JFLAME_IN_ROOT_DIRS:-}"
for d in "${extra[@]}"; do [[ -n $d ]] && dirs+=("$(realpath "$d")"); done
if [[ ${JFLAME_IN_ROOT_NS:-} != "$root" ]]; then
	JFLAME_IN_ROOT_NS=$root exec unshare --mount --propagation private "$0" "$root" "$@"
fi
for m in proc sys dev tmp; do mount --rbind "/$m" "$root/$m"; done
for d in "${dirs[@]}"; do
	mkdir -p "$root$d"
	mount --rbind "$d" "$root$d"
done
unset JFLAME_IN_ROOT_NS
# the same working directory inside (chroot would start in /), when it is there
# shellcheck disable=SC2016 # expanded by the root's shell
exec chroot "$root" /bin/sh -c 'cd "$1" 2>/dev/null || cd /; shift; exec "$@"' in-root "$PWD" "$@"
