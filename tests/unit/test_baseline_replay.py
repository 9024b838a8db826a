# test_baseline_replay.py - record --baseline's judgement, replayed by `jflame diff
# --baseline SPEC DIR` over folders of windows: made-up windows show what --confirm
# does (a one-window burst is not a regression, a lasting change is, from its second
# window); real recordings of the Kafka-style example (tests/data/regress/, made by
# make_recordings.sh there) show the honesty docs/toolkit.md claims: at most 1 in 100
# windows of the unchanged program flagged, and the switch to String.format named
# within two windows of it; a lasting change too small for one window found as windows
# add up (said once, still, gone).
import os
import random
import re
import tarfile
import unittest

from cli_test import CliCase, DATA, run

LINE = re.compile(r"^jflame: regression in window (\d+) \(([^)]*)\): (.+) (\d+\.\d)% \u2192 (\d+\.\d)% "
                  r"\(\+(\d+\.\d) pts\)$")
COUNT = re.compile(r"^jflame: (\d+) windows; (\d+) compared with the baseline \(from window (\d+) on\), "
                   r"(\d+) with a regression \(([\d.]+)%\)$")
FORMAT = ("java/lang/String.format", "java/util/Formatter.format")
STEADY = {"main;serve;parse": 0.30, "main;serve;write": 0.25, "main;serve": 0.05, "main;gc": 0.10,
          "main;io;read": 0.15, "main;io": 0.05, "main;idle": 0.10}


def replay(args):
    """(lines by window {n: [(frame, before, after, change)]}, the count line's
    numbers (windows, judged, from, regressed)) of diff --baseline; exit 0."""
    r = run(["diff"] + list(args))
    assert r.returncode == 0, r.stderr.decode()
    out = r.stdout.decode().splitlines()
    regs, count = {}, None
    for line in out:
        m = LINE.match(line)
        if m:
            regs.setdefault(int(m.group(1)), []).append((m.group(3), float(m.group(4)), float(m.group(5)),
                                                         float(m.group(6))))
        c = COUNT.match(line)
        if c:
            count = tuple(int(c.group(i)) for i in range(1, 5))
    assert count, out[-5:]
    return regs, count


