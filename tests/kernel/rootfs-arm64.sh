#!/usr/bin/env bash
# rootfs-arm64.sh - what the arm64 guest boots (issue 36), built once and cached: a
# Debian 12 (bookworm) arm64 root file system made with mmdebstrap --arch=arm64
# from Debian's archive (the mirrors this machine's apt uses, as rootfs.sh does)
# holding Debian's arm64 OpenJDK 17, jflame's runtime libraries and busybox, and
# bookworm's own arm64 kernel (the one linux-image-arm64 depends on now),
# installed in it, whose postinst writes the initramfs (virtio_pci, virtio_blk
# and ext4 are modules in Debian's arm64 kernel: it cannot mount its root
# without one).
#
#   tests/kernel/rootfs-arm64.sh             build unless cached; print the directory
#   tests/kernel/rootfs-arm64.sh --refresh   build again (a new Debian kernel and updates)
#   tests/kernel/rootfs-arm64.sh --key       print the cache key only
#
# The directory printed holds rootfs/ (the root file system, without /boot and
# /lib/modules: the initramfs has what mounting the root takes), kernel/Image
# (Debian's arm64 vmlinuz: an uncompressed Image, which qemu boots directly),
# kernel/initrd.img (initrd.list: what it holds), kernel/release and
# kernel/package, and manifest (the kernel's package, the JDK, when and how long
# the build took).
#
# The JDK is the archive's openjdk-17-jre-headless for arm64 (the host's is an
# x86-64 one): its version is in the manifest.
#
# mmdebstrap runs the arm64 packages' maintainer scripts (the JRE's, the kernel's
# initramfs) under qemu-user: qemu-user-static and arch-test installed, the
# binfmt_misc file system mounted (it is, at /proc/sys/fs/binfmt_misc, when it is
# not) and qemu-user-static's qemu-aarch64 handler registered (it is, from
# /usr/lib/binfmt.d/qemu-aarch64.conf, when it is not), each said when missing.
#
# Environment: JFLAME_KERNEL_ARM64_CACHE (default /var/cache/jflame-kernel-arm64):
# one directory per key (a hash of everything that goes in: packages, mirrors, the
# initramfs set-up), downloaded .debs in debs/ (kept for the next build). Runs as
# root (mmdebstrap's root mode, binfmt_misc). Two runs at once wait for each other
# (a lock).
set -euo pipefail
cache=${JFLAME_KERNEL_ARM64_CACHE:-/var/cache/jflame-kernel-arm64}
refresh=0 key_only=0
for a in "$@"; do
	case $a in
	--refresh) refresh=1 ;;
	--key) key_only=1 ;;
	-h | --help) sed -n '2,35p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "kernel-rootfs-arm64: unknown option $a (see --help)" >&2; exit 2 ;;
	esac
done
say() { printf 'kernel-rootfs-arm64: %s\n' "$*" >&2; }
die() { printf 'kernel-rootfs-arm64: %s\n' "$*" >&2; exit 1; }

