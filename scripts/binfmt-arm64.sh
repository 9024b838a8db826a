#!/usr/bin/env bash
# binfmt-arm64.sh - lets this x86-64 host run arm64 programs (mmdebstrap --arch=arm64's
# maintainer scripts, an arm64 container image): qemu-user-static's qemu-aarch64 handler
# registered with the kernel's binfmt_misc (the file system mounted when it is not, the
# handler registered from /usr/lib/binfmt.d/qemu-aarch64.conf when it is not: flags POF,
# so it works in a chroot), checked with arch-test. Host-wide until reboot. Each missing
# piece said in one line (prefixed with $1, default "binfmt"), exit 1. Runs as root.
set -euo pipefail
who=${1:-binfmt}
say() { printf '%s: %s\n' "$who" "$*" >&2; }
die() { printf '%s: %s\n' "$who" "$*" >&2; exit 1; }
qemu_user=/usr/bin/qemu-aarch64-static
binfmt=/proc/sys/fs/binfmt_misc
[[ -x $qemu_user ]] || die "$qemu_user missing: install qemu-user-static (scripts/deps.sh)"
command -v arch-test >/dev/null || die "arch-test missing (mmdebstrap asks it whether arm64 programs run): install arch-test (scripts/deps.sh)"
if ! mountpoint -q "$binfmt"; then
	say "binfmt_misc not mounted: mounting it at $binfmt"
	mount -t binfmt_misc binfmt_misc "$binfmt" ||
		die "cannot mount binfmt_misc at $binfmt (no binfmt_misc in this kernel, or a container not allowed to mount it): arm64 programs cannot run here"
fi
if [[ ! -e $binfmt/qemu-aarch64 ]]; then
	conf=/usr/lib/binfmt.d/qemu-aarch64.conf
	[[ -f $conf ]] || die "no qemu-aarch64 handler in $binfmt and no $conf to register it from (qemu-user-static installs it)"
	say "no qemu-aarch64 handler in $binfmt: registering $conf's"
	grep -v '^#' "$conf" >"$binfmt/register" || die "registering $conf's qemu-aarch64 handler in $binfmt/register failed"
fi
grep -qx enabled "$binfmt/qemu-aarch64" ||
	die "the qemu-aarch64 handler in $binfmt is disabled (echo 1 >$binfmt/qemu-aarch64 enables it)"
grep -qx enabled "$binfmt/status" || die "binfmt_misc is disabled ($binfmt/status; echo 1 >$binfmt/status enables it)"
[[ $(arch-test arm64 2>&1) == "arm64: ok" ]] ||
	die "arch-test arm64 fails: arm64 programs do not run through $binfmt/qemu-aarch64 ($(tr '\n' ' ' <"$binfmt/qemu-aarch64"))"