class ReplayCase(CliCase):
    prefix = "jflame-baseline-replay-"

    def windows(self, name, extra, n=12, samples=1000, seed=7):
        """A folder of n windows of the steady mix (multinomial draws); extra
        {window: {stack: share}} adds stacks to some windows."""
        rng = random.Random(seed)
        d = self.p(name)
        os.mkdir(d)
        for w in range(1, n + 1):
            mix = dict(STEADY)
            for stack, share in extra.get(w, {}).items():
                mix = {s: v * (1 - share) for s, v in mix.items()}
                mix[stack] = share
            stacks = list(mix)
            counts = dict.fromkeys(stacks, 0)
            for s in rng.choices(stacks, weights=[mix[s] for s in stacks], k=samples):
                counts[s] += 1
            with open(os.path.join(d, "cpu-%d.folded" % w), "w") as f:
                for s in stacks:
                    if counts[s]:
                        f.write("%s %d\n" % (s, counts[s]))
        return d

    def test_a_burst_is_not_a_regression(self):
        d = self.windows("burst", {8: {"main;burst": 0.15}})
        regs, count = replay(["--baseline", "first", d])
        self.assertEqual(regs, {})
        self.assertEqual(count, (12, 9, 4, 0))
        # every window on its own: the burst is said, in its window only
        regs, count = replay(["--baseline", "first", "--confirm", "1", d])
        self.assertEqual(sorted(regs), [8], regs)
        self.assertIn("burst", [f[0] for f in regs[8]])
        self.assertEqual(count, (12, 9, 4, 1))

    def test_a_lasting_change_from_its_second_window(self):
        d = self.windows("lasting", {w: {"main;slow": 0.20} for w in range(8, 13)})
        for confirm, first in (("1", 8), (None, 9), ("3", 10)):
            args = ["--baseline", "previous:3", d] if confirm is None else \
                ["--baseline", "previous:3", "--confirm", confirm, d]
            regs, count = replay(args)
            named = sorted(w for w, v in regs.items() if any(f[0] == "slow" for f in v))
            self.assertTrue(named, (confirm, regs))
            self.assertEqual(named[0], first, (confirm, regs))
            slow = [f for f in regs[first] if f[0] == "slow"][0]
            # before: the previous 3 windows, the change's first among them once confirmed later
            self.assertAlmostEqual(slow[1], 20.0 * (first - 8) / 3, delta=2.0, msg=slow)
            self.assertGreater(slow[2], 15.0, slow)
            # previous:3 takes the change in: after three windows it is the baseline
            self.assertLessEqual(named[-1], 11, (confirm, named))
        # with the first window as the baseline it is said once, from its second window (then
        # still every 10 windows, or gone: test_a_small_lasting_change_adds_up)
        regs, _ = replay(["--baseline", "first", d])
        self.assertEqual(sorted(w for w, v in regs.items() if any(f[0] == "slow" for f in v)), [9])

    def lines(self, args):
        r = run(["diff"] + list(args))
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        return r.stdout.decode().splitlines()

    def saved(self, name, n=10, samples=250):
        """A saved profile: n unchanged windows summed into one folded file."""
        d = self.windows(name + "-windows", {}, n=n, samples=samples, seed=99)
        total = {}
        for f in os.listdir(d):
            with open(os.path.join(d, f)) as fh:
                for line in fh:
                    s, c = line.rsplit(" ", 1)
                    total[s] = total.get(s, 0) + int(c)
        path = self.p(name + ".folded")
        with open(path, "w") as fh:
            fh.writelines("%s %d\n" % kv for kv in sorted(total.items()))
        return path

    def test_a_small_lasting_change_adds_up(self):
        """3 points from window 30 on at 250 samples a window: too small for one window, found
        as the windows add up, with where it began; said once, then still every 10 windows
        while it lasts; with each baseline (previous:5 does not forget it as it moves on)."""
        d = self.windows("small", {w: {"main;slow": 0.03} for w in range(30, 71)}, n=70, samples=250)
        for spec in ("first", "previous:5", self.saved("small-base")):
            lines = self.lines(["--baseline", spec, d])
            # found by the window judge (a line as any) or, too small for it, as windows add up
            # (the line says where it began)
            found = [re.search(r"window (\d+) .*: slow 0\.0% \u2192 \d+\.\d% \(\+\d+\.\d pts( since window (\d+))?\)$", l)
                     for l in lines if ": slow " in l]
            found = [m for m in found if m]
            self.assertEqual(len(found), 1, (spec, lines))
            at = int(found[0].group(1))
            self.assertTrue(31 <= at <= 39, (spec, at, lines))
            if found[0].group(3):
                self.assertTrue(27 <= int(found[0].group(3)) <= 31, (spec, found[0].group(0)))
            still = [int(re.search(r"window (\d+) ", l).group(1)) for l in lines if ": slow still +" in l]
            self.assertTrue(all(re.search(r"since window (2[7-9]|3[01]) ", l) for l in lines if ": slow still +" in l),
                            lines)
            self.assertEqual(still, list(range(at + 10, 71, 10)), (spec, lines))
            self.assertFalse([l for l in lines if "change gone" in l or
                              ("regression in window" in l and ": slow" not in l)], (spec, lines))

    def test_a_change_that_goes_is_said_gone(self):
        d = self.windows("goes", {w: {"main;slow": 0.05} for w in range(30, 41)}, n=60, samples=250)
        lines = self.lines(["--baseline", "first", d])
        gone = [l for l in lines if re.match(r"^jflame: change gone in window (4[1-4]) \(cpu-\d+\.folded\): slow "
                                             r"back to \d\.\d% \(0\.0% before window (29|30|31)\)$", l)]
        self.assertEqual(len(gone), 1, lines)

    def test_a_broken_streak_starts_again(self):
        d = self.windows("broken", {8: {"main;slow": 0.2}, 10: {"main;slow": 0.2}, 12: {"main;slow": 0.2}})
        regs, count = replay(["--baseline", "first", d])
        self.assertEqual(regs, {})
        self.assertEqual(count[3], 0)
        regs, _ = replay(["--baseline", "first", "--confirm", "1", d])
        self.assertEqual(sorted(regs), [8, 10, 12], regs)

    def test_bad_confirm(self):
        d = self.windows("bad", {}, n=4)
        self.one_line_error(run(["diff", "--baseline", "first", "--confirm", "0", d]), "--confirm 0", "1 to 10")
        self.one_line_error(run(["diff", "--baseline", "first", "--confirm", "x", d]), "--confirm x")
        self.one_line_error(run(["diff", "--confirm", "2", d, d]), "--confirm goes with --baseline")


