# bench/common.sh - sourced by the bench scripts: where the build and java are
# (BUILD, JAVA), --help, and the checks each makes before it runs.
# shellcheck shell=bash

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD:-$root/build}          # the build tree to take jflame, the agent and the examples jar from
# shellcheck disable=SC2034 # used by the scripts that source this one
jflame=$build/native/jflame
# shellcheck disable=SC2034
agent=$build/jvmagent/libjflame-agent.so
# shellcheck disable=SC2034
jar=$build/examples/jflame-examples.jar
# shellcheck disable=SC2034
hog=$build/tests/integration/jflame_cpuhog
java=${JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
bench_name=$(basename "$0" .sh)

# bench_die MESSAGE...: "<script>: MESSAGE" on stderr, exit 1.
bench_die() {
  echo "$bench_name: $*" >&2
  exit 1
}

# bench_help ARGS...: with -h or --help, prints the script's header comment and exits 0.
bench_help() {
  case ${1:-} in
  -h | --help)
    sed -n '2,/^[^#]/{/^#/s/^# \{0,1\}//p}' "$0"
    exit 0
    ;;
  esac
}

# require_build FILE...: exits saying how to build unless every FILE is there
# (and, but for a .so or .jar, executable).
require_build() {
  local f
  for f in "$@"; do
    [[ -f $f && ($f == *.so || $f == *.jar || -x $f) ]] || bench_die "build missing ($*); build with: cmake -S $root -B $root/build && make -C $root/build -j2"
  done
}

# require_java: exits unless $java runs.
require_java() {
  [[ -x $java ]] || bench_die "no java at $java; set JAVA=/path/to/bin/java or run scripts/deps.sh"
}

# int_arg NAME VALUE MIN: exits unless VALUE is an integer >= MIN.
int_arg() {
  if ! [[ $2 =~ ^[0-9]+$ ]] || (($2 < $3)); then
    bench_die "$1 must be an integer >= $3 (got '$2')"
  fi
}
