# test_container_e2e.py - the container image end to end. ctest: first JDK only;
# ctest: not under sanitizers (the image builds its own Release jflame)
#
# scripts/image.sh --test-app builds (or reuses: rootfs tarballs cached in
# /var/cache/jflame-image, podman's layer cache) localhost/jflame:latest and
# localhost/jflame-testapp:latest (a plain OpenJDK 17 JRE image, none of
# jflame's libraries, with the examples jar). The app container runs the
# examples' hot workload as user nobody; a jflame container records it with
# `jflame record -a -d 10 -o /out/cpu.folded`, /out a host directory, with the
# securityContext of deploy/k8s/*.yaml: docs/always-on.md's capabilities and no others
# (--cap-drop=ALL), no new privileges, a read-only root, seccomp unconfined.
#
#   SidecarTest    --pid=container:APP: the pod's pid namespace, as
#                  deploy/k8s/sidecar.yaml (shareProcessNamespace); also: only
#                  the pod's processes are recorded, by the pids of its /proc
#   HostPidTest    --pid=host, as deploy/k8s/daemonset.yaml (hostPID)
#
# Each asserts: the output is in the volume; the JVM's stacks are rooted in
# [Con]<the app container's id>; Java frames are named (_[j], _[0]), the hot
# method among them; nothing was copied into the app
# container or loaded into its JVM (agentless), and the hot thread is named
# in full from the JVM's memory, not by its 15-character comm.
#
# Podman on this kind of host (Debian 12, cgroup v1 with a cgroup v2 hierarchy
# beside it, root without CAP_SYS_RESOURCE) needs flags, which scripts/image.sh
# works out and prints ("podman: ..."), and this test uses:
#   --cgroup-manager=cgroupfs   no systemd managing the containers' cgroups
#   --runtime=runc              crun refuses a hybrid layout whose v2 side holds a
#                               controller ("cgroups in hybrid mode not supported,
#                               drop all controllers from cgroupv2"), even with
#                               --cgroups=disabled; runc runs it
#   --ulimit=nofile=H:H --ulimit=nproc=N:N
#                               podman's default RLIMIT_NOFILE (1048576) is above
#                               the hard limit and cannot be raised without
#                               CAP_SYS_RESOURCE ("setrlimit RLIMIT_NOFILE:
#                               Operation not permitted")
# and for jflame's container:
#   --security-opt seccomp=unconfined   podman's default profile allows bpf() and
#                               perf_event_open() only with CAP_SYS_ADMIN
# No registry is reached: everything comes from Debian's archive (mmdebstrap).
# Under CI=true a missing or broken podman fails SidecarTest and HostPidTest
# with the reason (image.sh's or podman's own words, once: the other tests
# repeat it); they never skip.
#
#   MultiArchTest  scripts/image.sh --arm64 (on an x86-64 host: the same call builds
#                  both): the arm64 image runs under qemu-user as aarch64, holds
#                  AArch64 machine code, and draws the same SVG byte for byte as the
#                  x86-64 image from the same folded input; the multi-arch OCI
#                  archive is an image index of linux/amd64 and linux/arm64.
#
#   UnshareSidecarTest   the sidecar's pid namespace without any container
#                  runtime: the JVM in namespaces made with unshare, jflame
#                  entering its pid namespace (nsenter) with its own /proc.
#                  It runs whether podman works or not.
import json
import os
import platform
import re
import shutil
import subprocess
import tempfile
import time
import unittest

import jvmtest
import test_container
from jvmtest import read_folded

SRC = jvmtest.SOURCE_DIR
HOT_THREAD = "jflame-hot-worker-thread-with-a-long-name"
SPIN = "jflame/examples/Workload.spin"
RECORD_SECONDS = 10


def readme_capabilities():
    import test_deploy
    return test_deploy.readme_capabilities()


