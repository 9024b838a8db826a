#!/usr/bin/env python3
# debian_sources.py - this machine's Debian 12 (bookworm) archive entries, as apt has
# them, one "URI SUITE COMPONENTS" line each: for mmdebstrap (scripts/image.sh, tests/kernel/rootfs.sh).
#
# Reads /etc/apt/sources.list, sources.list.d/*.list and *.sources (deb822); keeps
# bookworm, bookworm-updates and bookworm-security (and bookworm-backports with
# --backports): the same mirrors, suites and components apt uses here.
import glob
import re
import sys

suites_ok = re.compile(r"^bookworm(-updates|-security%s)?$" % ("|-backports" if "--backports" in sys.argv[1:] else ""))
out = []


def add(uri, suite, comps):
    if suites_ok.match(suite):
        line = "%s %s %s" % (uri.rstrip("/"), suite, " ".join(comps))
        if line not in out:
            out.append(line)


for path in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
    try:
        lines = open(path).read().splitlines()
    except OSError:
        continue
    for line in lines:
        fields = re.sub(r"\[[^]]*\]", "", line.split("#", 1)[0]).split()
        if len(fields) >= 4 and fields[0] == "deb":
            add(fields[1], fields[2], fields[3:])
for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
    for stanza in re.split(r"\n\s*\n", open(path).read()):
        f = {}
        for line in stanza.splitlines():
            if line.startswith("#") or ":" not in line:
                continue
            k, v = line.split(":", 1)
            f[k.strip().lower()] = v.split()
        if "deb" not in f.get("types", []) or f.get("enabled", ["yes"])[0] == "no":
            continue
        for uri in f.get("uris", []):
            for s in f.get("suites", []):
                add(uri, s, f.get("components", ["main"]))
print("\n".join(out))
