#!/usr/bin/env bash
# kernels.sh: what the BPF programs cost on each kernel jflame is tested on (issue 32, item 5):
# Debian's 5.10, 6.1 and 6.12 booted under qemu by tests/kernel/run-vm.sh (TCG emulation), and
# the host's. On each, bench/kernels_guest.sh records KafkaStyle (--format string-format,
# agentless, warmed up WARM=20 s) for SECONDS (10) with `jflame record -v`, with the programs
# the kernel takes and, where those are not the legacy ones, again with JFLAME_BPF_LEGACY=1.
# Per kernel and set: the sampling program's verified instructions (the verifier's
# "processed N insns"), its verification time, the whole load's time, the HotSpot walker's
# depth, the samples taken and the program's time per sample of the JVM (its run time over
# every task it ran for, from the kernel's BPF statistics, divided by the JVM's samples: the
# walk is most of it), and the share of the producer thread in String.format.
# Times inside qemu are emulated, many times the host's: compare kernels and sets with each
# other, not with the host. KERNELS (default "5.10 6.1 6.12 host"). About 2 minutes a kernel.
set -euo pipefail

# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bench_help "$@"
require_build "$jflame" "$agent" "$jar"
kernels=${KERNELS:-5.10 6.1 6.12 host}
seconds=${SECONDS_TO_RECORD:-10}
warm=${WARM:-20}
int_arg SECONDS_TO_RECORD "$seconds" 1
int_arg WARM "$warm" 1
[[ $(id -u) -eq 0 ]] || bench_die "run as root (BPF, and the VMs' cached root file system)"
work=$(mktemp -d /tmp/jflame-bench-kernels.XXXXXX)
trap 'rm -rf "$work"' EXIT

for k in $kernels; do
	out=$work/$k
	mkdir -p "$out/res"
	if [[ $k == host ]]; then
		JFLAME_TEST_DIR=$work RES=$out/res JFLAME=$jflame JAR=$jar JAVA=$java WARM=$warm \
			SECONDS_TO_RECORD=$seconds bash "$root/bench/kernels_guest.sh"
	else
		printf 'WARM=%s\nSECONDS_TO_RECORD=%s\n' "$warm" "$seconds" >"$work/bench.env"
		JFLAME_KERNEL_SCRIPT="$root/bench/kernels_guest.sh" JFLAME_KERNEL_EXTRA="$work/bench.env" \
			bash "$root/tests/kernel/run-vm.sh" "$k" "$out" >"$out/vm.log" 2>&1 ||
			{ tail -20 "$out/vm.log" >&2; bench_die "kernel $k: the VM failed (its log: above)"; }
	fi
done

# shellcheck disable=SC2086 # the kernels, an argument each
python3 - "$work" $kernels <<'PY'
import os, re, sys
work, kernels = sys.argv[1], sys.argv[2:]
def num(pat, text, conv=float):
    m = re.search(pat, text)
    return conv(m.group(1)) if m else None
print("%-7s %-18s %-7s %12s %10s %9s %6s %8s %10s %8s" % ("kernel", "release", "set", "verified", "verify ms",
      "load ms", "depth", "samples", "us/sample", "format%"))
for k in kernels:
    res = os.path.join(work, k, "res")
    release = open(os.path.join(res, "release")).read().strip() if os.path.exists(os.path.join(res, "release")) else "?"
    for run in ("native", "legacy"):
        p = os.path.join(res, run + ".err")
        if not os.path.exists(p):
            continue
        err = open(p).read()
        prog = "profile_sample_legacy" if "BPF program profile_sample_legacy:" in err else "profile_sample"
        verified = num(r"BPF program %s: (\d+) instructions verified" % prog, err, int)
        vms = num(r"BPF program %s: \d+ instructions verified in ([0-9.]+) ms" % prog, err)
        load = num(r"BPF programs loaded in ([0-9.]+) ms", err)
        depth = num(r"walked to (\d+) frames", err, int) or 2048
        samples = num(r"jflame: (\d+) samples", err, int)
        runms = num(r"BPF program %s: \d+ runs, ([0-9.]+) ms in all" % prog, err)
        per = runms * 1000 / samples if runms is not None and samples else None
        fmt = tot = 0
        folded = os.path.join(res, run + ".folded")
        if os.path.exists(folded):
            for line in open(folded):
                st, _, c = line.rstrip("\n").rpartition(" ")
                if "producer" not in st.split(";")[1] if ";" in st else True:
                    continue
                tot += int(c)
                fmt += int(c) if "String.format" in st else 0
        print("%-7s %-18s %-7s %12s %10s %9s %6s %8s %10s %8s" % (
            k, release[:18], "legacy" if prog.endswith("legacy") else "native", verified, vms, load, depth,
            samples, "%.1f" % per if per is not None else "?", "%.1f" % (100.0 * fmt / tot) if tot else "?"))
        if "exit 0" not in err:
            print("  %s %s: jflame failed: %s" % (k, run, err.strip().splitlines()[-2:]))
PY
