#!/usr/bin/env bash
# Builds jflame (Release) in a temporary directory, installs it into a
# relocatable tree and packs that tree as jflame-<version>-linux-x86_64.tar.gz:
#
#   jflame-<version>-linux-x86_64/bin/jflame
#   jflame-<version>-linux-x86_64/lib/libjflame-agent.so   (found by jflame in ../lib)
#   jflame-<version>-linux-x86_64/share/man/man1/jflame.1, jflame-<command>.1 (help2man, from --help)
#   jflame-<version>-linux-x86_64/share/doc/jflame/README.md
#   jflame-<version>-linux-x86_64/share/doc/jflame/docs/*.md   (the README links into them)
#
# Usage: scripts/package.sh [OUTDIR]   (default: out/); prints the tarball's path.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
outdir=$(realpath -m "${1:-$src/out}")

bash "$src/scripts/deps.sh"
work=$(mktemp -d /tmp/jflame-package.XXXXXX)
trap 'rm -rf "$work"' EXIT

cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DJFLAME_SANITIZE=OFF -DJFLAME_MAN=ON >"$work/cmake.log" 2>&1 ||
	{ cat "$work/cmake.log" >&2; echo "package: cmake configure failed" >&2; exit 1; }
cmake --build "$work/build" -j"$(nproc)" >"$work/build.log" 2>&1 ||
	{ tail -40 "$work/build.log" >&2; echo "package: build failed" >&2; exit 1; }

version=$("$work/build/native/jflame" --version | awk '{print $2}')
[[ -n $version ]] || { echo "package: cannot read the version from jflame --version" >&2; exit 1; }
name=jflame-$version-linux-$(uname -m)
cmake --install "$work/build" --prefix "$work/$name" >/dev/null

# the installed tree must work where it lands: the agent is found in ../lib
env -u JFLAME_AGENT "$work/$name/bin/jflame" --version >/dev/null
pages=()
for c in $("$work/$name/bin/jflame" --help | awk '/^commands:$/ { on = 1; next } on && /^$/ { exit } on { print $1 }'); do
	pages+=("share/man/man1/jflame-$c.1")
done
for f in bin/jflame lib/libjflame-agent.so share/man/man1/jflame.1 "${pages[@]}" share/doc/jflame/README.md \
	share/doc/jflame/docs/architecture.md; do
	[[ -f $work/$name/$f ]] || { echo "package: $f missing from the installed tree" >&2; exit 1; }
done

mkdir -p "$outdir"
# reproducible-ish: fixed owner and order, mtime of the last commit when there is one
mtime=$(git -C "$src" log -1 --format=%cI 2>/dev/null || date -u +%FT%TZ)
tar -C "$work" --sort=name --owner=0 --group=0 --numeric-owner --mtime="$mtime" \
	-czf "$outdir/$name.tar.gz.tmp" "$name"
mv "$outdir/$name.tar.gz.tmp" "$outdir/$name.tar.gz"
echo "$outdir/$name.tar.gz"
