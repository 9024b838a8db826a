# test_bad_input_cli.py - the offline commands (svg, collapse, diff, heatmap,
# convert; record's options) given what users give them by mistake: '-o -',
# huge counts, gzip bombs' limit, random bytes, overlong lines, umasks, signals
# during a write, a name given twice, a missing output directory.
import glob
import gzip
import os
import random
import signal
import stat
import subprocess
import time
import unittest

from cli_test import DATA, JFLAME, QEMU_USER, CliCase, run

DATA = os.path.abspath(DATA)  # the commands run in other directories
PERF = os.path.join(DATA, "collapse", "java.perf")
FOLDED = os.path.join(DATA, "collapse", "java.all.folded")


def run_in(cwd, args, umask=None, input_bytes=None):
    def pre():
        if umask is not None:
            os.umask(umask)
    return subprocess.run([JFLAME] + list(args), cwd=cwd, input=input_bytes, capture_output=True, timeout=120,
                          preexec_fn=pre)


class Case(CliCase):
    prefix = "jflame-bad-input-"

    def temps(self, d=None):
        """Temporary files (NAME.XXXXXX) left in d (default: the scratch directory)."""
        return [f for f in os.listdir(d or self.tmp) if len(f) > 7 and f[-7] == "." and "." in f[:-7]]

    # one command line per command, writing OUT (a name in the scratch directory)
    def commands(self, out_stem):
        return {
            "svg": ["svg", FOLDED, "-o", out_stem + ".svg"],
            "collapse": ["collapse", PERF, "-o", out_stem + ".folded"],
            "diff": ["diff", FOLDED, FOLDED, "-o", out_stem + ".svg"],
            "heatmap": ["heatmap", PERF, "-o", out_stem + ".html"],
            "convert": ["convert", FOLDED, "-o", out_stem + ".json"],
        }


