# jfr_view.py - the JDK's view of a JFR recording (`jfr print --json`) folded the way
# async-profiler's converter folds it (`jfrconv -t -o collapsed`), for tests/data/jfr/.
"""Reads `jfr print --json --stack-depth 4096 --events TYPES FILE` and folds its events into
the stacks async-profiler's converter (one/convert/JfrToFlame + FlameGraph, `--threads`,
collapsed output) prints for the same file, so that the JDK's reading of a fixture can be
compared with the converter's stored view without the converter (which CI cannot build).

The converter's rules, as its source has them (tests/data/jfr/README.md says the same):
- a thread frame first: `[NAME tid=ID]` (ID is the thread's constant-pool key, which
  `jfr print` does not show: views are compared with `tid=` removed, see norm_threads);
- then the frames root first: Java frames `pkg/Class.method` (the class name as stored,
  slashes), and a frame's method name alone for C/C++ and kernel frames (and for
  "Native" frames of async-profiler's files, where "Native" means a C function; in the
  JDK's files it is a Java native method and keeps its class);
- the allocated class (`--alloc`, dotted, `[]` for arrays) or the lock's class (`--lock`)
  as the leaf, typed inlined (`_[i]`) or, for allocations outside a TLAB and the JDK's
  ObjectAllocationSample, kernel (`_[k]`);
- marks `_[0]` interpreted, `_[j]` JIT, `_[i]` inlined, `_[1]` C1, `_[k]` kernel, none for
  native/C++: Java frames of one method at one place in the tree are one node, marked
  inlined if >= 1/3 of its samples were inlined, else C1 if >= 1/2 C1, else interpreted if
  >= 1/2 interpreted, else JIT (FlameGraph.addChild, Frame.getType);
- the count is the number of events (profiler.WallClockSample: its `samples` field).
"""
import collections
import json
import re
import subprocess

TYPES = {"Interpreted": 0, "JIT compiled": 1, "Inlined": 2, "Native": 3, "C++": 4, "Kernel": 5,
         "C1 compiled": 6}
SUFFIX = {0: "_[0]", 1: "_[j]", 2: "_[i]", 3: "", 4: "", 5: "_[k]", 6: "_[1]"}
JAVA = (0, 1, 2, 6)
PRIMITIVES = {"B": "byte", "C": "char", "S": "short", "I": "int", "J": "long", "Z": "boolean",
              "F": "float", "D": "double"}

# the events each converter view reads (JfrConverter.collectEvents, JfrReader.readEvent)
VIEW_EVENTS = {
    "cpu": ["jdk.ExecutionSample", "jdk.NativeMethodSample", "profiler.WallClockSample"],
    "alloc": ["jdk.ObjectAllocationInNewTLAB", "jdk.ObjectAllocationOutsideTLAB",
              "jdk.ObjectAllocationSample"],
    "lock": ["jdk.JavaMonitorEnter", "jdk.ThreadPark"],
}
VIEW_EVENTS["wall"] = VIEW_EVENTS["cpu"]


def jfr_json(jfr, path, events):
    """the events of EVENTS in PATH as `jfr print --json` gives them (a list of dicts)"""
    out = subprocess.run([jfr, "print", "--json", "--stack-depth", "4096", "--events", ",".join(events),
                          path], check=True, capture_output=True).stdout
    return json.loads(out)["recording"]["events"]


def class_name(name):
    """JfrConverter.getClassName: dotted, arrays as []"""
    depth = len(name) - len(name.lstrip("["))
    base = name[depth:]
    if depth and base[:1] in PRIMITIVES:
        base = PRIMITIVES[base[:1]]
    elif depth and base.startswith("L"):
        base = base[1:-1]
    return base.replace("/", ".") + "[]" * depth


def frame_name(frame, async_profiler):
    method = frame["method"]
    kind = TYPES[frame["type"]]
    cls = (method.get("type") or {}).get("name") or ""
    name = method.get("name") or ""
    if not cls or kind in (4, 5) or (kind == 3 and async_profiler):
        return name, kind
    return (cls + "." + name if name else cls), kind


def event_weight(ev):
    if ev["type"] == "profiler.WallClockSample":
        return int(ev["values"].get("samples", 1))
    return 1


