#!/usr/bin/env bash
# deps.sh [demo]: installs the Debian packages jflame needs. With `demo`, only what
# building jflame and running scripts/demo.sh take (no test peers, browser, container
# tools or npm packages); without, everything the build, tests and benchmarks need.
# Idempotent: quiet and quick when everything is already there.
set -euo pipefail

scope=${1:-all}
case $scope in
demo | all) ;;
*)
  echo "jflame: deps.sh takes 'demo' or nothing (everything), not '$scope'" >&2
  exit 2
  ;;
esac

packages=(
  # build
  build-essential cmake pkg-config clang llvm
  # agent
  openjdk-17-jdk-headless libcapstone-dev
  # sampler and symbolizer (later issues build on these)
  libbpf-dev libelf-dev zlib1g-dev libiberty-dev libcap-dev bpftool
  # the recorder's cache of folded stacks hashes raw stacks with xxHash
  libxxhash-dev
  # diff --report and record --baseline: the t and normal distributions (GSL)
  libgsl-dev
  # convert: pprof (protobuf-c) and speedscope JSON (json-c)
  libprotobuf-c-dev protobuf-c-compiler libjson-c-dev
  # record --push: Pyroscope over HTTP(S)
  libcurl4-openssl-dev
)
if [[ $scope == all ]]; then
  packages+=(
  # scripts/lint.sh (the unit test unit.lint): the C's layout (.clang-format), the scripts' checks
  clang-format shellcheck
  # tests: protoc decodes our pprof with Google's own protobuf
  protobuf-compiler
  # tests: real peers and sanitizer runtimes; libc's local symbols (start_thread, where
  # the stack tests want a thread's stack to begin)
  linux-perf jattach python3 libclang-rt-14-dev procps libc6-dbg
  # browser and format tests: headless Chromium driven from Node.js
  chromium
  # deploy tests: the Kubernetes manifests parsed as YAML
  python3-yaml
  # the man pages (CMake's manpages target; scripts/package.sh, the image): help2man
  # writes them from the usage texts; groff and man-db render them in tests/unit
  help2man groff-base man-db
  # the container image (scripts/image.sh) and its end-to-end test: Debian 12
  # rootfs from Debian's archive, podman to build and run images without a
  # registry (runc where crun refuses hybrid cgroups; buildah and skopeo for
  # `buildah bud` and copying the OCI archive to a registry)
  mmdebstrap podman crun runc buildah skopeo
  # the kernel tests (tests/kernel): Debian's 5.10, 6.1 and 6.12 kernels under qemu
  # (TCG), their disk made by mke2fs -d and read back by debugfs (e2fsprogs); the
  # root file system by mmdebstrap (above)
  qemu-system-x86 e2fsprogs
  # arm64 (issue 36): jflame and the agent cross-built from x86-64 (scripts/cross-build.sh,
  # the unit test unit.arm64): Debian's cross gcc and its arm64 libc, the arm64 (multiarch)
  # -dev packages of jflame's libraries, and qemu-user to run the arm64 build's unit tests
  gcc-aarch64-linux-gnu binutils-aarch64-linux-gnu qemu-user-static
  # the arm64 guest (tests/kernel/run-vm-arm64.sh): Debian's arm64 kernel under
  # qemu-system-aarch64, its root file system by mmdebstrap --arch=arm64 (arch-test)
  qemu-system-arm arch-test
  libbpf-dev:arm64 libelf-dev:arm64 zlib1g-dev:arm64 libiberty-dev:arm64 libcap-dev:arm64
  libcapstone-dev:arm64 libxxhash-dev:arm64 libprotobuf-c-dev:arm64 libjson-c-dev:arm64
  libcurl4-openssl-dev:arm64
  # (libgsl-dev is not Multi-Arch: same, its :arm64 would remove the host's: the runtime
  # libraries, and the host's headers; native/CMakeLists.txt)
  libgsl27:arm64 libgslcblas0:arm64
  )
fi
# Node.js and npm (the tests'): the machine's own when it has them, else Debian's
if [[ $scope == all ]] && ! { command -v node && command -v npm; } >/dev/null; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

# npm packages pinned by package-lock.json: tests/browser's (playwright-core,
# pprof-format, ajv, speedscope) and tests/integration/k8s's (kubernetes-models:
# Kubernetes' OpenAPI schemas as ajv validators)
npm_packages() {
  local dir
  [[ $scope == all ]] || return 0
  for dir in tests/browser tests/integration/k8s; do
    [[ -d $dir/node_modules && $dir/node_modules/.package-lock.json -nt $dir/package-lock.json ]] && continue
    echo "deps: npm ci in $dir"
    (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
  done
}
cd "$(dirname "$0")/.."

if ((${#missing[@]} == 0)); then
  npm_packages
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  echo "jflame: missing packages: ${missing[*]}; run scripts/deps.sh as root (or: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# the arm64 packages (name:arm64) are multiarch: dpkg takes the architecture first
if [[ " ${missing[*]}" == *:arm64* ]] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  dpkg --add-architecture arm64
fi
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
npm_packages
