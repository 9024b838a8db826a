# hostile_target.py - a hostile process for test_hostile.py: run as root under
# `unshare --mount --propagation private`, it mounts a private /tmp, maps a file
# named libjvm.so (so jflame takes it for a JVM), runs code from another, plants
# one kind of bad file at every path jflame reads for it (the code's path too),
# drops to nobody, names itself and its threads with escape sequences and burns
# a little CPU until killed.
#
# usage: hostile_target.py SPEC_JSON   (one line of JSON on stdout when ready)
import ctypes
import json
import mmap
import os
import struct
import subprocess
import sys
import threading
import time

NOBODY = 65534
OTHER_UID = 12345  # "another user": no such account needed
SPARSE = 1 << 30
PR_SET_NAME = 15

libc = ctypes.CDLL(None, use_errno=True)


def set_name(name):
    """The calling thread's name (comm), raw bytes, at most 15 of them."""
    if libc.prctl(PR_SET_NAME, ctypes.c_char_p(name[:15]), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NAME)")


def hsperf_image(strings, longs):
    """A HotSpot hsperfdata 2.0 image (little endian) with these entries."""
    entries = b""
    for name, value in list(strings.items()) + list(longs.items()):
        nb = name.encode() + b"\0"
        nb += b"\0" * (-len(nb) % 8)
        if isinstance(value, bytes):
            data, vlen, kind = value + b"\0", len(value) + 1, b"B"
            data += b"\0" * (-len(data) % 8)
        else:
            data, vlen, kind = struct.pack("<q", value), 0, b"J"
        noff = 20
        doff = noff + len(nb)
        elen = doff + len(data)
        entries += struct.pack("<IIIcBBBI", elen, noff, vlen, kind, 0, 0, 0, doff) + nb + data
    n = len(strings) + len(longs)
    prologue = struct.pack("<4sBBBBIIqII", b"\xca\xfe\xc0\xc0", 1, 2, 0, 1, 32 + len(entries), 0, 0, 32, n)
    return prologue + entries


def sample_ring(pid, error):
    """A sample ring header that looks like an agent's (format 1), 128 KiB of records."""
    head = struct.pack("<8sIIQQiIQQ3QII", b"JFLSMP1\0", 1, 4096, 131072, 0, pid, 0, 0, 0, 0, 0, 0, 0, 0)
    head += error.encode()[:255].ljust(256, b"\0")
    return head.ljust(4096 + 131072, b"\0")


def text_range(path):
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and parts[5] == path and "x" in parts[1]:
                lo, hi = parts[0].split("-")
                return int(lo, 16), int(hi, 16)
    raise SystemExit("hostile_target: %s is not mapped executable" % path)


def write(path, data, uid=None, mode=0o644):
    with open(path, "wb") as f:
        f.write(data)
    os.chmod(path, mode)
    if uid is not None:
        os.chown(path, uid, uid)


def plant_one(kind, path, content, spec):
    """One bad file of this kind at path; content: what a plausible file would hold."""
    if os.path.lexists(path):
        os.unlink(path)
    if kind == "fifo":
        os.mkfifo(path, 0o644)
    elif kind == "canary":
        os.symlink(spec["canary_elf"] if path.endswith(".so") else spec["canary_file"], path)
    elif kind == "devzero":
        os.symlink("/dev/zero", path)
    elif kind == "sparse":
        with open(path, "wb") as f:
            f.truncate(SPARSE)
    elif kind == "foreign":
        write(path, content, uid=OTHER_UID)
    elif kind == "garbage":
        write(path, os.urandom(4096) + b"\x1b[31m\x07\n=\xff\0" * 64 + os.urandom(4096))
    else:
        raise SystemExit("hostile_target: unknown kind %r" % kind)


