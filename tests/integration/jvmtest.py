# jvmtest.py - shared helpers for the integration tests: start real JVMs with the
# agent, wait for the workload, read the perf map, events log and status file.
import collections
import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import unittest

AGENT = os.environ.get("JFLAME_AGENT", "")
JFLAME = os.environ.get("JFLAME_BIN", "")
JAR = os.environ.get("JFLAME_EXAMPLES_JAR", "")
JAVA_HOME = os.environ.get("JFLAME_JAVA_HOME", "/usr/lib/jvm/java-17-openjdk-amd64")
JAVA = os.path.join(JAVA_HOME, "bin", "java")
SOURCE_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
IN_CI = os.environ.get("CI") == "true"
# The JDK matrix (tests/jdk/README.md): JFLAME_JDK names a JDK of Debian's run in its
# own root file system (tests/jdk/rootfs.sh builds it once, jdk_root() asks for it);
# its JVMs and tools run through tests/jdk/in-root.sh (in_root()).
JDK = os.environ.get("JFLAME_JDK", "")
_jdk_root = os.environ.get("JFLAME_JAVA_ROOT", "")
# Extra environment for the JVM (the sanitizer build preloads its runtime).
JVM_ENV = {}
if os.environ.get("JFLAME_JVM_PRELOAD"):
    JVM_ENV["LD_PRELOAD"] = os.environ["JFLAME_JVM_PRELOAD"]
    # LeakSanitizer cannot run inside a JVM; the JVM handles its own SIGSEGVs.
    JVM_ENV["ASAN_OPTIONS"] = os.environ.get("JFLAME_JVM_ASAN_OPTIONS", "detect_leaks=0:handle_segv=0:allow_user_segv_handler=1:exitcode=99")
    JVM_ENV["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"

MAP_LINE = re.compile(r"^([0-9a-f]+) ([0-9a-f]+) (.+)$")


def require(cond, what):
    """A missing prerequisite fails the test (never skips) under CI=true."""
    if cond:
        return
    if IN_CI:
        raise AssertionError("missing prerequisite under CI=true: " + what)
    raise unittest.SkipTest(what)


def jdk_root():
    """The matrix JDK's root file system, built unless cached; "" without JFLAME_JDK."""
    global _jdk_root
    if JDK and not _jdk_root:
        r = subprocess.run(["bash", os.path.join(SOURCE_DIR, "tests", "jdk", "rootfs.sh"), JDK], capture_output=True,
                           text=True, timeout=1800, stdin=subprocess.DEVNULL)
        if r.returncode != 0:
            raise AssertionError("JDK %s: tests/jdk/rootfs.sh failed (exit %d):\n%s"
                                 % (JDK, r.returncode, r.stderr[-4000:]))
        _jdk_root = r.stdout.strip()
    return _jdk_root


def in_root(cmd):
    """cmd (a JDK tool, a JVM) as it runs for this JDK: in its root for the matrix,
    with the build's files (agent, jar) at the same paths there."""
    if not jdk_root():
        return list(cmd)
    dirs = [os.path.dirname(os.path.abspath(p)) for p in (AGENT, JAR) if p]
    os.environ["JFLAME_IN_ROOT_DIRS"] = ":".join(dirs)
    return [os.path.join(SOURCE_DIR, "tests", "jdk", "in-root.sh"), _jdk_root] + list(cmd)


def jdk_tool(name):
    """Whether the JDK's tool (java, jfr, jcmd) is there, for require()."""
    return os.access(os.path.join(jdk_root() or "/", JAVA_HOME.lstrip("/"), "bin", name), os.X_OK)


def check_setup():
    require(os.path.isfile(AGENT), "agent not built (JFLAME_AGENT=%r)" % AGENT)
    require(os.path.isfile(JAR), "examples jar not built (JFLAME_EXAMPLES_JAR=%r)" % JAR)
    require(jdk_tool("java"), "no java at %s%s" % (JAVA, " in JDK %s's root" % JDK if JDK else ""))


def java_version():
    out = subprocess.run(in_root([JAVA, "-version"]), capture_output=True, text=True).stderr
    m = re.search(r'version "(\d+)', out)
    return int(m.group(1)) if m else 0


class Jvm:
    """A running JVM with the workload; stdout and stderr go to files."""

    def __init__(self, args, agent_opts=None, jvm_flags=(), env=None, wait_ready=True, cwd=None, prefix=(),
                 classpath=None, main="jflame.examples.Workload", ready="jflame-workload: ready"):
        self.workdir = cwd or os.environ.get("JFLAME_TEST_TMP", "/tmp")
        tag = "%d-%d" % (os.getpid(), int(time.monotonic() * 1e6))
        self.out_path = os.path.join(self.workdir, "jvm-%s.out" % tag)
        self.err_path = os.path.join(self.workdir, "jvm-%s.err" % tag)
        # prefix: a command that runs the JVM (setpriv as another user, unshare, ...)
        cmd = in_root(list(prefix) + [JAVA] + list(jvm_flags))
        if agent_opts is not None:
            cmd.append("-agentpath:%s%s" % (AGENT, "=" + agent_opts if agent_opts else ""))
        cmd += ["-cp", classpath or JAR, main] + list(args)
        full_env = dict(os.environ)
        full_env.update(JVM_ENV)
        full_env.update(env or {})
        self.cmd = cmd
        self.out = open(self.out_path, "w")
        self.err = open(self.err_path, "w")
        started = time.time()
        self.started_mono = time.monotonic()
        self.proc = subprocess.Popen(cmd, stdout=self.out, stderr=self.err, stdin=subprocess.DEVNULL,
                                     env=full_env, cwd=self.workdir)
        self.pid = self.proc.pid
        # pids wrap (pid_max is 32768 here): files an earlier process with this
        # pid left (a killed JVM, perf-map-agent) are not this JVM's
        for p in (self.map_path, self.events_path, self.status_path, self.samples_path):
            try:
                if os.stat(p).st_mtime < started:
                    os.unlink(p)
            except OSError:
                pass
        self.prefixed = bool(prefix)
        if wait_ready:
            self.wait_output(ready, 60)

    def stdout(self):
        with open(self.out_path) as f:
            return f.read()

    def stderr(self):
        with open(self.err_path) as f:
            return f.read()

    def wait_output(self, text, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.stdout():
                return
            if self.proc.poll() is not None:
                raise AssertionError("JVM exited (%s) before printing %r; stderr:\n%s"
                                     % (self.proc.returncode, text, self.stderr()[-3000:]))
            time.sleep(0.05)
        raise AssertionError("JVM did not print %r within %ss" % (text, timeout))

    def wait_thread(self, name, timeout):
        """Waits until the JVM runs a thread named name (as /proc shows it: its
        first 15 bytes)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                for tid in os.listdir("/proc/%d/task" % self.pid):
                    with open("/proc/%d/task/%s/comm" % (self.pid, tid)) as f:
                        if f.read().rstrip("\n") == name[:15]:
                            return
            except FileNotFoundError:  # a thread or the JVM gone meanwhile
                pass
            if self.proc.poll() is not None:
                raise AssertionError("JVM exited (%s) before running thread %r; stderr:\n%s"
                                     % (self.proc.returncode, name, self.stderr()[-3000:]))
            time.sleep(0.05)
        raise AssertionError("JVM did not run thread %r within %ss" % (name, timeout))

    def wait(self, timeout=120):
        try:
            return self.proc.wait(timeout)
        finally:
            self.out.close()
            self.err.close()

    def alive(self):
        return self.proc.poll() is None

    def kill(self):
        if self.alive():
            self.proc.send_signal(signal.SIGKILL)
        self.wait()

    def cleanup(self):
        self.kill()
        # a killed JVM leaves its attach socket behind
        for p in (self.map_path, self.events_path, self.status_path, self.samples_path, self.out_path, self.err_path,
                  "/tmp/.java_pid%d" % self.pid):
            try:
                os.unlink(p)
            except (FileNotFoundError, IsADirectoryError):
                pass
            except PermissionError:
                pass

    @property
    def map_path(self):
        return "/tmp/perf-%d.map" % self.pid

    @property
    def events_path(self):
        return "/tmp/jflame-%d.events" % self.pid

    @property
    def samples_path(self):
        return "/tmp/jflame-%d.samples" % self.pid

    @property
    def status_path(self):
        return "/tmp/jflame-%d.status" % self.pid

    def map_entries(self):
        return read_map(self.map_path)

    def status(self):
        return read_status(self.status_path)

    def wait_status(self, pred, timeout=20):
        deadline = time.monotonic() + timeout
        st = {}
        while time.monotonic() < deadline:
            try:
                st = self.status()
                if pred(st):
                    return st
            except FileNotFoundError:
                pass
            time.sleep(0.1)
        raise AssertionError("status never satisfied the condition; last status: %r" % st)


_shared = {}


def shared_jvm(key, *args, **kw):
    """One Jvm(*args, **kw) per key for the whole test file, started when first
    asked for and ended after the file's last test: for cases that only record
    a JVM (a recording leaves it as it was). Its run time outlives the tests."""
    if key not in _shared:
        _shared[key] = Jvm(*args, **kw)
        unittest.addModuleCleanup(_shared[key].cleanup)
    return _shared[key]


def record(args, timeout=120, check=True, launch=False, env=None, cwd=None):
    """Runs `jflame record ARGS` to its end, standard input closed, and returns
    the subprocess.CompletedProcess (stdout and stderr as text). check: fail
    unless it exits 0. launch: with what a JVM it starts needs (JFLAME_AGENT,
    the sanitizer runtimes). env: more environment; cwd: where to run it."""
    args = [str(a) for a in args]
    e = None
    if launch or env:
        e = dict(os.environ)
        if launch:
            e["JFLAME_AGENT"] = AGENT
            e.update(JVM_ENV)
        e.update(env or {})
    r = subprocess.run([JFLAME, "record"] + args, capture_output=True, text=True, timeout=timeout,
                       stdin=subprocess.DEVNULL, env=e, cwd=cwd)
    if check and r.returncode != 0:
        raise AssertionError("jflame record %s failed (exit %d):\n%s" % (" ".join(args), r.returncode, r.stderr))
    return r


def read_map(path):
    entries = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            m = MAP_LINE.match(line.rstrip("\n"))
            if not m:
                raise AssertionError("%s:%d: not a perf map line: %r" % (path, n, line))
            entries.append((int(m.group(1), 16), int(m.group(2), 16), m.group(3)))
    return entries


def read_folded(path):
    """Folded stacks as (frames root first, count) pairs; a malformed line fails."""
    stacks = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if not stack or not count.isdigit():
                raise AssertionError("%s:%d: not a folded line: %r" % (path, n, line))
            stacks.append((stack.split(";"), int(count)))
    return stacks


def stacks_times(path):
    """The sample times (seconds) of a .stacks file, in the order written."""
    with open(path) as f:
        return [float(m.group(1)) for m in re.finditer(r"^\S.* (\d+\.\d+): \d+ \S+:$", f.read(), re.M)]


def read_status(path):
    st = {}
    with open(path) as f:
        for line in f:
            key, sep, value = line.rstrip("\n").partition("=")
            if not sep:
                raise AssertionError("%s: malformed status line %r" % (path, line))
            st[key] = value
    return st


def read_events(path):
    """Parsed events: (ns, kind, fields) tuples, header skipped."""
    events = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("#"):
                continue
            ns, kind, rest = line.split(" ", 2) if line.count(" ") >= 2 else (line.split(" ") + [""])[:3]
            events.append((int(ns), kind, rest))
    return events


def exec_ranges(pid):
    """Executable mappings of a live process, as (start, end) pairs."""
    ranges = []
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            addr, perms = line.split()[:2]
            if "x" in perms:
                lo, hi = addr.split("-")
                ranges.append((int(lo, 16), int(hi, 16)))
    return ranges


def vm_flag(pid, name, timeout=60):
    """A -XX flag's value as the JDK's own `jcmd PID VM.flags -all` prints it,
    e.g. "true"; None when not listed (a diagnostic flag is listed only when the
    JVM runs with -XX:+UnlockDiagnosticVMOptions)."""
    jcmd = os.path.join(JAVA_HOME, "bin", "jcmd")
    r = subprocess.run([jcmd, str(pid), "VM.flags", "-all"], capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError("jcmd %d VM.flags -all failed: %s" % (pid, (r.stdout + r.stderr).strip()))
    m = re.search(r"(?m)^\s*\S+\s+%s\s+= (\S+)" % re.escape(name), r.stdout)
    return m.group(1) if m else None


def jattach(pid, *args, timeout=30):
    exe = "/usr/bin/jattach"
    require(os.access(exe, os.X_OK), "jattach not installed (scripts/deps.sh installs it)")
    return subprocess.run([exe, str(pid)] + list(args), capture_output=True, text=True, timeout=timeout)


def protoc_pprof(path):
    """A .pb.gz decoded by protoc (Google's own protobuf, not the protobuf-c
    jflame writes with), as its text format parsed into nested dicts: each
    field a list of values."""
    protoc = shutil.which("protoc")
    require(protoc, "protoc not installed (scripts/deps.sh installs protobuf-compiler)")
    with gzip.open(path) as f:
        raw = f.read()
    r = subprocess.run([protoc, "--decode=perftools.profiles.Profile", "-I", os.path.join(SOURCE_DIR, "native", "formats"),
                        "profile.proto"], input=raw, capture_output=True, timeout=60)
    if r.returncode != 0:
        raise AssertionError("protoc cannot decode %s: %s" % (path, r.stderr.decode()))
    stack = [collections.defaultdict(list)]
    for line in r.stdout.decode().splitlines():
        line = line.strip()
        if line.endswith("{"):
            node = collections.defaultdict(list)
            stack[-1][line[:-1].strip()].append(node)
            stack.append(node)
        elif line == "}":
            stack.pop()
        elif line:
            key, val = line.split(":", 1)
            stack[-1][key].append(json.loads(val) if val.strip().startswith('"') else int(val))
    return stack[0]


def main():
    unittest.main(verbosity=2)


if __name__ == "__main__":
    sys.exit("jvmtest.py is a helper module; run the test_*.py files")
