#!/usr/bin/env bash
# make_fixtures.sh: re-makes the JFR fixtures in this directory (see README.md): recordings of
# this repository's examples by async-profiler and by JDK Flight Recorder, and beside each the
# referee's view, async-profiler's converter's collapsed stacks (NAME.VIEW.collapsed).
# Needs async-profiler built by bench/build_async_profiler.sh (ASYNC_PROFILER=DIR, default
# /var/tmp/jflame-async-profiler), the examples jar (BUILD=build tree, default build/), OpenJDK 17
# and Temurin 25 (/usr/lib/jvm/temurin-25*). Every JVM runs under flock of /tmp/jflame-jvm.lock
# (LOCK=path; do not run this script under that lock). Then it checks that the JDK's own reading
# (`jfr print --json`, folded by tests/unit/jfr_view.py) gives the same stacks and counts, and
# writes MANIFEST (sizes, tool versions, commands). The recordings vary from run to run (timing).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../../.." && pwd)
ap=${ASYNC_PROFILER:-/var/tmp/jflame-async-profiler}
build=${BUILD:-$root/build}
jar=$build/examples/jflame-examples.jar
jdk17=/usr/lib/jvm/java-17-openjdk-amd64
jdk25=$(find /usr/lib/jvm -maxdepth 1 -name 'temurin-25*' 2>/dev/null | sort | head -n1)
lock=${LOCK-/tmp/jflame-jvm.lock}

die() {
  echo "make_fixtures.sh: $*" >&2
  exit 1
}
[[ -f $ap/lib/libasyncProfiler.so && -f $ap/lib/jfr-converter.jar ]] ||
  die "needs async-profiler and its converter in $ap: bash bench/build_async_profiler.sh SRC (git clone https://github.com/async-profiler/async-profiler)"
[[ -f $jar ]] || die "no $jar: cmake -S $root -B $build && cmake --build $build --target jflame-examples"
[[ -x $jdk17/bin/java && -x $jdk17/bin/jfr ]] || die "no OpenJDK 17 at $jdk17 (scripts/deps.sh)"
[[ -n $jdk25 && -x $jdk25/bin/java ]] || die "no Temurin 25 in /usr/lib/jvm/temurin-25*"

