#!/usr/bin/env bash
# make_referee.sh JFLAME [ASYNC_PROFILER]: re-makes the stored referee of the .jfr files jflame
# writes: tests/data/convert/NAME.folded (NAME: jvm, sampled) is written here as NAME.jfr by
# `JFLAME convert` (SOURCE_DATE_EPOCH fixed, so the bytes are the same on every machine), and
# async-profiler's converter (built by bench/build_async_profiler.sh; default
# /var/tmp/jflame-async-profiler) reads NAME.jfr into NAME.converter.collapsed
# (`jfr-converter.jar -t -o collapsed`). unit.jfr_fixtures checks that jflame still writes
# exactly NAME.jfr and that the converter's stacks are NAME.folded's.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[[ $# -ge 1 && -x $1 ]] || { echo "usage: make_referee.sh JFLAME [ASYNC_PROFILER]" >&2; exit 2; }
jflame=$1
ap=${2:-/var/tmp/jflame-async-profiler}
java=${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java
[[ -f $ap/lib/jfr-converter.jar ]] || { echo "no $ap/lib/jfr-converter.jar; run bench/build_async_profiler.sh" >&2; exit 1; }
for name in jvm sampled; do
  in=$here/../../convert/$name.folded
  base=$here/$name
  SOURCE_DATE_EPOCH=1790000000 "$jflame" convert "$in" -o "$base.jfr"
  "$java" -jar "$ap/lib/jfr-converter.jar" -t -o collapsed "$base.jfr" "$base.converter.collapsed" >/dev/null
  echo "$(basename "$base"): $(wc -l <"$base.converter.collapsed") converter stacks"
done
echo "async-profiler $(cat "$ap/VERSION" 2>/dev/null || echo '(version unknown)')" >"$here/CONVERTER"
