# cli_test.py - what the Python CLI tests share (test_toolkit_cli.py,
# test_view_cli.py, test_convert_cli.py): running jflame, a scratch directory,
# and the one-line error check every bad input gets.
import os
import re
import shutil
import subprocess
import tempfile
import unittest
import xml.etree.ElementTree as ET

JFLAME = os.environ.get("JFLAME_BIN", "")
DATA = os.environ.get("JFLAME_TEST_DATA", "tests/data")
# set by tests/unit/check_arm64.sh: jflame runs under qemu-user, whose signal emulation differs
QEMU_USER = os.environ.get("JFLAME_QEMU_USER") == "1"
SVG = "{http://www.w3.org/2000/svg}"
# a frame's tooltip: "name (1,234 samples, 12.34%)", differential "…%; +5.67%)"
TITLE = re.compile(r"^(?P<name>.*) \((?P<count>[0-9,]+) (?P<unit>[^,]+), (?P<pct>[0-9.]+)%"
                   r"(; (?P<delta>[+-]?[0-9.]+)%)?\)$", re.S)


def run(args, input_bytes=None, stdin=None):
    """jflame with args; output bytes captured."""
    return subprocess.run([JFLAME] + list(args), input=input_bytes, stdin=stdin, capture_output=True, timeout=120)


def svg_frames(svg_bytes):
    """A flame graph's SVG root and its frames: name, count, unit, delta (the
    signed percent of a differential graph, or None), x, y, w, fill."""
    root = ET.fromstring(svg_bytes)
    out = []
    for g in root.iter(SVG + "g"):
        t, r = g.find(SVG + "title"), g.find(SVG + "rect")
        if t is None or r is None:
            continue
        m = TITLE.match(t.text)
        assert m, t.text
        out.append(dict(name=m.group("name"), count=int(m.group("count").replace(",", "")), unit=m.group("unit"),
                        delta=m.group("delta"), x=float(r.get("x")), y=float(r.get("y")), w=float(r.get("width")),
                        fill=r.get("fill")))
    return root, out


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