class Podman:
    """scripts/image.sh's images and the podman flags it found for this host."""
    built = None
    failed = None  # why podman cannot be used here: said once, by every test that needs it

    @classmethod
    def get(cls):
        if cls.failed is not None:
            raise cls.failed
        if cls.built is None:
            try:
                cls.built = cls()
            except unittest.SkipTest as e:
                cls.failed = e
                raise
            except AssertionError as e:
                cls.failed = AssertionError("%s\n(no container runtime to test with: UnshareSidecarTest still tests the "
                                            "sidecar's pid namespace, made with unshare and nsenter)" % e)
                raise cls.failed from None
        return cls.built

    def __init__(self):
        jvmtest.require(os.geteuid() == 0, "the container test needs root (rootful podman, eBPF)")
        for tool, pkg in (("podman", "podman"), ("mmdebstrap", "mmdebstrap")):
            jvmtest.require(shutil.which(tool), "%s missing (scripts/deps.sh installs %s)" % (tool, pkg))
        self.archive_dir = tempfile.mkdtemp(prefix="jflame-e2e-image-")
        t0 = time.monotonic()
        # on x86-64 the arm64 image and the manifest list of both too (MultiArchTest)
        self.arm64 = platform.machine() == "x86_64"
        r = subprocess.run(["bash", os.path.join(SRC, "scripts", "image.sh"), "--test-app"] +
                           (["--arm64"] if self.arm64 else []), capture_output=True,
                           text=True, timeout=3000, stdin=subprocess.DEVNULL,
                           env=dict(os.environ, JFLAME_IMAGE_OUT=self.archive_dir))
        self.build_seconds = time.monotonic() - t0
        if r.returncode != 0:
            raise AssertionError("scripts/image.sh --test-app failed (%d):\n%s" % (r.returncode, (r.stdout + r.stderr)[-4000:]))
        self.image_out = r.stdout
        m = re.search(r"^podman: (\S+)((?: \S+)*?) run((?: \S+)*?) \.\.\.$", r.stdout, re.M)
        assert m, "scripts/image.sh did not print its podman flags:\n" + r.stdout
        self.podman = [m.group(1)] + m.group(2).split()
        self.run_flags = m.group(3).split()
        m = re.search(r"^oci-archive: (\S+)$", r.stdout, re.M)
        assert m and os.path.getsize(m.group(1)) > 1000000, r.stdout
        self.archive = m.group(1)
        m = re.search(r"^oci-archive \(multi-arch\): (\S+)", r.stdout, re.M)
        self.multiarch = m.group(1) if m else None
        # can podman run a container here at all?
        r = self.run_cmd("run", "--rm", "--network=none", *self.run_flags, "localhost/jflame:latest", "--version")
        if r.returncode != 0:
            raise AssertionError("podman cannot run a container here (%s run ... localhost/jflame:latest --version): %s"
                                 % (" ".join(self.podman), r.stderr.strip()))
        self.version = r.stdout.strip()

    def run_cmd(self, *args, timeout=120):
        return subprocess.run(self.podman + list(args), capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL)

    def cleanup(self):
        shutil.rmtree(self.archive_dir, True)


