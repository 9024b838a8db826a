# test_options.py - the agent's options: msig, dottedclass, sourcepos and (un)folded
# inline chains name methods as documented (chains unfolded by default, nounfold
# turns them off); bad options stop the JVM at startup with one line; help.
import os
import re
import subprocess
import unittest

import jvmtest
from jvmtest import Jvm

HOT_CLASS = "jflame/examples/Workload"


class NamingTest(unittest.TestCase):
    def setUp(self):
        jvmtest.check_setup()

    def names(self, opts, canonical=None):
        jvm = Jvm(["hot", "2000"], agent_opts=opts, wait_ready=False)
        self.addCleanup(jvm.cleanup)
        self.assertEqual(jvm.wait(), 0, jvm.stderr())
        self.last = jvm
        self.assertEqual(jvm.status()["options"], opts if canonical is None else canonical)
        return [e[2] for e in jvm.map_entries()]

    def test_nounfold_names(self):
        names = self.names("nounfold")
        self.assertIn("L%s;::spin" % HOT_CLASS, names)
        self.assertIn("L%s;::mix" % HOT_CLASS, names)
        self.assertFalse(any("->" in n for n in names))
        # nounfold leaves DebugNonSafepoints as it was (off), and says so in the status
        self.assertEqual(self.last.status()["debug_non_safepoints"], "off")
        self.assertNotIn("DebugNonSafepoints", self.last.stderr())

    def test_msig(self):
        names = self.names("nounfold,msig")
        self.assertIn("L%s;::spin(I)J" % HOT_CLASS, names)
        self.assertIn("L%s;::mix(I)I" % HOT_CLASS, names)

    def test_dottedclass(self):
        names = self.names("nounfold,dottedclass")
        self.assertIn("jflame.examples.Workload::spin", names)
        self.assertFalse(any(n.startswith("L" + HOT_CLASS) for n in names))

    def test_sourcepos(self):
        names = self.names("nounfold,sourcepos")
        spin = [n for n in names if n.startswith("L%s;::spin(" % HOT_CLASS)]
        self.assertTrue(spin, names[:20])
        self.assertRegex(spin[0], r"::spin\(Workload\.java:\d+\)$")
        line = int(re.search(r":(\d+)\)$", spin[0]).group(1))
        with open(jvmtest.SOURCE_DIR + "/examples/src/jflame/examples/Workload.java") as f:
            src = f.read().splitlines()
        # the line is the first line of spin's body
        self.assertIn("long acc = 0;", src[line - 1])

    def test_unfold_chains_by_default(self):
        names = self.names("")
        self.assertEqual(self.last.status()["debug_non_safepoints"], "on")
        chains = [n for n in names if "->" in n]
        self.assertTrue(any(c.startswith("L%s;::spin->" % HOT_CLASS) for c in chains), chains[:20])
        # outermost first: the inlined callees of spin come after it
        self.assertTrue(any(c in ("L%s;::spin->L%s;::mix" % (HOT_CLASS, HOT_CLASS),
                                  "L%s;::spin->Ljflame/examples/HotMath;::scramble" % HOT_CLASS)
                            for c in chains), chains[:20])
        for c in chains:
            for part in c.split("->"):
                self.assertRegex(part, r"^L[^;]+;::[^:]+$")

    def test_combined(self):
        # unfold, the default, is still accepted and changes nothing
        names = self.names("unfold,msig,dottedclass", "msig,dottedclass")
        self.assertTrue(any(n.startswith("jflame.examples.Workload::spin(I)J->") for n in names))


class BadOptionTest(unittest.TestCase):
    def setUp(self):
        jvmtest.check_setup()

    def start(self, opts):
        jvm = Jvm(["hot", "100"], agent_opts=opts, wait_ready=False)
        self.addCleanup(jvm.cleanup)
        rc = jvm.wait(60)
        return jvm, rc

    def test_unknown_option_refuses_to_start(self):
        jvm, rc = self.start("unfold,colour=red")
        self.assertNotEqual(rc, 0)
        err = jvm.stderr()
        lines = [l for l in err.splitlines() if l.startswith("jflame-agent:")]
        self.assertEqual(lines, ["jflame-agent: unknown option 'colour'; valid options: "
                                 "unfold, nounfold, msig, dottedclass, sourcepos, quiet, help"])
        self.assertNotIn("jflame-workload", jvm.stdout())

    def test_value_on_flag_refused(self):
        jvm, rc = self.start("unfold=yes")
        self.assertNotEqual(rc, 0)
        self.assertIn("jflame-agent: option 'unfold' takes no value", jvm.stderr())

    def test_unfold_and_nounfold_refused(self):
        jvm, rc = self.start("unfold,nounfold")
        self.assertNotEqual(rc, 0)
        self.assertIn("jflame-agent: options 'unfold' and 'nounfold' contradict each other; give one",
                      jvm.stderr())

    def test_empty_option_refused(self):
        jvm, rc = self.start("msig,,unfold")
        self.assertNotEqual(rc, 0)
        self.assertIn("jflame-agent: empty option", jvm.stderr())

    def test_help(self):
        env = dict(os.environ, **jvmtest.JVM_ENV)
        r = subprocess.run([jvmtest.JAVA, "-agentpath:%s=help" % jvmtest.AGENT, "-version"],
                           capture_output=True, text=True, timeout=60, env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        for opt in ("unfold", "nounfold", "msig", "dottedclass", "sourcepos", "quiet", "help"):
            self.assertRegex(r.stderr, r"(?m)^  %s " % opt)
        self.assertNotIn("openjdk version", r.stderr)

    def test_quiet(self):
        jvm = Jvm(["hot", "500"], agent_opts="quiet", wait_ready=False)
        self.addCleanup(jvm.cleanup)
        self.assertEqual(jvm.wait(), 0)
        self.assertNotIn("jflame-agent: writing", jvm.stderr())
        self.assertNotIn("turned on DebugNonSafepoints", jvm.stderr())  # informational
        self.assertEqual(jvm.status()["debug_non_safepoints"], "on")
        self.assertGreater(len(jvm.map_entries()), 10)


if __name__ == "__main__":
    jvmtest.main()
