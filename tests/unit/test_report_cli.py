# test_report_cli.py - `jflame diff --report` as users run it: golden reports
# (tests/data/report/<case>/), each also checked against a model of the test
# written here (shares, order, verdicts), the JSON, --fail-above's exit status,
# every input format giving the same report, graphs beside the report, and bad
# input (one line, nonzero exit, nothing on standard output).
#
# A golden case is a folder tests/data/report/<case>/ with
#   before.folded or before/   BEFORE: a profile, or a folder of windows
#   after.folded or after/     AFTER, the same
#   args                       extra options, one line (may be empty)
#   expected.txt               the exact text report
#   status                     the exit status when not 0 (optional)
# run as `jflame diff --report ARGS BEFORE AFTER` inside the case folder.
#
# To regenerate: the inputs come from tests/data/report/make_inputs.py (fixed
# seeds: running it again writes the same files); expected.txt is jflame's
# output, rewritten by running this test with JFLAME_REPORT_REGEN=1:
#   python3 tests/data/report/make_inputs.py
#   JFLAME_BIN=BUILD/native/jflame JFLAME_TEST_DATA=tests/data JFLAME_REPORT_REGEN=1 \
#     python3 tests/unit/test_report_cli.py Golden
# then READ the diff of every expected.txt before committing it. Golden's
# test_model rechecks each one against the model below either way (every
# share to the 0.1% shown, the order of the rows, each verdict unless its
# adjusted p is within 2% of alpha, the counts in the header and the last line).
import json
import math
import os
import re
import shlex
import subprocess
import unittest
import xml.etree.ElementTree as ET

from cli_test import DATA, JFLAME, CliCase, run, slurp

CASES = os.path.join(DATA, "report")
REGEN = os.environ.get("JFLAME_REPORT_REGEN") == "1"
ROW = re.compile(r"^ *(?P<change>[+-]\d+\.\d) pts  +(?P<b>\d+\.\d)% \u2192 +(?P<a>\d+\.\d)%  +(?P<sb>\d+\.\d)% \u2192 +"
                 r"(?P<sa>\d+\.\d)%  +(?P<verdict>significant|noise) +(?P<frame>.*)$")
SIDE = re.compile(r"^(BEFORE|AFTER ) (?P<name>.*) \((?P<windows>\d+) windows?, (?P<samples>\d+) samples\)$")
LAST = re.compile(r"^(?P<n>\d+) significant changes?: (?P<grew>\d+) grew, (?P<shrank>\d+) shrank")


# ---- the model: the test as regress.h describes it, computed independently ------

def read_folded(path):
    out = {}
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line:
                stack, count = line.rsplit(" ", 1)
                out[stack] = out.get(stack, 0) + int(count)
    return out


def side_windows(case, side):
    """A case's side: its windows, each {stack: count}."""
    d = os.path.join(CASES, case, side)
    if os.path.isdir(d):
        return [read_folded(os.path.join(d, f)) for f in sorted(os.listdir(d))]
    return [read_folded(d + ".folded")]


def normalize_stack(stack):
    """name_normalize.h's rules for the names the golden data holds."""
    frames = stack.split(";")
    root = re.match(r"^\[\d+\] ", frames[0])
    if root:
        frames[0] = "[*] " + frames[0][root.end():]
        if len(frames) > 1:
            frames[1] = re.sub(r"([-#])\d+(?=$|-)", r"\1N", frames[1])
    for i in range(1 if not root else 2, len(frames)):
        f = re.sub(r"_\[[ji0]\]$", "", frames[i])
        f = re.sub(r"\$\$Lambda\$\d+\.0x[0-9a-fA-F]+", "$$Lambda", f)
        frames[i] = re.sub(r"(Generated(?:Serialization)?(?:Method|Constructor)Accessor)\d+", r"\1", f)
    return ";".join(frames)


