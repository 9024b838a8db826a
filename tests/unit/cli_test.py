# cli_test.py - what the Python CLI tests share (test_toolkit_cli.py,
# test_view_cli.py, test_convert_cli.py): running jflame, a scratch directory,
# and the one-line error check every bad input gets.
import os
import shutil
import subprocess
import tempfile
import unittest

JFLAME = os.environ.get("JFLAME_BIN", "")
DATA = os.environ.get("JFLAME_TEST_DATA", "tests/data")
SVG = "{http://www.w3.org/2000/svg}"


def run(args, input_bytes=None, stdin=None):
    """jflame with args; output bytes captured."""
    return subprocess.run([JFLAME] + list(args), input=input_bytes, stdin=stdin, capture_output=True, timeout=120)


def slurp(path):
    with open(path, "rb") as f:
        return f.read()


class CliCase(unittest.TestCase):
    """A scratch directory (self.tmp, removed after) and the checks."""
    prefix = "jflame-cli-"

    def setUp(self):
        self.assertTrue(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        self.tmp = tempfile.mkdtemp(prefix=self.prefix)
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def p(self, name):
        return os.path.join(self.tmp, name)

    def one_line_error(self, r, *needles, code=None):
        """A failed run: nonzero exit (code if given), one 'jflame: ' line on
        stderr holding every needle, nothing on stdout."""
        self.assertNotEqual(r.returncode, 0)
        if code is not None:
            self.assertEqual(r.returncode, code)
        lines = r.stderr.decode().strip().splitlines()
        self.assertEqual(len(lines), 1, r.stderr)
        self.assertTrue(lines[0].startswith("jflame: "), lines[0])
        for n in needles:
            self.assertIn(n, lines[0])
        self.assertEqual(r.stdout, b"")