def event_parts(ev, async_profiler):
    """the event's thread frame, its frames root first as (name, type), and its class leaf
    (name, type) or None; None if it has no stack trace"""
    v = ev["values"]
    trace = v.get("stackTrace")
    if trace is None:
        return None
    thread = v.get("sampledThread") or v.get("eventThread") or {}
    name = thread.get("javaName") or thread.get("osName")
    # JfrConverter.getThreadName: async-profiler names a thread it knows no name for "[tid=N]"
    if name is None:
        name = "[tid=?]"
    thread = name if name.startswith("[tid=") else "[%s]" % name
    frames = [frame_name(f, async_profiler) for f in reversed(trace["frames"])]
    leaf = None
    if ev["type"].startswith("jdk.ObjectAllocation"):
        cls = v.get("objectClass")
        if cls:
            tlab = ev["type"] == "jdk.ObjectAllocationInNewTLAB" and int(v.get("tlabSize", 0)) != 0
            leaf = (class_name(cls["name"]), 2 if tlab else 5)
    elif ev["type"] in ("jdk.JavaMonitorEnter", "jdk.ThreadPark"):
        cls = v.get("monitorClass") or v.get("parkedClass")
        if cls:
            leaf = (class_name(cls["name"]), 2)
    return thread, frames, leaf


def event_stack(ev, async_profiler):
    """the event's frames root first as (name, type), the thread frame first, the class leaf last"""
    parts = event_parts(ev, async_profiler)
    if parts is None:
        return None
    thread, frames, leaf = parts
    return [(thread, 3)] + frames + ([leaf] if leaf else [])


def view_events(events, async_profiler, view):
    """the events the converter's VIEW takes: its event types; --cpu keeps async-profiler's
    STATE_DEFAULT samples, --wall the others; the JDK's files are read with neither flag
    (their samples are STATE_RUNNABLE)"""
    for ev in events:
        if ev["type"] not in VIEW_EVENTS[view]:
            continue
        state = (ev["values"].get("state") or {})
        state = state.get("name") if isinstance(state, dict) else state
        if async_profiler and view == "cpu" and state != "STATE_DEFAULT":
            continue
        if async_profiler and view == "wall" and state == "STATE_DEFAULT":
            continue
        yield ev


class Node:
    __slots__ = ("kids", "total", "self", "by_type", "kind")

    def __init__(self, kind):
        self.kids, self.total, self.self, self.kind = {}, 0, 0, kind
        self.by_type = collections.Counter()

    def mark(self):
        t = self.by_type
        if t[2] * 3 >= self.total:
            return 2
        if t[6] * 2 >= self.total:
            return 6
        if t[0] * 2 >= self.total:
            return 0
        return self.kind


def tree_fold(stacks):
    """the converter's collapsed lines (a Counter) for STACKS, (frames [(name, type)] root
    first, weight) pairs: Java frames of one method at one place are one node, marked by the
    majority rule (Frame.getType)"""
    root = Node(None)
    for stack, w in stacks:
        node = root
        for name, kind in stack:
            key = (name, 1 if kind in JAVA else kind)
            node.total += w
            child = node.kids.get(key)
            if child is None:
                child = node.kids[key] = Node(key[1])
            child.by_type[kind] += w
            node = child
        node.total += w
        node.self += w
    out = collections.Counter()

    def walk(node, prefix):
        for (name, _), child in node.kids.items():
            path = prefix + [name + SUFFIX[child.mark()]]
            if child.self:
                out[";".join(path)] += child.self
            walk(child, path)
    walk(root, [])
    return out


def fold(events, async_profiler, view):
    """the converter's collapsed lines (a Counter stack -> count) for EVENTS under VIEW"""
    def stacks():
        for ev in view_events(events, async_profiler, view):
            stack = event_stack(ev, async_profiler)
            if stack is not None:
                yield stack, event_weight(ev)
    return tree_fold(stacks())


MARKS = {"_[0]": 0, "_[j]": 1, "_[i]": 2, "_[k]": 5, "_[1]": 6}
ROOT = re.compile(r"^(\[Pod\].*|\[Con\].*|\[\d+\] .*)$")


