#!/usr/bin/env python3
"""regress_power.py [--jflame BIN] [--windows TARBALL] [--seed N]: how soon the window judge
(record --baseline, replayed by `jflame diff --baseline SPEC DIR`) names a lasting change, and
how often it names one that is not there. Offline, in seconds: real recorded windows
(tests/data/regress/kafka-steady.tar.xz, KafkaStyle at 99 Hz, ~600 samples a window) are
thinned to 100 or 250 samples a window, or merged in pairs and thinned to 1000; from the
middle window on, a change is made by moving samples inside each window (the rest shrinks in
proportion, nothing else changes):

  new     a new frame under an existing Java caller (KafkaStyle$Producer.run): the stacks of
          the moved samples are a random sample's stack through that caller, cut after it,
          with jflame/Injected.work as the leaf;
  total   an existing Java frame grown (each of the three whose shares are nearest 5%, within
          3-8%): the moved samples take the stack of a random sample that holds it;
  self    an existing leaf grown (each of the three whose self shares are nearest 2%, within
          1-4%): the moved samples take the stack of a random sample that ends in it.

An existing frame's cell gives each of its three frames' windows, in the order the first line
names them: how soon is set by how much that frame's share wanders on its own.

Each is replayed with the baselines first, previous:5 and a saved profile of ten steady windows
(FILE), with
--confirm 2 (the default); the table gives the windows from the change's start to the first
line naming the frame (1: its first window; 2 is the soonest --confirm 2 allows), or "-" when
none does; a window whose lines end in "and N more" (more frames grew than a window's 5 lines
name: a grown frame's callers grow as much) counts as naming it. False alarms: the unchanged
windows' judged windows
with a regression line, per 100.
"""
import argparse
import collections
import concurrent.futures
import os
import random
import re
import subprocess
import sys
import tarfile
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CALLER = "jflame/examples/KafkaStyle$Producer.run_[j]"
NEW = "jflame/Injected.work_[j]"
SIZES = (100, 250, 1000)
EFFECTS = (2, 5, 10, 20)
KINDS = ("new", "total", "self")
# the window judge's lines, and the lasting-change tracker's (found: "... since window N")
LINE = re.compile(r"^jflame: regression in window (\d+) \([^)]*\): (.*) \S+% → \S+% \(\+[\d.]+ pts( since window \d+)?\)$")


MORE = "(and more frames)"


def norm(frame):
    """A frame as the judge names it (names normalized: the _[x] suffix dropped)."""
    return re.sub(r"_\[[a-z0-9]\]$", "", frame)


def load(tarball, tmp):
    with tarfile.open(tarball) as t:
        if hasattr(tarfile, "data_filter"):
            t.extractall(tmp, filter="data")
        else:
            t.extractall(tmp)
    wins = []
    for n in sorted((f for f in os.listdir(tmp) if f.endswith(".folded")),
                    key=lambda f: int(re.search(r"(\d+)", f).group(1))):
        samples = []
        with open(os.path.join(tmp, n)) as fh:
            for line in fh:
                s, c = line.rstrip("\n").rsplit(" ", 1)
                samples += [s] * int(c)
        wins.append(samples)
    return wins