class ContainerCase:
    """The tests; SidecarTest and HostPidTest run them with their pid namespace."""
    pid_mode = None  # "container" (the app's) or "host"
    result = None

    @classmethod
    def setUpClass(cls):
        cls.p = Podman.get()
        cls.caps = readme_capabilities()
        cls.tmp = tempfile.mkdtemp(prefix="jflame-e2e-")
        os.chmod(cls.tmp, 0o755)
        cls.out = os.path.join(cls.tmp, "out")
        os.mkdir(cls.out)
        cls.app = "jflame-e2e-app-%d-%s" % (os.getpid(), cls.__name__.lower())
        cls.p.run_cmd("rm", "-f", "-t", "0", cls.app)
        # the Java service: a plain JRE image, the JVM as user nobody, started without the agent
        r = cls.p.run_cmd("run", "-d", "--name", cls.app, "--network=none", "--user", "65534:65534",
                          *cls.p.run_flags, "localhost/jflame-testapp:latest",
                          "jflame.examples.Workload", "hot", "300000")
        assert r.returncode == 0, "the app container did not start: " + r.stderr
        cls.app_id = r.stdout.strip()
        deadline = time.monotonic() + 60
        while "jflame-workload: ready" not in cls.p.run_cmd("logs", cls.app).stdout:
            state = cls.p.run_cmd("inspect", "-f", "{{.State.Status}}", cls.app).stdout.strip()
            assert state == "running" and time.monotonic() < deadline, \
                "the app container is %s and not ready: %s" % (state, cls.p.run_cmd("logs", cls.app).stderr[-2000:])
            time.sleep(0.2)
        cls.app_pid = int(cls.p.run_cmd("inspect", "-f", "{{.State.Pid}}", cls.app).stdout)
        # the JVM's pid as jflame sees it: the host's, or the pod's (the last NSpid field)
        cls.jvm_pid = cls.app_pid
        if cls.pid_mode != "host":
            with open("/proc/%d/status" % cls.app_pid) as f:
                cls.jvm_pid = int([l.split()[-1] for l in f if l.startswith("NSpid:")][0])
        cls.cidfile = os.path.join(cls.tmp, "jflame.cid")
        pid = "host" if cls.pid_mode == "host" else "container:" + cls.app
        # a sidecar has a cgroup namespace of its own (Kubernetes on cgroup v2): the
        # app's cgroup reads /../libpod-<id> there
        cgroupns = "--cgroupns=" + ("host" if cls.pid_mode == "host" else "private")
        cls.argv = ["run", "--rm", "--name", cls.app + "-jflame", "--cidfile", cls.cidfile, "--network=none", "--pid=" + pid, cgroupns,
                    *cls.p.run_flags, "--cap-drop=ALL", "--cap-add=" + ",".join(cls.caps),
                    "--security-opt", "no-new-privileges", "--security-opt", "seccomp=unconfined", "--read-only",
                    "-v", cls.out + ":/out", "localhost/jflame:latest",
                    "record", "-a", "-d", str(RECORD_SECONDS), "-o", "/out/cpu.folded"]
        r = cls.p.run_cmd(*cls.argv, timeout=RECORD_SECONDS + 120)
        cls.result = r
        cls.command = " ".join(cls.p.podman + cls.argv)

    @classmethod
    def tearDownClass(cls):
        if getattr(cls, "app", None):
            cls.p.run_cmd("rm", "-f", "-t", "0", cls.app)
        if getattr(cls, "tmp", None):
            shutil.rmtree(cls.tmp, True)

    def context(self):
        return "\n$ %s\n(exit %d) %s" % (self.command, self.result.returncode, self.result.stderr.strip()[-3000:])

    def stacks(self):
        self.assertEqual(self.result.returncode, 0, "jflame's container failed" + self.context())
        path = os.path.join(self.out, "cpu.folded")
        self.assertTrue(os.path.isfile(path), "no cpu.folded in the /out volume: %s%s"
                        % (os.listdir(self.out), self.context()))
        stacks = read_folded(path)
        self.assertTrue(stacks, "cpu.folded is empty" + self.context())
        return stacks

    def jvm_stacks(self, stacks):
        roots = {}
        for frames, n in stacks:
            roots[";".join(frames[:2])] = roots.get(";".join(frames[:2]), 0) + n
        # the app's JVM (on a shared host, --pid=host also records other JVMs, outside the container)
        jvm = [(f, n) for f, n in stacks if "[%d] java" % self.jvm_pid in f[:3]]
        top = sorted(roots.items(), key=lambda kv: -kv[1])[:8]
        why = ""
        if any(k.startswith("[%d] ?" % self.app_pid) for k in roots):
            why = ("\njflame named the JVM by its host pid %d, which its own pid namespace (the app's, where the JVM "
                   "is pid 1) does not have: '[%d] ?', no Java frames. The eBPF sampler reports the kernel's "
                   "(initial namespace's) pids; in a sidecar they must be translated to the sidecar's namespace "
                   "(bpf_get_ns_current_pid_tgid) and processes outside it left out." % (self.app_pid, self.app_pid))
        self.assertTrue(jvm, "no stack of the app's JVM; the roots recorded (samples): %s%s%s"
                        % (top, why, self.context()))
        return jvm, top

    def test_output_in_volume_and_rooted_in_container(self):
        jvm, top = self.jvm_stacks(self.stacks())
        con = "[Con]" + self.app_id[:12]
        rooted = sum(n for f, n in jvm if f[0] == con)
        total = sum(n for _, n in jvm)
        self.assertEqual(rooted, total, "JVM stacks not rooted in %s: %s%s"
                         % (con, sorted({f[0] for f, _ in jvm}), self.context()))
        self.assertGreater(total, RECORD_SECONDS * 99 * 0.5, "the busy JVM got few samples" + self.context())

    def test_java_frames_named(self):
        jvm, _ = self.jvm_stacks(self.stacks())
        frames = [x for f, _ in jvm for x in f]
        self.assertTrue(any(x.endswith("_[j]") for x in frames), "no JIT-compiled Java frame (_[j])" + self.context())
        self.assertTrue(any(x.endswith("_[0]") for x in frames), "no interpreted Java frame (_[0])" + self.context())
        spin = sum(n for f, n in jvm if any(x.startswith(SPIN) for x in f))
        total = sum(n for _, n in jvm)
        self.assertGreater(spin, total * 0.8, "the hot method %s is in %d of %d JVM samples%s"
                           % (SPIN, spin, total, self.context()))

    def test_nothing_loaded_into_the_jvm(self):
        """Agentless: nothing copied into the app container or loaded into its JVM; its Java frames
        and threads are named in full from the JVM's memory all the same."""
        jvm, _ = self.jvm_stacks(self.stacks())
        self.assertNotRegex(self.result.stderr, r"loaded the agent|agent copied", self.context())
        self.assertTrue(any(HOT_THREAD in f for f, _ in jvm), "no thread named %s (its Java name)%s"
                        % (HOT_THREAD, self.context()))