class StandardOutput(Case):
    def test_dash_is_standard_output_in_every_command(self):
        cmds = {
            "svg": (["svg", FOLDED, "-o", "-"], b"<svg"),
            "collapse": (["collapse", PERF, "-o", "-"], b";"),
            "diff": (["diff", FOLDED, FOLDED, "-o", "-"], b"<svg"),
            "heatmap": (["heatmap", PERF, "-o", "-"], b"<html"),
            "convert": (["convert", "-t", "speedscope", FOLDED, "-o", "-"], b"speedscope"),
        }
        for name, (args, want) in cmds.items():
            r = run_in(self.tmp, args)
            self.assertEqual(r.returncode, 0, (name, r.stderr))
            self.assertIn(want, r.stdout[:4000].lower() if want == b"<html" else r.stdout, name)
            self.assertFalse(os.path.exists(self.p("-")), "jflame %s -o - wrote a file named '-'" % name)
        # a file named '-' is still reachable as ./-
        r = run_in(self.tmp, ["svg", FOLDED, "-o", "./-"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(os.path.exists(self.p("-")))

    def test_record_dash_is_the_svg_where_it_makes_sense(self):
        for args, needle in ((["-e", "cpu,alloc"], "one event"), (["--window", "10s"], "--window")):
            self.one_line_error(run(["record", "-o", "-", "-p", "1"] + args), "-o - (standard output)", needle, code=2)
        # the launched command shares standard output
        self.one_line_error(run(["record", "-o", "-", "--", "true"]), "launched command", code=2)


class Counts(Case):
    def folded(self, name, text):
        with open(self.p(name), "wb") as f:
            f.write(text)
        return self.p(name)

    def test_a_count_of_2_63_is_refused_with_its_line(self):
        big = self.folded("big.folded", b"# a comment\na;b 5\na;c 9223372036854775808\n")
        for args in (["svg", big], ["diff", FOLDED, big], ["diff", big, FOLDED],
                     ["convert", big, "-o", self.p("o.json")]):
            self.one_line_error(run(args), big + ":3:", "9223372036854775808", "2^63")
        huge = self.folded("huge.folded", b"a 99999999999999999999999999999\n")
        self.one_line_error(run(["svg", huge]), huge + ":1:", "2^63")
        dec = self.folded("dec.folded", b"a 1.5\nb 9999999999999999999.5\n")
        self.one_line_error(run(["svg", dec]), dec + ":2:", "2^63")
        diff2 = self.folded("d2.folded", b"a 9223372036854775808 1\n")
        self.one_line_error(run(["svg", diff2]), diff2 + ":1:", "'9223372036854775808'")
        self.one_line_error(run(["svg"], input_bytes=b"a 9223372036854775808\n"), "standard input:1:")
        self.assertEqual(os.listdir(self.tmp).count("o.json"), 0)

    def test_counts_that_add_up_to_2_63_are_refused(self):
        two = self.folded("two.folded", b"a 9223372036854775807\nb 1\n")
        for args in (["svg", two], ["diff", FOLDED, two], ["convert", two, "-o", self.p("o.folded")]):
            self.one_line_error(run(args), two + ":2:", "add up to 2^63")
        before = self.folded("before.folded", b"a 4611686018427387904 1\nb 4611686018427387904 1\n")
        self.one_line_error(run(["svg", before]), before + ":2:", "add up")

    def test_large_counts_below_the_limit_are_exact(self):
        # 2^53 + 1 is not a double: read as an integer, it stays itself
        ok = self.folded("ok.folded", b"a;b 9007199254740993\n")
        r = run(["convert", ok, "-o", self.p("o.folded")])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(open(self.p("o.folded"), "rb").read(), b"a;b 9007199254740993\n")
        r = run(["svg", self.folded("max.folded", b"a 9223372036854775807\n")])
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_convert_rate_cannot_overflow_the_weights(self):
        big = self.folded("b.folded", b"a 9223372036854775\n")
        self.one_line_error(run(["convert", "-F", "1", big, "-o", self.p("o.pb.gz")]), "-F 1", "2^63")


class GzipBomb(Case):
    def test_a_gzip_bomb_is_refused_without_unpacking_it(self):
        # ~1.1 MB of gzip that unpacks to 1.1 GiB of one repeated folded line
        import resource
        import zlib
        bomb = os.path.join(self.tmp, "bomb.folded.gz")
        line = b"a;b;c 1\n" * 8192
        z = zlib.compressobj(9, zlib.DEFLATED, 31)
        with open(bomb, "wb") as f:
            for _ in range((1100 << 20) // len(line)):
                f.write(z.compress(line))
            f.write(z.flush())
        self.assertLess(os.path.getsize(bomb), 8 << 20)
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        for args in (["svg", bomb, "-o", "b.svg"], ["diff", FOLDED, bomb, "-o", "d.svg"],
                     ["convert", bomb, "-o", "c.json"]):
            r = run_in(self.tmp, args)
            self.assertNotEqual(r.returncode, 0, args)
            err = r.stderr.decode()
            self.assertIn("bomb.folded.gz unpacks to more than 1024 MiB, the limit for gzip input", err)
            self.assertEqual(len(err.strip().splitlines()), 1, err)
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        self.assertLess(max(peak_kib, before), 1700 << 10, "a child used %d MiB" % (peak_kib >> 10))
        self.assertFalse(glob.glob(os.path.join(self.tmp, "*.svg*")) + glob.glob(os.path.join(self.tmp, "*.json*")))


class NotPerfScript(Case):
    def test_random_bytes_are_no_samples(self):
        # about half of such files used to fold into garbage stacks, exit 0
        for seed in range(24):
            data = random.Random(seed).randbytes(64 << 10)
            for cmd in (["collapse"], ["heatmap"], ["convert", "-f", "stacks", "-", "-o", self.p("o.folded")]):
                r = run(cmd, input_bytes=data)
                self.one_line_error(r, "no samples")
        # a header alone in real text still is text, with a frame it is a sample
        self.assertEqual(run(["collapse", PERF]).returncode, 0)
        r = run(["collapse"], input_bytes=b"java 12 1.0: 1 cpu-clock:\n\t1 f (/x)\n")
        self.assertEqual(r.stdout, b"java;f 1\n")


class LongLines(Case):
    def test_an_overlong_line_is_named_with_its_number_and_the_limit(self):
        big = self.p("big.folded")
        with open(big, "wb") as f:
            f.write(b"# from collapse\n" + b"a;" * (12 << 20) + b"b 5\n")  # 24 MiB
        for args in (["svg", big], ["diff", big, FOLDED], ["convert", big, "-o", self.p("o.json")]):
            self.one_line_error(run(args), big, "line 2 is longer than the 16 MiB line limit")
        # next to good lines: skipped with a warning that says why
        with open(big, "ab") as f:
            f.write(b"a;c 3\n")
        r = run(["svg", big])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"skipped 1 lines longer than the 16 MiB line limit (first: line 2)", r.stderr)
        self.assertNotIn(b"without a count", r.stderr)


class Modes(Case):
    def test_new_outputs_follow_the_umask(self):
        for umask, want in ((0o077, 0o600), (0o022, 0o644), (0o002, 0o664)):
            for name, args in self.commands("m%o" % umask).items():
                r = run_in(self.tmp, args, umask=umask)
                self.assertEqual(r.returncode, 0, (name, r.stderr))
                out = self.p(args[-1])
                self.assertEqual(stat.S_IMODE(os.stat(out).st_mode), want, (name, oct(umask)))
                os.unlink(out)

    def test_a_replaced_file_keeps_its_mode(self):
        for name, args in self.commands("keep").items():
            out = self.p(args[-1])
            with open(out, "w") as f:
                f.write("old")
            os.chmod(out, 0o640)
            r = run_in(self.tmp, args, umask=0o022)
            self.assertEqual(r.returncode, 0, (name, r.stderr))
            self.assertNotEqual(open(out, "rb").read(), b"old")
            self.assertEqual(stat.S_IMODE(os.stat(out).st_mode), 0o640, name)
        self.assertEqual(self.temps(), [])


class Signals(Case):
    def start_blocked(self, preexec=None):
        """jflame diff writing a.svg, then the same SVG to a pipe nobody reads:
        it blocks in the second write with a.svg's temporary file open."""
        big = self.p("big.folded")
        with open(big, "w") as f:
            for i in range(40000):
                f.write("main;work%d;leaf%d %d\n" % (i % 300, i, i + 1))
        p = subprocess.Popen([JFLAME, "diff", big, big, "-o", self.p("a.svg"), "-o", "-"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, preexec_fn=preexec)
        deadline = time.time() + 30
        while time.time() < deadline:
            if glob.glob(self.p("a.svg.*")) and os.path.getsize(glob.glob(self.p("a.svg.*"))[0]) > 0:
                break
            time.sleep(0.01)
        self.assertTrue(glob.glob(self.p("a.svg.*")), "no temporary file seen")
        # now until it sits in write(1, ...) to the pipe: /proc/PID/syscall names the
        # call a blocked task is in (the host's: under qemu-user, qemu's own write);
        # a machine loaded with other work takes its time getting there
        write_nr = {"x86_64": 1, "aarch64": 64}.get(os.uname().machine)
        while time.time() < deadline:
            try:
                with open("/proc/%d/syscall" % p.pid) as f:
                    call = f.read().split()
            except OSError:
                call = None
            if not call or write_nr is None:
                time.sleep(0.3)  # no /proc/PID/syscall to ask: give it the time it took before
                break
            if call[:2] == [str(write_nr), "0x1"]:
                break
            time.sleep(0.01)
        self.assertIsNone(p.poll(), "jflame diff did not block on the pipe")
        return p

    def test_a_signal_during_a_write_removes_the_temporary_file(self):
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            p = self.start_blocked()
            p.send_signal(sig)
            p.communicate(timeout=30)
            self.assertEqual(p.returncode, -sig, sig)
            self.assertEqual(glob.glob(self.p("a.svg*")), [], "left behind after %s" % sig)

    def test_an_ignored_signal_stays_ignored(self):
        p = self.start_blocked(lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
        p.send_signal(signal.SIGHUP)
        out, err = p.communicate(timeout=60)
        if QEMU_USER and p.returncode != 0:
            # qemu-user keeps a host handler for default-fatal signals even when the guest
            # ignores them: a SIGHUP that lands as qemu enters the write (not once the
            # write blocks: that one it restarts) fails it with EINTR there, and only
            # there: one line, exit 1, no temporary file left (a kernel never interrupts
            # a call for an ignored signal; the host build holds the rest)
            self.assertEqual(p.returncode, 1, err)
            self.assertIn(b"Interrupted system call", err)
            self.assertEqual(self.temps(), [])
            return
        self.assertEqual(p.returncode, 0, err)
        self.assertTrue(out.startswith(b"<?xml"))
        self.assertTrue(os.path.exists(self.p("a.svg")))
        self.assertEqual(self.temps(), [])


class NamedTwice(Case):
    def test_the_same_output_twice_is_an_error_naming_it(self):
        for name, args in self.commands("x").items():
            out = args[-1]
            for again in (out, "./" + out):
                r = run_in(self.tmp, args + ["-o", again])
                self.one_line_error(r, "output " + out, "named twice", code=2)
        # by another path to an existing file
        os.mkdir(self.p("d"))
        open(self.p("d/x.svg"), "w").close()
        self.one_line_error(run_in(self.tmp, ["diff", FOLDED, FOLDED, "-o", "d/x.svg", "-o", "d/../d/x.svg"]),
                            "output d/x.svg (also as d/../d/x.svg) is named twice", code=2)
        self.one_line_error(run(["diff", FOLDED, FOLDED, "-o", "-", "-o", "-"]),
                            "output standard output is named twice", code=2)
        self.one_line_error(run(["record", "-p", "1", "-o", self.p("r.svg"), "-o", self.p("r.svg")]),
                            "named twice", code=2)
        self.one_line_error(run(["record", "-p", "1", "-o", "-", "-o", "-"]), "standard output is named twice",
                            code=2)
        self.assertEqual(os.listdir(self.p("d")), ["x.svg"])

    def test_one_output_commands_take_one_o(self):
        for name in ("svg", "collapse", "heatmap"):
            args = self.commands("y")[name]
            r = run_in(self.tmp, args + ["-o", "other.html"])
            self.one_line_error(r, "jflame %s writes one output; give -o once" % name, code=2)

    def test_merged_inputs_given_twice_are_an_error(self):
        for cmd in ("collapse", "heatmap"):
            for again in (PERF, os.path.join(os.path.dirname(PERF), ".", os.path.basename(PERF))):
                self.one_line_error(run([cmd, PERF, again]), "input " + PERF, "given twice", code=2)
            self.one_line_error(run([cmd, "-", "-"]), "input standard input is given twice", code=2)
        # diff A A compares a file with itself: no change anywhere
        r = run(["diff", FOLDED, FOLDED, "-o", self.p("same.folded")])
        self.assertEqual(r.returncode, 0, r.stderr)
        for line in open(self.p("same.folded")):
            a, b = line.split()[-2:]
            self.assertEqual(a, b)


class MissingDirectory(Case):
    def test_the_directory_is_named_not_the_temporary_file(self):
        for name, args in self.commands("nodir/out").items():
            r = run_in(self.tmp, args)
            self.one_line_error(r, "failed to write " + args[-1], "directory nodir does not exist", "mkdir -p nodir")
            self.assertNotIn(b"XXXXXX", r.stderr)
        r = run_in(self.tmp, ["svg", FOLDED, "-o", os.path.join(self.tmp, "a", "b", "c.svg")])
        self.one_line_error(r, "directory %s/a/b does not exist" % self.tmp)
        open(self.p("file"), "w").close()
        self.one_line_error(run_in(self.tmp, ["svg", FOLDED, "-o", "file/x.svg"]), "file is not a directory")


if __name__ == "__main__":
    unittest.main(verbosity=2)
