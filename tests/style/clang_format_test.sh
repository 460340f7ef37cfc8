#!/usr/bin/env bash
# Every C++ file of the project is as .clang-format lays it out: `clang-format --dry-run -Werror`
# over the tracked .cpp and .hpp files (or, outside a git checkout, those under the source
# folders), two files per core. On a failure it names each file and shows clang-format's first
# complaints; `clang-format -i FILE` mends a file.
#   clang_format_test.sh SOURCE_DIR
set -euo pipefail
cd "${1:?usage: clang_format_test.sh SOURCE_DIR}"

command -v clang-format >/dev/null || {
  echo "clang_format: clang-format is not installed (scripts/install-deps.sh installs it)" >&2
  exit 1
}
folders=(agent bench common controller fuzz proto tests)
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- "${folders[@]/%//*.cpp}" "${folders[@]/%//*.hpp}")
else
  mapfile -t files < <(find "${folders[@]}" -name '*.cpp' -o -name '*.hpp' 2>/dev/null | sort)
fi
((${#files[@]} > 0)) || { echo "clang_format: no C++ files found" >&2; exit 1; }

complaints=$(mktemp)
trap 'rm -f "$complaints"' EXIT
# xargs exits 123 when any clang-format did: collect the complaints, then name the files.
if ! printf '%s\0' "${files[@]}" | xargs -0 -n 16 -P "$(nproc)" clang-format --dry-run -Werror 2>"$complaints"; then
  grep -oE '^[^:]+\.(cpp|hpp):' "$complaints" | sort -u | sed 's/:$//; s/^/clang_format: not formatted: /' >&2
  head -40 "$complaints" >&2
  echo "clang_format: run clang-format -i on the files above" >&2
  exit 1
fi
echo "clang_format: ${#files[@]} files as .clang-format lays them out"
