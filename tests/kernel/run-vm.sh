#!/usr/bin/env bash
# run-vm.sh KERNEL OUTDIR - boots one of Debian's kernels (5.10, 6.1 or 6.12) under
# qemu (TCG: this machine's /dev/kvm takes only PVM guests) on the cached root file
# system (tests/kernel/rootfs.sh builds it when the cache is cold) with this build's
# jflame, agent and examples jar, runs checks.sh in it as PID 1 (init.sh) and
# copies its results out of the disk image into OUTDIR/res.
#
# OUTDIR gets: res/ (what checks.sh wrote: outputs, jflame's stderr and exit code
# per mode, steps.tsv with each step's timing), console.log (the serial console:
# the kernel's messages, init.sh's and checks.sh's progress), disk.img (kept for
# a look with debugfs; removed by the next run) and timing (seconds per stage
# on the host: rootfs, image, boot to results). On failure the console's tail is
# printed.
#
# qemu runs TCG single-threaded (-accel tcg,thread=single: both vCPUs on one host
# thread). With thread=multi, code one vCPU wrote was sometimes run stale by the
# other: JVMs crashed at the entry of C1 methods just compiled (4 in about 150
# starts, one with no jflame about), and a 6.12 guest's kernel died of an int3
# left in __schedule by the text poke of jflame's BPF attach ("Oops: int3",
# PID jflame, in the bpf syscall). JFLAME_KERNEL_ACCEL=tcg,thread=multi brings it
# back; JFLAME_KERNEL_CPU overrides -cpu max. panic=1: a guest kernel that
# panics ends the run at once (said as such) instead of at the timeout.
#
# Environment: JFLAME_BIN, JFLAME_AGENT, JFLAME_EXAMPLES_JAR (default: build/'s),
# JFLAME_KERNEL_TIMEOUT (seconds qemu may run, default 720: then it is killed),
# JFLAME_KERNEL_CACHE (see rootfs.sh), JFLAME_KERNEL_SCRIPT and JFLAME_KERNEL_EXTRA (another
# checks script, and files for it: bench/kernels.sh), JFLAME_CHECKS (the steps checks.sh runs;
# default all), JFLAME_KERNEL_WARMUP (seconds a workload runs after saying ready
# before it is recorded; default 8), JFLAME_KERNEL_KAFKA_WARMUP (the same for the
# Kafka-style example; default 15), JFLAME_KERNEL_KAFKA_SETTLE (how long it may
# take after that to settle, checks.sh's settled: its JIT takes a minute or more
# under TCG; default 90). Runs as root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
say() { printf 'kernel-vm: %s\n' "$*" >&2; }
die() { printf 'kernel-vm: %s\n' "$*" >&2; exit 1; }
# shellcheck source=vm-results.sh
. "$here/vm-results.sh"
[[ $# -eq 2 ]] || die "usage: $0 5.10|6.1|6.12 OUTDIR"
kernel=$1 out=$2
case $kernel in 5.10 | 6.1 | 6.12) ;; *) die "no kernel '$kernel': 5.10, 6.1 or 6.12" ;; esac
jflame=${JFLAME_BIN:-$src/build/native/jflame}
agent=${JFLAME_AGENT:-$src/build/jvmagent/libjflame-agent.so}
jar=${JFLAME_EXAMPLES_JAR:-$src/build/examples/jflame-examples.jar}
limit=${JFLAME_KERNEL_TIMEOUT:-720}
for f in "$jflame" "$agent" "$jar"; do [[ -f $f ]] || die "$f missing: build jflame first (cmake --build build)"; done
for tool in qemu-system-x86_64 mke2fs debugfs; do
	command -v $tool >/dev/null || die "$tool missing; run scripts/deps.sh (qemu-system-x86, e2fsprogs)"
done
[[ $(id -u) -eq 0 ]] || die "run as root (the cached root file system is root's)"

