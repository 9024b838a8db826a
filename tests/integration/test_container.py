# test_container.py - JVMs in pseudo-containers made with unshare (own pid and
# mount namespaces, a private /tmp, the agent's host path hidden), and in a
# cgroup laid out like a Kubernetes pod's: attach and record from the host.
import glob
import os
import shutil
import signal
import subprocess
import tempfile
import time
import unittest
import uuid

import jvmtest
from jvmtest import Jvm, read_folded

JFLAME = os.environ.get("JFLAME_BIN", "")
SPIN_FOLDED = "jflame/examples/Workload.spin_[j]"
HOT_THREAD = "jflame-hot-worker-thread-with-a-long-name"


def cgroup2_root():
    with open("/proc/mounts") as f:
        for line in f:
            dev, mnt, fstype = line.split()[:3]
            if fstype == "cgroup2":
                return mnt
    return None


class ContainerCase(unittest.TestCase):
    def setUp(self):
        jvmtest.check_setup()
        jvmtest.require(os.access(JFLAME, os.X_OK), "jflame not built (JFLAME_BIN=%r)" % JFLAME)
        jvmtest.require(shutil.which("unshare") is not None, "unshare (util-linux) missing")
        jvmtest.require(os.geteuid() == 0, "container tests need root")
        self.tmp = tempfile.mkdtemp(prefix="jflame-container-")
        os.chmod(self.tmp, 0o755)
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def jflame(self, *args, timeout=120):
        env = dict(os.environ, JFLAME_AGENT=jvmtest.AGENT)
        return subprocess.run([JFLAME] + list(args), capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, env=env)

    def container_jvm(self, user=None, millis=60000):
        """Workload in new pid + mount namespaces: its own /proc, a tmpfs over the
        agent's directory so the host path shows nothing, and a private tmpfs /tmp
        (the build tree may be under /tmp: the jar is kept open as fd 3)."""
        agent_dir = os.path.dirname(os.path.realpath(jvmtest.AGENT))
        run_as = "setpriv --reuid=%s --regid=%s --clear-groups " % user if user else ""
        script = ("exec 3<'%s' && mount -t proc proc /proc && mount -t tmpfs tmpfs '%s' && "
                  "mount -t tmpfs -o mode=1777 tmpfs /tmp && exec %s\"$@\"" % (jvmtest.JAR, agent_dir, run_as))
        prefix = ["unshare", "--pid", "--fork", "--mount", "--propagation", "private", "--", "sh", "-c", script, "sh"]
        jvm = Jvm(["hot", str(millis)], jvm_flags=["-XX:+PreserveFramePointer"], prefix=prefix, cwd=self.tmp,
                  classpath="/proc/self/fd/3")
        self.addCleanup(jvm.cleanup)
        # the JVM is unshare's child (pid 1 of the new namespace)
        with open("/proc/%d/task/%d/children" % (jvm.pid, jvm.pid)) as f:
            kids = [int(x) for x in f.read().split()]
        self.assertEqual(len(kids), 1)
        pid = kids[0]
        self.addCleanup(lambda: os.kill(pid, signal.SIGKILL) if os.path.exists("/proc/%d" % pid) else None)
        with open("/proc/%d/status" % pid) as f:
            nspid = [l.split()[1:] for l in f if l.startswith("NSpid:")][0]
        self.assertEqual(nspid[-1], "1", "the JVM is pid 1 in its namespace")
        # the agent really is invisible at its host path in there
        self.assertFalse(os.path.exists("/proc/%d/root%s" % (pid, os.path.realpath(jvmtest.AGENT))))
        time.sleep(1.0)
        return jvm, pid

    def pod_cgroup(self):
        """A cgroup v2 directory laid out as kubelet and containerd make a pod's
        container (removed at cleanup): (pod uid, container id, its path)."""
        root = cgroup2_root()
        mounted = None
        if root is None:
            mounted = tempfile.mkdtemp(prefix="jflame-cg2-")
            subprocess.run(["mount", "-t", "cgroup2", "none", mounted], check=True)
            self.addCleanup(os.rmdir, mounted)
            self.addCleanup(subprocess.run, ["umount", mounted])
            root = mounted
        pod = str(uuid.uuid4())
        con = uuid.uuid4().hex + uuid.uuid4().hex
        parts = ["kubepods.slice", "kubepods-burstable.slice",
                 "kubepods-burstable-pod%s.slice" % pod.replace("-", "_"), "cri-containerd-%s.scope" % con]
        dirs = [os.path.join(root, *parts[:i + 1]) for i in range(len(parts))]
        created = [d for d in dirs if not os.path.exists(d)]
        for d in dirs:
            os.makedirs(d, exist_ok=True)

        def remove_cgroups():
            for d in reversed(created):
                for _ in range(50):
                    try:
                        os.rmdir(d)
                        break
                    except OSError:
                        time.sleep(0.1)
        self.addCleanup(remove_cgroups)
        return pod, con, dirs[-1]

    def spin_stacks(self, stacks, pid):
        return [(f, n) for f, n in stacks
                if "[%d] java" % pid in f and HOT_THREAD in f and any(x.startswith(SPIN_FOLDED) for x in f)]


