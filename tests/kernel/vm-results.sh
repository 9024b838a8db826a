# shellcheck shell=bash disable=SC2154 # out, limit, rc: the sourcing script's
# vm-results.sh - sourced by run-vm.sh and run-vm-arm64.sh: what a guest left, read back.
# vm_results WHAT: copies /res out of $out/disk.img into $out/res (debugfs) and dies,
# with the console's tail, when the guest kernel panicked, qemu was killed at $limit s
# or exited $rc, or the guest's script did not finish; WHAT starts each message.
# Needs out, limit, rc and die().
vm_results() {
	local what=$1
	debugfs -R "rdump /res $out" "$out/disk.img" >/dev/null 2>"$out/debugfs.log" || true
	if grep -q "Kernel panic" "$out/console.log"; then
		vm_console_tail
		die "${what}the guest kernel panicked (console: $out/console.log)"
	elif ((rc == 124 || rc == 137)); then
		vm_console_tail
		die "${what}qemu killed after $limit s (the guest did not power off)"
	elif ((rc != 0)); then
		vm_console_tail
		die "${what}qemu exited $rc"
	fi
	if [[ ! -f $out/res/checks-exit ]]; then
		vm_console_tail
		die "${what}the guest's checks did not finish (no res/checks-exit)"
	fi
}
vm_console_tail() { echo "--- last 40 lines of $out/console.log:" >&2; tail -n 40 "$out/console.log" | tr -d '\r' >&2; }
