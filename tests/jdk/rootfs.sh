#!/usr/bin/env bash
# rootfs.sh - a JDK of the matrix (tests/jdk/README.md) as its Debian suite
# ships it, in a root file system of that suite made with mmdebstrap from
# Debian's archive (the mirrors this machine's apt uses), built once and cached:
#   11  bullseye's openjdk-11-jdk-headless (glibc 2.31)
#   21  trixie's openjdk-21-jdk-headless
#   25  trixie's openjdk-25-jdk-headless
# with libc6-dbg (libc's local symbols, start_thread among them, as the host
# has them). The JVMs run in it by tests/jdk/in-root.sh, on this machine's kernel.
#
#   tests/jdk/rootfs.sh JDK             build unless cached; print the root's directory
#   tests/jdk/rootfs.sh JDK --refresh   build again (the suite's updates)
#   tests/jdk/rootfs.sh JDK --key       print the cache key only
#
# The directory printed is the root file system; its java is at
# /usr/lib/jvm/java-JDK-openjdk-amd64 inside, and ../manifest says what it holds.
# Environment: JFLAME_JDK_CACHE (default /var/cache/jflame-jdk): a directory per
# JDK and key (a hash of the packages, mirrors and suite), downloaded .debs in
# debs-SUITE/ (kept for the next build). Runs as root (mmdebstrap's root mode).
# Two runs at once wait for each other (a lock).
set -euo pipefail
cache=${JFLAME_JDK_CACHE:-/var/cache/jflame-jdk}
say() { printf 'jdk-rootfs: %s\n' "$*" >&2; }
die() { printf 'jdk-rootfs: %s\n' "$*" >&2; exit 1; }
jdk="" refresh=0 key_only=0
for a in "$@"; do
	case $a in
	--refresh) refresh=1 ;;
	--key) key_only=1 ;;
	-h | --help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	11 | 21 | 25) jdk=$a ;;
	*) die "unknown argument $a: give a JDK (11, 21 or 25), --refresh or --key (see --help)" ;;
	esac
done
[[ -n $jdk ]] || die "which JDK? give 11, 21 or 25 (see --help)"
case $jdk in
11) suite=bullseye ;;
*) suite=trixie ;;
esac
packages=("openjdk-$jdk-jdk-headless" libc6-dbg)

# The mirrors of this machine's bookworm entries, for the JDK's suite (its -security and -updates too)
mapfile -t mirrors < <(python3 "$(dirname "$0")/../../scripts/debian_sources.py")
((${#mirrors[@]})) || die "no Debian 12 (bookworm) entries in /etc/apt/sources.list*: cannot tell which mirror to use"
sources=()
for m in "${mirrors[@]}"; do
	read -r uri s comps <<<"$m"
	sources+=("deb $uri $suite${s#bookworm} $comps")
done
# no manuals, docs (but copyrights) or translations; the JRE's postinst wants
# /usr/share/man/man1 for its alternatives (a setup hook makes it)
args=(--variant=minbase --include="$(IFS=,; echo "${packages[*]}")" --mode=root --format=directory
	--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*'
	--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright'
	--dpkgopt='path-exclude=/usr/share/locale/*')
recipe=1 # bump when the build below changes in a way the inputs do not show
key=$(printf '%s\n' "$recipe" "$suite" "${args[@]}" "${sources[@]}" | sha256sum | cut -c1-12)
if ((key_only)); then
	echo "$key"
	exit 0
fi
dir=$cache/jdk$jdk-$key

[[ $(id -u) -eq 0 ]] || die "run as root (mmdebstrap's root mode), e.g. sudo $0 $jdk"
command -v mmdebstrap >/dev/null || die "mmdebstrap missing; run scripts/deps.sh (it installs mmdebstrap)"
mkdir -p "$cache"
exec 9>"$cache/.lock"
flock 9 # one build at a time; a second run waits, then finds it cached
if [[ -f $dir/manifest && $refresh -eq 0 ]]; then
	touch "$dir" # used: kept by the clean-up below
	say "cached: $dir/root"
	echo "$dir/root"
	exit 0
fi
t0=$SECONDS
rm -rf "$dir.tmp"
mkdir -p "$dir.tmp" "$cache/debs-$suite"
say "mmdebstrap $suite (minbase + ${packages[*]}) from ${mirrors[0]%% *}"
# downloaded .debs are kept in $cache/debs-SUITE for the next build ("$1" in a hook: the chroot)
# shellcheck disable=SC2016
mmdebstrap "${args[@]}" \
	--setup-hook='mkdir -p "$1"/var/cache/apt/archives/ "$1"/usr/share/man/man1' \
	--setup-hook="sync-in $cache/debs-$suite /var/cache/apt/archives/" \
	--customize-hook="sync-out /var/cache/apt/archives $cache/debs-$suite" \
	--customize-hook='rm -f "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/*_Packages*' \
	"$suite" "$dir.tmp/root" "${sources[@]}" >"$dir.tmp/mmdebstrap.log" 2>&1 ||
	{ tail -40 "$dir.tmp/mmdebstrap.log" >&2; die "mmdebstrap failed (log: $dir.tmp/mmdebstrap.log)"; }
rm -rf "$cache/debs-$suite/partial" "$cache/debs-$suite/lock"
java=/usr/lib/jvm/java-$jdk-openjdk-amd64/bin/java
[[ -x $dir.tmp/root$java ]] || die "no $java in the $suite root (log: $dir.tmp/mmdebstrap.log)"
{
	echo "key $key"
	echo "suite $suite"
	# shellcheck disable=SC2016 # dpkg-query fields
	chroot "$dir.tmp/root" dpkg-query -W -f='package ${Package} ${Version}\n' "${packages[@]}" libc6
	echo "java $java"
	echo "rootfs $(du -sm "$dir.tmp/root" | cut -f1) MB"
	echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ) in $((SECONDS - t0)) s"
} >"$dir.tmp/manifest"
rm -rf "$dir"
mv "$dir.tmp" "$dir"
# this JDK's other builds (an older key), and .debs no build has used for 30 days
find "$cache" -mindepth 1 -maxdepth 1 -type d -name "jdk$jdk-*" ! -name "jdk$jdk-$key" -exec rm -rf {} +
find "$cache" -name '*.deb' -atime +30 -delete
say "built $dir/root in $((SECONDS - t0)) s: $(tr '\n' ';' <"$dir/manifest")"
echo "$dir/root"
