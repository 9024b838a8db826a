#!/usr/bin/env bash
# reference_outputs.sh - every output the toolkit writes from the test data, into one folder,
# so a refactor can be checked byte for byte: run it before and after, then `diff -r A B`.
# usage: scripts/reference_outputs.sh JFLAME OUTDIR
set -u
J=${1:?usage: reference_outputs.sh JFLAME OUTDIR}
OUT=${2:?usage: reference_outputs.sh JFLAME OUTDIR}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
D=$ROOT/tests/data
mkdir -p "$OUT"
n=0
run() { # name, command...: stdout, stderr and exit status of one command
	local name=$1; shift
	(cd "$OUT" && "$@" >"$name.out" 2>"$name.err"; echo $? >"$name.rc")
	n=$((n + 1))
}
inputs=()
for f in "$D"/convert/* "$D"/flamegraph/*.folded "$D"/heatmap/*.stacks "$D"/collapse/*.perf \
	"$D"/collapse/*.perf.gz "$D"/pyroscope/*.json; do
	inputs+=("$f")
done
for f in "${inputs[@]}"; do
	b=$(basename "$f" | tr . _)
	for ext in folded svg html pb.gz speedscope.json; do
		o=$b.$ext
		[ "$ext" = speedscope.json ] && o=$b.json
		run "convert_${b}_${ext}" "$J" convert "$f" -o "$o"
	done
	for opt in "" "--inverted" "--reverse" "--flamechart" "--hash" "--colors hot" "--minwidth 1%" \
		"--title T --subtitle S --width 900 --countname ms" "--subtitle WARNING:x"; do
		# shellcheck disable=SC2086 # the options, split on purpose
		run "svg_${b}_$(echo "$opt" | tr -c 'a-z0-9\n' _)" "$J" svg $opt "$f"
	done
done
for f in "$D"/collapse/*.perf "$D"/collapse/*.perf.gz "$D"/heatmap/*.stacks; do
	b=$(basename "$f" | tr . _)
	for opt in "" "--all" "--pid" "--tid" "--addrs" "--jit"; do
		run "collapse_${b}_$(echo "$opt" | tr -c 'a-z0-9\n' _)" "$J" collapse $opt "$f"
	done
done
for c in "$D"/collapse/cases/*; do
	[ -f "$c" ] || continue
	run "collapse_case_$(basename "$c" | tr . _)" "$J" collapse "$c"
done
F=$D/flamegraph
run diff_svg "$J" diff "$F/basic.folded" "$F/java.folded" -o d.svg
run diff_html "$J" diff "$F/basic.folded" "$F/java.folded" -o d.html
run diff_folded "$J" diff "$F/basic.folded" "$F/java.folded" -o d.folded
run diff_report "$J" diff --report "$F/basic.folded" "$F/java.folded"
run diff_report_json "$J" diff --report=json "$F/basic.folded" "$F/java.folded"
run svg_diff_input "$J" svg "$F/diff.folded"
for r in "$D"/report/*/; do
	[ -d "$r" ] || continue
	b=$(basename "$r")
	if [ -e "$r/before" ] && [ -e "$r/after" ]; then
		run "report_$b" "$J" diff --report "$r/before" "$r/after"
	fi
done
for s in "$D"/heatmap/*.stacks; do
	b=$(basename "$s" | tr . _)
	run "heatmap_$b" "$J" heatmap "$s" -o "hm_$b.html"
done
echo "reference_outputs: $n commands, outputs in $OUT"
