#!/usr/bin/env bash
# run-vm-arm64.sh SCRIPT OUTDIR - boots Debian bookworm's arm64 kernel under
# qemu-system-aarch64 (TCG: this machine is x86-64, and its /dev/kvm takes only
# PVM guests) on the cached arm64 root file system (tests/kernel/rootfs-arm64.sh
# builds it when the cache is cold), runs SCRIPT in it as part of PID 1 (init.sh,
# the x86-64 guests' own: it mounts proc, sys, debugfs, tracefs, the BPF file
# system and cgroup v2, brings up loopback, runs SCRIPT with RES=/res and
# JFLAME_TEST_DIR=/opt/jflame-test, then syncs and powers off) and copies its
# results out of the disk image into OUTDIR/res.
#
# SCRIPT runs under bash as /opt/jflame-test/checks.sh, next to the files
# JFLAME_KERNEL_EXTRA names (space-separated; their modes kept: an arm64 jflame
# can go there). Whatever it writes to $RES comes out in OUTDIR/res, with
# init-uptime (the guest's uptime when init.sh started) and checks-exit (SCRIPT's
# exit code).
#
# OUTDIR gets: res/, console.log (the serial console: the kernel's messages,
# init.sh's and SCRIPT's output), disk.img (kept for a look with debugfs; removed
# by the next run) and timing (seconds per stage on the host: rootfs, image, boot
# to results). On failure the console's tail is printed.
#
# The machine: qemu's virt board, -cpu max,pauth-impdef=on, one vCPU, 3 GB, the
# kernel Image and its initramfs booted directly (-kernel/-initrd: no firmware),
# the disk virtio-blk on PCI, the console the PL011 serial port (ttyAMA0), no
# network. qemu runs TCG single-threaded (-accel tcg,thread=single), as run-vm.sh
# does and for its reasons (with thread=multi, JVMs crashed in C1 code just
# compiled on the x86-64 guests); JFLAME_KERNEL_ARM64_ACCEL=tcg,thread=multi
# brings the other back. pauth-impdef=on: the CPU has pointer authentication
# (Debian's arm64 kernel signs the return address of its non-leaf functions with
# it: CONFIG_ARM64_PTR_AUTH_KERNEL), computed with QEMU's own cheap hash instead
# of the architected QARMA, whose emulation took the boot to init from 21 s to
# 48 s (README-arm64.md); JFLAME_KERNEL_ARM64_CPU overrides it (max: QARMA),
# JFLAME_KERNEL_ARM64_SMP -smp 1 and JFLAME_KERNEL_ARM64_MEM -m 3072. panic=1: a
# guest kernel that panics ends the run at once (said as such) instead of at the
# timeout.
#
# Environment: JFLAME_KERNEL_TIMEOUT (seconds qemu may run, default 720: then it
# is killed), JFLAME_KERNEL_ARM64_CACHE (see rootfs-arm64.sh), JFLAME_KERNEL_EXTRA
# and the above. Runs as root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
say() { printf 'kernel-vm-arm64: %s\n' "$*" >&2; }
die() { printf 'kernel-vm-arm64: %s\n' "$*" >&2; exit 1; }
# shellcheck source=vm-results.sh
. "$here/vm-results.sh"
[[ $# -eq 2 ]] || die "usage: $0 SCRIPT OUTDIR"
script=$1 out=$2
limit=${JFLAME_KERNEL_TIMEOUT:-720}
[[ -f $script ]] || die "no script $script"
for f in ${JFLAME_KERNEL_EXTRA:-}; do [[ -f $f ]] || die "JFLAME_KERNEL_EXTRA: no file $f"; done
for tool in qemu-system-aarch64 mke2fs debugfs; do
	command -v $tool >/dev/null || die "$tool missing; run scripts/deps.sh (qemu-system-arm, e2fsprogs)"
done
[[ $(id -u) -eq 0 ]] || die "run as root (the cached root file system is root's)"

t0=$SECONDS
cache=$(bash "$here/rootfs-arm64.sh") || die "no root file system (tests/kernel/rootfs-arm64.sh failed)"
t_rootfs=$((SECONDS - t0))
kernel=$cache/kernel
[[ -s $kernel/Image && -s $kernel/initrd.img ]] || die "no kernel Image or initrd.img in $cache"

mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -rf "$out/res" "$out/stage" "$out/disk.img" "$out/console.log" "$out/timing"

# --- the disk: the root file system (hard links to the cache's files: nothing is
# copied, and mke2fs only reads them) plus init.sh, SCRIPT and the extra files,
# made by mke2fs -d (no loop mount)
t0=$SECONDS
stage=$out/stage
cp -al "$cache/rootfs" "$stage" 2>/dev/null || { rm -rf "$stage"; cp -a "$cache/rootfs" "$stage"; }
guest=$stage/opt/jflame-test
mkdir -p "$guest" "$stage/res"
install -m 755 "$here/init.sh" "$guest/"
install -m 755 "$script" "$guest/checks.sh"
for f in ${JFLAME_KERNEL_EXTRA:-}; do install -m "$(stat -c %a "$f")" "$f" "$guest/"; done
truncate -s 3G "$out/disk.img"
mke2fs -q -t ext4 -L jflame-guest -d "$stage" "$out/disk.img" || die "mke2fs -d $stage failed"
rm -rf "$stage"
t_image=$((SECONDS - t0))

# --- boot: the kernel runs init.sh, which powers off when SCRIPT ends -----------------
say "booting $(cat "$kernel/release") (qemu-system-aarch64 TCG, at most $limit s); console: $out/console.log"
t0=$SECONDS
rc=0
timeout -k 10 "$limit" qemu-system-aarch64 -machine virt -accel "${JFLAME_KERNEL_ARM64_ACCEL:-tcg,thread=single}" \
	-cpu "${JFLAME_KERNEL_ARM64_CPU:-max,pauth-impdef=on}" -smp "${JFLAME_KERNEL_ARM64_SMP:-1}" -m "${JFLAME_KERNEL_ARM64_MEM:-3072}" \
	-nographic -no-reboot \
	-kernel "$kernel/Image" -initrd "$kernel/initrd.img" \
	-append "root=/dev/vda rw console=ttyAMA0 init=/opt/jflame-test/init.sh quiet panic=1" \
	-drive file="${out//,/,,}/disk.img",format=raw,if=virtio \
	-nic none </dev/null >"$out/console.log" 2>&1 || rc=$?
t_boot=$((SECONDS - t0))
printf 'rootfs %d\nimage %d\nboot-to-results %d\nqemu-exit %d\n' "$t_rootfs" "$t_image" "$t_boot" "$rc" >"$out/timing"

# --- the results, read out of the image ---------------------------------------------
vm_results ""
say "results in $out/res (script exit $(cat "$out/res/checks-exit"); image $t_image s, boot to results $t_boot s)"