def counts(windows, normalize):
    """Per frame: total (once per stack), self (the leaf), per-window totals;
    the side's samples and its windows with samples."""
    total, self_, per_win, sizes = {}, {}, [], []
    for w in windows:
        wt, n = {}, 0
        for stack, c in w.items():
            if c == 0:
                continue
            frames = (normalize_stack(stack) if normalize else stack).split(";")
            for f in set(frames):
                wt[f] = wt.get(f, 0) + c
            self_[frames[-1]] = self_.get(frames[-1], 0) + c
            n += c
        if n:
            per_win.append(wt)
            sizes.append(n)
            for f, c in wt.items():
                total[f] = total.get(f, 0) + c
    return total, self_, per_win, sizes


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b) (a continued fraction)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1.0 - betainc(b, a, 1 - x)
    lbeta = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log(1 - x)
    tiny, c, d = 1e-300, 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1 + num * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return math.exp(lbeta) * h / a


def two_sided(stat, df):
    """P(|Z| > stat) for the normal (df 0), else Student's t with df."""
    if df == 0:
        return math.erfc(stat / math.sqrt(2))
    return betainc(df / 2, 0.5, df / (df + stat * stat))


def exact(x, n, y, m, phi):
    """The conditional test: of the (x + y) / phi samples of the frame, x / phi
    on x's side is binomial with the share n / (n + m); the tail beyond x / phi
    (the incomplete beta for counts that are not whole), doubled."""
    t, k, share = (x + y) / phi, x / phi, n / (n + m)
    if x * m >= y * n:
        tail = betainc(k, t - k + 1, share) if k > 0 else 1.0
    else:
        tail = betainc(t - k, k + 1, 1 - share)
    return min(1.0, 2 * tail)


def chi_square(frame, per_win, sizes, total, samples):
    p = total / samples
    if p <= 0 or p >= 1:
        return 0.0
    return sum((w.get(frame, 0) - n * p) ** 2 / (n * p * (1 - p)) for w, n in zip(per_win, sizes))


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2


def model(before, after, normalize=True, alpha=0.01):
    """{frame: dict(before, after, self_before, self_after, change, p, p_adj,
    significant)}, the test's df (0: one window a side), the pooled spread,
    (windows, samples) of each side."""
    tb, sb, wb, nb = counts(before, normalize)
    ta, sa, wa, na = counts(after, normalize)
    NB, NA = sum(nb), sum(na)
    df = max(len(nb) - 1, 0) + max(len(na) - 1, 0)
    frames = set(tb) | set(ta)
    # each frame's own spread: chi-square over the sides with more than one
    # window, each about its own share, over their df; the pooled spread: the
    # median of that over the frames with 5 samples a window or more (5 such
    # frames at least), never below 1
    own, pooled = {}, 1.0
    if df:
        multi = [(w, n, t) for w, n, t in ((wb, nb, tb), (wa, na, ta)) if len(n) > 1]
        for f in frames:
            own[f] = sum(chi_square(f, w, n, t.get(f, 0), sum(n)) for w, n, t in multi) / df
        well = [own[f] for f in frames
                if sum(t.get(f, 0) for _, _, t in multi) / sum(len(n) for _, n, _ in multi) >= 5]
        if len(well) >= 5:
            pooled = max(1.0, median(well))
    rows = {}
    for f in frames:
        x, y = ta.get(f, 0), tb.get(f, 0)
        pool = (x + y) / (NA + NB)
        phi, tdf = pooled, 0
        if df and own[f] > phi:
            phi, tdf = own[f], df
        if pool <= 0 or pool >= 1:
            p = 1.0
        else:
            se = math.sqrt(phi * pool * (1 - pool) * (1 / NA + 1 / NB))
            p = min(1.0, two_sided(abs(x / NA - y / NB) / se, tdf))
            if min(NA, NB) * pool / phi < 10:  # a few samples: the exact test too, the larger
                p = max(p, exact(x, NA, y, NB, phi))
        rows[f] = dict(before=y / NB, after=x / NA, self_before=sb.get(f, 0) / NB, self_after=sa.get(f, 0) / NA,
                       change=x / NA - y / NB, p=p)
    # Holm
    run_max, n = 0.0, len(rows)
    for k, f in enumerate(sorted(rows, key=lambda f: (rows[f]["p"], f))):
        run_max = max(run_max, min(1.0, rows[f]["p"] * (n - k)))
        rows[f]["p_adj"] = run_max
        rows[f]["significant"] = run_max < alpha
    return rows, df, pooled, (len(nb), NB), (len(na), NA)


