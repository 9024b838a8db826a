# benchlib.py - helpers shared by the bench/ scripts: the agent's files of a run,
# its status file, waiting for jflame, and medians with distribution-free confidence intervals.
import math
import os
import shutil
import statistics
import sys
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
