#!/usr/bin/env bash
# The README is the front door: at most 250 lines, and every page under docs/ is linked from it.
# Every relative link in README.md, CODING_STYLE.md and docs/*.md names a file that exists and,
# after a '#', a heading of that file (GitHub's anchors: lower case, punctuation dropped, spaces
# as hyphens, a repeated heading numbered -1, -2, ...).
#   doc_links_test.sh SOURCE_DIR
set -euo pipefail
cd "${1:?usage: doc_links_test.sh SOURCE_DIR}"

failures=0
fail() {
  echo "doc_links: $*" >&2
  failures=$((failures + 1))
}

# The anchors of a Markdown file's headings, one per line (headings in code blocks are not).
anchors_of() {
  awk '
    /^```/ { fence = !fence; next }
    fence || !/^#+ / { next }
    {
      text = $0
      sub(/^#+ +/, "", text)
      text = tolower(text)
      gsub(/[^a-z0-9 _-]/, "", text)
      gsub(/ /, "-", text)
      n = seen[text]++
      print (n ? text "-" n : text)
    }' "$1"
}

pages=(README.md CODING_STYLE.md docs/*.md)
for page in "${pages[@]}"; do
  dir=$(dirname "$page")
  # ](target) outside code blocks; a target has no spaces or parentheses.
  while IFS= read -r target; do
    case "$target" in http://* | https://* | mailto:*) continue ;; esac
    path=${target%%#*}
    anchor=""
    [[ $target == *"#"* ]] && anchor=${target#*#}
    file=$page
    if [[ -n $path ]]; then
      file=$dir/$path
      [[ -e $file ]] || { fail "$page: link to $target: no file $file"; continue; }
    fi
    if [[ -n $anchor ]]; then
      [[ $file == *.md ]] || { fail "$page: link to $target: an anchor into a file that is not Markdown"; continue; }
      anchors_of "$file" | grep -qxF -- "$anchor" || fail "$page: link to $target: $file has no heading #$anchor"
    fi
  done < <(awk '/^```/ { fence = !fence; next } !fence' "$page" | grep -oE '\]\([^ )]+\)' | sed -E 's/^\]\((.*)\)$/\1/')
done

lines=$(wc -l <README.md)
(( lines <= 250 )) || fail "README.md has $lines lines: the front door is at most 250; move a section to docs/"
for page in docs/*.md; do
  grep -qF "]($page)" README.md || fail "README.md's documentation index does not link $page"
done

if (( failures > 0 )); then
  echo "doc_links: $failures broken" >&2
  exit 1
fi
echo "doc_links: ${#pages[@]} pages, every link and anchor found; README.md $lines lines, every docs/ page in its index"
