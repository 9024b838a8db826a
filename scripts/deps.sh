#!/usr/bin/env bash
# Installs every Debian package jflame's build, tests and benchmarks need.
# Idempotent: quiet and quick when everything is already there.
set -euo pipefail

packages=(
  # build
  build-essential cmake pkg-config clang llvm
  # agent
  openjdk-17-jdk-headless libcapstone-dev
  # sampler and symbolizer (later issues build on these)
  libbpf-dev libelf-dev zlib1g-dev libiberty-dev libcap-dev bpftool
  # tests: real peers and sanitizer runtimes
  linux-perf jattach python3 libclang-rt-14-dev procps
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done
((${#missing[@]})) || exit 0

if [[ $(id -u) -ne 0 ]]; then
  echo "jflame: missing packages: ${missing[*]}; run scripts/deps.sh as root (or: sudo apt-get install ${missing[*]})" >&2
  exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
