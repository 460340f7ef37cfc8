#!/usr/bin/env bash
# Every command of both binaries explains itself: `--help` exits 0, every option and positional it
# lists has a description, and the generated man pages and bash completions exist and parse; the
# scripts a user runs by hand (make-certs.sh, lab-demo.sh) answer --help too.
# Usage: help_text_test.sh AGENT CONTROLLER GENERATED_DOCS_DIR
set -euo pipefail
agent=$1 controller=$2 docs=$3
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# An option line is "  --name TYPE   description" or, when the name is long, the description on
# the next line, indented further. A line with the name alone and no description below is a gap.
check_help() {
  local what=$1; shift
  local text
  if ! text=$("$@" --help 2>&1); then fail "$what --help exits non-zero"; return; fi
  [[ -n $text ]] || fail "$what --help prints nothing"
  awk -v what="$what" '
    function flush() { if (pending != "") { print "FAIL: " what ": no description for: " pending; bad = 1 } pending = "" }
    /^  +-/ || /^  +[a-z_]+ [A-Z]/ {
      flush()
      line = $0; sub(/^ +/, "", line)
      # name and type, then two or more spaces, then the description
      if (line !~ /  +[^ ]/) pending = line
      next
    }
    /^                    +[^ ]/ { pending = ""; next }
    { flush() }
    END { flush(); exit bad }' <<<"$text" || failures=$((failures + 1))
}

check_help tusk-agent "$agent"
check_help tusk-controller "$controller"
subcommands=$("$controller" --help | awk '/^Subcommands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')
[[ -n $subcommands ]] || fail "tusk-controller --help lists no subcommands"
for command in $subcommands; do
  check_help "tusk-controller $command" "$controller" "$command"
done

"$agent" --version | grep -Eq '^tusk-agent [0-9]+\.[0-9]+\.[0-9]+ \(git [0-9a-f]{7,}|unknown\)' ||
  fail "tusk-agent --version: $("$agent" --version)"
"$controller" --version | grep -Eq '^tusk-controller [0-9]+\.[0-9]+\.[0-9]+ \(git ' ||
  fail "tusk-controller --version: $("$controller" --version)"

for program in tusk-agent tusk-controller; do
  completion=$docs/completions/$program
  if [[ -s $completion ]] && bash -n "$completion"; then :; else fail "$completion missing or not valid bash"; fi
  page=$docs/man1/$program.1
  if [[ ! -s $page ]]; then
    fail "$page missing (help2man not installed?)"
  elif ! grep -q '^\.SH OPTIONS' "$page"; then
    fail "$page has no OPTIONS section"
  fi
done
for command in $subcommands; do
  grep -q "^\.SS $command\$" "$docs/man1/tusk-controller.1" || fail "tusk-controller.1 does not describe '$command'"
done
# tusk-profile(5), from docs/profile.md: a man page with the reference's sections, which groff reads
# without a warning (what each key documents is profile_reference_test's).
profile_page=$docs/man5/tusk-profile.5
if [[ ! -s $profile_page ]]; then
  fail "$profile_page missing"
else
  for section in DESCRIPTION UNITS 'TOP LEVEL' TESTS 'QUALIFICATION METHODS' THRESHOLDS; do
    grep -qx "\.SH $section" "$profile_page" || fail "tusk-profile.5 has no section $section"
  done
  if command -v groff >/dev/null; then
    warnings=$(groff -k -man -ww -z "$profile_page" 2>&1) || true
    [[ -z $warnings ]] || fail "groff warns of tusk-profile.5: $warnings"
  fi
fi

# The scripts a user runs by hand answer --help as well, and make nothing. Before: make-certs.sh
# took --help for its directory and printed mkdir's usage.
root=$(cd "$(dirname "$0")/../.." && pwd)
scratch=$(mktemp -d)
for script in make-certs.sh lab-demo.sh; do
  if ! text=$(cd "$scratch" && bash "$root/scripts/$script" --help 2>&1); then fail "scripts/$script --help exits non-zero: $text"; fi
  grep -q "scripts/$script" <<<"$text" || fail "scripts/$script --help does not show how to run it: $text"
done
if (cd "$scratch" && bash "$root/scripts/make-certs.sh" --out certs >/dev/null 2>&1); then
  fail "make-certs.sh --out certs (an option where DIR goes) exits 0"
fi
[[ -z $(ls -A "$scratch") ]] || fail "a --help or a usage error made files: $(ls -A "$scratch")"
rm -rf "$scratch"

if ((failures > 0)); then echo "$failures problem(s)"; exit 1; fi
echo "help, version, man pages and completions: ok ($(wc -w <<<"$subcommands") subcommands)"