def main():
    spec = json.loads(sys.argv[1])
    kind, with_status = spec["kind"], spec["status"]
    pid = os.getpid()
    # read before /tmp is covered: the build tree may be under /tmp itself
    with open(spec["lib"], "rb") as f:
        lib_bytes = f.read()
    with open(spec["canary_lib"], "rb") as f:
        canary_bytes = f.read()
    # a private /tmp, writable by nobody
    subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=1777,size=64m", "hostile-tmp", "/tmp"], check=True)
    for d in ("/tmp/h", "/tmp/j", "/tmp/hsperfdata_nobody"):
        os.mkdir(d, 0o755)
        os.chown(d, NOBODY, NOBODY)
    # a file named libjvm.so stays mapped: jflame takes the process for a JVM
    # (attaches to it, reads its hsperfdata); the code it runs comes from
    # another file, whose path shows another file once loaded
    jvm = "/tmp/j/libjvm.so"
    write(jvm, lib_bytes, uid=NOBODY, mode=0o755)
    with open(jvm, "rb") as f:
        jvm_map = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)
    lib = "/tmp/h/libhostile.so"
    write(lib, lib_bytes, uid=NOBODY, mode=0o755)
    code = ctypes.CDLL(lib)
    code.hostile_spin.argtypes = [ctypes.c_ulong]
    lo, hi = text_range(lib)
    # as a container's root can: a new file system over the code's directory,
    # so /proc/PID/maps still names /tmp/h/libhostile.so (not "(deleted)") and
    # that path now leads to the bad file planted there
    subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=1777,size=8m", "hostile-h", "/tmp/h"], check=True)
    # what plausible files would hold (the foreign kind plants them as another
    # user's; the canary holds the same under its secret name)
    fake = "Fake.method"
    content = {
        "status": b"state=running\npid=%d\nmode=attached\nagent_version=1\nerror=FOREIGN-STATUS-ERROR\n" % pid,
        "events": b"# jflame events 1\n0 load %x %x %s\n" % (lo, hi - lo, fake.encode()),
        "map": b"%x %x %s\n" % (lo, hi - lo, fake.encode()),
        "samples": sample_ring(pid, "FOREIGN-RING-ERROR \x1b[31m"),
        "hsperf": hsperf_image({"sun.rt.jvmCapabilities": b"0000000000000000000000000000000000000000000000000000000000000000"},
                               {"sun.rt.createVmEndTime": 1}),
    }
    if kind == "canary":
        secret = spec["canary"].encode()
        write(spec["canary_file"], b"%x %x %s\n0 load %x %x %s\nstate=running\nerror=%s\n"
              % (lo, hi - lo, secret, lo, hi - lo, secret, secret), uid=0, mode=0o600)
        write(spec["canary_elf"], canary_bytes, uid=0, mode=0o600)
        content["lib"] = b""
    if kind == "foreign":
        content["lib"] = canary_bytes  # symbols named after the canary: must not be read from a foreign file
    paths = {
        "events": "/tmp/jflame-%d.events" % pid,
        "map": "/tmp/perf-%d.map" % pid,
        "samples": "/tmp/jflame-%d.samples" % pid,
        "hsperf": "/tmp/hsperfdata_nobody/%d" % pid,
        "lib": lib,
    }
    if with_status:
        paths["status"] = "/tmp/jflame-%d.status" % pid
    if spec.get("only"):  # one reader on its own (the code's file: symbols no perf map hides)
        paths = {what: paths[what] for what in spec["only"]}
    if kind == "foreign":  # needs root: chown to another user
        for what, path in paths.items():
            plant_one(kind, path, content[what], spec)
    os.setgroups([])
    os.setresgid(NOBODY, NOBODY, NOBODY)
    os.setresuid(NOBODY, NOBODY, NOBODY)
    if kind != "foreign":
        for what, path in paths.items():
            plant_one(kind, path, content.get(what, b""), spec)
    set_name(spec["comm"].encode("latin-1"))
    tids = []
    started = threading.Event()

    def burn(name):
        set_name(name.encode("latin-1"))
        tids.append(threading.get_native_id())
        started.set()
        while True:
            code.hostile_spin(spec["spin"])  # the GIL is released meanwhile
            time.sleep(spec["sleep"])

    for name in spec["threads"]:
        started.clear()
        threading.Thread(target=burn, args=(name,), daemon=True).start()
        started.wait(10)
    print(json.dumps({"pid": pid, "text": [lo, hi], "tids": tids,
                      "paths": {k: "/proc/%d/root%s" % (pid, v) for k, v in paths.items()}}), flush=True)
    while jvm_map:
        time.sleep(3600)


if __name__ == "__main__":
    main()