def option(args, name, default):
    return type(default)(args[args.index(name) + 1]) if name in args else default


def case_names():
    return sorted(c for c in os.listdir(CASES) if os.path.isfile(os.path.join(CASES, c, "args")))


def case_inputs(case):
    d = os.path.join(CASES, case)
    b = "before" if os.path.isdir(os.path.join(d, "before")) else "before.folded"
    a = "after" if os.path.isdir(os.path.join(d, "after")) else "after.folded"
    return b, a


def case_args(case):
    return shlex.split(slurp(os.path.join(CASES, case, "args")).decode())


def run_case(case, extra=()):
    b, a = case_inputs(case)
    return subprocess.run([JFLAME, "diff", "--report"] + case_args(case) + list(extra) + [b, a],
                          cwd=os.path.join(CASES, case), capture_output=True, timeout=120)


# ---- golden reports ------------------------------------------------------------------

class Golden(CliCase):
    prefix = "jflame-report-"

    def test_cases_present(self):
        want = {"string_format", "unchanged", "names_normalized", "names_raw", "top3", "windows", "bursty",
                "bursty_summed", "fail_above"}
        self.assertLessEqual(want, set(case_names()))
        for c in case_names():
            for root, _, files in os.walk(os.path.join(CASES, c)):
                for f in files:
                    self.assertLess(os.path.getsize(os.path.join(root, f)), 20 << 10, (c, f))

    def test_expected(self):
        for case in case_names():
            with self.subTest(case=case):
                r = run_case(case)
                status_file = os.path.join(CASES, case, "status")
                status = int(slurp(status_file)) if os.path.exists(status_file) else 0
                self.assertEqual(r.returncode, status, r.stderr)
                self.assertEqual(r.stderr, b"")
                path = os.path.join(CASES, case, "expected.txt")
                if REGEN:
                    with open(path, "wb") as f:
                        f.write(r.stdout)
                self.assertEqual(r.stdout.decode(), slurp(path).decode())

    def test_model(self):
        """every golden report against the model: the numbers are right, not just the same"""
        for case in case_names():
            with self.subTest(case=case):
                self.check_against_model(case)

    def check_against_model(self, case):
        args = case_args(case)
        alpha, top = option(args, "--alpha", 0.01), option(args, "--top", 20)
        rows, df, pooled, (kb, nb), (ka, na) = model(side_windows(case, "before"), side_windows(case, "after"),
                                                     "--no-normalize" not in args, alpha)
        lines = slurp(os.path.join(CASES, case, "expected.txt")).decode().splitlines()
        b, a = case_inputs(case)
        # the header: each side, the test, whether names were normalized
        for line, name, k, n in ((lines[0], b, kb, nb), (lines[1], a, ka, na)):
            m = SIDE.match(line)
            self.assertTrue(m, line)
            self.assertEqual((m.group("name"), int(m.group("windows")), int(m.group("samples"))), (name, k, n))
        if df:
            self.assertIn("test: quasi-binomial two-proportion test (windows as replicates: %d before, %d after; "
                          "pooled spread %.2f; Student's t with %d df where a frame's own is larger)"
                          % (kb, ka, pooled, df), lines[2])
        else:
            self.assertTrue(lines[2].startswith("test: two-proportion z-test (one window a side"), lines[2])
        self.assertIn("Holm-corrected over %d frames, alpha %g" % (len(rows), alpha), lines[2])
        self.assertEqual("names normalized" in lines[2], "--no-normalize" not in args)
        # the rows: shares to the 0.1 shown, ordered by the size of the change
        shown = [ROW.match(l) for l in lines[4:] if ROW.match(l)]
        self.assertEqual(len(shown), min(top, len(rows)) if top else len(rows))
        prev = None
        for m in shown:
            f = m.group("frame")
            self.assertIn(f, rows)
            w = rows[f]
            for key, got in (("before", "b"), ("after", "a"), ("self_before", "sb"), ("self_after", "sa"),
                             ("change", "change")):
                self.assertAlmostEqual(float(m.group(got)), w[key] * 100, delta=0.0501, msg=(case, f, key))
            if w["p_adj"] == 0 or abs(math.log(w["p_adj"] / alpha)) > 0.02:
                self.assertEqual(m.group("verdict") == "significant", w["significant"],
                                 (case, f, w["p"], w["p_adj"]))
            if prev is not None:
                self.assertGreaterEqual(abs(prev["change"]) + 1e-12, abs(w["change"]), (case, f))
            prev = w
        more = [l for l in lines if l.startswith("(")]
        if len(shown) < len(rows):
            hidden = len(rows) - len(shown)
            self.assertEqual(more, ["(%d more frame%s; --top N shows more, --top 0 all)"
                                    % (hidden, "" if hidden == 1 else "s")])
        else:
            self.assertEqual(more, [])
        # the last line counts every significant frame, shown or not
        m = LAST.match(lines[-1])
        self.assertTrue(m, lines[-1])
        grew = sum(1 for w in rows.values() if w["significant"] and w["change"] > 0)
        shrank = sum(1 for w in rows.values() if w["significant"] and w["change"] <= 0)
        self.assertEqual((int(m.group("n")), int(m.group("grew")), int(m.group("shrank"))), (grew + shrank, grew, shrank))

    def verdicts(self, case):
        lines = slurp(os.path.join(CASES, case, "expected.txt")).decode().splitlines()
        return {m.group("frame"): m for m in map(ROW.match, lines) if m}

    def test_what_the_cases_show(self):
        """the stories the cases tell, spelled out"""
        # String.format appears: 0% -> 8.9% (356 of 4000), with the frame it calls
        v = self.verdicts("string_format")
        for f in ("String.format", "Formatter.format"):
            self.assertEqual((v[f].group("b"), v[f].group("a"), v[f].group("verdict")), ("0.0", "8.9", "significant"))
        self.assertEqual(v["Formatter.format"].group("sa"), "8.9")  # the leaf: self
        self.assertEqual(v["String.format"].group("sa"), "0.0")
        self.assertEqual(list(v)[:2], ["Formatter.format", "String.format"])  # a tie: by name
        # the same service drawn twice: nothing significant
        v = self.verdicts("unchanged")
        self.assertEqual({m.group("verdict") for m in v.values()}, {"noise"})
        self.assertEqual((v["java"].group("b"), v["java"].group("change")), ("100.0", "+0.0"))  # the root
        # two JVM runs: normalized, the renamed frames line up (and nothing changed) ...
        v = self.verdicts("names_normalized")
        for f in ("[*] java", "pool-N-thread-N", "GC Thread#N", "Worker$$Lambda.run",
                  "jdk/internal/reflect/GeneratedMethodAccessor.invoke"):
            self.assertIn(f, v)
            self.assertEqual(v[f].group("verdict"), "noise")
        self.assertFalse([f for f in v if re.search(r"\d{4}|thread-\d|Lambda\$|Accessor\d", f)])
        # ... as recorded, each run's names are frames of their own: all of one side
        v = self.verdicts("names_raw")
        for f, b, a in (("[1234] java", "100.0", "0.0"), ("[5678] java", "0.0", "100.0"), ("GC Thread#1", "10.1", "0.0"),
                        ("jdk/internal/reflect/GeneratedMethodAccessor31.invoke", "0.0", "29.6")):
            self.assertEqual((v[f].group("b"), v[f].group("a"), v[f].group("verdict")), (b, a, "significant"))
        self.assertEqual(v["Worker.process"].group("verdict"), "noise")
        # --top 3: the first three rows of the full report
        full = slurp(os.path.join(CASES, "string_format", "expected.txt")).decode().splitlines()
        top3 = slurp(os.path.join(CASES, "top3", "expected.txt")).decode().splitlines()
        self.assertEqual(top3[:7], full[:7])
        self.assertEqual(top3[7], "(18 more frames; --top N shows more, --top 0 all)")
        self.assertEqual(top3[8], full[-1])
        # windows agreeing: the regression stays significant under the quasi-binomial test
        v = self.verdicts("windows")
        self.assertEqual(v["String.format"].group("verdict"), "significant")
        # a bursty frame: noise with its windows as replicates, significant summed into one window
        self.assertEqual(self.verdicts("bursty")["Cache.refresh"].group("verdict"), "noise")
        self.assertEqual(self.verdicts("bursty_summed")["Cache.refresh"].group("verdict"), "significant")
        self.assertEqual(self.verdicts("bursty")["Cache.refresh"].group("a"),
                         self.verdicts("bursty_summed")["Cache.refresh"].group("a"))


