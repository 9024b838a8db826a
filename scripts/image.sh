#!/usr/bin/env bash
# Builds jflame's container image without any container registry: Debian 12
# rootfs tarballs made with mmdebstrap from Debian's archive (the mirrors this
# machine's apt uses), imported with `podman import`, then deploy/Containerfile's
# stages: "build" (the build dependencies; cmake Release, installed into
# /opt/jflame) and "runtime" (the runtime libraries only + /opt/jflame;
# entrypoint /opt/jflame/bin/jflame).
#
#   scripts/image.sh               localhost/jflame:latest, and an OCI archive of it
#   scripts/image.sh --test-app    also localhost/jflame-testapp:latest (OpenJDK 17 JRE +
#                                  the examples jar), for tests/integration/test_container_e2e.py
#   scripts/image.sh --refresh     rebuild the rootfs tarballs (new Debian updates)
#   scripts/image.sh --arm64       also localhost/jflame:latest-arm64 (the arm64 runtime rootfs,
#                                  made under qemu-user, with scripts/package.sh --arch aarch64's
#                                  cross-built tree) and the manifest list localhost/jflame:multiarch
#                                  of both, saved as an OCI archive (an image index: linux/amd64
#                                  and linux/arm64, as a registry serves a multi-arch image)
#
# Environment: JFLAME_IMAGE_CACHE (default /var/cache/jflame-image: the rootfs
# tarballs and downloaded .debs, so a second run takes seconds),
# JFLAME_IMAGE_OUT (default out/: where the OCI archive goes).
# Runs as root (mmdebstrap's root mode, podman's rootful storage).
#
# Prints the image's name, its OCI archive's path and its size.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
cache=${JFLAME_IMAGE_CACHE:-/var/cache/jflame-image}
outdir=$(realpath -m "${JFLAME_IMAGE_OUT:-$src/out}")
test_app=0 refresh=0 arm64=0
for a in "$@"; do
	case $a in
	--test-app) test_app=1 ;;
	--refresh) refresh=1 ;;
	--arm64) arm64=1 ;;
	-h | --help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "image: unknown option $a (see --help)" >&2; exit 2 ;;
	esac
done
say() { printf 'image: %s\n' "$*" >&2; }
die() { printf 'image: %s\n' "$*" >&2; exit 1; }

[[ $(id -u) -eq 0 ]] || die "run as root (mmdebstrap and podman build need it), e.g. sudo $0"
for tool in mmdebstrap podman crun; do
	command -v $tool >/dev/null || die "$tool missing; run scripts/deps.sh (it installs mmdebstrap, podman, crun, runc, buildah, skopeo)"
done
[[ $(uname -m) == x86_64 || $arm64 -eq 0 ]] || die "--arm64 builds arm64 beside x86-64: run it on an x86-64 host"
# the arm64 rootfs' maintainer scripts and the arm64 image's check run under qemu-user
((arm64 == 0)) || bash "$src/scripts/binfmt-arm64.sh" image || exit 1

# Podman on this kind of host (see docs/always-on.md "The image"):
# - cgroups: v1 with a v2 hierarchy beside it and no systemd managing containers,
#   so the cgroupfs manager; crun refuses a hybrid layout whose v2 side holds a
#   controller ("cgroups in hybrid mode not supported, drop all controllers from
#   cgroupv2"), runc does not: then podman runs runc.
# - rlimits: podman asks for RLIMIT_NOFILE 1048576 by default, beyond the hard
#   limit here, and root without CAP_SYS_RESOURCE cannot raise it: containers get
#   the host's hard limits (nproc at most the 32768 podman's conmon has).
podman=(podman --cgroup-manager=cgroupfs)
v2_controllers=""
[[ $(stat -f -c %T /sys/fs/cgroup 2>/dev/null) == tmpfs && -r /sys/fs/cgroup/unified/cgroup.controllers ]] &&
	v2_controllers=$(tr '\n' ' ' </sys/fs/cgroup/unified/cgroup.controllers)
