#!/usr/bin/env bash
# manpages.sh JFLAME SRC_MAN_DIR OUT_DIR: writes the man pages jflame.1 and jflame-<command>.1
# (one per command `jflame --help` lists) from the usage texts with Debian's help2man.
#
# The usage texts (`jflame --help`, `jflame <command> --help`) are the only place options
# are written; SRC_MAN_DIR/<page>.h2m (help2man --include) adds what help does not hold:
# description, events, files, examples, see also. The build runs this (CMakeLists.txt,
# target manpages). `manpages.sh --help-of JFLAME [COMMAND]` is the filter help2man runs:
# the usage text as it is, with help2man's conventions put on its shape:
#   "usage: jflame x ..."  -> "Usage: jflame x ..." (help2man's SYNOPSIS)
#   "       jflame x ..."  -> "  or:  jflame x ..." (another form)
#   other indented lines of the usage -> joined to the line before (a wrapped usage)
#   "  --opt X    --other: ..." -> the description on a line of its own, in its column
#                                  (help2man takes a description starting with '-' for
#                                  more of the option)
#   "  jflame ..." under "Examples:" -> "  $ jflame ..." (help2man's verbatim examples)
# JFLAME_EMULATOR: what runs JFLAME when it is not for this machine (a cross build's
# qemu-aarch64-static: CMAKE_CROSSCOMPILING_EMULATOR).
set -euo pipefail
jf() { ${JFLAME_EMULATOR:+"$JFLAME_EMULATOR"} "$jflame" "$@"; }

if [[ ${1:-} == --help-of ]]; then
	shift
	jflame=$1
	shift
	jf "$@" | awk '
		NR == 1 && /^usage: / { sub(/^usage: /, "Usage: "); line = $0; inusage = 1; next }
		inusage && /^ +jflame / { print line; sub(/^ +/, "  or:  "); line = $0; next }
		inusage && /^ +[^ ]/ { sub(/^ +/, " "); line = line $0; next }
		inusage { print line; inusage = 0 }
		match($0, /^ +-[^ ]+( [^ ]+)*  +-/) {
			col = RLENGTH - 1
			spec = substr($0, 1, col)
			sub(/ +$/, "", spec)
			print spec
			printf "%*s%s\n", col, "", substr($0, col + 1)
			next
		}
		/^Examples:$/ { examples = 1; print; next }
		examples && /^$/ { examples = 0 }
		examples && /^  [^ ]/ { sub(/^  /, "  $ ") }
		{ print }
		END { if (inusage) print line }'
	exit "${PIPESTATUS[0]}"
fi

if (($# != 3)); then
	echo "usage: scripts/manpages.sh JFLAME SRC_MAN_DIR OUT_DIR" >&2
	exit 2
fi
jflame=$(realpath "$1")
src=$(realpath "$2")
out=$3
self=$(realpath "$0")
help2man=${HELP2MAN:-help2man} # the one CMake found
command -v "$help2man" >/dev/null || { echo "jflame: help2man not found; install the Debian package 'help2man' (or run scripts/deps.sh)" >&2; exit 1; }
mkdir -p "$out"

version=$(jf --version | awk '{print $2}')
[[ -n $version ]] || { echo "manpages: cannot read the version from $jflame --version" >&2; exit 1; }
# the date on the pages: the last commit's, so a rebuild writes the same pages
if [[ -z ${SOURCE_DATE_EPOCH:-} ]] && epoch=$(git -C "$src" log -1 --format=%ct 2>/dev/null) && [[ -n $epoch ]]; then
	export SOURCE_DATE_EPOCH=$epoch
fi

# the commands and their one-line summaries: the lines under "commands:" in jflame --help
mapfile -t lines < <(jf --help | awk '/^commands:$/ { on = 1; next } on && /^$/ { exit } on')
((${#lines[@]})) || { echo "manpages: no commands in $jflame --help" >&2; exit 1; }
names=() summaries=()
for l in "${lines[@]}"; do
	read -r name summary <<<"$l"
	names+=("$name")
	summaries+=("$summary")
done

tmp=$(mktemp -d /tmp/jflame-man.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

page() { # page name (jflame or jflame-CMD), its NAME line, help2man's program, include files...
	local name=$1 summary=$2 program=$3
	shift 3
	local incs=()
	for f in "$@"; do incs+=(--include="$f"); done
	"$help2man" --no-info --section=1 --manual="User Commands" --source="jflame $version" \
		--version-string="$name $version" --name="$summary" "${incs[@]}" \
		--output="$tmp/$name.1" "$program" ||
		{ echo "manpages: help2man failed for $name" >&2; exit 1; }
	mv "$tmp/$name.1" "$out/$name.1"
}

q() { printf '%q' "$1"; }
run="bash $(q "$self") --help-of $(q "$jflame")"

# jflame.1: SEE ALSO names every command's page
{
	echo "[SEE ALSO]"
	for i in "${!names[@]}"; do
		echo ".BR jflame\\-${names[i]} (1),"
	done
} >"$tmp/commands.h2m"
page jflame "mixed-mode flame graphs of Java services (Java, JVM, native and kernel frames)" \
	"$run" "$tmp/commands.h2m" "$src/jflame.h2m"

for i in "${!names[@]}"; do
	n=${names[i]}
	[[ -f $src/jflame-$n.h2m ]] || { echo "manpages: $src/jflame-$n.h2m missing (the page's description and see also)" >&2; exit 1; }
	page "jflame-$n" "${summaries[i]}" "$run $n" "$src/jflame-$n.h2m"
done
