#!/usr/bin/env bash
# The README opens with what a run shows: the summary of the `ber` scenario's fault run and what
# the scenario proved, and a screenshot of that run's report.html. This script makes both from a
# real run, so the README never shows output the code does not print.
#
#   scripts/readme-example.sh [BUILD_DIR]        run `lab-demo.sh ber`, then rewrite README.md's
#                                                example and docs/images/report-ber-fault.png
#   scripts/readme-example.sh --check LOG        exit 0 when README.md's example has the shape of
#                                                the `ber` output in LOG (numbers aside), 1 if not
# Needs root (the lab) for a run; --check needs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."

readme=README.md
begin='<!-- example: scripts/readme-example.sh -->'
end='<!-- /example -->'

# From a `lab-demo.sh ber` log: the fault run's table (ports left out) and what the demo proved.
trimmed_example() {
  awk '
    /^== 2\/2 / { fault = 1; print; next }
    fault && /^test 0 / { table = 1; print }
    fault && table && /^  (agent|lab-)/ && !/port:/ { print }
    fault && table && /^result:/ { print; table = 0 }
    /^== what the two runs show/ { fault = 0; proof = 1; print; next }
    proof && /^  (proven|NOT proven|lab-a)/ { print }
    proof && /^== ber:/ { print; proof = 0 }
  ' "$1"
}

# Lines with their numbers as N, a verdict's reasons left out (which thresholds a run breaks
# besides the one it is about varies) and runs of blanks as one: the shape the README must keep.
shape() { sed -E 's/ \([^)]*\)//g; s/[0-9]+(\.[0-9]+)?(e[-+]?[0-9]+)?/N/g; s/[[:space:]]+/ /g; s/ $//'; }

if [[ ${1:-} == --check ]]; then
  log=${2:?--check needs the log of a lab-demo.sh ber run}
  expected=$(trimmed_example "$log" | shape)
  shown=$(awk -v b="$begin" -v e="$end" '$0 == e { on = 0 } on && !/^```/ { print } $0 == b { on = 1 }' "$readme" | shape)
  [[ -n $expected ]] || { echo "readme-example: no ber fault run in $log" >&2; exit 1; }
  if [[ $expected != "$shown" ]]; then
    echo "readme-example: README.md's example is not what the code prints now; run scripts/readme-example.sh" >&2
    diff <(echo "$shown") <(echo "$expected") >&2 || true
    exit 1
  fi
  echo "readme-example: README.md's example has the shape of this run's output"
  exit 0
fi

build=${1:-build}
log=$(mktemp /tmp/tusk-readme-example-XXXXXX.log)
bash scripts/lab-demo.sh ber --build-dir "$build" | tee "$log"
{
  echo '```'
  trimmed_example "$log"
  echo '```'
} >"$log.example"
awk -v b="$begin" -v e="$end" -v f="$log.example" '
  $0 == b { print; while ((getline line < f) > 0) print line; skip = 1; next }
  $0 == e { skip = 0 }
  !skip { print }
' "$readme" >"$readme.new"
mv "$readme.new" "$readme"
profile=$(mktemp -d /tmp/tusk-readme-chromium-XXXXXX)
timeout 120 chromium --headless=new --no-sandbox --disable-gpu --no-first-run --disable-extensions \
  --user-data-dir="$profile" --hide-scrollbars --window-size=1400,1500 \
  --screenshot="$PWD/docs/images/report-ber-fault.png" "file://$PWD/tusk-reports/ber-fault/report.html" >/dev/null 2>&1
rm -rf "$profile" "$log" "$log.example"
echo "readme-example: README.md's example and docs/images/report-ber-fault.png rewritten from this run"
