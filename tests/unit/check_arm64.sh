#!/usr/bin/env bash
# check_arm64.sh READELF-AARCH64 CHECK-GLIBC [BUILD-DIR]: jflame cross-builds for arm64 (scripts/cross-build.sh:
# jflame, the agent and the BPF walker for __TARGET_ARCH_arm64) and what comes out is what an
# arm64 machine runs: AArch64 ELF files, an agent an arm64 JVM loads (no glibc newer than 2.17:
# jvmagent/glibc_compat.h; capstone dlopened), a BPF object whose registers are arm64's
# (user_pt_regs, pstate; no x86-64 pt_regs). Then the arm64 build's own unit tests and fuzzers'
# regression runs, on arm64 code under qemu-user (Debian's qemu-user-static: ctest prefixes
# the test programs with it, binfmt_misc runs the ones scripts start).
set -euo pipefail
readelf=$1 check_glibc=$2 keep=${3:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
fail() {
	echo "arm64: $*" >&2
	exit 1
}
qemu=$(command -v qemu-aarch64-static || true)
[[ -n $qemu ]] || fail "qemu-aarch64-static not found; install the Debian package 'qemu-user-static' (or run scripts/deps.sh)"
# binfmt_misc: the arm64 programs the tests' scripts start run under qemu too
binfmt=/proc/sys/fs/binfmt_misc
if [[ ! -e $binfmt/qemu-aarch64 ]]; then
	[[ -e $binfmt/register ]] || mount -t binfmt_misc binfmt_misc "$binfmt" 2>/dev/null ||
		fail "binfmt_misc cannot be mounted at $binfmt (run as root)"
	[[ -e $binfmt/qemu-aarch64 ]] || grep -v '^#' /usr/lib/binfmt.d/qemu-aarch64.conf >"$binfmt/register" ||
		fail "qemu-aarch64 could not be registered with binfmt_misc (/usr/lib/binfmt.d/qemu-aarch64.conf)"
fi
# BUILD-DIR: kept for the arm64 guest's test (kernel.arm64), else a scratch directory
if [[ -n $keep ]]; then
	dir=$keep
else
	dir=$(mktemp -d /tmp/jflame-arm64.XXXXXX)
	trap 'rm -rf "$dir"' EXIT
fi
bash "$here/scripts/cross-build.sh" "$dir" -DBUILD_TESTING=ON -DJFLAME_MAN=OFF >/dev/null
jflame=$dir/native/jflame agent=$dir/jvmagent/libjflame-agent.so bpf=$dir/bpf/profile.bpf.o
for f in "$jflame" "$agent"; do
	machine=$("$readelf" -h "$f" | sed -n 's/^ *Machine: *//p')
	[[ $machine == AArch64 ]] || fail "$f is built for '$machine', not AArch64"
done
if "$readelf" -d "$agent" | grep -q 'NEEDED.*capstone'; then
	fail "$agent links capstone; it must dlopen it (jvmagent/prologue_check.c)"
fi
python3 "$check_glibc" "$readelf" "$agent"
btf=$(bpftool btf dump file "$bpf" 2>/dev/null) || fail "bpftool cannot read $bpf"
grep -q "STRUCT 'user_pt_regs'" <<<"$btf" || fail "$bpf has no user_pt_regs: not built for arm64"
grep -q "'pstate'" <<<"$btf" || fail "$bpf does not read pstate: not arm64's user-mode test"
if grep -q "'orig_ax'" <<<"$btf"; then
	fail "$bpf reads x86-64's orig_ax"
fi
version=$("$qemu" "$jflame" --version) || fail "$jflame --version failed under qemu-aarch64"
echo "arm64: $jflame ($version), $agent, $bpf: AArch64"
# the arm64 build's own tests, on arm64 code: all but the host's lint, baseline_replay's
# long replays (2 of its 4 minutes under emulation; the tracker's own tests run) and
# kernel_names, which opens the sampler (qemu-user passes no bpf syscall: kernel.arm64
# loads the program on Debian's arm64 kernel)
# JFLAME_QEMU_USER: the one test that depends on signal delivery qemu-user does not
# emulate (an ignored signal interrupting a blocked write) knows to leave itself out
(cd "$dir" && JFLAME_QEMU_USER=1 ctest -j"$(nproc)" --timeout 600 --output-on-failure -L '^(unit|fuzz)$' \
	-E '^unit\.(lint|baseline_replay|kernel_names)$') ||
	fail "the arm64 build's unit tests failed under qemu-aarch64 (above)"