class RecordedWindows(CliCase):
    """Real windows of tests/data/regress/ (see make_recordings.sh there)."""
    prefix = "jflame-baseline-recorded-"

    def unpack(self, name):
        d = self.p(name)
        with tarfile.open(os.path.join(DATA, "regress", name + ".tar.xz")) as t:
            t.extractall(d, filter="data") if hasattr(tarfile, "data_filter") else t.extractall(d)
        return d

    def test_unchanged_program_is_rarely_flagged(self):
        d = self.unpack("kafka-steady")
        n = len([f for f in os.listdir(d) if f.endswith(".folded")])
        self.assertGreaterEqual(n, 100)
        for spec in ("first", "previous:5"):
            regs, (windows, judged, start, regressed) = replay(["--baseline", spec, d])
            self.assertEqual(windows, n)
            self.assertGreaterEqual(judged, 100)
            self.assertEqual(regressed, len(regs))
            print("\n%s: %d of %d windows of the unchanged program flagged (%.1f%%)%s" % (
                spec, regressed, judged, 100.0 * regressed / judged,
                "".join("; window %d: %s" % (w, v[0][0]) for w, v in sorted(regs.items()))))
            self.assertLessEqual(regressed / judged, 0.01, regs)

    def test_switch_is_found_within_two_windows(self):
        d = self.unpack("kafka-switch")
        # the switch's window: the first with String.format in it
        names = sorted((int(re.search(r"(\d+)", f).group(1)), f) for f in os.listdir(d) if f.endswith(".folded"))
        switch = None
        for w, f in names:
            with open(os.path.join(d, f)) as fh:
                if any(x in fh.read() for x in FORMAT):
                    switch = w
                    break
        self.assertIsNotNone(switch)
        self.assertGreater(switch, 6)  # judged windows before it
        for spec in ("first", "previous:5"):
            for confirm in ("1", "2"):
                regs, _ = replay(["--baseline", spec, "--confirm", confirm, d])
                found = sorted(w for w, v in regs.items() if any(f[0] in FORMAT for f in v))
                print("\n%s --confirm %s: switch in window %d, String.format named from window %s; lines in %s" % (
                    spec, confirm, switch, found[:1], sorted(regs)[:8]))
                self.assertTrue(found, (spec, confirm, regs))
                self.assertGreaterEqual(found[0], switch)
                self.assertLessEqual(found[0] - switch, int(confirm), (spec, confirm, found))
                # nothing flagged before the switch
                self.assertFalse([w for w in regs if w < switch], (spec, confirm, sorted(regs)))
                fmt = [f for f in regs[found[0]] if f[0] in FORMAT][0]
                if spec == "first":  # previous:5 holds the switch's window once confirmed later
                    self.assertLess(fmt[1], 1.0, fmt)
                self.assertGreater(fmt[3], 10.0, fmt)


if __name__ == "__main__":
    unittest.main(verbosity=2)
