#!/usr/bin/env bash
# vmlinux-arm64.sh OUT [SUITE]: vmlinux.h for an arm64 build of the BPF walker (issue 36), from
# the BTF of Debian's own arm64 kernel (SUITE's linux-image-arm64, default bookworm: 6.1), not
# the build host's. Debian's arm64 vmlinuz is the kernel's uncompressed Image (gzip'd on some
# releases); its BTF (CONFIG_DEBUG_INFO_BTF) sits whole inside it, found by the BTF header's
# magic and cut by the lengths the header gives, then `bpftool btf dump ... format c` as for
# the host. The kernel package is cached in /var/cache/jflame-kernel/arm64 (root) or
# ${XDG_CACHE_HOME:-~/.cache}/jflame-arm64.
set -euo pipefail
out=${1:?usage: vmlinux-arm64.sh OUT [SUITE]}
suite=${2:-bookworm}
mkdir -p "$(dirname "$out")"
die() {
	echo "jflame: vmlinux-arm64.sh: $*" >&2
	exit 1
}
for tool in apt-get apt-cache dpkg-deb python3 bpftool; do
	command -v $tool >/dev/null || [[ $tool == bpftool && -x /usr/sbin/bpftool ]] ||
		die "$tool not found; run scripts/deps.sh"
done
bpftool=$(command -v bpftool || echo /usr/sbin/bpftool)
if [[ $(id -u) -eq 0 ]]; then
	cache=/var/cache/jflame-kernel/arm64
else
	cache=${XDG_CACHE_HOME:-$HOME/.cache}/jflame-arm64
fi
mkdir -p "$cache/apt/lists/partial" "$cache/apt/cache" "$cache/debs"
sources=$cache/apt/sources-$suite.list
{
	echo "deb http://deb.debian.org/debian $suite main"
	echo "deb http://deb.debian.org/debian-security $suite-security main"
	echo "deb http://deb.debian.org/debian $suite-updates main"
} >"$sources"
apt=(-o Dir::Etc::SourceList="$sources" -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$cache/apt/lists"
	-o Dir::Cache="$cache/apt/cache" -o Dir::State::status=/dev/null -o Debug::NoLocking=1
	-o Acquire::Languages=none -o APT::Architecture=arm64 -o APT::Architectures=arm64
	-o APT::Sandbox::User=root)
apt-get "${apt[@]}" -qq update >"$cache/apt/update.log" 2>&1 ||
	{ tail -5 "$cache/apt/update.log" >&2; die "apt-get update for $suite (arm64) failed"; }
# linux-image-arm64's newest version depends on the versioned kernel package
pkg=$(apt-cache "${apt[@]}" show linux-image-arm64 2>/dev/null | sed -n 's/^Depends: \(linux-image-[^ ,]*-arm64\).*/\1/p' | head -1)
[[ -n $pkg ]] || die "no linux-image-arm64 in $suite"
deb=$(find "$cache/debs" -maxdepth 1 -name "${pkg}_*_arm64.deb" | head -1)
if [[ -z $deb ]]; then
	(cd "$cache/debs" && apt-get "${apt[@]}" -qq download "$pkg") >"$cache/apt/download.log" 2>&1 ||
		{ tail -5 "$cache/apt/download.log" >&2; die "downloading $pkg failed"; }
	deb=$(find "$cache/debs" -maxdepth 1 -name "${pkg}_*_arm64.deb" | head -1)
fi
release=${pkg#linux-image-}
work=$(mktemp -d /tmp/jflame-vmlinux-arm64.XXXXXX)
trap 'rm -rf "$work"' EXIT
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$work" "./boot/vmlinuz-$release" ||
	die "$deb has no boot/vmlinuz-$release"
python3 - "$work/boot/vmlinuz-$release" "$work/vmlinux.btf" <<'PY' || die "no BTF in $pkg's kernel image"
import gzip, struct, sys
img = open(sys.argv[1], "rb").read()
if img[:2] == b"\x1f\x8b":
    img = gzip.decompress(img)
# struct btf_header: magic 0xeB9F, version 1, flags 0, hdr_len 24, then type_off, type_len,
# str_off, str_len (little-endian); the kernel's BTF is the largest such blob in the image
best = None
at = img.find(b"\x9f\xeb\x01\x00\x18\x00\x00\x00")
while at >= 0:
    type_off, type_len, str_off, str_len = struct.unpack_from("<IIII", img, at + 8)
    size = 24 + max(type_off + type_len, str_off + str_len)
    if at + size <= len(img) and (best is None or size > best[1]):
        best = (at, size)
    at = img.find(b"\x9f\xeb\x01\x00\x18\x00\x00\x00", at + 1)
if best is None:
    sys.exit(1)
open(sys.argv[2], "wb").write(img[best[0]:best[0] + best[1]])
PY
"$bpftool" btf dump file "$work/vmlinux.btf" format c >"$out.tmp" || die "bpftool could not read the BTF cut from $pkg"
grep -q 'struct user_pt_regs {' "$out.tmp" || die "the BTF of $pkg has no struct user_pt_regs: not an arm64 kernel's"
mv "$out.tmp" "$out"
echo "jflame: $out: vmlinux.h of $pkg ($suite, arm64)"