class PseudoContainerTest(ContainerCase):
    def test_attach_copies_agent_and_record_names_java(self):
        jvm, pid = self.container_jvm(user=("nobody", "nogroup"))
        r = self.jflame("attach", str(pid))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("agent copied into its /tmp", r.stderr)
        root_tmp = "/proc/%d/root/tmp" % pid
        copies = glob.glob(root_tmp + "/libjflame-agent-*.so")
        self.assertEqual(len(copies), 1, os.listdir(root_tmp))
        nobody = int(subprocess.run(["id", "-u", "nobody"], capture_output=True, text=True).stdout)
        self.assertEqual(os.stat(copies[0]).st_uid, nobody, "the copy belongs to the JVM's user")
        # the JVM writes its files as pid 1 into its own /tmp
        st = jvmtest.read_status(root_tmp + "/jflame-1.status")
        self.assertEqual(st["pid"], "1")
        self.assertEqual(st["mode"], "attach")
        names = [e[2] for e in jvmtest.read_map(root_tmp + "/perf-1.map")]
        self.assertIn("Ljflame/examples/Workload;::spin", names)
        self.assertEqual(os.stat(root_tmp + "/perf-1.map").st_uid, nobody)
        # recording from outside names the Java frames
        folded = os.path.join(self.tmp, "c.folded")
        r = self.jflame("record", "-p", str(pid), "-d", "2", "-o", folded)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("loaded the agent", r.stderr)
        spin = self.spin_stacks(read_folded(folded), pid)
        self.assertGreater(sum(n for _, n in spin), 100, r.stderr)
        # a second attach reuses nothing new: already there
        r = self.jflame("attach", str(pid))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("already loaded", r.stderr)

    def test_kubernetes_cgroup_gives_pod_and_container_roots(self):
        pod, con, leaf = self.pod_cgroup()
        jvm, pid = self.container_jvm()
        with open(os.path.join(leaf, "cgroup.procs"), "w") as f:
            f.write(str(pid))
        self.addCleanup(lambda: os.kill(pid, signal.SIGKILL) if os.path.exists("/proc/%d" % pid) else None)
        with open("/proc/%d/cgroup" % pid) as f:
            self.assertIn("cri-containerd-%s.scope" % con, f.read())
        folded = os.path.join(self.tmp, "k.folded")
        r = self.jflame("record", "-p", str(pid), "-d", "2.5", "-o", folded)
        self.assertEqual(r.returncode, 0, r.stderr)
        # agentless: nothing copied into the container, nothing loaded
        self.assertNotRegex(r.stderr, r"loaded the agent|agent copied|could not load the agent|attach listener")
        self.assertFalse(glob.glob("/proc/%d/root/tmp/libjflame-agent-*.so" % pid))
        self.assertFalse(os.path.exists("/proc/%d/root/tmp/perf-1.map" % pid))
        stacks = read_folded(folded)
        self.assertTrue(stacks)
        for frames, _ in stacks:
            self.assertEqual(frames[:3], ["[Pod]%s" % pod, "[Con]%s" % con[:12], "[%d] java" % pid], frames[:4])
        spin = self.spin_stacks(stacks, pid)
        self.assertGreater(sum(n for _, n in spin), 100, r.stderr)
        self.assertTrue(all(f[3] == HOT_THREAD for f, _ in spin))
        os.kill(pid, signal.SIGKILL)
        jvm.kill()


if __name__ == "__main__":
    jvmtest.main()
