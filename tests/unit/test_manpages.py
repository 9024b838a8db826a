# test_manpages.py - the man pages the build generates with help2man from the usage texts
# (scripts/manpages.sh; JFLAME_MAN_DIR, the build's man/): one page per command `jflame
# --help` lists, plus jflame.1 naming them all; each renders without a groff warning (groff
# -ww and man -l), has a NAME line lexgrog (mandb's whatis parser) reads, carries jflame's
# version, and holds every option its command's --help lists, in the text a reader sees.
import os
import re
import shutil
import subprocess
import unittest

JFLAME = os.environ.get("JFLAME_BIN", "")
MAN_DIR = os.environ.get("JFLAME_MAN_DIR", "")


def jflame(*args):
    r = subprocess.run([JFLAME] + list(args), capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, (args, r.stderr)
    return r.stdout


def commands():
    """The commands `jflame --help` lists under "commands:"."""
    text = jflame("--help")
    block = text.split("\ncommands:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in block.splitlines()]


def long_options(help_text):
    """Every --option named in a --help's option lines: a line indented by at most 10
    blanks starting with a dash, up to where its description starts (two blanks)."""
    opts = set()
    for line in help_text.splitlines():
        if re.match(r"^ {1,10}-", line):
            spec = re.split(r"  +", line.strip(), maxsplit=1)[0]
            opts.update(re.findall(r"(?<![\w-])--[a-z][\w-]*", spec))
    return opts


def rendered(page):
    """The page as a reader sees it: no hyphenation, long lines, plain characters."""
    r = subprocess.run(["groff", "-man", "-Tutf8", "-rHY=0", "-rLL=300n", "-P-c", "-P-b", "-P-u", "-P-o", page],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.replace("\u2212", "-").replace("\u2010", "-")


class ManPages(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        assert os.access(JFLAME, os.X_OK), "JFLAME_BIN unset or not executable: %r" % JFLAME
        assert os.path.isdir(MAN_DIR), "JFLAME_MAN_DIR unset or not a directory: %r" % MAN_DIR
        cls.commands = commands()
        cls.pages = {"jflame": os.path.join(MAN_DIR, "jflame.1")}
        for c in cls.commands:
            cls.pages[c] = os.path.join(MAN_DIR, "jflame-%s.1" % c)

    def test_one_page_per_command(self):
        self.assertGreaterEqual(len(self.commands), 7, self.commands)
        self.assertEqual(sorted(os.listdir(MAN_DIR)), sorted(os.path.basename(p) for p in self.pages.values()))

    def test_top_page_names_every_command_page(self):
        text = rendered(self.pages["jflame"])
        see_also = text.split("SEE ALSO", 1)[1]
        for c in self.commands:
            self.assertIn("jflame-%s(1)" % c, see_also)
            # and the command itself in the list of commands
            self.assertRegex(text, r"(?m)^ +%s\b" % re.escape(c))

    def test_renders_without_warnings(self):
        env = dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8")
        for name, page in self.pages.items():
            with self.subTest(page=name):
                r = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", page], capture_output=True, text=True,
                                   timeout=60)
                self.assertEqual((r.returncode, r.stderr), (0, ""), "groff warnings")
                r = subprocess.run(["man", "--warnings=w", "-l", page], capture_output=True, text=True, timeout=60,
                                   env=env)
                self.assertEqual((r.returncode, r.stderr), (0, ""), "man -l warnings")
                self.assertIn("NAME", r.stdout)

    def test_name_line_and_version(self):
        version = jflame("--version").split()[-1]
        lexgrog = shutil.which("lexgrog")
        for name, page in self.pages.items():
            title = "jflame" if name == "jflame" else "jflame-" + name
            with self.subTest(page=name):
                with open(page) as f:
                    src = f.read()
                self.assertRegex(src, r'(?m)^\.TH %s "1" "[^"]*" "jflame %s" "User Commands"$'
                                 % (re.escape(title.upper()), re.escape(version)))
                if lexgrog:
                    r = subprocess.run([lexgrog, page], capture_output=True, text=True, timeout=30)
                    self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
                    self.assertIn('"%s - ' % title, r.stdout)

    def test_every_option_of_the_help_is_in_its_page(self):
        for c in self.commands:
            with self.subTest(command=c):
                opts = long_options(jflame(c, "--help"))
                self.assertIn("--help", opts)
                text = rendered(self.pages[c])
                missing = sorted(o for o in opts if not re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(o), text))
                self.assertEqual(missing, [], "jflame %s --help options not in jflame-%s.1" % (c, c))


if __name__ == "__main__":
    unittest.main()