class SidecarTest(ContainerCase, unittest.TestCase):
    pid_mode = "container"

    def test_only_the_pods_processes(self):
        """In the pod's pid namespace jflame records the pod's processes only, each named."""
        stacks = self.stacks()
        with open(self.cidfile) as f:
            cons = {"[Con]" + self.app_id[:12], "[Con]" + f.read().strip()[:12]}
        outside = sorted({";".join(f[:2]) for f, _ in stacks if f[0] not in cons})
        self.assertFalse(outside, "stacks of processes outside the pod (its containers: %s)%s"
                         % (sorted(cons), self.context()))
        unnamed = sorted({x for f, _ in stacks for x in f[:3] if re.match(r"^\[\d+\] \?$", x)})
        self.assertFalse(unnamed, "processes not found in the sidecar's /proc" + self.context())


class HostPidTest(ContainerCase, unittest.TestCase):
    pid_mode = "host"


class UnshareSidecarTest(test_container.ContainerCase):
    """No container runtime: the sidecar's situation made with unshare and
    nsenter. The JVM (user nobody, no agent) in new pid and mount namespaces
    and a pod's cgroup; jflame in the JVM's pid namespace with its own /proc,
    as a sidecar with shareProcessNamespace. Runs whether or not podman works
    here, so the pid namespace handling is tested where no runtime can run."""

    def test_sidecar_in_the_jvms_pid_namespace(self):
        jvmtest.require(shutil.which("nsenter") is not None, "nsenter (util-linux) missing")
        pod, con, leaf = self.pod_cgroup()
        jvm, pid = self.container_jvm(user=("nobody", "nogroup"), millis=120000)
        with open(os.path.join(leaf, "cgroup.procs"), "w") as f:
            f.write(str(pid))
        folded = os.path.join(self.tmp, "sidecar.folded")
        argv = ["nsenter", "--target", str(pid), "--pid", "--", "unshare", "--mount", "--propagation", "private",
                "--mount-proc", "--", test_container.JFLAME, "record", "-a", "-d", "5", "-o", folded]
        r = subprocess.run(argv, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                           env=dict(os.environ, JFLAME_AGENT=jvmtest.AGENT))
        context = "\n$ %s\n(exit %d) %s" % (" ".join(argv), r.returncode, r.stderr.strip()[-3000:])
        self.assertEqual(r.returncode, 0, context)
        # agentless: nothing copied into the JVM's /tmp, nothing loaded
        self.assertNotRegex(r.stderr, r"loaded the agent|agent copied|could not load the agent|attach listener", context)
        self.assertFalse(os.path.exists("/proc/%d/root/tmp/jflame-1.status" % pid), context)
        stacks = read_folded(folded)
        roots = sorted({";".join(f[:3]) for f, _ in stacks})
        # the JVM is pid 1 there; nothing of the host's (however busy) is recorded
        jvm_stacks = [(f, n) for f, n in stacks if f[:3] == ["[Pod]" + pod, "[Con]" + con[:12], "[1] java"]]
        self.assertTrue(jvm_stacks, "no stack of the JVM as pid 1 in [Pod]%s;[Con]%s: %s%s"
                        % (pod, con[:12], roots, context))
        outside = [x for x in roots if not x.startswith("[Pod]" + pod)]
        self.assertFalse(outside, "processes outside the JVM's pid namespace recorded" + context)
        frames = [x for f, _ in jvm_stacks for x in f]
        self.assertTrue(any(x.endswith("_[j]") for x in frames), "no JIT-compiled Java frame" + context)
        total = sum(n for _, n in jvm_stacks)
        spin = sum(n for f, n in jvm_stacks if HOT_THREAD in f and any(x.startswith(SPIN) for x in f))
        self.assertGreater(total, 50, context)
        self.assertGreater(spin, total * 0.8, "the hot method in the hot thread: %d of %d%s" % (spin, total, context))


