# check_svg.py - runs test_flamegraph to draw its SVGs, then parses each with
# xml.etree (well-formed XML) and checks the structure a browser and users rely on.
"""usage: check_svg.py TEST_FLAMEGRAPH_BINARY  (or: check_svg.py --dir DIR_OF_SVGS)"""

import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
TITLE = re.compile(r"^(?P<name>.*) \((?P<count>[0-9][0-9,]*(\.[0-9]{2})?) [^,]+, (?P<pct>[0-9.]+)%(; [+-]?[0-9]+\.[0-9]{2}%)?\)$", re.S)
RGB = re.compile(r"^rgb\(([0-9]{1,3}),([0-9]{1,3}),([0-9]{1,3})\)$")
EPS = 0.0015


def check_subtitle(root, ids, width):
    """The subtitle's lines fit the page at flamegraph.pl's width estimate
    (0.59 of the font size a character) and the frames start below the last."""
    sub = ids.get("subtitle")
    if sub is None:
        return []
    m = re.search(r"fontsize: ([0-9.]+)", "".join(s.text or "" for s in root.findall(SVG + "script")))
    fontsize = float(m.group(1)) if m else 12.0
    tspans = sub.findall(SVG + "tspan")
    lines = [(float(t.get("x")), float(t.get("dy")), t.text or "") for t in tspans]
    if not tspans:
        lines = [(float(sub.get("x")), 0.0, sub.text or "")]
    problems, y = [], float(sub.get("y"))
    for x, dy, text in lines:
        y += dy
        w = len(text) * fontsize * 0.59
        if x - w / 2 < 0 or x + w / 2 > width:
            problems.append("subtitle line %r (%.0f px) runs off the %g px page" % (text, w, width))
    tops = [float(g[1].get("y")) for g in ids["frames"] if len(g) > 1 and g[1].get("y")]
    if tops and min(tops) < y:
        problems.append("frames start at %g, above the subtitle's last line at %g" % (min(tops), y))
    return problems


def check_file(path):
    """Returns a list of problems with one SVG."""
    problems = []
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        return ["not well-formed XML: %s" % e]
    if root.tag != SVG + "svg":
        problems.append("root element is %s, not svg" % root.tag)
    width = float(root.get("width"))
    height = float(root.get("height"))
    if root.get("viewBox") != "0 0 %s %s" % (root.get("width"), root.get("height")):
        problems.append("viewBox does not match the size")
    ids = {}
    for el in root.iter():
        if el.get("id"):
            if el.get("id") in ids:
                problems.append("duplicate id %s" % el.get("id"))
            ids[el.get("id")] = el
        for key, val in el.attrib.items():
            if key.endswith("href") or (val.startswith("http") and key != "xmlns"):
                problems.append("external reference %s=%s" % (key, val))
    for need in ("title", "details", "unzoom", "search", "ignorecase", "matched", "frames"):
        if need not in ids:
            problems.append("no element with id %s" % need)
    scripts = root.findall(SVG + "script")
    if len(scripts) != 1 or "function zoom(" not in (scripts[0].text or ""):
        problems.append("no viewer script")
    elif "var JFlameCore" not in scripts[0].text or "JFlameCore.layout(" not in scripts[0].text:
        problems.append("the viewer script without the shared zoom and search (flame_core.js)")
    if problems:
        return problems

    problems += check_subtitle(root, ids, width)
    frames = []
    for g in ids["frames"]:
        kids = list(g)
        if g.tag != SVG + "g" or [k.tag for k in kids] != [SVG + "title", SVG + "rect", SVG + "text"]:
            problems.append("frame group is not <g><title/><rect/><text/></g>")
            continue
        title, rect = kids[0].text or "", kids[1]
        m = TITLE.match(title)
        if not m:
            problems.append("title %r is not 'NAME (N samples, P%%)'" % title)
            continue
        x, y, w, h = (float(rect.get(a)) for a in ("x", "y", "width", "height"))
        if not RGB.match(rect.get("fill", "")) or any(int(c) > 255 for c in RGB.match(rect.get("fill")).groups()):
            problems.append("fill %r of %r" % (rect.get("fill"), title))
        if w < 0 or h <= 0 or x < 10 - EPS or x + w > width - 10 + EPS or y < 0 or y + h > height:
            problems.append("frame %r outside the page" % title)
        frames.append((m.group("name"), float(m.group("count").replace(",", "")), x, y, w, h))
    if not frames or frames[0][0] != "all":
        problems.append("the first frame is not the root 'all'")
        return problems
    # every frame sits inside a frame one row nearer the root, with at least its
    # samples: frames come parents first, so that is the last frame seen a row nearer
    root_y, row = frames[0][3], frames[0][5] + 1
    last = {0: frames[0]}
    for name, count, x, y, w, h in frames[1:]:
        depth = round(abs(y - root_y) / row)
        parent = last.get(depth - 1)
        if (depth < 1 or abs(abs(y - root_y) - depth * row) > EPS or not parent or parent[1] < count
                or not (parent[2] - EPS <= x and x + w <= parent[2] + parent[4] + EPS)):
            problems.append("frame %r has no parent frame under it" % name)
            break
        last[depth] = (name, count, x, y, w, h)
    return problems


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--dir":
        svg_dir, tmp = sys.argv[2], None
    elif len(sys.argv) == 2:
        tmp = tempfile.TemporaryDirectory(prefix="jflame-svg-")
        svg_dir = tmp.name
        run = subprocess.run([sys.argv[1], "--svg-dir", svg_dir], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if run.returncode != 0:
            print(run.stdout, end="")
            print("check_svg: %s failed" % sys.argv[1])
            return 1
    else:
        print(__doc__)
        return 2
    names = sorted(f for f in os.listdir(svg_dir) if f.endswith(".svg"))
    failed = 0
    for name in names:
        for problem in check_file(os.path.join(svg_dir, name)):
            print("%s: %s" % (name, problem))
            failed += 1
    print("check_svg: %d SVG files, %d problems" % (len(names), failed))
    if tmp:
        tmp.cleanup()
    return 1 if failed or not names else 0


if __name__ == "__main__":
    sys.exit(main())