t0=$SECONDS
cache=$(bash "$here/rootfs.sh") || die "no root file system (tests/kernel/rootfs.sh failed)"
t_rootfs=$((SECONDS - t0))
[[ -s $cache/kernel-$kernel/vmlinuz ]] || die "no kernel $kernel in $cache"

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/res" "$out/stage" "$out/disk.img" "$out/console.log" "$out/timing"

# --- the disk: the root file system (hard links to the cache's files: nothing is
# copied, and mke2fs only reads them) plus this build's files, made by mke2fs -d
# (no loop mount)
t0=$SECONDS
stage=$out/stage
cp -al "$cache/rootfs" "$stage" 2>/dev/null || { rm -rf "$stage"; cp -a "$cache/rootfs" "$stage"; }
guest=$stage/opt/jflame-test
mkdir -p "$guest" "$stage/res"
install -m 755 "$jflame" "$guest/jflame"
install -m 644 "$agent" "$guest/libjflame-agent.so"
install -m 644 "$jar" "$guest/jflame-examples.jar"
install -m 755 "$here/init.sh" "$guest/"
# the checks the guest runs: checks.sh, or JFLAME_KERNEL_SCRIPT (bench/kernels.sh's),
# with the files JFLAME_KERNEL_EXTRA names (space-separated) next to it
install -m 755 "${JFLAME_KERNEL_SCRIPT:-$here/checks.sh}" "$guest/checks.sh"
for f in ${JFLAME_KERNEL_EXTRA:-}; do install -m 644 "$f" "$guest/"; done
# what checks.sh is asked to do (it reads this file when no environment says otherwise)
{
	printf 'JFLAME_CHECKS=%q\n' "${JFLAME_CHECKS:-all}"
	printf 'JFLAME_KERNEL_WARMUP=%q\n' "${JFLAME_KERNEL_WARMUP:-8}"
	printf 'JFLAME_KERNEL_KAFKA_WARMUP=%q\n' "${JFLAME_KERNEL_KAFKA_WARMUP:-15}"
	printf 'JFLAME_KERNEL_KAFKA_SETTLE=%q\n' "${JFLAME_KERNEL_KAFKA_SETTLE:-90}"
} >"$guest/checks.conf"
truncate -s 3G "$out/disk.img"
mke2fs -q -t ext4 -L jflame-guest -d "$stage" "$out/disk.img" || die "mke2fs -d $stage failed"
rm -rf "$stage"
t_image=$((SECONDS - t0))

# --- boot: the kernel runs init.sh, which powers off when the checks end ------------
say "booting $(cat "$cache/kernel-$kernel/release") (qemu TCG, at most $limit s); console: $out/console.log"
t0=$SECONDS
rc=0
timeout -k 10 "$limit" qemu-system-x86_64 -accel "${JFLAME_KERNEL_ACCEL:-tcg,thread=single}" -cpu "${JFLAME_KERNEL_CPU:-max}" -smp "${JFLAME_KERNEL_SMP:-1}" -m 3072 -nographic -no-reboot \
	-kernel "$cache/kernel-$kernel/vmlinuz" -initrd "$cache/kernel-$kernel/initrd.img" \
	-append "root=/dev/vda rw console=ttyS0 init=/opt/jflame-test/init.sh quiet clocksource=tsc tsc=reliable panic=1" \
	-drive file="${out//,/,,}/disk.img",format=raw,if=virtio \
	-nic none </dev/null >"$out/console.log" 2>&1 || rc=$?
t_boot=$((SECONDS - t0))
printf 'rootfs %d\nimage %d\nboot-to-results %d\nqemu-exit %d\n' "$t_rootfs" "$t_image" "$t_boot" "$rc" >"$out/timing"

# --- the results, read out of the image ---------------------------------------------
vm_results "kernel $kernel: "
say "kernel $kernel: results in $out/res (image $t_image s, boot to results $t_boot s)"