class MultiArchTest(unittest.TestCase):
    """scripts/image.sh --arm64: the arm64 image beside the x86-64 one, and one name for both."""

    @classmethod
    def setUpClass(cls):
        cls.p = Podman.get()
        jvmtest.require(cls.p.arm64, "the arm64 image is built beside the x86-64 one (an x86-64 host)")
        cls.tmp = tempfile.mkdtemp(prefix="jflame-multiarch-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, True)

    def podman(self, *args):
        r = self.p.run_cmd(*args)
        self.assertEqual(r.returncode, 0, "%s %s: %s" % (" ".join(self.p.podman), " ".join(args), r.stderr[-2000:]))
        return r.stdout

    def test_index_of_both_platforms(self):
        """The multi-arch OCI archive is an image index of linux/amd64 and linux/arm64,
        each the image podman holds under its own tag (skopeo reads it)."""
        self.assertTrue(self.p.multiarch and os.path.getsize(self.p.multiarch) > 1000000, self.p.image_out)
        jvmtest.require(shutil.which("skopeo"), "skopeo missing (scripts/deps.sh installs it)")
        r = subprocess.run(["skopeo", "inspect", "--raw", "oci-archive:" + self.p.multiarch], capture_output=True,
                           text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        index = json.loads(r.stdout)
        self.assertEqual(index["mediaType"], "application/vnd.oci.image.index.v1+json")
        platforms = sorted("%s/%s" % (m["platform"]["os"], m["platform"]["architecture"]) for m in index["manifests"])
        self.assertEqual(platforms, ["linux/amd64", "linux/arm64"])
        for tag, arch in (("latest", "amd64"), ("latest-arm64", "arm64")):
            self.assertEqual(self.podman("image", "inspect", "--format", "{{.Os}}/{{.Architecture}}",
                                         "localhost/jflame:" + tag).strip(), "linux/" + arch)

    def test_arm64_image_is_arm64(self):
        """Its jflame and agent are AArch64 code, and it runs (qemu-user) as aarch64."""
        run = ["run", "--rm", "--network=none", *self.p.run_flags, "--platform", "linux/arm64"]
        self.assertEqual(self.podman(*run, "--entrypoint", "/usr/bin/uname", "localhost/jflame:latest-arm64",
                                     "-m").strip(), "aarch64")
        self.assertEqual(self.podman(*run, "localhost/jflame:latest-arm64", "--version").strip(), self.p.version)
        cid = self.podman("create", "--platform", "linux/arm64", "localhost/jflame:latest-arm64").strip()
        try:
            self.podman("cp", cid + ":/opt/jflame", os.path.join(self.tmp, "opt"))
        finally:
            self.p.run_cmd("rm", "-f", cid)
        for f in ("bin/jflame", "lib/libjflame-agent.so"):
            r = subprocess.run(["readelf", "-h", os.path.join(self.tmp, "opt", f)], capture_output=True, text=True,
                               env=dict(os.environ, LC_ALL="C"))
            self.assertRegex(r.stdout, r"Machine:\s+AArch64", f)

    def test_same_svg_on_both(self):
        """The same folded input drawn by each image's jflame gives the same SVG, byte for byte."""
        vol = os.path.join(self.tmp, "svg")
        os.makedirs(vol, exist_ok=True)
        with open(os.path.join(vol, "in.folded"), "w") as f:
            f.write("[7] java;jflame-hot-worker-thread-with-a-long-name;start_thread;java/lang/Thread.run_[j];"
                    "jflame/examples/Workload.spin_[j] 90\n[7] java;GC Thread#0;start_thread;G1ParTask::work 10\n"
                    "[9] kafka;main;__libc_start_call_main;do_syscall_64_[k] 5\n")
        svgs = []
        for tag, plat in (("latest", "linux/amd64"), ("latest-arm64", "linux/arm64")):
            out = "%s.svg" % tag
            self.podman("run", "--rm", "--network=none", *self.p.run_flags, "--platform", plat, "-v", vol + ":/out",
                        "localhost/jflame:" + tag, "svg", "/out/in.folded", "-o", "/out/" + out)
            with open(os.path.join(vol, out), "rb") as f:
                svgs.append(f.read())
        self.assertIn(b"<title>jflame/examples/Workload.spin (90 samples", svgs[0])
        self.assertEqual(svgs[0], svgs[1], "the arm64 image's SVG differs from the x86-64 image's")


def tearDownModule():
    if Podman.built is not None:
        Podman.built.cleanup()


if __name__ == "__main__":
    jvmtest.main()