# ---- the rest: JSON, --fail-above, formats, graphs, bad input --------------------

class ReportCli(CliCase):
    prefix = "jflame-report-"

    def case_path(self, case, side):
        b, a = case_inputs(case)
        return os.path.join(CASES, case, b if side == "before" else a)

    def report(self, args, code=0):
        r = run(["diff"] + list(args))
        self.assertEqual(r.returncode, code, r.stderr)
        self.assertEqual(r.stderr, b"")
        return r.stdout.decode()

    def test_json(self):
        for case, args in (("string_format", []), ("windows", []), ("bursty", ["--alpha", "0.05"]),
                           ("names_raw", ["--no-normalize"])):
            with self.subTest(case=case):
                b, a = self.case_path(case, "before"), self.case_path(case, "after")
                r = run(["diff", "--report=json", "--top", "0"] + args + [b, a])
                self.assertEqual(r.returncode, 0, r.stderr)
                d = json.loads(r.stdout)
                for k in ("before", "after", "test", "frames", "significant", "frames_shown"):
                    self.assertIn(k, d)
                self.assertNotIn("fail_above", d)
                alpha = option(args, "--alpha", 0.01)
                rows, df, pooled, (kb, nb), (ka, na) = model(side_windows(case, "before"), side_windows(case, "after"),
                                                             "--no-normalize" not in args, alpha)
                self.assertEqual(d["before"], {"input": b, "windows": kb, "samples": nb})
                self.assertEqual(d["after"], {"input": a, "windows": ka, "samples": na})
                self.assertEqual(d["test"]["method"], "quasi-binomial" if df else "z")
                self.assertEqual(d["test"]["correction"], "holm")
                self.assertEqual((d["test"]["alpha"], d["test"]["replicate_df"]), (alpha, df))
                self.assertAlmostEqual(d["test"]["phi_pooled"], pooled, places=6)
                self.assertEqual(d["test"]["normalized"], "--no-normalize" not in args)
                self.assertEqual(d["frames_shown"], len(rows))
                self.assertEqual(d["test"]["frames_tested"], len(rows))
                self.assertEqual(len(d["frames"]), len(rows))
                for fr in d["frames"]:
                    for k in ("frame", "change_pts", "total_before", "total_after", "self_before", "self_after",
                              "p", "p_adjusted", "significant"):
                        self.assertIn(k, fr)
                    w = rows[fr["frame"]]
                    self.assertAlmostEqual(fr["change_pts"], fr["total_after"] - fr["total_before"], places=6)
                    self.assertAlmostEqual(fr["total_before"], w["before"] * 100, places=6)
                    self.assertAlmostEqual(fr["self_after"], w["self_after"] * 100, places=6)
                    # p-values as the model computes them (to its precision)
                    self.assertLessEqual(abs(fr["p"] - w["p"]), 1e-7 * w["p"] + 1e-12, fr)
                    self.assertLessEqual(abs(fr["p_adjusted"] - w["p_adj"]), 1e-7 * w["p_adj"] + 1e-12, fr)
                    self.assertGreaterEqual(fr["p_adjusted"], fr["p"])
                    self.assertEqual(fr["significant"], fr["p_adjusted"] < alpha)
                self.assertEqual(d["significant"]["grew"],
                                 sum(1 for f in d["frames"] if f["significant"] and f["change_pts"] > 0))
                self.assertEqual(d["significant"]["shrank"],
                                 sum(1 for f in d["frames"] if f["significant"] and f["change_pts"] <= 0))
                # the text report's verdicts are the JSON's
                t = run(["diff", "--report", "--top", "0"] + args + [b, a])
                verdicts = {m.group("frame"): m.group("verdict") == "significant"
                            for m in map(ROW.match, t.stdout.decode().splitlines()) if m}
                self.assertEqual(verdicts, {f["frame"]: f["significant"] for f in d["frames"]})
        # --top limits the frames, not what was tested
        d = json.loads(run(["diff", "--report=json", "--top", "3", self.case_path("string_format", "before"),
                            self.case_path("string_format", "after")]).stdout)
        self.assertEqual((d["frames_shown"], len(d["frames"]), d["test"]["frames_tested"]), (3, 3, 21))
        self.assertEqual([f["frame"] for f in d["frames"]], ["Formatter.format", "String.format", "App.handle"])

    def test_fail_above(self):
        b, a = self.case_path("string_format", "before"), self.case_path("string_format", "after")
        # String.format and Formatter.format grew by 8.9 points, significantly
        out = self.report(["--fail-above", "5", b, a], code=3)
        self.assertTrue(out.startswith("BEFORE "), out)  # --fail-above alone: the text report
        self.assertEqual(out.splitlines()[-1],
                         "2 significant changes: 2 grew, 0 shrank; 2 grew by 5 pts or more (--fail-above): failing")
        self.assertEqual(self.report(["--report", "--fail-above", "8.9", b, a], code=3).splitlines()[-1][-9:], ": failing")
        self.report(["--fail-above", "0", b, a], code=3)
        # grew less than PTS: 0
        out = self.report(["--fail-above", "9", b, a])
        self.assertEqual(out.splitlines()[-1], "2 significant changes: 2 grew, 0 shrank; 0 grew by 9 pts or more (--fail-above)")
        # no --fail-above: 0 whatever grew, and the last line does not mention it
        self.assertNotIn("--fail-above", self.report(["--report", b, a]).splitlines()[-1])
        # grew by 3.5 points but noise (bursty windows): 0; summed into one window: 3
        out = self.report(["--fail-above", "1", self.case_path("bursty", "before"), self.case_path("bursty", "after")])
        self.assertEqual(out.splitlines()[-1], "0 significant changes: 0 grew, 0 shrank; 0 grew by 1 pts or more (--fail-above)")
        self.report(["--fail-above", "1", self.case_path("bursty_summed", "before"),
                     self.case_path("bursty_summed", "after")], code=3)
        # shrank significantly: never fails (the new run lost String.format)
        out = self.report(["--fail-above", "0", a, b])
        self.assertTrue(out.splitlines()[-1].startswith("2 significant changes: 0 grew, 2 shrank;"), out)
        # JSON
        d = json.loads(self.report(["--report=json", "--fail-above", "5", b, a], code=3))
        self.assertEqual((d["fail_above"], d["failed"]), (5, True))
        d = json.loads(self.report(["--report=json", "--fail-above", "9", b, a]))
        self.assertEqual((d["fail_above"], d["failed"]), (9, False))
        # with a graph: the graph written, the status still 3
        out = self.report(["--fail-above", "5", b, a, "-o", self.p("d.svg")], code=3)
        self.assertTrue(out.endswith(": failing\n"))
        ET.parse(self.p("d.svg"))

    def test_formats_alike(self):
        """pprof, speedscope and perf script (.stacks) inputs: the report of the folded ones"""
        b, a = self.case_path("string_format", "before"), self.case_path("string_format", "after")
        want = self.report(["--report", b, a]).splitlines()
        for fb, fa in (("b.pb.gz", "a.pb.gz"), ("b.json", "a.json"), ("b.pb.gz", "a.json")):
            for src, dst in ((b, fb), (a, fa)):
                r = run(["convert", src, "-o", self.p(dst)])
                self.assertEqual(r.returncode, 0, r.stderr)
            got = self.report(["--report", self.p(fb), self.p(fa)]).splitlines()
            self.assertEqual(got[0], "BEFORE %s (1 window, 4000 samples)" % self.p(fb))
            self.assertEqual(got[2:], want[2:], (fb, fa))
        # a folder of windows in mixed formats is the files one by one
        os.mkdir(self.p("mixed"))
        for i, (src, name) in enumerate(((b, "w0.folded"), (a, "w1.pb.gz"), (b, "w2.json"))):
            self.assertEqual(run(["convert", src, "-o", os.path.join(self.p("mixed"), name)]).returncode, 0)
        out = self.report(["--report", self.p("mixed"), a])
        self.assertTrue(out.startswith("BEFORE %s (3 windows, 12000 samples)\n" % self.p("mixed")), out)
        # perf script: jflame record's .stacks, a sample a block, leaf first
        stacks = {}
        for side, src in (("b", b), ("a", a)):
            with open(self.p(side + ".stacks"), "w") as f:
                t = 0
                for stack, c in read_folded(src).items():
                    frames = stack.split(";")
                    for _ in range(c // 10):  # a tenth: 400 samples
                        t += 1
                        f.write("%s 100/%d [000] %d.%06d: 10101010 cpu-clock:\n" % (frames[0], 100 + len(frames[1]), 100 + t // 1000, t % 1000))
                        for k, fr in enumerate(reversed(frames[1:])):
                            f.write("\t    7f00000%05x %s (/tmp/perf-100.map)\n" % (k, fr))
                        f.write("\n")
            r = run(["convert", self.p(side + ".stacks"), "-o", self.p(side + "_stacks.folded")])
            self.assertEqual(r.returncode, 0, r.stderr)
            stacks[side] = self.p(side + "_stacks.folded")
        got = self.report(["--report", self.p("b.stacks"), self.p("a.stacks")]).splitlines()
        want = self.report(["--report", stacks["b"], stacks["a"]]).splitlines()
        self.assertEqual(got[0], "BEFORE %s (1 window, %d samples)" % (self.p("b.stacks"), sum(read_folded(stacks["b"]).values())))
        self.assertEqual(got[2:], want[2:])
        rows = {m.group("frame"): m for m in map(ROW.match, got) if m}
        fmt = [f for f in rows if f.startswith("String.format")]
        self.assertEqual(len(fmt), 1, rows.keys())
        self.assertEqual(rows[fmt[0]].group("a"), "%.1f" % (100.0 * 35 / sum(read_folded(stacks["a"]).values())))

    def test_graph_and_report(self):
        b, a = self.case_path("string_format", "before"), self.case_path("string_format", "after")
        want = self.report(["--report", b, a])
        out = self.report(["--report", b, a, "-o", self.p("d.svg"), "-o", self.p("d.html")])
        self.assertEqual(out, want)
        ET.parse(self.p("d.svg"))
        self.assertIn(b"<html", slurp(self.p("d.html")))
        # the graph is the one drawn without --report
        r = run(["diff", b, a, "-o", self.p("e.svg")])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(slurp(self.p("d.svg")), slurp(self.p("e.svg")))
        # folders: the graph of each side's windows summed
        fb, fa = self.case_path("windows", "before"), self.case_path("windows", "after")
        out = self.report(["--report=json", fb, fa, "-o", self.p("w.folded")])
        self.assertEqual(json.loads(out)["before"]["windows"], 4)
        tb, ta = 0, 0
        for line in slurp(self.p("w.folded")).decode().splitlines():
            _, x, y = line.rsplit(" ", 2)
            tb, ta = tb + int(x), ta + int(y)
        self.assertEqual((tb, ta), (4000, 4000))
        # standard input as one side, the report alone
        with open(b, "rb") as f:
            r = run(["diff", "--report", "-", a], input_bytes=f.read())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.decode().splitlines()[2:], want.splitlines()[2:])
        self.assertTrue(r.stdout.startswith(b"BEFORE standard input (1 window, 4000 samples)\n"), r.stdout[:80])

    def test_bad_input(self):
        b, a = self.case_path("string_format", "before"), self.case_path("string_format", "after")
        # options: exit 2
        for args, needles in ((["--report=xml"], ("--report=xml", "json")),
                              (["--report="], ("--report=",)),
                              (["--report", "--top", "-1"], ("--top -1",)),
                              (["--report", "--top", "abc"], ("--top abc",)),
                              (["--report", "--top", "1.5"], ("--top 1.5",)),
                              (["--report", "--alpha", "0"], ("--alpha 0",)),
                              (["--report", "--alpha", "2"], ("--alpha 2",)),
                              (["--report", "--alpha", "nan"], ("--alpha nan",)),
                              (["--report", "--alpha", "0.01x"], ("--alpha 0.01x",)),
                              (["--fail-above", "-1"], ("--fail-above -1",)),
                              (["--fail-above", "x"], ("--fail-above x",)),
                              (["--fail-above", "101"], ("--fail-above 101",)),
                              (["--report", "-o", "-"], ("-o -", "--report")),
                              (["--fail-above", "1", "-o", "-"], ("-o -", "--report")),
                              (["--report=json", "-o", self.p("x.png")], ("x.png",))):
            with self.subTest(args=args):
                self.one_line_error(run(["diff"] + args + [b, a]), *needles, code=2)
        self.one_line_error(run(["diff", "--report", b]), "two folded profiles", code=2)
        self.one_line_error(run(["diff", "--report", "--top"]), code=2)
        # inputs: exit 1
        os.mkdir(self.p("empty"))
        os.mkdir(self.p("svg_only"))
        with open(self.p("svg_only/run.svg"), "w") as f:
            f.write("<svg xmlns='http://www.w3.org/2000/svg'/>\n")
        with open(self.p("zero.folded"), "w") as f:
            f.write("a;b 0\n")
        with open(self.p("junk.folded"), "w") as f:
            f.write("not folded\nat all\n")
        for args, needles in (([self.p("empty"), a], ("no profiles", "empty", "BEFORE")),
                              ([b, self.p("empty")], ("no profiles", "empty", "AFTER")),
                              ([self.p("svg_only"), a], ("no profiles", "svg_only")),
                              ([self.p("missing.folded"), a], ("failed to open", "missing.folded")),
                              ([b, self.p("missing")], ("failed to open", "missing")),
                              ([self.p("junk.folded"), a], ("junk.folded",)),
                              ([b, self.p("zero.folded")], ("no samples", "zero.folded"))):
            for fmt in ("--report", "--report=json"):
                with self.subTest(args=args, fmt=fmt):
                    self.one_line_error(run(["diff", fmt] + args), *needles, code=1)
        # nothing written beside the inputs
        self.assertEqual(sorted(os.listdir(self.tmp)), ["empty", "junk.folded", "svg_only", "zero.folded"])
        h = run(["diff", "--help"])
        self.assertEqual(h.returncode, 0)
        self.assertIn(b"--fail-above PTS", h.stdout)


if __name__ == "__main__":
    unittest.main(verbosity=2)
