#!/usr/bin/env bash
# rootfs.sh - what the kernel tests boot, built once and cached: a Debian 12
# (bookworm) root file system made with mmdebstrap from Debian's archive (the
# mirrors this machine's apt uses, as scripts/image.sh does) holding OpenJDK 17,
# jflame's runtime libraries and busybox, and Debian's own kernels of bullseye
# (5.10), bookworm (6.1) and trixie (6.12), each the version its suite's
# linux-image-amd64 depends on now, installed with dpkg in the chroot, which
# writes their initramfs (virtio_blk and ext4 are modules there).
#
#   tests/kernel/rootfs.sh             build unless cached; print the directory
#   tests/kernel/rootfs.sh --refresh   build again (new Debian kernels and updates)
#   tests/kernel/rootfs.sh --key       print the cache key only
#
# The directory printed holds rootfs/ (the root file system, without /boot and
# /lib/modules: each kernel's initramfs has what mounting the root takes),
# kernel-<5.10|6.1|6.12>/vmlinuz and initrd.img, and manifest (the kernels'
# packages, the JDK, when and how long the build took).
#
# The JDK is the host's: Debian's archive carries only the newest OpenJDK 17,
# so the archive's openjdk-17-jre-headless brings the JRE's dependencies and the
# host's /usr/lib/jvm/java-17-openjdk-amd64 (with /etc/java-17-openjdk) is
# copied over it: the guest runs the very JVM the host tests run.
#
# Environment: JFLAME_KERNEL_CACHE (default /var/cache/jflame-kernel): one
# directory per key (a hash of everything that goes in: packages, mirrors,
# kernel suites, the initramfs set-up, the host JDK's version), downloaded .debs
# in debs/ (kept for the next build), apt lists in apt/. Runs as root
# (mmdebstrap's root mode). Two runs at once wait for each other (a lock).
set -euo pipefail
cache=${JFLAME_KERNEL_CACHE:-/var/cache/jflame-kernel}
java_home=/usr/lib/jvm/java-17-openjdk-amd64
refresh=0 key_only=0
for a in "$@"; do
	case $a in
	--refresh) refresh=1 ;;
	--key) key_only=1 ;;
	-h | --help) sed -n '2,31p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "kernel-rootfs: unknown option $a (see --help)" >&2; exit 2 ;;
	esac
done
say() { printf 'kernel-rootfs: %s\n' "$*" >&2; }
die() { printf 'kernel-rootfs: %s\n' "$*" >&2; exit 1; }

# The kernels: name (what the tests call it) and the suite whose linux-image-amd64 picks it.
kernels=(5.10:bullseye 6.1:bookworm 6.12:trixie)

