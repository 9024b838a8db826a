# test_record_cli.py - `jflame record`'s options for several events (-e cpu,alloc),
# the agents' events (--alloc-interval, --lock-min, --count) and the naming rule's
# refusals: each bad combination gets one clear line and exit code 2, before
# anything is recorded (no privileges or JVMs needed).
import unittest

from cli_test import CliCase, run


class RecordOptions(CliCase):
    prefix = "jflame-record-cli-"

    def bad(self, args, *needles):
        self.one_line_error(run(["record"] + args + ["-p", "1"]), *needles, code=2)

    def test_event_lists(self):
        self.bad(["-e", "offcpu,wall"], "at most one of the sampler's events", "'wall' after 'offcpu'")
        self.bad(["-e", "page-faults,cpu"], "at most one of the sampler's events", "'cpu' after 'page-faults'")
        self.bad(["-e", "Page-Faults"], "-e takes cpu, cpu-clock, cycles, offcpu, wall, page-faults",
                 "not 'Page-Faults'")
        self.bad(["-e", "cpu", "-e", "cycles"], "at most one of", "'cycles' after 'cpu'")
        self.bad(["-e", "alloc,alloc"], "names alloc twice")
        self.bad(["-e", "lock", "-e", "lock"], "names lock twice")
        self.bad(["-e", "alloc,bogus"], "not 'bogus'")
        self.bad(["-e", "alloc,"], "not ''")
        self.bad(["-e", ""], "-e takes events")

    def test_agent_options(self):
        self.bad(["-e", "alloc", "--alloc-interval", "1"], "--alloc-interval takes a size from 1k to 1g")
        self.bad(["-e", "alloc", "--alloc-interval", "2g"], "--alloc-interval takes a size")
        self.bad(["-e", "alloc", "--alloc-interval", "x"], "not 'x'")
        self.bad(["--alloc-interval", "64k"], "--alloc-interval goes with -e alloc")
        self.bad(["-e", "lock", "--lock-min", "-1ms"], "--lock-min takes a duration")
        self.bad(["-e", "alloc", "--lock-min", "1ms"], "--lock-min goes with -e lock")
        self.bad(["--count"], "--count goes with -e alloc or -e lock")
        self.bad(["-e", "offcpu", "--count"], "--count goes with")
        self.bad(["-e", "alloc", "--min-block", "1ms"], "--min-block goes with -e offcpu or -e wall")
        self.bad(["-e", "cpu,lock", "--push", "http://localhost:4040"], "--push sends CPU")

    def test_baseline_options(self):
        self.bad(["--baseline", "first"], "--baseline compares each window with it; add --window")
        self.bad(["--window", "5", "--baseline", "previous:0"], "previous:N", "1 to 1000")
        self.bad(["--window", "5", "--baseline", "previous:x"], "previous:N")
        self.bad(["--window", "5", "--baseline", "/nonexistent/base.folded"], "--baseline /nonexistent/base.folded",
                 "No such file")
        self.bad(["--window", "5", "--baseline", "first", "--diff-out", "d.png"], "--diff-out d.png", ".svg")
        self.bad(["--window", "5", "--baseline", "first", "--diff-out", "d-%q.svg"], "--diff-out")
        self.bad(["--window", "5", "--on-regression", "true"], "add --baseline first")
        self.bad(["--window", "5", "--diff-out", "d.svg"], "add --baseline first")
        self.bad(["--window", "5", "--baseline", "first", "--on-regression", ""], "--on-regression takes a shell command")
        self.bad(["--window", "5", "--baseline", "first", "--alpha", "0"], "--alpha 0", "between 0 and 0.5")
        self.bad(["--window", "5", "--baseline", "first", "--confirm", "0"], "--confirm 0", "1 to 10")
        self.bad(["--window", "5", "--baseline", "first", "--confirm", "11"], "--confirm 11", "1 to 10")
        self.bad(["--window", "5", "--baseline", "first", "--confirm", "2x"], "--confirm 2x")
        for opt in (["--confirm", "2"], ["--alpha", "0.05"], ["--no-normalize"]):
            self.bad(["--window", "5"] + opt, "tune --baseline; add --baseline first")
        self.bad(["--window", "5", "-e", "alloc", "--baseline", "first"], "--baseline compares the sampled event")

    def test_naming_rule_refusals(self):
        self.bad(["-e", "cpu,alloc", "-o", "lock.svg"], "'lock.svg' is named for lock, which is not recorded")
        self.bad(["-e", "cpu,alloc", "-o", "wall.svg"], "'wall.svg' is named for wall")
        # a word with a hyphen names its event whole, in any case
        self.bad(["-e", "cpu,alloc", "-o", "x/Page-Faults.svg"], "is named for page-faults, which is not recorded")
        self.bad(["-e", "page-faults,alloc", "-o", "page-faults-alloc.svg"], "names more than one event")
        self.bad(["-e", "cpu,alloc", "-o", "cpu-alloc.svg"], "names more than one event")
        self.bad(["-e", "alloc", "-o", "x.stacks"], ".stacks output", "not alloc")
        self.bad(["-e", "lock", "-o", "x.html"], ".html heat map", "not lock")
        self.bad(["-e", "cpu,alloc", "-o", "alloc.stacks"], ".stacks output", "not alloc")
        self.bad(["-e", "alloc,lock", "-o", "run.html"], "nothing to hold")
        self.bad(["-e", "alloc,lock", "-o", "%e.stacks"], "nothing to hold")
        self.bad(["-e", "cpu,alloc", "-o", "a.svg", "-o", "a-alloc.svg"], "named twice")
        self.bad(["-e", "cpu,alloc", "-o", "a.svg", "-o", "./a-alloc.svg"], "named twice")
        self.bad(["-e", "alloc", "-o", "%q.svg"], "'%q'")

    def test_help_names_the_events(self):
        r = run(["record", "--help"])
        self.assertEqual(r.returncode, 0)
        for s in (b"alloc", b"lock", b"--alloc-interval", b"--lock-min", b"--count", b"%e"):
            self.assertIn(s, r.stdout)
        # the events' section is the event table's rows: each name at the start of a line
        text = r.stdout.decode()
        section = text[text.index("Events (-e):"):text.index("JVM stacks are walked")]
        names = [ln.split()[0] for ln in section.splitlines()[1:] if ln.startswith("  ") and not ln.startswith("   ")]
        self.assertEqual(names, ["cpu", "cpu-clock", "cycles", "offcpu", "wall", "page-faults", "instructions",
                                 "cache-misses", "branch-misses", "alloc", "lock"])
        self.assertTrue(all(len(ln) <= 79 for ln in section.splitlines()), section)


if __name__ == "__main__":
    unittest.main(verbosity=2)
