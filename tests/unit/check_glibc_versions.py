#!/usr/bin/env python3
"""check_glibc_versions.py READELF AGENT - the agent loads into JVMs on glibc 2.17 and later (Debian 11,
RHEL 8, Amazon Linux 2 images), whatever glibc built it: no symbol it imports and no version it needs
may be newer than GLIBC_2.17. jvmagent/glibc_compat.h binds the ones that would be to older versions."""
import re
import subprocess
import sys

NEWEST = (2, 17)
# readelf --dyn-syms -W: "1: 0000000000000000  0 FUNC  GLOBAL DEFAULT  UND dlopen@GLIBC_2.34 (2)"
IMPORT = re.compile(r'\sUND\s+([^\s@]+)@+(GLIBC_\S+)')
# readelf -V, version needs: "0x0050:   Name: GLIBC_2.34  Flags: none  Version: 2"
NEEDED = re.compile(r'Name:\s+(GLIBC_\S+)')


def too_new(version):
    """True for GLIBC_x.y newer than NEWEST, and for a version that is no release (GLIBC_PRIVATE)."""
    m = re.fullmatch(r'GLIBC_(\d+(?:\.\d+)*)', version)
    return not m or tuple(int(p) for p in m.group(1).split('.')) > NEWEST


def readelf(tool, *args):
    return subprocess.run([tool, '-W', *args], check=True, capture_output=True, text=True).stdout


def main():
    tool, agent = sys.argv[1:3]
    imports = IMPORT.findall(readelf(tool, '--dyn-syms', agent))
    needs = readelf(tool, '-V', agent).partition("Version needs section")[2]
    needed = set(NEEDED.findall(needs))
    if not imports or not needed:
        print('glibc: no GLIBC_ versions read from %s (readelf output changed?)' % agent)
        return 1
    bad = {}
    for name, version in imports:
        if too_new(version):
            bad.setdefault(version, set()).add(name)
    for version in needed:
        if too_new(version):
            bad.setdefault(version, set())
    newest = max(needed, key=lambda v: [int(p) for p in re.findall(r'\d+', v)])
    for version in sorted(bad):
        names = ', '.join(sorted(bad[version])) or '(no symbol: a version need)'
        print('glibc: %s needs %s, newer than GLIBC_%d.%d, for: %s; see jvmagent/glibc_compat.h' % (
            agent, version, NEWEST[0], NEWEST[1], names))
    print('glibc: %d imported symbols, versions needed up to %s, %d too new' % (len(imports), newest, len(bad)))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
