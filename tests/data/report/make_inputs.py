#!/usr/bin/env python3
# make_inputs.py - writes the inputs of tests/unit/test_report_cli.py's golden
# cases (tests/data/report/<case>/): before.folded and after.folded, or
# before/ and after/ folders of windows, args and status. Samples are drawn with
# fixed seeds, so running this again writes the same files. expected.txt is
# jflame's output: see the top of tests/unit/test_report_cli.py to regenerate it.
import os
import random
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))

# a Java service's stacks and their weights (percent of the samples)
SERVICE = [
    ("java;main;App.run;App.handle;App.render", 20),
    ("java;main;App.run;App.handle;StringBuilder.append", 12),
    ("java;main;App.run;App.handle;Json.write;StringBuilder.append", 8),
    ("java;main;App.run;App.handle;Logger.log;Appender.append", 5),
    ("java;main;App.run;Cache.get;HashMap.get", 10),
    ("java;main;App.run;Db.query;Socket.read", 15),
    ("java;main;App.run;Db.query;Db.parse", 8),
    ("java;main;App.run;App.idle", 10),
    ("java;GC Thread#0;G1ParTask::work", 7),
    ("java;C2 CompilerThread0;C2Compiler::compile", 5),
]
FORMAT = "java;main;App.run;App.handle;String.format;Formatter.format"


def with_format(share):
    """SERVICE with String.format taking share percent, the rest scaled down."""
    return [(s, w * (100 - share) / 100) for s, w in SERVICE] + [(FORMAT, share)]


def draw(weights, n, seed):
    """n samples from the weighted stacks: {stack: count}, in SERVICE's order."""
    rng = random.Random(seed)
    stacks = [s for s, _ in weights]
    got = rng.choices(stacks, weights=[w for _, w in weights], k=n)
    return {s: got.count(s) for s in stacks if got.count(s)}


def folded(counts):
    return "".join("%s %d\n" % (s, c) for s, c in sorted(counts.items()))


def write(case, name, text):
    path = os.path.join(HERE, case, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def fresh(case):
    """An empty case folder, but for expected.txt (jflame writes that)."""
    d = os.path.join(HERE, case)
    if os.path.isdir(d):
        for e in os.listdir(d):
            if e != "expected.txt":
                p = os.path.join(d, e)
                shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)


def pair(case, before, after, args="", status=0):
    fresh(case)
    write(case, "before.folded", folded(before))
    write(case, "after.folded", folded(after))
    write(case, "args", args + "\n")
    if status:
        write(case, "status", "%d\n" % status)


def windows(case, side, per_window):
    for i, counts in enumerate(per_window):
        write(case, "%s/w%02d.folded" % (side, i), folded(counts))


def main():
    # String.format appears: 0% -> 9% of 4000 samples
    before, after = draw(SERVICE, 4000, 1), draw(with_format(9), 4000, 2)
    pair("string_format", before, after)
    pair("top3", before, after, "--top 3")
    pair("fail_above", before, after, "--fail-above 5", status=3)

    # the same service twice, two draws: nothing changed
    pair("unchanged", draw(SERVICE, 4000, 3), draw(SERVICE, 4000, 4))

    # two runs of a JVM: pids, pool thread numbers, lambda and accessor
    # numbers all differ; the workload is the same
    def jvm(pid, pool, t1, t2, lam, acc, gc):
        return [
            ("[%d] java;pool-%d-thread-%d;ThreadPoolExecutor.runWorker;Worker$$Lambda$%d.0x00007f%010x.run;Worker.process"
             % (pid, pool, t1, lam, 0x87c4006228 + lam), 40),
            ("[%d] java;pool-%d-thread-%d;ThreadPoolExecutor.runWorker;jdk/internal/reflect/GeneratedMethodAccessor%d.invoke;Handler.call"
             % (pid, pool, t2, acc), 30),
            ("[%d] java;pool-%d-thread-%d;ThreadPoolExecutor.runWorker;Worker.idle" % (pid, pool, t1), 20),
            ("[%d] java;GC Thread#%d;G1ParTask::work" % (pid, gc), 10),
        ]
    one, two = draw(jvm(1234, 3, 7, 2, 8, 12, 1), 2000, 5), draw(jvm(5678, 5, 1, 4, 11, 31, 3), 2000, 6)
    pair("names_normalized", one, two)
    pair("names_raw", one, two, "--no-normalize")

    # windows as replicates: 4 windows of 1000 samples a side; String.format
    # 0% -> 8% in every AFTER window (a steady regression)
    fresh("windows")
    windows("windows", "before", [draw(SERVICE, 1000, 10 + i) for i in range(4)])
    windows("windows", "after", [draw(with_format(8), 1000, 20 + i) for i in range(4)])
    write("windows", "args", "\n")

    # a bursty frame: Cache.refresh takes 2%..30% of a window, 13% on average
    # before, 18% after; as replicates noise, summed into one window a side
    # (bursty_summed) the z-test calls it significant
    def burst(share):
        return [(s, w * (100 - share) / 100) for s, w in SERVICE] + [("java;main;App.run;Cache.refresh;Cache.load", share)]
    bw = [draw(burst(s), 1000, 30 + i) for i, s in enumerate((2, 25, 5, 20))]
    aw = [draw(burst(s), 1000, 40 + i) for i, s in enumerate((30, 5, 27, 10))]
    fresh("bursty")
    windows("bursty", "before", bw)
    windows("bursty", "after", aw)
    write("bursty", "args", "\n")

    def summed(ws):
        out = {}
        for w in ws:
            for s, c in w.items():
                out[s] = out.get(s, 0) + c
        return out
    pair("bursty_summed", summed(bw), summed(aw))


if __name__ == "__main__":
    main()
