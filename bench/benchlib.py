# benchlib.py - helpers shared by the bench/ scripts: the agent's files of a run, its
# status file, an example's rate with and without jflame recording it, waiting for
# jflame, and medians with distribution-free confidence intervals.
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def cleanup(pid):
    """Removes the files the agent wrote for one JVM."""
    for p in (f"/tmp/perf-{pid}.map", f"/tmp/jflame-{pid}.events", f"/tmp/jflame-{pid}.status"):
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass


def cleanup_all(pids, tmpdir=None):
    """Removes the agent's files of every JVM in pids, and tmpdir when given."""
    for pid in pids:
        cleanup(pid)
    if tmpdir:
        shutil.rmtree(tmpdir, ignore_errors=True)


def wait_jflame(p, t0, script):
    """Waits for jflame's process p (stderr piped as text, started at time.monotonic() t0):
    (wall s, its rusage, its stderr); exits naming script when jflame failed."""
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    err = p.stderr.read()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{script}: jflame failed: " + err)
    return wall, ru, err


def example_start(script, java, agent, jar, main, args, jvm_flags=("-XX:+PreserveFramePointer",)):
    """Starts the example class main with the agent (quiet; agent None: without) and waits for its ready line.
    Returns (the process, its log file: stdout and stderr). Exits naming script when it
    does not get ready within 60 s."""
    log = tempfile.NamedTemporaryFile(mode="w+", prefix="jflame-bench-", suffix=".log")
    cmd = [java] + list(jvm_flags) + ([f"-agentpath:{agent}=quiet"] if agent else []) + ["-cp", jar, main] + list(args)
    p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while "jflame-example: ready" not in open(log.name).read():
        if p.poll() is not None or time.monotonic() > deadline:
            p.kill()
            p.wait()
            sys.exit(f"{script}: {main} did not get ready:\n" + open(log.name).read()[-2000:])
        time.sleep(0.2)
    return p, log


def example_rate(script, java, agent, jar, main, args, rate, window, jflame=None, record=None, settle=0,
                 probe=None, jvm_flags=("-XX:+PreserveFramePointer",), settled=None, exit_codes=(0,)):
    """One run of the example class main (example_start): when record is a list, runs
    `jflame record -p PID -d ...` with those options (and `-o FILE.folded` unless they name
    an output; "-a" in them records the host instead of PID), starting settle s before the
    window; then the median of the example's rate lines (regex rate, one group) over window
    s, the first (partial) one skipped; settled(pid), when given, runs after the settle
    time (to check the recording took hold). Returns (median, jflame's stderr or "", the
    per-second change of probe() over the window or None). Exits naming script when
    something fails (jflame exiting with a code not in exit_codes)."""
    p, log = example_start(script, java, agent, jar, main, args, jvm_flags)
    out = os.path.join(tempfile.gettempdir(), f"jflame-bench-{p.pid}.folded")
    rec, err, per_s = None, "", None
    rate = re.compile(rate)
    try:
        if record is not None:
            cmd = [jflame, "record"] + ([] if "-a" in record else ["-p", str(p.pid)])
            cmd += ["-d", str(window + settle)] + ([] if "-o" in record else ["-o", out]) + list(record)
            rec = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            time.sleep(settle)
            if settled:
                settled(p.pid)
        seen = len(rate.findall(open(log.name).read()))
        v0, t0 = (probe(), time.monotonic()) if probe else (None, None)
        time.sleep(window)
        if probe:
            per_s = (probe() - v0) / (time.monotonic() - t0)
        rates = [int(x) for x in rate.findall(open(log.name).read())[seen + 1:]]
        if rec:
            _, err = rec.communicate(timeout=60)
            if rec.returncode not in exit_codes:
                sys.exit(f"{script}: jflame record failed: " + err)
        if len(rates) < 3:
            sys.exit(f"{script}: too few rate lines from {main} in the window")
        return statistics.median(rates), err, per_s
    finally:
        if rec and rec.poll() is None:
            rec.kill()
            rec.wait()
        p.terminate()
        p.wait()
        cleanup(p.pid)
        try:
            os.unlink(out)
        except FileNotFoundError:
            pass


def interleaved_pairs(pairs, run):
    """pairs rounds of run(False) and run(True), the order swapped every round, each pair
    printed as it ends. Returns (the without values, the with values, with/without ratios)."""
    base, rec, ratios = [], [], []
    for i in range(pairs):
        order = (False, True) if i % 2 == 0 else (True, False)
        got = {r: run(r) for r in order}
        base.append(got[False])
        rec.append(got[True])
        ratios.append(got[True] / got[False])
        print(f"pair {i + 1}: without {got[False]:,.0f}  with {got[True]:,.0f}  ratio {ratios[-1]:.3f}", flush=True)
    return base, rec, ratios


def host_line(script, what):
    """The first line a bench prints: what it runs, the CPUs and the load."""
    print(f"{script}: {what}; {os.cpu_count()} CPUs, load {open('/proc/loadavg').read().split()[0]}", flush=True)


def events_size(pid):
    """Bytes of the agent's events log for one JVM, 0 when there is none."""
    try:
        return os.path.getsize(f"/tmp/jflame-{pid}.events")
    except FileNotFoundError:
        return 0


def status_of(pid):
    """The agent's status file as a dict, or None when there is none."""
    st = {}
    try:
        with open(f"/tmp/jflame-{pid}.status") as f:
            for line in f:
                k, _, v = line.rstrip("\n").partition("=")
                st[k] = v
    except FileNotFoundError:
        return None
    return st


def median_ci(xs):
    """Median and a distribution-free ~95% confidence interval (binomial order statistics)."""
    s = sorted(xs)
    n = len(s)
    k, acc = 0, 0.0
    while True:  # largest k with P(Binom(n, 1/2) < k) <= 0.025
        p = math.comb(n, k) / 2 ** n
        if acc + p > 0.025:
            break
        acc += p
        k += 1
    if k == 0:
        return statistics.median(s), s[0], s[-1]
    return statistics.median(s), s[k - 1], s[n - k]
