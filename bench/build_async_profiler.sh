#!/usr/bin/env bash
# build_async_profiler.sh SRC [DEST]: builds async-profiler from its public source with its
# own make, for bench/cost_vs_peers.sh, bench/jfr_referee.sh and tests/data/jfr/make_fixtures.sh.
# SRC is a source tree, a git directory (a clone or a bare repository: its HEAD is built) or a
# tarball; get it with
#   git clone https://github.com/async-profiler/async-profiler
# (the only download; nothing else is fetched: the converter needs no library but the JDK).
# The source is copied to DEST/src and built there: the library, asprof and the JFR
# converter (its jar, compiled by the JDK's javac; not the API jar, the tests or the
# native-image converter). Installed, with their paths printed: DEST/lib/libasyncProfiler.so,
# DEST/bin/asprof, DEST/lib/jfr-converter.jar (`java -jar DEST/lib/jfr-converter.jar`) and
# DEST/bin/jfrconv (async-profiler's launcher: a shell script with the jar appended; it runs
# $JAVA_HOME/bin/java, else the java on PATH). DEST defaults to
# /var/tmp/jflame-async-profiler, where those scripts look (ASYNC_PROFILER=DEST there).
# Needs g++, make and a JDK (JAVA_HOME, default Debian's OpenJDK 17: its headers, javac and
# jar), all of which scripts/deps.sh installs.
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
[[ -x $java_home/bin/javac && -x $java_home/bin/jar ]] || bench_die "no javac or jar in $java_home/bin; set JAVA_HOME to a JDK or run scripts/deps.sh"
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
convjar=build/jar/jfr-converter.jar
jfrconv=build/bin/jfrconv
# the output directories first: make's own `all` creates them as order-only prerequisites
make -C "$work" JAVA_HOME="$java_home" build/lib build/bin build/jar >/dev/null
make -C "$work" -j"$(nproc)" JAVA_HOME="$java_home" "$lib" "$asprof" "$convjar" "$jfrconv" >"$dest/build.log" 2>&1 ||
  bench_die "make failed; see $dest/build.log: $(grep -m1 -iE 'error' "$dest/build.log" || tail -n1 "$dest/build.log")"
install -m 755 "$work/$lib" "$dest/lib/libasyncProfiler.so"
install -m 755 "$work/$asprof" "$dest/bin/asprof"
install -m 644 "$work/$convjar" "$dest/lib/jfr-converter.jar"
install -m 755 "$work/$jfrconv" "$dest/bin/jfrconv"
echo "$version" >"$dest/VERSION"
echo "async-profiler $version built:"
echo "  $dest/lib/libasyncProfiler.so"
echo "  $dest/bin/asprof"
echo "  $dest/lib/jfr-converter.jar"
echo "  $dest/bin/jfrconv"