def jflame_as_converter(folded, roots_kept=False):
    """jflame's folded stacks (a Counter) as the converter would print them from a .jfr that
    holds them (with -t): the [Pod]/[Con]/[PID] process roots dropped, the thread frame as
    [NAME], Java marks by the majority rule, allocation and lock leaves (CLASS_[a], CLASS_[l])
    dotted and marked _[i]. roots_kept: the .jfr is jflame's own, whose stacks keep the roots
    and the thread as frames (the converter prints them after its [NAME] thread frame). Compare
    with the converter's lines through norm_threads and norm_leaves."""
    def stacks():
        for stack, n in folded.items():
            frames = stack.split(";")
            roots = []
            while len(frames) > 1 and ROOT.match(frames[0]):
                roots.append(frames.pop(0))
            if roots_kept and not roots:
                # no process root: jflame names no thread (the converter's [tid=0])
                frames.insert(0, "[tid=0]")
            out = [(frames[0] if frames[0].startswith("[tid=") else "[%s]" % frames[0], 3)]
            if roots_kept and roots:
                out += [(f, 3) for f in roots + frames[:1]]
            for f in frames[1:]:
                mark = f[-4:]
                if mark in ("_[a]", "_[l]"):
                    out.append((f[:-4].replace("/", "."), 2))
                elif mark in MARKS:
                    out.append((f[:-4], MARKS[mark]))
                else:
                    out.append((f, 3))
            yield out, n
    return tree_fold(stacks())


def as_jflame(events, async_profiler, view, root="[4242] java"):
    """EVENTS as jflame's folded stacks would hold them, one mark per sample: ROOT, the thread's
    name, the frames root first with their own marks (_[1] kept for C1: jflame has none), the
    class leaf as CLASS_[a] (allocations) or CLASS_[l] (locks) with slashes; for testing
    jflame_as_converter, which must fold them back into the converter's view"""
    out = collections.Counter()
    for ev in view_events(events, async_profiler, view):
        parts = event_parts(ev, async_profiler)
        if parts is None:
            continue
        thread, frames, leaf = parts
        stack = [root, thread if thread.startswith("[tid=") else thread[1:-1]]
        stack += [n + SUFFIX[k] for n, k in frames]
        if leaf:
            stack.append(leaf[0].replace(".", "/") + ("_[a]" if view == "alloc" else "_[l]"))
        out[";".join(stack)] += event_weight(ev)
    return out


def norm_leaves(folded):
    """an allocation view's lines with the class leaf marked _[i] also where the converter
    marks it _[k] (allocations outside a TLAB, the JDK's ObjectAllocationSample): which of
    the two a writer's events give is the writer's choice"""
    out = collections.Counter()
    for stack, n in folded.items():
        if stack.endswith("_[k]"):
            stack = stack[:-4] + "_[i]"
        out[stack] += n
    return out


def norm_threads(folded):
    """folded lines with the converter's `[NAME tid=ID]` thread frames as `[NAME]`"""
    out = collections.Counter()
    for stack, n in folded.items():
        first, sep, rest = stack.partition(";")
        first = re.sub(r" tid=\d+\]$", "]", first)
        out[first + sep + rest] += n
    return out


def read_folded(path):
    out = collections.Counter()
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line:
                stack, _, n = line.rpartition(" ")
                out[stack] += int(n)
    return out


def is_async_profiler(jfr, path):
    """async-profiler's recordings declare its own event types (profiler.*) in their metadata"""
    out = subprocess.run([jfr, "summary", path], check=True, capture_output=True, text=True).stdout
    return re.search(r"^ profiler\.\w+ ", out, re.M) is not None


if __name__ == "__main__":
    import sys
    if len(sys.argv) != 4:
        sys.exit("usage: jfr_view.py JFR_TOOL FILE.jfr cpu|alloc|lock|wall  (prints the folded view)")
    jfr_tool, path, view = sys.argv[1:]
    ap = is_async_profiler(jfr_tool, path)
    folded = fold(jfr_json(jfr_tool, path, VIEW_EVENTS[view]), ap, view)
    for stack in sorted(folded):
        print(stack, folded[stack])
