#!/bin/bash
# A pod's schedule report drawn as its user opens it: shift_schedule_sim writes the report.json of
# a 4,096-host, 65-step schedule (issue 59: a schedule's report stays small, clean streams summed
# per pair, link and step), `tusk-controller report` draws report.html, and headless Chromium
# opens it. Prints the sizes and the page's own render time (performance.now() when report.js
# finished drawing: parsing the page and its data included); exits 1 if the page draws with an
# error or takes longer than --most-ms (issue 59's goal: first paint under 5 s).
# Usage: schedule_report_page.sh SHIFT_SCHEDULE_SIM TUSK_CONTROLLER [--most-ms N] [sim options...]
set -euo pipefail
sim=$1 controller=$2
shift 2
most_ms=5000
if [[ ${1:-} == --most-ms ]]; then
  most_ms=$2
  shift 2
fi
sim_options=("$@")
((${#sim_options[@]} > 0)) || sim_options=(--leaves 64 --spines 16 --hosts 64 --shifts 65 --faults 2)
chromium=$(command -v chromium || command -v chromium-browser || true)
[[ -n $chromium ]] || { echo "schedule_report_page: chromium is not installed (scripts/install-deps.sh)" >&2; exit 1; }
scratch=$(mktemp -d /tmp/tusk-schedule-page-XXXXXX)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/run"

started=$SECONDS
"$sim" "${sim_options[@]}" --report "$scratch/run/report.json" >"$scratch/sim.log" 2>&1 || {
  cat "$scratch/sim.log" >&2
  echo "schedule_report_page: shift_schedule_sim failed" >&2
  exit 1
}
echo "schedule_report_page: ${sim_options[*]}: report.json $(du -m "$scratch/run/report.json" | cut -f1) MiB in $((SECONDS - started)) s"
"$controller" report "$scratch/run" >"$scratch/draw.log" 2>&1 || {
  cat "$scratch/draw.log" >&2
  exit 1
}
echo "schedule_report_page: report.html $(du -m "$scratch/run/report.html" | cut -f1) MiB"

# No virtual time: the page's clock is the wall clock, as its user's is.
opened_ns=$(date +%s%N)
timeout 120 "$chromium" --headless=new --no-sandbox --disable-gpu --no-first-run --disable-extensions \
  --user-data-dir="$scratch/profile" --enable-logging=stderr --v=0 --dump-dom \
  "file://$scratch/run/report.html" >"$scratch/dom.html" 2>"$scratch/chromium.log" || {
  cat "$scratch/chromium.log" >&2
  echo "schedule_report_page: chromium failed" >&2
  exit 1
}
browser_ms=$((($(date +%s%N) - opened_ns) / 1000000))
attribute() { { grep -o "data-$1=\"[^\"]*\"" "$scratch/dom.html" || true; } | head -1 | sed 's/^[^"]*"//; s/"$//'; }
rendered=$(attribute rendered)
render_ms=$(attribute render-ms)
errors=$(attribute errors)
if [[ $rendered != yes || -n $errors ]] || grep -q -E 'CONSOLE.*(rror|Uncaught)' "$scratch/chromium.log"; then
  grep -E 'CONSOLE' "$scratch/chromium.log" >&2 || true
  echo "schedule_report_page: the page did not draw (rendered '$rendered', errors '$errors')" >&2
  exit 1
fi
rows=$(grep -o '<tr' "$scratch/dom.html" | wc -l)
echo "schedule_report_page: drawn in ${render_ms} ms (goal: under ${most_ms} ms), ${rows} table rows;" \
  "Chromium started, drew and printed it in ${browser_ms} ms"
awk -v ms="$render_ms" -v most="$most_ms" 'BEGIN { exit !(ms + 0 < most + 0) }' || {
  echo "schedule_report_page: ${render_ms} ms is over ${most_ms} ms" >&2
  exit 1
}
