# test_deploy.py - what ships: the Kubernetes manifests in deploy/k8s/ and the
# installed tree (cmake --install). ctest: first JDK only
#
# Manifests: parsed as YAML (python3-yaml), then
# - checked field by field against what docs/always-on.md "Containers and sidecars"
#   says: the pid namespace (shareProcessNamespace / hostPID), the capabilities (its
#   table's, all others dropped), resource limits, a volume at /out, and
#   a command line that is a valid `jflame record` (every option exists in
#   `jflame record --help`, with its value; then run as it is, a short while,
#   writing into a scratch /out);
# - validated against Kubernetes' own OpenAPI schemas: the npm package
#   kubernetes-models (ajv validators generated from the schemas; pinned in
#   tests/integration/k8s/, installed by scripts/deps.sh) checks types, enums,
#   required fields and quantities, and k8s/validate.mjs adds kubeconform's
#   -strict (no field the API does not know). kubeconform itself is not
#   packaged by Debian or npm.
# Install: `cmake --install` of this build into a scratch prefix gives bin/jflame,
# lib/libjflame-agent.so, the man pages (jflame.1, jflame-<command>.1), the README and
# docs/; the installed jflame finds its agent in ../lib (attaches it to a JVM); each
# command's man page documents every option of its --help, and every page carries
# jflame's version.
import glob
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import jvmtest
from jvmtest import Jvm

JFLAME = os.environ.get("JFLAME_BIN", "")
SRC = jvmtest.SOURCE_DIR
K8S = os.path.join(SRC, "deploy", "k8s")
SUBCOMMANDS = ["record", "attach", "collapse", "svg", "diff", "heatmap", "convert"]


def yaml_module():
    try:
        import yaml
        return yaml
    except ImportError:
        jvmtest.require(False, "python3-yaml missing (scripts/deps.sh installs it)")


def load_docs(name):
    yaml = yaml_module()
    with open(os.path.join(K8S, name)) as f:
        return [d for d in yaml.safe_load_all(f) if d]


