# jfr_check.py - reading jflame's .jfr files back with the JDK's `jfr` tool (the referee
# of test_jfr_cli.py and tests/integration/test_jfr.py): events as JSON, the summary's
# counts, and the folded stacks rebuilt by the rules in docs/toolkit.md.
import codecs
import collections
import json
import os
import re
import subprocess
from decimal import Decimal

JFR = os.environ.get("JFLAME_JFR_TOOL", "/usr/lib/jvm/java-17-openjdk-amd64/bin/jfr")
MARKS = {"Interpreted": "_[0]", "JIT compiled": "_[j]", "Inlined": "_[i]", "Kernel": "_[k]"}
PROCESS_ROOT = re.compile(r"^\[[0-9]+\] ")
# jflame's rule for bytes that are not UTF-8: each byte one U+FFFD
codecs.register_error("jflame-bytes", lambda e: ("\ufffd", e.start + 1))


def jfr_events(path, *types):
    """The events of types in path, as `jfr print --json` gives them (whole stacks)."""
    r = subprocess.run([JFR, "print", "--json", "--stack-depth", "100000", "--events", ",".join(types), path],
                       capture_output=True, timeout=300)
    assert r.returncode == 0 and not r.stderr, r.stderr.decode()
    return json.loads(r.stdout)["recording"]["events"]


def jfr_summary(path):
    """{event type: count} from `jfr summary`."""
    r = subprocess.run([JFR, "summary", path], capture_output=True, timeout=300)
    assert r.returncode == 0 and not r.stderr, r.stderr.decode()
    out = {}
    for line in r.stdout.decode().splitlines():
        f = line.split()
        if len(f) == 3 and f[1].isdigit():
            out[f[0]] = int(f[1])
    return out


def frame_name(fr):
    """A frame as jflame folds it: Java frames class.method plus the mark of their type,
    kernel frames plus _[k], other frames their method's name."""
    m = fr["method"]
    cls = m["type"]["name"] if m["type"] else ""
    name = (cls + "." if cls else "") + m["name"]
    return name + MARKS.get(fr["type"], "")


def rebuild(ev, thread_field, class_field=None, mark=None):
    """The folded stack of one event: its frames root first, the allocated or monitor
    class back as the leaf. A stack starting with jflame's roots ([Pod]/[Con] frames,
    then "[PID] name", then the thread) keeps them as frames: the event's thread must be
    that thread."""
    v = ev["values"]
    frames = [frame_name(f) for f in reversed(v["stackTrace"]["frames"])]
    i = 0
    while i < len(frames) and frames[i].startswith(("[Pod]", "[Con]")):
        i += 1
    if i + 1 < len(frames) and PROCESS_ROOT.match(frames[i]):
        assert v[thread_field] and v[thread_field]["javaName"] == frames[i + 1], (v[thread_field], frames)
    if class_field and v[class_field]:
        frames.append(v[class_field]["name"] + mark)
    return ";".join(frames)


def folded_counts(data):
    """{stack: count} of folded text (each byte that is not UTF-8 as U+FFFD)."""
    out = collections.Counter()
    for line in data.decode("utf-8", "jflame-bytes").splitlines():
        if line.strip():
            stack, n = line.rsplit(" ", 1)
            out[stack] += int(n)
    return out


def span_ns(text):
    """An ISO-8601 duration ("PT0.000123S", "PT1M2.5S") as nanoseconds."""
    m = re.fullmatch(r"PT(?:(\d+)H)?(?:(\d+)M)?(?:([\d.]+)S)?", text)
    assert m, text
    h, mi, s = (Decimal(x or 0) for x in m.groups())
    return int((h * 3600 + mi * 60 + s) * 1000000000)
