#!/usr/bin/env bash
# build_async_profiler.sh SRC [DEST]: builds async-profiler from its public source with its
# own make, for bench/cost_vs_peers.sh. SRC is a source tree, a git directory (a clone or a
# bare repository: its HEAD is built) or a tarball; get it with
#   git clone https://github.com/async-profiler/async-profiler
# (the only download; nothing else is fetched). The source is copied to DEST/src and built
# there (the library and asprof only, not the jars), then DEST/lib/libasyncProfiler.so and
# DEST/bin/asprof are installed and their paths printed. DEST defaults to
# /var/tmp/jflame-async-profiler, where cost_vs_peers.sh looks (ASYNC_PROFILER=DEST there).
# Needs g++, make and a JDK's headers (JAVA_HOME, default Debian's OpenJDK 17), all of
# which scripts/deps.sh installs.
set -euo pipefail

# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bench_help "$@"

[[ $# -ge 1 && $# -le 2 ]] || bench_die "usage: build_async_profiler.sh SRC [DEST] (--help for more)"
src=$1
dest=${2:-/var/tmp/jflame-async-profiler}
java_home=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}

[[ -e $src ]] || bench_die "no $src; get the source with: git clone https://github.com/async-profiler/async-profiler"
[[ -f $java_home/include/jni.h ]] || bench_die "no JDK headers at $java_home/include; set JAVA_HOME or run scripts/deps.sh"
for tool in g++ make; do
  command -v "$tool" >/dev/null || bench_die "$tool not found; run scripts/deps.sh"
done

work=$dest/src
rm -rf "$work"
mkdir -p "$work" "$dest/lib" "$dest/bin"
if [[ -f $src ]]; then
  tar -xf "$src" -C "$work" --strip-components=1 || bench_die "cannot unpack $src"
  version=$(basename "$src")
elif [[ -f $src/Makefile ]]; then
  cp -a "$src/." "$work/"
  version=$(git -C "$src" describe --tags --always 2>/dev/null || echo "source tree $src")
else
  gitdir=$src
  [[ -d $src/.git ]] && gitdir=$src/.git
  git --git-dir="$gitdir" rev-parse --verify -q HEAD >/dev/null || bench_die "$src is neither a source tree, a git directory nor a tarball"
  git --git-dir="$gitdir" archive HEAD | tar -x -C "$work"
  version="$(git --git-dir="$gitdir" describe --tags --always) ($(git --git-dir="$gitdir" rev-parse HEAD))"
fi
[[ -f $work/Makefile && -d $work/src ]] || bench_die "$src does not look like async-profiler's source (no Makefile and src/)"

lib=build/lib/libasyncProfiler.so
asprof=build/bin/asprof
# the output directories first: make's own `all` creates them as order-only prerequisites
make -C "$work" JAVA_HOME="$java_home" build/lib build/bin >/dev/null
make -C "$work" -j"$(nproc)" JAVA_HOME="$java_home" "$lib" "$asprof" >"$dest/build.log" 2>&1 ||
  bench_die "make failed; see $dest/build.log: $(grep -m1 -iE 'error' "$dest/build.log" || tail -n1 "$dest/build.log")"
install -m 755 "$work/$lib" "$dest/lib/libasyncProfiler.so"
install -m 755 "$work/$asprof" "$dest/bin/asprof"
echo "$version" >"$dest/VERSION"
echo "async-profiler $version built:"
echo "  $dest/lib/libasyncProfiler.so"
echo "  $dest/bin/asprof"
