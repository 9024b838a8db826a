#!/usr/bin/env python3
# reference_compare.py A B - compares two scripts/reference_outputs.sh folders: files must be byte-identical,
# except .svg/.html, which may differ inside <script> only (their data and the SVG's settings stay).
import os, re, sys
a, b = sys.argv[1:3]
fa, fb = sorted(os.listdir(a)), sorted(os.listdir(b))
if fa != fb:
    print("file sets differ:", set(fa) ^ set(fb)); sys.exit(1)
strip = re.compile(rb"(<script[^>]*>).*?(</script>)", re.S)  # the elements stay, their text may change
keep = re.compile(rb'<script type="application/json".*?</script>|^var fg = .*?\n', re.S | re.M)  # the data and the SVG's settings stay
same = script_only = 0; bad = []
for f in fa:
    x, y = open(os.path.join(a, f), "rb").read(), open(os.path.join(b, f), "rb").read()
    if x == y:
        same += 1
    elif (f.endswith((".svg", ".html")) or x.startswith((b"<?xml", b"<!DOCTYPE html"))) and strip.sub(rb"\1\2", x) == strip.sub(rb"\1\2", y) \
            and keep.findall(x) == keep.findall(y) and keep.findall(x):  # .out: an SVG on stdout
        script_only += 1
    else:
        bad.append(f)
print(f"{len(fa)} files: {same} identical, {script_only} .svg/.html differing only inside <script>, {len(bad)} other differences")
for f in bad: print("  DIFFERS:", f)
sys.exit(1 if bad else 0)