# --- Debian's archive, as this machine's apt has it (see rootfs.sh) ------------------
mapfile -t mirrors < <(python3 "$(dirname "$0")/../../scripts/debian_sources.py")
((${#mirrors[@]})) || die "no Debian 12 (bookworm) entries in /etc/apt/sources.list*: cannot tell which mirror to use"
bookworm_sources=()
for m in "${mirrors[@]}"; do bookworm_sources+=("deb $m"); done

# --- what goes in ------------------------------------------------------------------
# As rootfs.sh's: jflame's runtime libraries, capstone, libc6-dbg, the JRE, busybox,
# mount and util-linux, initramfs-tools and kmod. The kernel, linux-image-arm64,
# is installed after them, on its own (a customize hook: the essential variant has
# no apt in the chroot, so mmdebstrap's apt from outside, dpkg in the chroot):
# in the same apt run its postinst wrote the initramfs and the update-initramfs
# trigger that busybox, kmod and udev pull wrote it again (a minute each under
# qemu-user); after it, once.
packages=(libbpf1 libelf1 zlib1g libcap2 libprotobuf-c1 libjson-c5 libcurl4 libxxhash0 libgsl27 libgslcblas0
	libzstd1 libcapstone4 libc6-dbg openjdk-17-jre-headless busybox mount util-linux initramfs-tools kmod linux-base)
kernel_pkg=linux-image-arm64
slim=(--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*'
	--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright'
	--dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias')
# The initramfs: modules listed, not "most" (mkinitramfs runs emulated: "most"
# takes minutes), loaded at boot: the virtio PCI transport, block (the root),
# network and console drivers, and ext4. The serial console (PL011) and the PCI
# host bridge of qemu's virt machine are built in.
initramfs_conf='MODULES=list'
# shellcheck disable=SC2016 # a script of its own, expanded when it runs
initramfs_hook='#!/bin/sh
# jflame arm64 kernel tests: the virtio disk, network and console, and ext4, loaded before the root is mounted
[ "$1" = prereqs ] && exit 0
. /usr/share/initramfs-tools/hook-functions
for m in virtio_pci virtio_blk virtio_net virtio_console ext4; do force_load "$m"; done'

# bump when the build below changes in a way the inputs do not show
recipe=3
args=(--arch=arm64 --variant=essential --include="$(IFS=,; echo "${packages[*]}")" --mode=root --format=directory "${slim[@]}")
key=$(printf '%s\n' "$recipe" "${args[@]}" "$kernel_pkg" "${mirrors[@]}" "$initramfs_conf" "$initramfs_hook" | sha256sum | cut -c1-12)
if ((key_only)); then
	echo "$key"
	exit 0
fi
dir=$cache/$key

[[ $(id -u) -eq 0 ]] || die "run as root (mmdebstrap's root mode, binfmt_misc), e.g. sudo $0"
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9 # one build at a time; a second run waits, then finds it cached
if [[ -f $dir/manifest && $refresh -eq 0 ]]; then
	touch "$dir" # used: kept by the clean-up below
	say "cached: $dir"
	echo "$dir"
	exit 0
fi
for tool in mmdebstrap dpkg-deb; do
	command -v $tool >/dev/null || die "$tool missing; run scripts/deps.sh (it installs mmdebstrap)"
done

# --- running arm64 programs: qemu-user through binfmt_misc ---------------------------
# mmdebstrap asks arch-test whether arm64 programs run, then runs the packages'
# maintainer scripts in the chroot through the kernel's binfmt_misc handler
# (scripts/binfmt-arm64.sh, shared with scripts/image.sh's arm64 image).
bash "$(dirname "$0")/../../scripts/binfmt-arm64.sh" kernel-rootfs-arm64 || exit 1

t_start=$SECONDS
mkdir -p "$cache/debs"
# A build that was killed can leave mmdebstrap's mounts (the chroot's /proc, /sys,
# /dev/pts, /dev/shm) under its .tmp directory: unmounted before it is removed
# (rm -rf would walk into them), innermost first.
rm_tmp() { # dir
	local m
	while read -r m; do
		umount "$m" 2>/dev/null || umount -l "$m" || die "cannot unmount $m (left by a killed build): remove it by hand"
	done < <(awk -v d="$1/" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r)
	rm -rf "$1"
}

# --- the root file system --------------------------------------------------------------
rm_tmp "$dir.tmp"
mkdir -p "$dir.tmp"
root=$dir.tmp/rootfs
say "mmdebstrap --arch=arm64 bookworm (essential + ${#packages[@]} packages + $kernel_pkg, under qemu-user) from ${mirrors[0]}"
hooks=$dir.tmp/hooks
mkdir -p "$hooks"
printf '%s\n' "$initramfs_conf" >"$hooks/initramfs.conf"
printf '%s\n' "$initramfs_hook" >"$hooks/initramfs-hook"
# The customize hook, run by mmdebstrap with the chroot's /proc, /sys and /dev
# mounted: the kernel and its initramfs copied out, /boot and /lib/modules emptied,
# the JVM run once.
cat >"$hooks/customize.sh" <<'EOF'
#!/bin/sh
# customize.sh ROOT OUT
set -eu
root=$1 out=$2
release=$(cd "$root/boot" && ls vmlinuz-* | sed 's/^vmlinuz-//')
[ "$(echo "$release" | wc -w)" -eq 1 ] || { echo "not one kernel in /boot: $release" >&2; exit 1; }
mkdir -p "$out/kernel"
cp "$root/boot/vmlinuz-$release" "$out/kernel/Image"
cp "$root/boot/initrd.img-$release" "$out/kernel/initrd.img"
echo "$release" >"$out/kernel/release"
chroot "$root" dpkg-query -W -f='${Package} ${Version}\n' "linux-image-$release" >"$out/kernel/package"
# the initramfs must hold what mounting the root takes
chroot "$root" lsinitramfs "/boot/initrd.img-$release" >"$out/kernel/initrd.list"
for m in virtio_pci virtio_blk ext4; do
	grep -q "/$m\.ko" "$out/kernel/initrd.list" || { echo "the initramfs has no $m module" >&2; exit 1; }
done
# (and the kernel's device trees: qemu's virt machine makes its own)
rm -rf "$root"/boot/* "$root"/lib/modules/* "$root"/var/lib/initramfs-tools/* "$root/usr/lib/linux-image-$release"
chroot "$root" java -version
EOF
# The initramfs set-up goes in before initramfs-tools is installed (the essential
# hook: the essential packages installed, the included ones not yet); downloaded .debs
# are kept in $cache/debs for the next build ("$1" in a hook: the chroot)
# shellcheck disable=SC2016
mmdebstrap "${args[@]}" --skip=essential/unlink \
	--setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
	--setup-hook='mkdir -p "$1"/usr/share/man/man1' \
	--setup-hook="sync-in $cache/debs /var/cache/apt/archives/" \
	--essential-hook='mkdir -p "$1"/etc/initramfs-tools/conf.d "$1"/etc/initramfs-tools/hooks' \
	--essential-hook="upload $hooks/initramfs.conf /etc/initramfs-tools/conf.d/jflame-vm.conf" \
	--essential-hook="upload $hooks/initramfs-hook /etc/initramfs-tools/hooks/jflame-vm" \
	--essential-hook='chmod 755 "$1"/etc/initramfs-tools/hooks/jflame-vm' \
	--customize-hook="APT_CONFIG=\$MMDEBSTRAP_APT_CONFIG DEBIAN_FRONTEND=noninteractive apt-get --yes --no-install-recommends install -oDPkg::Chroot-Directory=\"\$1\" $kernel_pkg" \
	--customize-hook="sync-out /var/cache/apt/archives $cache/debs" \
	--customize-hook="sh $hooks/customize.sh \"\$1\" $dir.tmp" \
	--customize-hook='rm -f "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/*_Packages*' \
	bookworm "$root" "${bookworm_sources[@]}" >"$dir.tmp/mmdebstrap.log" 2>&1 ||
	{ tail -40 "$dir.tmp/mmdebstrap.log" >&2; die "mmdebstrap failed (log: $dir.tmp/mmdebstrap.log)"; }
rm -rf "$cache/debs/partial" "$cache/debs/lock" "$hooks"
[[ -s $dir.tmp/kernel/Image && -s $dir.tmp/kernel/initrd.img ]] ||
	die "no kernel Image or initrd.img (log: $dir.tmp/mmdebstrap.log)"
{
	echo "key $key"
	echo "kernel $(cat "$dir.tmp/kernel/release") $(cat "$dir.tmp/kernel/package")"
	echo "jdk $(dpkg-query --admindir="$root/var/lib/dpkg" -W -f='${Package} ${Version}' openjdk-17-jre-headless)"
	echo "rootfs $(du -sm "$root" | cut -f1) MB"
	echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) in $((SECONDS - t_start)) s"
} >"$dir.tmp/manifest"
rm -rf "$dir"
mv "$dir.tmp" "$dir"
# other builds (kept while used in the last 7 days, the 3 used last at most), a
# build that died half-way, and .debs no build has used for 30 days (as rootfs.sh)
find "$cache" -mindepth 1 -maxdepth 1 -type d -regextype egrep -regex '.*/[0-9a-f]{12}' ! -name "$key" \
	-printf '%T@ %p\n' | sort -nr | awk -v old="$(($(date +%s) - 7 * 86400))" 'NR > 2 || $1 < old {print $2}' |
	xargs -r rm -rf
for t in "$cache"/*.tmp; do if [[ -d $t ]]; then rm_tmp "$t"; fi; done
find "$cache/debs" -name '*.deb' -atime +30 -delete
say "built $dir in $((SECONDS - t_start)) s: $(tr '\n' ';' <"$dir/manifest")"
echo "$dir"
