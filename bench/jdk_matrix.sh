#!/usr/bin/env bash
# jdk_matrix.sh: the whole JDK matrix (issue 33), of which CI runs a part (tests/jdk/README.md):
# the kernel checks (tests/kernel/checks.sh held to test_kernels.py's assertions) on the host's
# kernel for each JDK of Debian's in its own root (tests/jdk/rootfs.sh: 11 bullseye, 21 and 25
# trixie) and each collector it has: G1, Parallel, ZGC (generational on 21 and 25; 11's
# experimental one, unlocked) and Shenandoah. Per run: the checks passed, failed and not run,
# the whole share of the Java threads' CPU stacks, and the Java threads' samples under their full
# names against their kernel (15-byte) names. JDKS (default "11 21 25"), GCS (default "g1
# parallel zgc shenandoah"), CHECKS (default cpu,lock,alloc: what a collector changes; "all"
# for every mode). About 40 s a run with the default checks, plus 1-2 min to build a root once.
set -euo pipefail

# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bench_help "$@"
jar11=$build/examples/jflame-examples-11.jar
require_build "$jflame" "$agent" "$jar11"
[[ $(id -u) -eq 0 ]] || bench_die "run as root (BPF; the JDKs' roots are built with mmdebstrap)"
jdks=${JDKS:-11 21 25}
gcs=${GCS:-g1 parallel zgc shenandoah}
checks=${CHECKS:-cpu,lock,alloc}
work=$(mktemp -d /tmp/jflame-bench-jdks.XXXXXX)
trap 'rm -rf "$work"' EXIT

gc_flags() { # jdk gc
	case $2 in
	g1) echo "-XX:+UseG1GC" ;;
	parallel) echo "-XX:+UseParallelGC" ;;
	zgc) if (($1 >= 21)); then echo "-XX:+UseZGC -XX:+ZGenerational"; else echo "-XX:+UnlockExperimentalVMOptions -XX:+UseZGC"; fi ;;
	shenandoah) echo "-XX:+UseShenandoahGC" ;;
	*) bench_die "unknown collector $2 (g1, parallel, zgc, shenandoah)" ;;
	esac
}

printf '%-4s %-11s %6s %6s %8s %8s %11s %11s  %s\n' jdk gc passed failed not-run whole full-names kernel-names failures
for jdk in $jdks; do
	for gc in $gcs; do
		out=$work/jdk$jdk-$gc
		log=$out.log
		rc=0
		JFLAME_KERNEL=host JFLAME_JDK=$jdk JFLAME_CHECKS=$checks JFLAME_JVM_GC=$(gc_flags "$jdk" "$gc") \
			JFLAME_KERNEL_OUT=$out JFLAME_AGENT=$agent JFLAME_BIN=$jflame JFLAME_EXAMPLES_JAR=$jar11 \
			JFLAME_JAVA_HOME=/usr/lib/jvm/java-$jdk-openjdk-amd64 PYTHONDONTWRITEBYTECODE=1 \
			python3 "$root/tests/kernel/test_kernels.py" -v >"$log" 2>&1 || rc=$?
		ran=$(grep -Eo '^Ran [0-9]+' "$log" | grep -Eo '[0-9]+' || echo 0)
		failed=$( (grep -Eo '(failures|errors)=[0-9]+' "$log" || true) | awk -F= '{n += $2} END {print n + 0}')
		skipped=$(grep -Eo 'skipped=[0-9]+' "$log" | grep -Eo '[0-9]+' || echo 0)
		whole=$(grep -Eo 'cpu: whole Java-thread stacks [0-9.]+%' "$log" | grep -Eo '[0-9.]+%' || echo -)
		names=-
		kernel_names=-
		if [[ -f $out/res/cpu.folded && -f $out/res/mixed.pid ]]; then
			pid=$(cat "$out/res/mixed.pid")
			read -r names kernel_names < <(awk -v root="[$pid] java" -F';' '
				$1 == root { n = $NF; sub(/.* /, "", n)
					if ($2 ~ /^jflame-(hot-worker|mixed-work)-thread-with-a-long-name$/) full += n
					else if ($2 ~ /^jflame-(hot-work|mixed-wo)$/) short += n }
				END { print full + 0, short + 0 }' "$out/res/cpu.folded")
		fi
		fails=$(grep -Eo '^(FAIL|ERROR): [a-z_]+' "$log" | sed 's/^[A-Z]*: //' | paste -sd, || true)
		((rc == 0)) || [[ -n $fails ]] || fails="exit $rc (see below)"
		printf '%-4s %-11s %6s %6s %8s %8s %11s %11s  %s\n' "$jdk" "$gc" "$((ran - failed - skipped))" "$failed" \
			"$skipped" "$whole" "$names" "$kernel_names" "${fails:-none}"
		if ((rc != 0)) && [[ $fails == exit* ]]; then tail -5 "$log" | sed 's/^/    /'; fi
	done
done