build_isolation=(--network=none) # everything the build needs is in the base images
if [[ -n ${v2_controllers// /} ]]; then
	command -v runc >/dev/null ||
		die "crun cannot run containers on this host (hybrid cgroups with controllers on cgroup v2: $v2_controllers); install runc (scripts/deps.sh)"
	podman+=(--runtime=runc)
	# podman 4.3's build has no --runtime (it takes containers.conf's): its RUN
	# steps go without an OCI runtime, chroot isolation (which shares the host's network)
	build_isolation=(--isolation=chroot)
fi
info_err=$("${podman[@]}" info 2>&1 >/dev/null) || die "podman does not work here: ${info_err:-podman info failed}"
nofile=$(ulimit -Hn) nproc=$(ulimit -Hu)
[[ $nofile == unlimited || $nofile -gt 1048576 ]] && nofile=1048576
[[ $nproc == unlimited || $nproc -gt 32768 ]] && nproc=32768
limits=(--ulimit="nofile=$nofile:$nofile" --ulimit="nproc=$nproc:$nproc")

# --- Debian's archive, as this machine's apt has it ------------------------------
# One-line sources for every bookworm* entry apt has here (scripts/debian_sources.py):
# the same mirrors, suites and components, handed to mmdebstrap.
mapfile -t sources < <(python3 "$(dirname "$0")/debian_sources.py" --backports | sed 's/^/deb /')
((${#sources[@]})) || die "no Debian 12 (bookworm) entries in /etc/apt/sources.list*: cannot tell which mirror to use"

# --- the rootfs tarballs ------------------------------------------------------------
# runtime: `ldd jflame` (libbpf, libelf, zlib, libcap, capstone (the stubs' unwinding
# rows), protobuf-c, json-c, libcurl, xxhash
# and what they pull in; the agent needs only libc: it dlopens capstone where the
# JVM's image has it), ca-certificates for --push https.
runtime_pkgs=(libbpf1 libelf1 zlib1g libcap2 libcapstone4 libprotobuf-c1 libjson-c5 libcurl4 libxxhash0 libgsl27 libgslcblas0 ca-certificates)
# build: scripts/deps.sh's build group (no test-only packages) and help2man (the man pages)
build_pkgs=(build-essential cmake pkg-config clang llvm openjdk-17-jdk-headless libcapstone-dev
	libbpf-dev libelf-dev zlib1g-dev libiberty-dev libcap-dev bpftool
	libprotobuf-c-dev protobuf-c-compiler libjson-c-dev libcurl4-openssl-dev libxxhash-dev libgsl-dev
	help2man)
# test app: a plain JRE, as Java service images have (none of jflame's libraries)
java_pkgs=(openjdk-17-jre-headless)
# no manuals, docs (but copyrights) or translations in the images (the JDK's
# postinst still wants /usr/share/man/man1 for its alternatives: a setup hook makes it)
slim=(--dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*'
	--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright'
	--dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias')

mkdir -p "$cache" "$outdir"
exec 9>"$cache/.lock"
flock 9 # one run at a time per cache (and podman storage)
((refresh)) && rm -rf "$cache/debs" # only what the new rootfs use is kept
mkdir -p "$cache/debs"
rootfs_tar="" rootfs_key=""
rootfs() { # name, packages...: sets rootfs_tar and rootfs_key, building the tarball unless cached
	# (for $rootfs_arch, when set: another architecture, its maintainer scripts under qemu-user)
	local name=$1
	shift
	local inc
	inc=$(IFS=,; echo "$*")
	local args=(${rootfs_arch:+--arch="$rootfs_arch"} --variant=essential --include="$inc" --mode=root --format=tar "${slim[@]}")
	rootfs_key=$(printf '%s\n' 1 "${args[@]}" "${sources[@]}" | sha256sum | cut -c1-12)
	rootfs_tar=$cache/rootfs-$name-$rootfs_key.tar
	local tar=$rootfs_tar
	if [[ -s $tar && $refresh -eq 0 ]]; then
		say "rootfs $name: cached $tar"
		return
	fi
	say "rootfs $name: mmdebstrap bookworm (essential + $# packages) from ${sources[0]#deb }"
	local t0=$SECONDS
	# downloaded .debs are kept in $cache/debs for the other rootfs and next time
	# ("$1" in a hook: the chroot, expanded by mmdebstrap)
	# shellcheck disable=SC2016
	mmdebstrap "${args[@]}" --skip=essential/unlink \
		--setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
		--setup-hook='mkdir -p "$1"/usr/share/man/man1' \
		--setup-hook="sync-in $cache/debs /var/cache/apt/archives/" \
		--customize-hook="sync-out /var/cache/apt/archives $cache/debs" \
		bookworm "$tar.tmp" "${sources[@]}" >"$cache/mmdebstrap-$name.log" 2>&1 ||
		{ tail -30 "$cache/mmdebstrap-$name.log" >&2; die "mmdebstrap failed for $name (log: $cache/mmdebstrap-$name.log)"; }
	mv "$tar.tmp" "$tar"
	rm -rf "$cache/debs/partial" "$cache/debs/lock"
	say "rootfs $name: $(du -m "$tar" | cut -f1) MB in $((SECONDS - t0)) s"
	# older tarballs of this rootfs
	find "$cache" -maxdepth 1 -name "rootfs-$name-*.tar" ! -name "rootfs-$name-$rootfs_key.tar" -delete
}

base_image() { # variable, name, image, packages...: imports the rootfs as IMAGE:KEY (and
	# IMAGE:latest) unless there, and sets the variable to IMAGE:KEY
	local var=$1 name=$2 image=$3
	shift 3
	rootfs "$name" "$@"
	if ! "${podman[@]}" image exists "$image:$rootfs_key"; then
		say "podman import $rootfs_tar as $image:$rootfs_key"
		"${podman[@]}" import ${rootfs_arch:+--arch="$rootfs_arch"} --change 'CMD ["/bin/sh"]' "$rootfs_tar" "$image:$rootfs_key" >/dev/null ||
			die "podman import $rootfs_tar failed"
	fi
	"${podman[@]}" tag "$image:$rootfs_key" "$image:latest"
	# earlier rootfs of this base
	local old
	for old in $("${podman[@]}" images --format '{{.Repository}}:{{.Tag}}' "$image"); do
		[[ $old == "$image:$rootfs_key" || $old == "$image:latest" ]] || "${podman[@]}" rmi "$old" >/dev/null 2>&1 || true
	done
	printf -v "$var" '%s' "$image:$rootfs_key"
}

t_start=$SECONDS
build_base="" runtime_base="" java_base=""
base_image build_base build localhost/jflame-debian12-build "${build_pkgs[@]}"
base_image runtime_base runtime localhost/jflame-debian12 "${runtime_pkgs[@]}"
((test_app)) && base_image java_base java localhost/jflame-debian12-java "${java_pkgs[@]}"
arm64_base=""
((arm64)) && rootfs_arch=arm64 base_image arm64_base runtime-arm64 localhost/jflame-debian12-arm64 "${runtime_pkgs[@]}"

# --- the build context: the source tree as git sees it (tracked and new files,
# not what .gitignore leaves out: no build directories, no node_modules) -----------
ctx=$(mktemp -d /tmp/jflame-image-ctx.XXXXXX)
trap 'rm -rf "$ctx"' EXIT
(cd "$src" && git ls-files -z --cached --others --exclude-standard |
	while IFS= read -r -d '' f; do [[ -e $f ]] && printf '%s\0' "$f"; done |
	tar --null -T - -cf - | tar -C "$ctx" -xf -)

build() { # target, tag
	say "podman build --target $1 -t $2"
	"${podman[@]}" build "${build_isolation[@]}" "${limits[@]}" --pull=never --layers --target "$1" \
		--build-arg BUILD_BASE="$build_base" --build-arg RUNTIME_BASE="$runtime_base" --build-arg TREE=build \
		${java_base:+--build-arg JAVA_BASE="$java_base"} \
		-f "$src/deploy/Containerfile" -t "$2" "$ctx" >"$cache/build-$1.log" 2>&1 ||
		{ tail -40 "$cache/build-$1.log" >&2; die "podman build --target $1 failed (log: $cache/build-$1.log)"; }
}
build build localhost/jflame-build:latest # tagged: its layers are the cache of the next run
build runtime localhost/jflame:latest
((test_app)) && build testapp localhost/jflame-testapp:latest
# earlier runs' images of this Containerfile, now untagged (labelled jflame.image.stage)
"${podman[@]}" image prune -f --filter label=jflame.image.stage >/dev/null

# the image works: its entrypoint answers
version=$("${podman[@]}" run "${limits[@]}" --rm --network=none localhost/jflame:latest --version | awk '{print $2}') || true
[[ -n $version ]] || die "localhost/jflame:latest does not run: ${podman[*]} run ${limits[*]} --rm localhost/jflame:latest --version"
archive=$outdir/jflame-image-$version.oci.tar
rm -f "$archive.tmp"
"${podman[@]}" save -q --format oci-archive -o "$archive.tmp" localhost/jflame:latest >/dev/null
mv "$archive.tmp" "$archive"

size=$("${podman[@]}" image inspect --format '{{.Size}}' localhost/jflame:latest)
echo "image: localhost/jflame:latest ($((size / 1000000)) MB; $(du -m "$archive" | cut -f1) MB as OCI archive, layers gzipped)"
echo "oci-archive: $archive"

# --- arm64: the cross-built tree on the arm64 runtime rootfs, and the manifest list ----
# No arm64 compiler runs emulated: scripts/package.sh --arch aarch64 cross-builds the
# installed tree here (as the build stage's, for arm64) and the runtime stage takes it
# (TREE=prebuilt: the Containerfile's prebuilt stage copies it from the context).
if ((arm64)); then
	ctx64=$(mktemp -d /tmp/jflame-image-arm64.XXXXXX)
	trap 'rm -rf "$ctx" "$ctx64"' EXIT
	say "scripts/package.sh --arch aarch64 (the cross build)"
	tarball=$(bash "$src/scripts/package.sh" --arch aarch64 "$ctx64" 2>"$cache/package-arm64.log" | tail -1) ||
		{ tail -30 "$cache/package-arm64.log" >&2; die "scripts/package.sh --arch aarch64 failed (log: $cache/package-arm64.log)"; }
	mkdir "$ctx64/jflame-prebuilt"
	tar -C "$ctx64/jflame-prebuilt" --strip-components=1 -xzf "$tarball"
	rm -f "$tarball"
	say "podman build --platform linux/arm64 --target runtime -t localhost/jflame:latest-arm64"
	"${podman[@]}" build "${build_isolation[@]}" "${limits[@]}" --pull=never --layers --platform linux/arm64 \
		--target runtime --build-arg RUNTIME_BASE="$arm64_base" --build-arg TREE=prebuilt \
		-f "$src/deploy/Containerfile" -t localhost/jflame:latest-arm64 "$ctx64" >"$cache/build-runtime-arm64.log" 2>&1 ||
		{ tail -40 "$cache/build-runtime-arm64.log" >&2; die "podman build of the arm64 image failed (log: $cache/build-runtime-arm64.log)"; }
	"${podman[@]}" image prune -f --filter label=jflame.image.stage >/dev/null
	# it runs (under qemu-user) and is the same jflame
	v64=$("${podman[@]}" run "${limits[@]}" --rm --network=none --platform linux/arm64 localhost/jflame:latest-arm64 --version |
		awk '{print $2}') || true
	[[ $v64 == "$version" ]] || die "localhost/jflame:latest-arm64 does not run under qemu-user, or is not jflame $version (it said '$v64')"
	# one name for both: the manifest list (a registry push of it serves each node its own)
	"${podman[@]}" manifest rm localhost/jflame:multiarch >/dev/null 2>&1 || true
	"${podman[@]}" manifest create localhost/jflame:multiarch >/dev/null
	for img in localhost/jflame:latest localhost/jflame:latest-arm64; do
		"${podman[@]}" manifest add localhost/jflame:multiarch "containers-storage:$img" >/dev/null ||
			die "podman manifest add localhost/jflame:multiarch $img failed"
	done
	multi=$outdir/jflame-image-$version-multiarch.oci.tar
	rm -f "$multi.tmp"
	"${podman[@]}" manifest push -q --all localhost/jflame:multiarch "oci-archive:$multi.tmp" >/dev/null ||
		die "podman manifest push of localhost/jflame:multiarch to $multi failed"
	mv "$multi.tmp" "$multi"
	size=$("${podman[@]}" image inspect --format '{{.Size}}' localhost/jflame:latest-arm64)
	echo "image: localhost/jflame:latest-arm64 ($((size / 1000000)) MB)"
	echo "manifest: localhost/jflame:multiarch (linux/amd64, linux/arm64)"
	echo "oci-archive (multi-arch): $multi ($(du -m "$multi" | cut -f1) MB)"
fi
((test_app)) && echo "test app: localhost/jflame-testapp:latest"
echo "podman: ${podman[*]} run ${limits[*]} ..."
say "done in $((SECONDS - t_start)) s"