tmp=$(mktemp -d /tmp/jflame-jfr-fixtures.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
manifest=$tmp/MANIFEST
{
  echo "# made by tests/data/jfr/make_fixtures.sh on $(date -u +%Y-%m-%d)"
  echo "async-profiler $(cat "$ap/VERSION" 2>/dev/null || echo '(unknown version)')"
  echo "converter: $jdk17/bin/java -jar $ap/lib/jfr-converter.jar VIEWFLAG -t -o collapsed FILE.jfr OUT"
  echo "jdk17: $("$jdk17/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.runtime.version = //p')"
  echo "jdk25: $("$jdk25/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java.runtime.version = //p')"
  echo
} >"$manifest"

# run_jvm NAME JAVA_HOME JVMFLAG CLASS ARGS...: one JVM under the lock, recording to $tmp/NAME.jfr
run_jvm() {
  local name=$1 home=$2 flag=$3
  shift 3
  echo "$name.jfr: java $flag -cp jflame-examples.jar jflame.examples.$*" | sed "s|$tmp/||g; s|$ap/|ASYNC_PROFILER/|g; s|$here/||g" >>"$manifest"
  if [[ -n $lock ]]; then
    flock "$lock" "$home/bin/java" "$flag" -cp "$jar" "jflame.examples.$1" "${@:2}" >"$tmp/$name.log" 2>&1
  else
    "$home/bin/java" "$flag" -cp "$jar" "jflame.examples.$1" "${@:2}" >"$tmp/$name.log" 2>&1
  fi || die "$name: the JVM failed: $(tail -n2 "$tmp/$name.log")"
  [[ -s $tmp/$name.jfr ]] || die "$name: no recording written"
}

aprof() { echo "-agentpath:$ap/lib/libasyncProfiler.so=start,$1,file=$tmp/$2.jfr"; }
jdkrec() { echo "-XX:StartFlightRecording=settings=$here/fixtures.jfc,filename=$tmp/$1.jfr"; }

# async-profiler: CPU (perf_events cpu-clock here; kernel frames), allocation, monitor and
# ReentrantLock contention, wall clock; CPU on JDK 25
run_jvm ap-cpu-jdk17 "$jdk17" "$(aprof event=cpu,interval=10ms ap-cpu-jdk17)" Workload work 3000 2
run_jvm ap-alloc-jdk17 "$jdk17" "$(aprof event=alloc,alloc=8m ap-alloc-jdk17)" AllocMix --seconds 2
run_jvm ap-lock-jdk17 "$jdk17" "$(aprof event=lock ap-lock-jdk17)" LockContend --seconds 2
run_jvm ap-lockjuc-jdk17 "$jdk17" "$(aprof event=lock ap-lockjuc-jdk17)" LockContend --seconds 2 --lock juc
run_jvm ap-wall-jdk17 "$jdk17" "$(aprof event=wall,interval=20ms ap-wall-jdk17)" SleepSpin --seconds 2
run_jvm ap-cpu-jdk25 "$jdk25" "$(aprof event=cpu,interval=10ms ap-cpu-jdk25)" Workload work 3000 2
# JDK Flight Recorder with fixtures.jfc (ExecutionSample, ObjectAllocationSample, JavaMonitorEnter)
run_jvm jdk-cpu-alloc-jdk17 "$jdk17" "$(jdkrec jdk-cpu-alloc-jdk17)" Workload work 3000 2
run_jvm jdk-lock-jdk25 "$jdk25" "$(jdkrec jdk-lock-jdk25)" LockContend --seconds 2

# the referee's views: FILE VIEW CONVERTER-FLAG (none for the JDK's files' CPU view: --cpu keeps
# only async-profiler's STATE_DEFAULT samples, and the JDK's are STATE_RUNNABLE)
views=(
  "ap-cpu-jdk17 cpu --cpu" "ap-alloc-jdk17 alloc --alloc" "ap-lock-jdk17 lock --lock"
  "ap-lockjuc-jdk17 lock --lock" "ap-wall-jdk17 wall --wall" "ap-cpu-jdk25 cpu --cpu"
  "jdk-cpu-alloc-jdk17 cpu -" "jdk-cpu-alloc-jdk17 alloc --alloc"
  "jdk-lock-jdk25 lock --lock" "jdk-lock-jdk25 cpu -"
)
echo >>"$manifest"
for v in "${views[@]}"; do
  read -r name kind flag <<<"$v"
  args=(-t -o collapsed)
  [[ $flag != - ]] && args=("$flag" "${args[@]}")
  out=$tmp/$name.$kind.collapsed
  JAVA_HOME=$jdk17 "$jdk17/bin/java" -jar "$ap/lib/jfr-converter.jar" "${args[@]}" "$tmp/$name.jfr" "$out.raw" >/dev/null ||
    die "the converter failed on $name.jfr"
  LC_ALL=C sort "$out.raw" >"$out"
  rm -f "$out.raw"
  [[ -s $out ]] || die "$name: the converter's $kind view is empty"
  echo "$name.$kind.collapsed: jfrconv ${args[*]} $name.jfr: $(wc -l <"$out") stacks, $(awk '{s += $NF} END {print s}' "$out") events" >>"$manifest"
  # the JDK's reading must agree, or the fixture is not a fixture
  python3 -c '
import sys
sys.path.insert(0, sys.argv[1])
import jfr_view as v
jfr, path, kind, out = sys.argv[2:]
jdk = v.fold(v.jfr_json(jfr, path, v.VIEW_EVENTS[kind]), v.is_async_profiler(jfr, path), kind)
conv = v.norm_threads(v.read_folded(out))
if jdk != conv:
    d = (jdk - conv) + (conv - jdk)
    sys.exit("differ in %d stacks, e.g. %s" % (len(d), next(iter(d))))
' "$root/tests/unit" "$jdk17/bin/jfr" "$tmp/$name.jfr" "$kind" "$out" ||
    die "$name $kind: the JDK's jfr print and the converter disagree"
done

echo >>"$manifest"
rm -f "$here"/*.jfr "$here"/*.collapsed
for f in "$tmp"/*.jfr "$tmp"/*.collapsed; do
  install -m 644 "$f" "$here/"
done
for f in "$here"/*.jfr "$here"/*.collapsed; do
  echo "$(wc -c <"$f") ${f##*/}"
done >>"$manifest"
echo "total bytes: $(cat "$here"/*.jfr "$here"/*.collapsed | wc -c)" >>"$manifest"
install -m 644 "$manifest" "$here/MANIFEST"
cat "$here/MANIFEST"
