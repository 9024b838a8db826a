#!/usr/bin/env bash
# jfr_referee.sh JFLAME [SECONDS]: async-profiler's JFR converter as a referee for the .jfr that
# jflame writes. Starts the Kafka-style example (as scripts/demo.sh does; FORMAT, default
# string-format), records it with `JFLAME record -p PID -d SECONDS -o x.jfr -o x.folded`
# (SECONDS default 10; EVENT=cpu|wall|alloc|lock, default cpu; alloc and lock with --count;
# wall's samples counted from its pprof output, as the folded output weighs microseconds),
# converts x.jfr with async-profiler's converter to collapsed stacks
# (`java -jar ASYNC_PROFILER/lib/jfr-converter.jar [--wall|--alloc|--lock] -t -o collapsed`)
# and compares them with x.folded. Other forms:
#   jfr_referee.sh JFLAME --folded IN.folded [VIEW]  `JFLAME convert IN.folded -o x.jfr`, compared with IN
#   jfr_referee.sh --compare X.jfr X.folded [VIEW]   the comparison only (VIEW: cpu, wall, alloc, lock)
# The mapping (tests/data/jfr/README.md, tests/unit/jfr_view.py): jflame's [Pod]/[Con]/[PID]
# roots are dropped and its thread frame compared with the converter's [NAME tid=N] without
# tid; the converter marks Java frames per node of its tree (inlined if >= 1/3 of the node's
# samples, else C1 _[1] if >= 1/2, interpreted if >= 1/2, else JIT), so the same rule is applied
# to jflame's stacks; allocation and lock leaves (jflame CLASS_[a]/_[l], slashes) are compared
# as the converter prints them (dotted, _[i]). Prints stacks and samples on both sides, matched
# and differing stacks (also with Java marks ignored) and the first differences; exits 1 if any
# stack differs. Needs async-profiler built by bench/build_async_profiler.sh (ASYNC_PROFILER=DIR,
# default /var/tmp/jflame-async-profiler). Holds LOCK (default /tmp/jflame-jvm.lock; LOCK= for
# none; do not run the script under flock of the same file) while the example runs. The files
# stay in OUT (default a new /tmp/jflame-jfr-referee.*).
set -euo pipefail

# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bench_help "$@"

ap=${ASYNC_PROFILER:-/var/tmp/jflame-async-profiler}
converter=$ap/lib/jfr-converter.jar
[[ -f $converter ]] || bench_die "no $converter; build it with: bash bench/build_async_profiler.sh SRC"
require_java
out=${OUT:-$(mktemp -d /tmp/jflame-jfr-referee.XXXXXX)}
mkdir -p "$out"
echo "jfr_referee: files in $out"

# compare JFR FOLDED VIEW: the converter's view of JFR against FOLDED; exits with its verdict
compare() {
  local jfr=$1 folded=$2 view=$3 flag=() conv
  case $view in
  cpu) ;;
  wall | alloc | lock) flag=("--$view") ;;
  *) bench_die "VIEW must be cpu, wall, alloc or lock (got '$view')" ;;
  esac
  [[ -s $jfr ]] || bench_die "no recording $jfr"
  [[ -s $folded ]] || bench_die "no folded stacks $folded"
  conv=$out/$(basename "${jfr%.jfr}").converter.collapsed
  # no --cpu for CPU: it keeps only STATE_DEFAULT samples (async-profiler's own); without a
  # flag the converter takes every jdk.ExecutionSample whatever its state
  "$java" -jar "$converter" "${flag[@]}" -t -o collapsed "$jfr" "$conv" >/dev/null 2>"$conv.err" ||
    bench_die "the converter failed on $jfr: $(tail -n1 "$conv.err")"
  echo "converter: java -jar $converter ${flag[*]} -t -o collapsed $jfr $conv"
  PYTHONPATH=$root/tests/unit exec python3 - "$conv" "$folded" "$view" <<'PY'
import collections, re, sys
import jfr_view as v

conv_path, folded_path, view = sys.argv[1:]
conv = v.norm_threads(v.read_folded(conv_path))
# jflame's .jfr keeps the process roots and the thread as the stacks' first frames
mine = v.jflame_as_converter(v.read_folded(folded_path), roots_kept=True)
if view == "alloc":
    conv, mine = v.norm_leaves(conv), v.norm_leaves(mine)


def strip(folded):
    out = collections.Counter()
    for s, n in folded.items():
        out[re.sub(r"_\[[0ji1]\](?=;|$)", "", s)] += n
    return out


