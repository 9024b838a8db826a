#!/usr/bin/env bash
# smoke-arm64.sh - the arm64 guest's smoke test (run-vm-arm64.sh's SCRIPT, run by
# init.sh as /opt/jflame-test/checks.sh): what the kernel and the JVM are, that
# the kernel has BTF and that debugfs, tracefs and the BPF file system are
# mounted, the JVM's PreserveFramePointer default, and ArmSmoke (armsmoke.jar,
# next to it: JFLAME_KERNEL_EXTRA) run for 20 s of its integer loop and 20 s of
# its objects, with the shell's clock before java to time each start; dmesg.
# Results in $RES; exits non-zero when something is missing.
#
#   javac --release 17 -d CLASSES tests/kernel/ArmSmoke.java && jar cf armsmoke.jar -C CLASSES .
#   JFLAME_KERNEL_EXTRA=$PWD/armsmoke.jar tests/kernel/run-vm-arm64.sh tests/kernel/smoke-arm64.sh OUTDIR
set -u
res=${RES:-/res} dir=${JFLAME_TEST_DIR:-/opt/jflame-test}
mkdir -p "$res"
fail=0
bad() { echo "smoke-arm64: $*" | tee -a "$res/failures"; fail=1; }
uname -a | tee "$res/uname"
[[ $(uname -m) == aarch64 ]] || bad "uname -m is $(uname -m), not aarch64"
tr -d '\0' </proc/device-tree/model >"$res/model" 2>/dev/null || true
grep -m1 '^Features' /proc/cpuinfo >"$res/cpu-features" || true
java -version 2>&1 | tee "$res/java-version"
grep -q 'OpenJDK 64-Bit Server VM' "$res/java-version" || bad "java -version is not a 64-bit server VM"
if [[ -e /sys/kernel/btf/vmlinux ]]; then
	echo "btf $(stat -c %s /sys/kernel/btf/vmlinux) bytes" | tee "$res/btf"
else
	bad "no /sys/kernel/btf/vmlinux"
fi
cp /proc/mounts "$res/mounts"
for fs in debugfs:/sys/kernel/debug tracefs:/sys/kernel/tracing bpf:/sys/fs/bpf; do
	grep -q "^[^ ]* ${fs#*:} ${fs%%:*} " /proc/mounts || bad "${fs%%:*} not mounted on ${fs#*:}"
done
java -XX:+PrintFlagsFinal -version 2>/dev/null | grep -w PreserveFramePointer | tee "$res/preserve-frame-pointer"
[[ -s $res/preserve-frame-pointer ]] || bad "no PreserveFramePointer in -XX:+PrintFlagsFinal"
# ArmSmoke KIND for SECONDS: OUT.out, its exit code, the JVM's start (ms)
smoke() { # name seconds kind
	date +%s%3N >"$res/$1.launch-ms"
	java -cp "$dir/armsmoke.jar" ArmSmoke "$2" "$3" | tee "$res/$1.out"
	echo "${PIPESTATUS[0]}" >"$res/$1.exit"
	start=$(awk '$1 == "start" {print $2}' "$res/$1.out")
	if [[ -n $start ]]; then
		echo "$1: java start to first line $((start - $(cat "$res/$1.launch-ms"))) ms" | tee "$res/$1.start"
	else
		bad "$1: ArmSmoke printed no start line"
	fi
	grep -q '^total ' "$res/$1.out" || bad "$1: ArmSmoke did not finish (exit $(cat "$res/$1.exit"))"
}
if [[ -f $dir/armsmoke.jar ]]; then
	smoke armsmoke 20 loop
	smoke armsmoke-objects 20 objects
else
	bad "no $dir/armsmoke.jar (JFLAME_KERNEL_EXTRA)"
fi
dmesg >"$res/dmesg" 2>&1
exit "$fail"
