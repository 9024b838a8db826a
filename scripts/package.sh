#!/usr/bin/env bash
# Builds jflame (Release) in a temporary directory, installs it into a
# relocatable tree and packs that tree as jflame-<version>-linux-<arch>.tar.gz:
#
#   jflame-<version>-linux-<arch>/bin/jflame
#   jflame-<version>-linux-<arch>/lib/libjflame-agent.so   (found by jflame in ../lib)
#   jflame-<version>-linux-<arch>/share/man/man1/jflame.1, jflame-<command>.1 (help2man, from --help)
#   jflame-<version>-linux-<arch>/share/doc/jflame/README.md
#   jflame-<version>-linux-<arch>/share/doc/jflame/docs/*.md   (the README links into them)
#
# Usage: scripts/package.sh [--arch ARCH] [OUTDIR]   (default: out/); prints the tarball's path.
# ARCH: this machine's (default), or aarch64 (arm64) cross-built from x86-64 as
# scripts/cross-build.sh does (its programs run here under qemu-aarch64-static for the
# man pages and the checks).
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
arch=$(uname -m)
case ${1:-} in
--arch) arch=${2:?package: --arch needs an architecture: x86_64 or aarch64}; shift 2 ;;
--arch=*) arch=${1#--arch=}; shift ;;
-h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
case $arch in
amd64 | x86_64) arch=x86_64 ;;
arm64 | aarch64) arch=aarch64 ;;
*) echo "package: unknown architecture '$arch' (x86_64 or aarch64)" >&2; exit 2 ;;
esac
outdir=$(realpath -m "${1:-$src/out}")
cross=() emu=()
if [[ $arch != "$(uname -m)" ]]; then
	[[ $arch == aarch64 && $(uname -m) == x86_64 ]] ||
		{ echo "package: cannot build for $arch on $(uname -m) (the cross build is aarch64 from x86_64)" >&2; exit 2; }
	cross=(-DCMAKE_TOOLCHAIN_FILE="$src/cmake/aarch64-linux-gnu.cmake")
fi

bash "$src/scripts/deps.sh"
work=$(mktemp -d /tmp/jflame-package.XXXXXX)
trap 'rm -rf "$work"' EXIT

cmake -S "$src" -B "$work/build" "${cross[@]}" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DJFLAME_SANITIZE=OFF -DJFLAME_MAN=ON >"$work/cmake.log" 2>&1 ||
	{ cat "$work/cmake.log" >&2; echo "package: cmake configure failed" >&2; exit 1; }
cmake --build "$work/build" -j"$(nproc)" >"$work/build.log" 2>&1 ||
	{ tail -40 "$work/build.log" >&2; echo "package: build failed" >&2; exit 1; }

if ((${#cross[@]})); then
	emu=("$(sed -n 's/^JFLAME_QEMU_AARCH64:FILEPATH=//p' "$work/build/CMakeCache.txt")")
	[[ -x ${emu[0]} ]] || { echo "package: qemu-aarch64-static not found: install qemu-user-static (scripts/deps.sh)" >&2; exit 1; }
fi
version=$("${emu[@]}" "$work/build/native/jflame" --version | awk '{print $2}')
[[ -n $version ]] || { echo "package: cannot read the version from jflame --version" >&2; exit 1; }
name=jflame-$version-linux-$arch
cmake --install "$work/build" --prefix "$work/$name" >/dev/null

# the installed tree must work where it lands: the agent is found in ../lib
env -u JFLAME_AGENT "${emu[@]}" "$work/$name/bin/jflame" --version >/dev/null
pages=()
for c in $("${emu[@]}" "$work/$name/bin/jflame" --help | awk '/^commands:$/ { on = 1; next } on && /^$/ { exit } on { print $1 }'); do
	pages+=("share/man/man1/jflame-$c.1")
done
for f in bin/jflame lib/libjflame-agent.so share/man/man1/jflame.1 "${pages[@]}" share/doc/jflame/README.md \
	share/doc/jflame/docs/architecture.md; do
	[[ -f $work/$name/$f ]] || { echo "package: $f missing from the installed tree" >&2; exit 1; }
done

# the machine code is the architecture's
machine=AArch64
((${#cross[@]})) || machine=$(LC_ALL=C readelf -h /proc/self/exe | sed -n 's/^ *Machine: *//p')
for f in bin/jflame lib/libjflame-agent.so; do
	m=$(LC_ALL=C readelf -h "$work/$name/$f" | sed -n 's/^ *Machine: *//p')
	[[ $m == "$machine" ]] || { echo "package: $f is for '$m', not $machine" >&2; exit 1; }
done

mkdir -p "$outdir"
# reproducible-ish: fixed owner and order, mtime of the last commit when there is one
mtime=$(git -C "$src" log -1 --format=%cI 2>/dev/null || date -u +%FT%TZ)
tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner --mtime="$mtime" \
	-czf "$outdir/$name.tar.gz.tmp" "$name"
mv "$outdir/$name.tar.gz.tmp" "$outdir/$name.tar.gz"
echo "$outdir/$name.tar.gz"