# --- Debian's archive, as this machine's apt has it ---------------------------------
# The mirrors of every bookworm* entry in /etc/apt/sources.list and
# sources.list.d/*.list and *.sources (deb822), as "URI SUITE COMPONENTS" lines
# (scripts/image.sh reads them the same way).
mapfile -t mirrors < <(python3 "$(dirname "$0")/../../scripts/debian_sources.py")
((${#mirrors[@]})) || die "no Debian 12 (bookworm) entries in /etc/apt/sources.list*: cannot tell which mirror to use"
bookworm_sources=()
for m in "${mirrors[@]}"; do bookworm_sources+=("deb $m"); done
# the same mirrors for another suite (bookworm-security: SUITE-security, ...)
suite_sources() { # suite
	local m
	for m in "${mirrors[@]}"; do
		read -r uri suite comps <<<"$m"
		printf 'deb %s %s %s\n' "$uri" "$1${suite#bookworm}" "$comps"
	done
}

# --- what goes in ------------------------------------------------------------------
# jflame's runtime libraries (ldd build/native/jflame: libbpf, libelf, zlib, libcap,
# protobuf-c, json-c, curl, xxhash, GSL; libzstd1 under libelf and curl), capstone
# (the agent dlopens it to check prologues, as on the host), libc6-dbg (libc's
# local symbols, start_thread among them, as the host's tests have them), the JRE, busybox
# (poweroff -f without systemd), mount and util-linux (unshare, setpriv: the
# hostile-target case), initramfs-tools and kmod (the kernels' postinst).
packages=(libbpf1 libelf1 zlib1g libcap2 libprotobuf-c1 libjson-c5 libcurl4 libxxhash0 libgsl27 libgslcblas0
	libzstd1 libcapstone4 libc6-dbg openjdk-17-jre-headless busybox mount util-linux initramfs-tools kmod linux-base)
# no manuals, docs (but copyrights) or translations (the JRE's postinst still wants
# /usr/share/man/man1 for its alternatives: a setup hook makes it)
slim=(--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*'
	--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright'
	--dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias')
# The initramfs: modules listed, not "most" (each kernel's takes seconds, not a
# minute, to write): the virtio PCI and block drivers and ext4, loaded at boot.
initramfs_conf='MODULES=list'
# shellcheck disable=SC2016 # a script of its own, expanded when it runs
initramfs_hook='#!/bin/sh
# jflame kernel tests: the virtio disk and ext4, loaded before the root is mounted
[ "$1" = prereqs ] && exit 0
. /usr/share/initramfs-tools/hook-functions
for m in virtio_pci virtio_blk ext4; do force_load "$m"; done'

[[ -x $java_home/bin/java ]] || die "no JDK 17 at $java_home (scripts/deps.sh installs openjdk-17-jdk-headless)"
jdk_version=$(dpkg-query -W -f='${Version}' openjdk-17-jre-headless 2>/dev/null || true)
jdk_release=$(sha256sum "$java_home/release" "$java_home/lib/server/libjvm.so" | cut -c1-64 | tr '\n' ' ')
# bump when the build below changes in a way the inputs do not show
recipe=1
args=(--variant=essential --include="$(IFS=,; echo "${packages[*]}")" --mode=root --format=directory "${slim[@]}")
key=$(printf '%s\n' "$recipe" "${args[@]}" "${mirrors[@]}" "${kernels[@]}" "$initramfs_conf" "$initramfs_hook" \
	"$jdk_version" "$jdk_release" | sha256sum | cut -c1-12)
if ((key_only)); then
	echo "$key"
	exit 0
fi
dir=$cache/$key

[[ $(id -u) -eq 0 ]] || die "run as root (mmdebstrap's root mode, dpkg in the chroot), e.g. sudo $0"
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9 # one build at a time; a second run waits, then finds it cached
if [[ -f $dir/manifest && $refresh -eq 0 ]]; then
	touch "$dir" # used: kept by the clean-up below
	say "cached: $dir"
	echo "$dir"
	exit 0
fi
for tool in mmdebstrap apt-get dpkg-deb; do
	command -v $tool >/dev/null || die "$tool missing; run scripts/deps.sh (it installs mmdebstrap)"
done
t_start=$SECONDS
mkdir -p "$cache/debs" "$cache/apt/lists/partial" "$cache/apt/cache"

# --- which kernels: each suite's linux-image-amd64 (its -security and -updates too) -----
aptsrc=$cache/apt/sources.list
for k in "${kernels[@]}"; do suite_sources "${k#*:}"; done >"$aptsrc"
apt_private=(-o Dir::Etc::SourceList="$aptsrc" -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$cache/apt/lists"
	-o Dir::Cache="$cache/apt/cache" -o Dir::State::status=/dev/null -o Debug::NoLocking=1
	-o APT::Get::List-Cleanup=1 -o Acquire::Languages=none)
say "apt-get update: ${kernels[*]#*:} (and their -security, -updates)"
apt-get "${apt_private[@]}" -qq update >"$cache/apt/update.log" 2>&1 ||
	{ tail -20 "$cache/apt/update.log" >&2; die "apt-get update for the kernel suites failed (log: $cache/apt/update.log)"; }
kernel_pkgs=() kernel_names=()
for k in "${kernels[@]}"; do
	name=${k%%:*} suite=${k#*:}
	# madison lists versions newest first, with the suite each comes from
	version=$(apt-cache "${apt_private[@]}" madison linux-image-amd64 |
		awk -F'|' -v s="$suite" '{gsub(/ /, "", $2); split($3, a, " "); split(a[2], b, "/")}
			b[1] == s || b[1] == s "-security" || b[1] == s "-updates" {print $2; exit}')
	[[ -n $version ]] || die "no linux-image-amd64 in $suite"
	pkg=$(apt-cache "${apt_private[@]}" show "linux-image-amd64=$version" | sed -n 's/^Depends: \(linux-image-[^ ,]*\).*/\1/p' | head -1)
	[[ $pkg == linux-image-"$name"* ]] || die "$suite's linux-image-amd64 $version depends on '$pkg', not a $name kernel"
	say "kernel $name: $pkg ($suite, linux-image-amd64 $version)"
	kernel_pkgs+=("$pkg") kernel_names+=("$name")
done
(cd "$cache/debs" && apt-get "${apt_private[@]}" -qq download "${kernel_pkgs[@]}") >"$cache/apt/download.log" 2>&1 ||
	{ tail -20 "$cache/apt/download.log" >&2; die "downloading ${kernel_pkgs[*]} failed"; }
kernel_debs=()
for p in "${kernel_pkgs[@]}"; do
	deb=$(find "$cache/debs" -maxdepth 1 -name "${p}_*.deb" -printf '%T@ %p\n' | sort -nr | head -1 | cut -d' ' -f2-)
	kernel_debs+=("$deb")
done

# --- the root file system --------------------------------------------------------------
rm -rf "$dir.tmp"
mkdir -p "$dir.tmp"
root=$dir.tmp/rootfs
say "mmdebstrap bookworm (essential + ${#packages[@]} packages) from ${mirrors[0]}"
t0=$SECONDS
hooks=$dir.tmp/hooks
mkdir -p "$hooks"
printf '%s\n' "$initramfs_conf" >"$hooks/initramfs.conf"
printf '%s\n' "$initramfs_hook" >"$hooks/initramfs-hook"
# The customize hook, run by mmdebstrap with the chroot's /proc, /sys and /dev mounted:
# the kernels installed (their postinst writes the initramfs) and copied out, then
# /boot and /lib/modules emptied; the host's JDK over the archive's.
cat >"$hooks/customize.sh" <<'EOF'
#!/bin/sh
# customize.sh ROOT OUT JAVA_HOME NAME=DEB...
set -eu
export DEBIAN_FRONTEND=noninteractive
root=$1 out=$2 java_home=$3
shift 3
install -m 644 "$out/hooks/initramfs.conf" "$root/etc/initramfs-tools/conf.d/jflame-vm.conf"
install -m 755 "$out/hooks/initramfs-hook" "$root/etc/initramfs-tools/hooks/jflame-vm"
for nd in "$@"; do
	name=${nd%%=*} deb=${nd#*=}
	cp "$deb" "$root/tmp/kernel.deb"
	chroot "$root" dpkg -i /tmp/kernel.deb
	rm "$root/tmp/kernel.deb"
	release=$(dpkg-deb -f "$deb" Package | sed 's/^linux-image-//')
	mkdir -p "$out/kernel-$name"
	cp "$root/boot/vmlinuz-$release" "$out/kernel-$name/vmlinuz"
	cp "$root/boot/initrd.img-$release" "$out/kernel-$name/initrd.img"
	echo "$release" >"$out/kernel-$name/release"
done
rm -rf "$root"/boot/* "$root"/lib/modules/* "$root"/var/lib/initramfs-tools/*
# the host's JDK (and its /etc configuration, which its conf/ links to)
rm -rf "$root$java_home" "$root/etc/java-17-openjdk"
tar -C / --exclude="${java_home#/}/jmods" --exclude="${java_home#/}/include" --exclude="${java_home#/}/man" \
	-cf - "${java_home#/}" etc/java-17-openjdk | tar -C "$root" -xf -
chroot "$root" "$java_home/bin/java" -version
EOF
kernel_args=()
for i in "${!kernel_pkgs[@]}"; do kernel_args+=("${kernel_names[$i]}=${kernel_debs[$i]}"); done
# downloaded .debs are kept in $cache/debs for the next build ("$1" in a hook: the chroot)
# shellcheck disable=SC2016
mmdebstrap "${args[@]}" --skip=essential/unlink \
	--setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
	--setup-hook='mkdir -p "$1"/usr/share/man/man1' \
	--setup-hook="sync-in $cache/debs /var/cache/apt/archives/" \
	--customize-hook="sync-out /var/cache/apt/archives $cache/debs" \
	--customize-hook="sh $hooks/customize.sh \"\$1\" $dir.tmp $java_home ${kernel_args[*]}" \
	--customize-hook='rm -f "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/*_Packages*' \
	bookworm "$root" "${bookworm_sources[@]}" >"$dir.tmp/mmdebstrap.log" 2>&1 ||
	{ tail -40 "$dir.tmp/mmdebstrap.log" >&2; die "mmdebstrap failed (log: $dir.tmp/mmdebstrap.log)"; }
rm -rf "$cache/debs/partial" "$cache/debs/lock" "$hooks"
for name in "${kernel_names[@]}"; do
	[[ -s $dir.tmp/kernel-$name/vmlinuz && -s $dir.tmp/kernel-$name/initrd.img ]] ||
		die "kernel $name: no vmlinuz or initrd.img (log: $dir.tmp/mmdebstrap.log)"
done
{
	echo "key $key"
	for i in "${!kernel_pkgs[@]}"; do
		echo "kernel ${kernel_names[$i]} $(cat "$dir.tmp/kernel-${kernel_names[$i]}/release") ${kernel_debs[$i]##*/}"
	done
	echo "jdk $("$java_home/bin/java" -version 2>&1 | head -1) (host package $jdk_version)"
	echo "rootfs $(du -sm "$root" | cut -f1) MB"
	echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) in $((SECONDS - t_start)) s (mmdebstrap $((SECONDS - t0)) s)"
} >"$dir.tmp/manifest"
rm -rf "$dir"
mv "$dir.tmp" "$dir"
# other builds (another checkout may use another key: each is kept while used in
# the last 7 days, the 3 used last at most), a build that died half-way, and
# .debs no build has used for 30 days (older kernels and updates)
find "$cache" -mindepth 1 -maxdepth 1 -type d -regextype egrep -regex '.*/[0-9a-f]{12}' ! -name "$key" \
	-printf '%T@ %p\n' | sort -nr | awk -v old="$(($(date +%s) - 7 * 86400))" 'NR > 2 || $1 < old {print $2}' |
	xargs -r rm -rf
find "$cache" -mindepth 1 -maxdepth 1 -type d -name '*.tmp' -exec rm -rf {} +
find "$cache/debs" -name '*.deb' -atime +30 -delete
say "built $dir in $((SECONDS - t_start)) s: $(tr '\n' ';' <"$dir/manifest")"
echo "$dir"
