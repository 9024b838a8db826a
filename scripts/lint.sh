#!/usr/bin/env bash
# lint.sh: the project's C is formatted by its .clang-format (kernel style, 120
# columns) and its shell scripts pass shellcheck (.shellcheckrc). Prints each
# difference or warning and exits 1 when there is one; `lint.sh --fix` formats the C.
# The C: every tracked .c and .h but tests/data's fixtures (their line numbers are
# the tests' expectations) and npm's packages.
set -euo pipefail
cd "$(dirname "$0")/.."

fix=false
case ${1:-} in
--fix) fix=true ;;
"") ;;
*)
	echo "jflame: lint.sh takes --fix or nothing, not '$1'" >&2
	exit 2
	;;
esac
for tool in clang-format shellcheck git; do
	if ! command -v "$tool" >/dev/null; then
		echo "jflame: lint.sh needs $tool: run scripts/deps.sh" >&2
		exit 1
	fi
done

mapfile -t c_files < <(git ls-files '*.c' '*.h' | grep -v -e '^tests/data/' -e '/node_modules/')
mapfile -t sh_files < <(git ls-files '*.sh' .ci/run)
status=0
if $fix; then
	clang-format -i "${c_files[@]}"
elif ! clang-format --dry-run -Werror "${c_files[@]}"; then
	echo "jflame: C not in .clang-format's layout (above); scripts/lint.sh --fix formats it" >&2
	status=1
fi
if ! shellcheck -x "${sh_files[@]}"; then
	echo "jflame: shellcheck warnings (above)" >&2
	status=1
fi
((status == 0)) && echo "lint: ${#c_files[@]} C files formatted, ${#sh_files[@]} scripts pass shellcheck"
exit $status
