#!/usr/bin/env python3
# gen_inputs.py - deterministic large inputs for the toolkit benchmarks: a
# `perf script` file (>= 100 MB) and a folded file of 300,000 unique stacks,
# 8-80 frames deep (about 400 MB). Same seed, same bytes.
import os
import random
import sys

JAVA = ["Lcom/acme/%s/%s;::%s" % (p, c, m) for p in ("kafka", "net", "io", "log", "util")
        for c in ("Producer", "Sender", "RecordAccumulator", "Buffer", "Selector", "Channel", "Formatter")
        for m in ("send", "poll", "append", "format", "write", "read", "flush", "run", "process", "encode")]
NATIVE = ["JavaCalls::call_helper", "thread_native_entry", "Thread::call_run", "__libc_write", "memcpy",
          "G1ParScanThreadState::trim_queue", "Compile::Compile", "PhaseIdealLoop::build_loop_tree"]
KERNEL = ["entry_SYSCALL_64_after_hwframe", "do_syscall_64", "ksys_write", "vfs_write", "tcp_sendmsg",
          "tcp_push", "__tcp_transmit_skb", "ip_output", "__dev_queue_xmit", "copy_user_enhanced_fast_string"]


def frame_names(rng, depth):
    """A stack root first: native bottom, Java middle, maybe kernel on top."""
    names = ["start_thread", "thread_native_entry"] + [rng.choice(NATIVE) for _ in range(2)]
    while len(names) < depth - 3:
        names.append(rng.choice(JAVA))
    if rng.random() < 0.3:
        names += rng.sample(KERNEL, 3)
    return names[:depth]


def perf_script(path, target_mb, rng):
    size, t = 0, 1000.0
    with open(path, "w") as f:
        while size < target_mb * 1e6:
            depth = rng.randint(8, 60)
            names = frame_names(rng, depth)
            pid = rng.choice((4242, 4243, 5150))
            tid = pid + rng.randint(0, 40)
            t += 0.0001
            lines = ["java %d/%d [%03d] %.6f: 10101010 cpu-clock:ppp: \n" % (pid, tid, rng.randint(0, 1), t)]
            for name in reversed(names):  # leaf first
                if name in KERNEL:
                    dso = "[kernel.kallsyms]"
                elif name.startswith("L"):
                    dso = "/tmp/perf-%d.map" % pid
                else:
                    dso = "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"
                lines.append("\t%16x %s+0x%x (%s)\n" % (rng.getrandbits(47), name, rng.randint(1, 4000), dso))
            lines.append("\n")
            chunk = "".join(lines)
            f.write(chunk)
            size += len(chunk)


def folded(path, nstacks, rng):
    seen = set()
    with open(path, "w") as f:
        while len(seen) < nstacks:
            depth = rng.randint(8, 80)
            names = ["java", "jflame-worker-%d" % rng.randint(0, 63)] + \
                [n.replace("Lcom/", "com/").replace(";::", ".") + "_[j]" if n.startswith("L") else n
                 for n in frame_names(rng, depth - 2)]
            line = ";".join(names)
            if line in seen:
                continue
            seen.add(line)
            f.write("%s %d\n" % (line, rng.randint(1, 500)))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "/tmp/jflame-bench-inputs"
    os.makedirs(out, exist_ok=True)
    rng = random.Random(20261121)
    ps, fo = os.path.join(out, "big.perf"), os.path.join(out, "big.folded")
    if not os.path.exists(ps):
        perf_script(ps, int(os.environ.get("PERF_MB", "110")), rng)
    if not os.path.exists(fo):
        folded(fo, int(os.environ.get("STACKS", "300000")), rng)
    for p in (ps, fo):
        print("%s %.1f MB" % (p, os.path.getsize(p) / 1e6))


if __name__ == "__main__":
    main()