def resize(wins, size, rnd):
    """Windows of size samples: thinned, or consecutive pairs merged first."""
    lens = sorted(len(w) for w in wins)
    if size > lens[len(lens) // 2]:
        wins = [wins[i] + wins[i + 1] for i in range(0, len(wins) - 1, 2)]
    return [rnd.sample(w, size) if len(w) > size else list(w) for w in wins]


def pick_frames(wins, k=3):
    """The k existing Java frames whose total shares are nearest 5% (within 3-8%), the k leaves whose self
    shares are nearest 2% (within 1-4%): [(frame, share)] each."""
    total, self_, n = collections.Counter(), collections.Counter(), 0
    for w in wins:
        for s in w:
            fr = s.split(";")
            n += 1
            for f in set(fr[2:]):
                total[f] += 1
            self_[fr[-1]] += 1
    java = [f for f in total if re.search(r"_\[[ji]\]$", f) and f != CALLER and 0.03 <= total[f] / n <= 0.08]
    leaves = [f for f in self_ if re.search(r"_\[[jik]\]$", f) and 0.01 <= self_[f] / n <= 0.04]
    t = sorted(java, key=lambda f: abs(total[f] / n - 0.05))[:k]
    s = sorted(leaves, key=lambda f: abs(self_[f] / n - 0.02))[:k]
    if not t or not s:
        sys.exit("regress_power: no Java frame at 3-8% or leaf at 1-4% in these windows")
    return [(f, total[f] / n) for f in t], [(f, self_[f] / n) for f in s]


def change(wins, start, kind, pts, frame, rnd):
    """The windows with pts points of the samples moved from window start (1-based) on."""
    out = []
    for i, w in enumerate(wins, 1):
        w = list(w)
        if i >= start:
            k = int(round(pts / 100.0 * len(w)))
            if kind == "new":
                donors = [s for s in w if CALLER in s]
            elif kind == "total":
                donors = [s for s in w if frame in s.split(";")]
            else:
                donors = [s for s in w if s.split(";")[-1] == frame]
            if not donors:
                donors = [s for ww in wins for s in ww if (CALLER if kind == "new" else frame) in s]
            victims = rnd.sample(range(len(w)), k)
            for j in victims:
                d = rnd.choice(donors)
                w[j] = d[:d.index(CALLER) + len(CALLER)] + ";" + NEW if kind == "new" else d
        out.append(w)
    return out


def write(wins, d):
    os.makedirs(d, exist_ok=True)
    for i, w in enumerate(wins, 1):
        with open(os.path.join(d, "cpu-%d.folded" % i), "w") as fh:
            for s, c in sorted(collections.Counter(w).items()):
                fh.write("%s %d\n" % (s, c))


def replay(jflame, spec, d):
    """{window: [frames named]} and (judged, regressed) of one replay."""
    r = subprocess.run([jflame, "diff", "--baseline", spec, d], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        sys.exit("regress_power: jflame diff --baseline %s %s failed: %s" % (spec, d, r.stderr.strip()))
    named = collections.defaultdict(list)
    judged = regressed = 0
    for line in r.stdout.splitlines():
        m = LINE.match(line)
        if m:
            named[int(m.group(1))].append(m.group(2))
        # more frames grew than the 5 lines a window name (a grown frame's callers grow as much):
        # counted as named
        m = re.match(r"^jflame: regression in window (\d+) \([^)]*\): and \d+ more", line)
        if m:
            named[int(m.group(1))].append(MORE)
        m = re.search(r"(\d+) compared with the baseline .*?, (\d+) with a regression", line)
        if m:
            judged, regressed = int(m.group(1)), int(m.group(2))
    return named, judged, regressed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jflame", default=os.path.join(ROOT, "build", "native", "jflame"))
    ap.add_argument("--windows", default=os.path.join(ROOT, "tests", "data", "regress", "kafka-steady.tar.xz"))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)), help="samples a window, comma-separated")
    ap.add_argument("--effects", default=",".join(map(str, EFFECTS)), help="points, comma-separated")
    ap.add_argument("--kinds", default=",".join(KINDS), help="new, total, self: comma-separated")
    ap.add_argument("--fa-seeds", type=int, default=1,
                    help="unchanged replays per size, each thinned with its own seed (false alarms over more windows)")
    ap.add_argument("--keep", action="store_true", help="keep the windows folders written (their path is printed)")
    a = ap.parse_args()
    sizes = [int(v) for v in a.sizes.split(",")]
    effects = [int(v) for v in a.effects.split(",")]
    kinds = [v for v in a.kinds.split(",") if v]
    if not sizes or not effects or any(k not in KINDS for k in kinds) or a.fa_seeds < 1:
        sys.exit("regress_power: --sizes and --effects take numbers, --kinds some of %s, --fa-seeds 1 or more"
                 % ",".join(KINDS))
    if not os.access(a.jflame, os.X_OK):
        sys.exit("regress_power: no jflame at %s; build it (cmake --build build) or give --jflame" % a.jflame)
    started = time.monotonic()
    tmp = tempfile.mkdtemp(prefix="jflame-regress-power-")
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1)
    try:
        raw = load(a.windows, os.path.join(tmp, "raw"))
        grown = dict(zip(("total", "self"), pick_frames(raw)))
        grown["new"] = [(NEW, 0.0)]
        print("windows: %d recorded (%s), %d-%d samples each; grown frames:" % (
            len(raw), os.path.basename(a.windows), min(map(len, raw)), max(map(len, raw))))
        for kind in ("total", "self"):
            print("  %s: %s" % (kind, ", ".join("%s (%.1f%%)" % (norm(f), 100 * sh) for f, sh in grown[kind])))
        specs = ("first", "previous:5", "FILE")
        print("\n| samples/window | change | " + " | ".join(specs) + " |")
        print("| --- | --- | " + " | ".join("---" for _ in specs) + " |", flush=True)
        fa = {}
        for size in sizes:
            rnd = random.Random(a.seed * 1000 + size)
            wins = resize(raw, size, rnd)
            start = len(wins) // 2 + 1
            # the saved profile: ten steady windows in one (a release's profile, not one window:
            # a profile of n samples bounds what can be told from it)
            saved = os.path.join(tmp, "saved-%d.folded" % size)
            write([sum(wins[4:14], [])], os.path.join(tmp, "saved-%d" % size))
            os.rename(os.path.join(tmp, "saved-%d" % size, "cpu-1.folded"), saved)
            runs = []
            for k in range(a.fa_seeds):
                d = os.path.join(tmp, "unchanged-%d-%d" % (size, k))
                write(wins if k == 0 else resize(raw, size, random.Random(a.seed * 1000 + size + 7919 * k)), d)
                runs += [(spec, pool.submit(replay, a.jflame, saved if spec == "FILE" else spec, d)) for spec in specs]
            for spec, fut in runs:
                _, judged, regressed = fut.result()
                r0, j0 = fa.get((size, spec), (0, 0))
                fa[(size, spec)] = (r0 + regressed, j0 + judged)
            for kind in kinds:
                for pts in effects:
                    futs = []
                    for fi, (frame, _) in enumerate(grown[kind]):
                        d = os.path.join(tmp, "%s-%d-%d-%d" % (kind, pts, size, fi))
                        write(change(wins, start, kind, pts, frame, rnd), d)
                        futs.append([(frame, pool.submit(replay, a.jflame, saved if spec == "FILE" else spec, d))
                                     for spec in specs])
                    cells = []
                    for si in range(len(specs)):
                        got = []
                        for per_frame in futs:
                            frame, fut = per_frame[si]
                            named = fut.result()[0]
                            hits = sorted(w for w, fr in named.items()
                                          if w >= start and (norm(frame) in fr or MORE in fr))
                            got.append("%s" % (hits[0] - start + 1 if hits else "-"))
                        cells.append(", ".join(got))
                    print("| %d | %s +%d pts | %s |" % (size, kind, pts, " | ".join(cells)), flush=True)
        print("\nfalse alarms (unchanged windows; judged windows with a regression line, per 100):")
        print("| samples/window | " + " | ".join(specs) + " |")
        print("| --- | " + " | ".join("---" for _ in specs) + " |")
        for size in sizes:
            print("| %d | %s |" % (size, " | ".join("%.1f (%d of %d)" % (100.0 * fa[(size, s)][0] / max(1, fa[(size, s)][1]),
                                                                       fa[(size, s)][0], fa[(size, s)][1])
                                                  for s in specs)))
        print("\nregress_power: %.1f s" % (time.monotonic() - started))
    finally:
        pool.shutdown(wait=True)
        if a.keep:
            print("regress_power: windows kept in %s" % tmp)
        else:
            subprocess.run(["rm", "-rf", tmp], check=False)


if __name__ == "__main__":
    main()