def pod_spec(doc):
    """The pod template's spec of a workload object, or a Pod's spec."""
    if doc["kind"] == "Pod":
        return doc["spec"]
    if doc["kind"] == "CronJob":
        return doc["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    return doc["spec"]["template"]["spec"]


def readme_capabilities():
    """The capabilities docs/always-on.md "Containers and sidecars" lists, as Kubernetes
    names them (BPF, PERFMON, ...): the first column of its table, alternatives
    in parentheses ("or CAP_SYS_ADMIN on older kernels") left out."""
    with open(os.path.join(SRC, "docs", "always-on.md")) as f:
        text = f.read()
    m = re.search(r"^## Containers and sidecars\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    assert m, "docs/always-on.md has no '## Containers and sidecars' section"
    caps = []
    for line in m.group(1).splitlines():
        if not line.startswith("| `CAP_"):
            continue
        first = re.sub(r"\([^)]*\)", "", line.split("|")[1])
        caps += [c[len("CAP_"):] for c in re.findall(r"CAP_[A-Z_]+", first)]
    assert caps, "no capability table in docs/always-on.md 'Containers and sidecars'"
    return caps


def help_options(text):
    """Options of a --help text: {name: takes_value} for each spelling (-o and
    --output) on the option lines (indented 2 to 6 spaces, the option first,
    its description after two spaces), a value when an UPPERCASE word follows."""
    opts = {}
    for line in text.splitlines():
        m = re.match(r"^ {2,6}(-\S.*?)(?: {2,}|$)", line)
        if not m:
            continue
        tokens = m.group(1).split()
        names = [t.rstrip(",") for t in tokens if re.match(r"^(-[A-Za-z]|--[a-z][\w-]*),?$", t)]
        takes = any(re.match(r"^[A-Z]", t) for t in tokens)
        for n in names:
            opts[n] = takes
    return opts


class ManifestTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        jvmtest.require(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        cls.record_help = subprocess.run([JFLAME, "record", "--help"], capture_output=True, text=True).stdout
        cls.caps = readme_capabilities()

    def jflame_container(self, spec, where):
        names = [c["name"] for c in spec["containers"]]
        self.assertIn("jflame", names, "%s: no container named jflame" % where)
        return [c for c in spec["containers"] if c["name"] == "jflame"][0]

    def check_common(self, doc, where):
        spec = pod_spec(doc)
        c = self.jflame_container(spec, where)
        sc = c.get("securityContext", {})
        # capabilities: exactly the docs' table's (all others dropped)
        caps = sc.get("capabilities", {})
        self.assertEqual(sorted(caps.get("add", [])), sorted(self.caps),
                         "%s: capabilities.add differ from the table in docs/always-on.md" % where)
        self.assertEqual(caps.get("drop"), ["ALL"], "%s: the default capabilities are not dropped" % where)
        self.assertFalse(sc.get("privileged", False), "%s: privileged" % where)
        self.assertEqual(sc.get("runAsUser"), 0, "%s: jflame runs as root (with only those capabilities)" % where)
        # bpf() and perf_event_open() through the runtime's seccomp profile
        self.assertEqual(sc.get("seccompProfile", {}).get("type"), "Unconfined", where)
        # every container has resource requests and limits (cpu and memory)
        for k in spec["containers"]:
            for kind in ("requests", "limits"):
                got = k.get("resources", {}).get(kind, {})
                self.assertTrue({"cpu", "memory"} <= set(got), "%s: container %s has no %s cpu+memory: %r"
                                % (where, k["name"], kind, got))
        # the outputs' volume, mounted at /out
        mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}
        self.assertIn("/out", mounts, "%s: nothing mounted at /out" % where)
        vols = {v["name"]: v for v in spec.get("volumes", [])}
        self.assertIn(mounts["/out"], vols, "%s: /out's volume %r is not defined" % (where, mounts["/out"]))
        vol = vols[mounts["/out"]]
        self.assertTrue("emptyDir" in vol or "hostPath" in vol, "%s: /out is neither emptyDir nor hostPath: %r"
                        % (where, vol))
        self.assertFalse(any(m.get("readOnly") for m in c.get("volumeMounts", []) if m["mountPath"] == "/out"))
        return c, spec

    def check_command(self, c, where):
        argv = list(c.get("command", [])) + list(c.get("args", []))
        self.assertTrue(argv, "%s: the jflame container has no command" % where)
        self.assertEqual(os.path.basename(argv[0]), "jflame", "%s: %r does not run jflame" % (where, argv))
        self.assertTrue(argv[0] == "jflame" or argv[0] == "/opt/jflame/bin/jflame",
                        "%s: %s is not where the image has jflame" % (where, argv[0]))
        self.assertEqual(argv[1], "record", where)
        opts = help_options(self.record_help)
        for must in ("-a", "--window", "--keep", "-o"):
            self.assertIn(must, opts, "jflame record --help does not list %s:\n%s" % (must, self.record_help))
        seen, outputs, i = {}, [], 2
        rest = argv[2:]
        while i < len(argv):
            a = argv[i]
            name, eq, val = a.partition("=") if a.startswith("--") else (a, "", "")
            self.assertIn(name, opts, "%s: %s is not an option of jflame record (its --help)" % (where, a))
            if opts[name] and not eq:
                self.assertLess(i + 1, len(argv), "%s: %s wants a value" % (where, a))
                val = argv[i + 1]
                i += 1
            seen[name] = val
            if name in ("-o", "--output"):
                outputs.append(val)
            i += 1
        self.assertTrue("-a" in seen or "--all-cpus" in seen, "%s: not a whole-namespace recording (-a): %r" % (where, argv))
        self.assertEqual(seen.get("--window"), "30", "%s: %r" % (where, argv))
        self.assertEqual(seen.get("--keep"), "20", "%s: %r" % (where, argv))
        self.assertEqual(outputs, ["/out/cpu-%t.pb.gz"], "%s: %r" % (where, argv))
        self.assertNotIn("-d", seen, "%s: an always-on recording has no duration" % where)
        return rest

    def run_command(self, rest, where):
        """The manifest's command line itself, as root, writing into a scratch
        /out, for 2 s (the window is still 30 s: the last one is written at the end)."""
        jvmtest.require(os.geteuid() == 0, "running jflame record -a needs root")
        out = tempfile.mkdtemp(prefix="jflame-deploy-")
        self.addCleanup(shutil.rmtree, out, True)
        args = [a.replace("/out/", out + "/") for a in rest]
        r = subprocess.run([JFLAME, "record"] + args + ["-d", "2"], capture_output=True, text=True, timeout=60,
                           stdin=subprocess.DEVNULL, env=dict(os.environ, JFLAME_AGENT=jvmtest.AGENT))
        self.assertEqual(r.returncode, 0, "%s: jflame record %s: %s" % (where, " ".join(args), r.stderr))
        files = glob.glob(os.path.join(out, "cpu-*.pb.gz"))
        self.assertEqual(len(files), 1, (os.listdir(out), r.stderr))
        self.assertRegex(os.path.basename(files[0]), r"^cpu-\d{8}T\d{6}Z\.pb\.gz$")
        self.assertIn("window 1 from", r.stderr)

    def test_sidecar(self):
        docs = load_docs("sidecar.yaml")
        self.assertEqual(len(docs), 1)
        doc = docs[0]
        self.assertIn(doc["kind"], ("Pod", "Deployment", "StatefulSet", "ReplicaSet", "Job"))
        c, spec = self.check_common(doc, "sidecar.yaml")
        self.assertIs(spec.get("shareProcessNamespace"), True, "sidecar.yaml: the pod does not share its pid namespace")
        self.assertFalse(spec.get("hostPID", False), "sidecar.yaml: a sidecar does not need the host's pids")
        self.assertGreaterEqual(len(spec["containers"]), 2, "sidecar.yaml: no application container beside jflame")
        rest = self.check_command(c, "sidecar.yaml")
        self.run_command(rest, "sidecar.yaml")

    def test_daemonset(self):
        docs = load_docs("daemonset.yaml")
        self.assertEqual(len(docs), 1)
        doc = docs[0]
        self.assertEqual(doc["kind"], "DaemonSet")
        c, spec = self.check_common(doc, "daemonset.yaml")
        self.assertIs(spec.get("hostPID"), True, "daemonset.yaml: hostPID is not set")
        vol = [v for v in spec["volumes"] if v["name"] == [m["name"] for m in c["volumeMounts"]
                                                               if m["mountPath"] == "/out"][0]][0]
        self.assertIn("hostPath", vol, "daemonset.yaml: profiles should outlive the pod (hostPath)")
        self.check_command(c, "daemonset.yaml")

    def test_kubernetes_schema(self):
        """Every object in deploy/k8s against Kubernetes' OpenAPI schemas (kubernetes-models, ajv) + strict."""
        node = shutil.which("node")
        jvmtest.require(node, "node missing (scripts/deps.sh installs nodejs)")
        k8s = os.path.join(SRC, "tests", "integration", "k8s")
        jvmtest.require(os.path.isdir(os.path.join(k8s, "node_modules", "kubernetes-models")),
                        "kubernetes-models not installed in %s (scripts/deps.sh runs npm ci there)" % k8s)
        docs = []
        for path in sorted(glob.glob(os.path.join(K8S, "*.yaml"))):
            docs += [{"file": os.path.relpath(path, SRC), "doc": d} for d in load_docs(os.path.basename(path))]
        self.assertGreaterEqual(len(docs), 2)
        r = subprocess.run([node, os.path.join(k8s, "validate.mjs")], input=json.dumps(docs),
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(r.stdout.count("valid "), len(docs), r.stdout)
        # and it does catch what it should: a misspelt field, a bad quantity
        bad = json.loads(json.dumps(docs[0]))
        spec = pod_spec(bad["doc"])
        spec["shareProcessNamespce"] = True
        spec["containers"][0]["resources"]["limits"]["cpu"] = "lots"
        r = subprocess.run([node, os.path.join(k8s, "validate.mjs")], input=json.dumps([bad]),
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
        self.assertIn("shareProcessNamespce: unknown field", r.stdout)
        self.assertIn('must match format "quantity"', r.stdout)

    def test_help_options_parser(self):
        opts = help_options(self.record_help)
        self.assertTrue(opts["--window"] and opts["-o"] and opts["--output"] and opts["--keep"])
        self.assertFalse(opts["-a"] or opts["--all-cpus"] or opts["--no-attach"])


class InstallTest(unittest.TestCase):
    """cmake --install of this build: the relocatable tree."""

    @classmethod
    def setUpClass(cls):
        jvmtest.require(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        cls.build = os.path.dirname(os.path.dirname(os.path.realpath(JFLAME)))
        jvmtest.require(os.path.isfile(os.path.join(cls.build, "cmake_install.cmake")),
                        "no cmake_install.cmake in %s" % cls.build)
        cls.tmp = tempfile.mkdtemp(prefix="jflame-install-")
        os.chmod(cls.tmp, 0o755)
        cls.prefix = os.path.join(cls.tmp, "some", "where")
        r = subprocess.run(["cmake", "--install", cls.build, "--prefix", cls.prefix],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, True)

    def test_layout(self):
        files = sorted(os.path.relpath(os.path.join(d, f), self.prefix)
                       for d, _, fs in os.walk(self.prefix) for f in fs)
        docs = sorted("share/doc/jflame/docs/" + os.path.basename(p)
                      for p in glob.glob(os.path.join(SRC, "docs", "*.md")))
        self.assertTrue(docs, "no docs/*.md in %s" % SRC)
        pages = sorted(["share/man/man1/jflame.1"] + ["share/man/man1/jflame-%s.1" % s for s in SUBCOMMANDS])
        self.assertEqual(files, ["bin/jflame", "lib/libjflame-agent.so", "share/doc/jflame/README.md"] + docs + pages)
        self.assertTrue(os.access(os.path.join(self.prefix, "bin/jflame"), os.X_OK))

    def test_installed_jflame_finds_its_agent_in_lib(self):
        jvmtest.check_setup()
        jvm = Jvm(["hot", "30000"])
        self.addCleanup(jvm.cleanup)
        env = {k: v for k, v in os.environ.items() if k != "JFLAME_AGENT"}
        r = subprocess.run([os.path.join(self.prefix, "bin/jflame"), "attach", str(jvm.pid)], capture_output=True,
                           text=True, timeout=60, env=env, stdin=subprocess.DEVNULL)
        self.assertEqual(r.returncode, 0, r.stderr)
        agent = os.path.realpath(os.path.join(self.prefix, "lib/libjflame-agent.so"))
        with open("/proc/%d/maps" % jvm.pid) as f:
            self.assertIn(agent, f.read(), "the JVM did not map the installed agent: " + r.stderr)

    def man_path(self, page):
        return os.path.join(self.prefix, "share/man/man1", page + ".1")

    def test_man_pages_render_and_have_the_version(self):
        version = subprocess.run([JFLAME, "--version"], capture_output=True, text=True).stdout.split()[-1]
        groff = shutil.which("groff")
        jvmtest.require(groff, "groff missing")
        for page in ["jflame"] + ["jflame-" + s for s in SUBCOMMANDS]:
            with open(self.man_path(page)) as f:
                src = f.read()
            m = re.search(r'^\.TH %s "?1"? "[^"]*" "jflame ([^"]+)"' % re.escape(page.upper()), src, re.M)
            self.assertTrue(m, "no .TH line with the version in " + page)
            self.assertEqual(m.group(1), version, "%s.1's .TH version differs from jflame --version" % page)
            r = subprocess.run([groff, "-man", "-ww", "-z", self.man_path(page)],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual((r.returncode, r.stderr), (0, ""), "groff warnings in " + page)

    def test_man_pages_document_every_option(self):
        for sub in SUBCOMMANDS:
            with open(self.man_path("jflame-" + sub)) as f:
                src = f.read().replace("\\-", "-")
            src = re.sub(r"\\f[BIRP]", "", src)
            text = subprocess.run([JFLAME, sub, "--help"], capture_output=True, text=True).stdout
            missing = [o for o in help_options(text) if o not in ("-h", "--help")
                       and not re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(o), src)]
            self.assertEqual(missing, [], "jflame %s --help options not in jflame-%s.1" % (sub, sub))


if __name__ == "__main__":
    jvmtest.main()