def figures(a, b):
    keys = set(a) | set(b)
    same = [k for k in keys if a[k] == b[k]]
    return (len(same), sum(a[k] for k in same), sum(1 for k in keys if k in a and k not in b),
            sum(1 for k in keys if k in b and k not in a), sum(1 for k in keys if k in a and k in b and a[k] != b[k]))


print(f"\n== jfr_referee ({view}: {folded_path} against async-profiler's converter) ==")
print(f"jflame folded:  {len(mine)} stacks, {sum(mine.values())} samples (as the converter would fold them)")
print(f"converter:      {len(conv)} stacks, {sum(conv.values())} samples")
m, ms, only_mine, only_conv, diff = figures(mine, conv)
print(f"matched:        {m} stacks, {ms} samples ({100 * ms / max(1, sum(mine.values())):.1f}%)")
print(f"differing:      {only_mine + only_conv + diff} stacks: {only_mine} only in jflame's, "
      f"{only_conv} only in the converter's, {diff} with other counts")
sm, smn, a, b, c = figures(strip(mine), strip(conv))
print(f"marks ignored:  {sm} stacks matched, {smn} samples; {a + b + c} differing")
shown = 0
for k in sorted(set(mine) | set(conv)):
    if mine[k] != conv[k] and shown < 5:
        print(f"  jflame {mine[k]:>6}  converter {conv[k]:>6}  {k[:240]}")
        shown += 1
sys.exit(0 if only_mine + only_conv + diff == 0 else 1)
PY
}

if [[ ${1:-} == --compare ]]; then
  [[ $# -ge 3 && $# -le 4 ]] || bench_die "usage: jfr_referee.sh --compare X.jfr X.folded [VIEW]"
  compare "$2" "$3" "${4:-cpu}"
fi

[[ $# -ge 1 ]] || bench_die "usage: jfr_referee.sh JFLAME [SECONDS] (--help for more)"
bin=$1
[[ -x $bin ]] || bench_die "no jflame at $bin"

if [[ ${2:-} == --folded ]]; then
  [[ $# -ge 3 && $# -le 4 ]] || bench_die "usage: jfr_referee.sh JFLAME --folded IN.folded [VIEW]"
  "$bin" convert "$3" -o "$out/x.jfr" || bench_die "jflame convert $3 -o x.jfr failed"
  compare "$out/x.jfr" "$3" "${4:-cpu}"
fi

[[ $# -le 2 ]] || bench_die "usage: jfr_referee.sh JFLAME [SECONDS] (--help for more)"
seconds=${2:-10}
int_arg SECONDS "$seconds" 1
event=${EVENT:-cpu}
count=()
case $event in
cpu | wall) ;;
alloc | lock) count=(--count) ;;
*) bench_die "EVENT must be cpu, wall, alloc or lock (got '$event')" ;;
esac
require_build "$jar"
lock=${LOCK-/tmp/jflame-jvm.lock}
if [[ -n $lock ]]; then
  exec 9>>"$lock"
  flock 9
fi
"$java" -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints -cp "$jar" jflame.examples.KafkaStyle \
  --seconds $((seconds + 40)) --format "${FORMAT:-string-format}" >"$out/kafka.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -f /tmp/perf-$pid.map /tmp/jflame-$pid.*' EXIT
until grep -qs 'jflame-example: ready' "$out/kafka.log"; do
  kill -0 $pid 2>/dev/null || bench_die "the example exited: $(tail -n2 "$out/kafka.log")"
  sleep 0.2
done
# wall: the folded output weighs microseconds; the converter counts samples, which the pprof
# output holds (its first sample type): folded from it by jflame convert
folded_out=$out/x.folded
[[ $event == wall ]] && folded_out=$out/x.pb.gz
echo "record: $bin record -p $pid -e $event ${count[*]} -d $seconds -o $out/x.jfr -o $folded_out"
"$bin" record -p "$pid" -e "$event" "${count[@]}" -d "$seconds" -o "$out/x.jfr" -o "$folded_out" 2>"$out/record.log" ||
  bench_die "jflame record failed: $(grep -m1 -v 'loaded the agent\|^jflame: recording\|^jflame: wrote' "$out/record.log" || tail -n1 "$out/record.log")"
if [[ $event == wall ]]; then
  "$bin" convert "$folded_out" --sample-index samples -o "$out/x.folded" 2>>"$out/record.log" ||
    bench_die "jflame convert $folded_out failed: $(tail -n1 "$out/record.log")"
fi
kill -TERM $pid 2>/dev/null || true
wait $pid 2>/dev/null || true
rm -f "/tmp/perf-$pid.map" "/tmp/jflame-$pid".*
trap - EXIT
if [[ -n $lock ]]; then
  flock -u 9
fi
compare "$out/x.jfr" "$out/x.folded" "$event"
