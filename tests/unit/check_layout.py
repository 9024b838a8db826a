#!/usr/bin/env python3
"""check_layout.py - native/'s stages include only their own and lower stages'
headers (util < model < attach < hotspot < sampler < symbolize < formats < render < session <
the front ends), and
no stage calls a function the front ends define (a sample's path runs down the
stages and never climbs back to builtin-*.c by name), and no file but
render/format_table.c compares profile formats; only util/msg.c spells the
"jflame: " prefix."""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
NATIVE = os.path.join(ROOT, 'native')
STAGES = ['util', 'model', 'attach', 'hotspot', 'sampler', 'symbolize', 'formats', 'render', 'session']
FRONT = len(STAGES)  # jflame.c, builtin-*.c and their helpers in native/ itself
# headers from outside native/: the agent's pure-C modules (jvmagent/), the BPF
# program's shared types and skeleton (bpf/, generated), and generated code
OUTSIDE = {'profile.h': 0, 'profile.skel.h': STAGES.index('sampler'), 'profile.pb-c.h': STAGES.index('formats'),
           'html_assets.h': STAGES.index('render')}
RECORD_MAX_LINES = 850  # 800 in the hand layout; clang-format's (.clang-format) puts a call's arguments
# on lines of their own around a string split over lines
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# a function defined at file level and not static: "type name(" at the start of a line
DEFINITION = re.compile(r'^(?!static\b)(?:[A-Za-z_][\w \t\*]*?[\s\*])?([A-Za-z_]\w*)\s*\([^;]*?\)\s*\{', re.M)


def strip_comments(text):
    """C text without its comments and string literals (they may name anything)."""
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    text = re.sub(r'//[^\n]*', ' ', text)
    return re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)


def main():
    rank = {}
    files = []
    for name in os.listdir(NATIVE):
        path = os.path.join(NATIVE, name)
        if name in STAGES:
            for f in os.listdir(path):
                if f.endswith(('.c', '.h')):
                    rank[f] = STAGES.index(name)
                    files.append((os.path.join(name, f), STAGES.index(name)))
        elif name.endswith(('.c', '.h')):
            rank[name] = FRONT
            files.append((name, FRONT))
    agent = {f for f in os.listdir(os.path.join(ROOT, 'jvmagent')) if f.endswith('.h')}
    where = STAGES + ['front end']
    bad = []
    for rel, r in sorted(files):
        for h in INCLUDE.findall(open(os.path.join(NATIVE, rel), encoding='utf-8').read()):
            if h in agent:
                continue
            hr = rank.get(h, OUTSIDE.get(h))
            if hr is None:
                bad.append('%s includes "%s", which is in no stage folder' % (rel, h))
            elif hr > r:
                bad.append('native/%s (%s) includes "%s" of the higher stage %s' % (rel, where[r], h, where[hr]))
    # functions the front ends define for others (not static), and where
    front = {}
    for rel, r in files:
        if r == FRONT and rel.endswith('.c'):
            text = strip_comments(open(os.path.join(NATIVE, rel), encoding='utf-8').read())
            for name in DEFINITION.findall(text):
                front[name] = rel
    for rel, r in sorted(files):
        if r == FRONT:
            continue
        text = strip_comments(open(os.path.join(NATIVE, rel), encoding='utf-8').read())
        for name, where_defined in sorted(front.items()):
            if re.search(r'\b%s\s*\(' % re.escape(name), text):
                bad.append('native/%s (%s) calls %s(), which the front end %s defines' % (
                    rel, where[r], name, where_defined))
    # the front end of record keeps its options and main loop; the session is below it (#21)
    record_lines = sum(1 for _ in open(os.path.join(NATIVE, 'builtin-record.c'), encoding='utf-8'))
    if record_lines > RECORD_MAX_LINES:
        bad.append('native/builtin-record.c has %d lines, over %d: what is not options or the main loop '
                   'belongs in native/session/' % (record_lines, RECORD_MAX_LINES))
    # errors are returned without the "jflame: " prefix and every line is said through
    # util/msg.c, the one place that spells it: the stages (#21) and the front ends (#37)
    prefixed = [(rel, 'native/' + rel) for rel, r in files if rel.endswith('.c') and rel != 'util/msg.c']
    prefixed += [(f, 'jvmagent/' + f) for f in os.listdir(os.path.join(ROOT, 'jvmagent')) if f.endswith('.c')]
    for rel, shown in sorted(prefixed):
        base = os.path.join(NATIVE, rel) if shown.startswith('native/') else os.path.join(ROOT, shown)
        if '"jflame: ' in open(base, encoding='utf-8').read():
            bad.append('%s spells the "jflame: " prefix; return the error without it (the command adds it) '
                       'or say the line with msg_say()/msg_warn() (util/msg.h)' % shown)
    # a format is a row of render/format_table.c's table (#37): nothing else compares one
    # (no format ids; a row is asked for its traits and needs, not matched by name)
    names = '|'.join(re.findall(r'\.name = "([a-z]+)"', open(os.path.join(NATIVE, 'render', 'format_table.c'),
                                                            encoding='utf-8').read()))
    compared = re.compile(r'PFMT_[A-Z]|[!=]=\s*profile_format_(?:named|of_name|for_record)\(|'
                          r'profile_format_(?:named|of_name|for_record)\([^()]*\)\s*[!=]=|'
                          r'str(?:n?case)?cmp\(\s*[\w.>-]*(?:->|\.)name\s*,\s*"(?:%s)"' % names)
    for rel, r in sorted(files):
        if rel == os.path.join('render', 'format_table.c') or not rel.endswith('.c'):
            continue
        text = open(os.path.join(NATIVE, rel), encoding='utf-8').read()
        m = compared.search(text)
        if m:
            bad.append('native/%s compares formats (%r): ask the row (render/format_table.h: cmds, '
                       'traits, needs) instead' % (rel, m.group(0)))
    # an event is a row of model/event_table.c's table (#37): nothing else compares an
    # event's name, perf name or weight type, nor keeps a kind of its own
    table = open(os.path.join(NATIVE, 'model', 'event_table.c'), encoding='utf-8').read()
    words = set(re.findall(r'\.(?:name|word|perf_name|weight_type|fallback) = "([a-z_-]+)"', table))
    words |= set(re.findall(r'PERIOD_ROW\("([a-z-]+)"', table))
    words |= {'task-clock', 'alloc_space', 'delay', 'contentions', 'alloc_samples'}
    ev_compared = re.compile(r'\b(?:MODE_(?:CPU|OFFCPU|WALL)|enum rec_mode|recording_(?:alloc|lock|timed|title))\b|'
                             r'str(?:n?case)?cmp\([^;]*"(?:%s)"' % '|'.join(sorted(map(re.escape, words))))
    for rel, r in sorted(files):
        if rel == os.path.join('model', 'event_table.c') or not rel.endswith(('.c', '.h')):
            continue
        m = ev_compared.search(open(os.path.join(NATIVE, rel), encoding='utf-8').read())
        if m:
            bad.append('native/%s compares events (%r): ask the row (model/event_table.h: source, '
                       'flags, weigh, view) instead' % (rel, m.group(0)))
    for s in STAGES:
        if not os.path.exists(os.path.join(NATIVE, s, 'README.md')):
            bad.append('native/%s has no README.md saying what lives there' % s)
    for b in bad:
        print('layout: ' + b)
    print('layout: %d files, %d problems' % (len(files), len(bad)))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
