#!/usr/bin/env bash
# A soak with real agents: two DPDK lab hosts (net_af_packet on veth through a switch namespace)
# send PRBS-31 both ways for --duration at --interval samples, judged in --window windows, with one
# flap of --flap-ms at --flap-at. Prints the controller's memory and CPU as the soak goes, then
# what it came to: the windows that failed and when, every sample in the series file (rows =
# streams x samples), report.json and series.sqlite per stream. Measures; exits 0 only when the
# flap failed exactly the windows that held it and no sample is missing. Not in CI (minutes).
#
#   bash bench/dpdk_soak.sh [--build-dir build] [--duration 10m] [--interval 100ms] [--window 1m]
#                           [--flap-at 420] [--flap-ms 2000] [--keep]
# --flap-at is seconds into the test.
set -euo pipefail
cd "$(dirname "$0")/.."

build=build duration=10m interval=100ms window=1m flap_at=420 flap_ms=2000 keep=0
while (($#)); do
  case $1 in
    --build-dir) build=$2 && shift ;;
    --duration) duration=$2 && shift ;;
    --interval) interval=$2 && shift ;;
    --window) window=$2 && shift ;;
    --flap-at) flap_at=$2 && shift ;;
    --flap-ms) flap_ms=$2 && shift ;;
    --keep) keep=1 ;;
    *) echo "dpdk_soak: unknown option $1" >&2 && exit 2 ;;
  esac
  shift
done
[[ $(id -u) == 0 ]] || { echo "dpdk_soak: needs root to make the lab" >&2; exit 2; }
for tool in jq sqlite3; do command -v "$tool" >/dev/null || { echo "dpdk_soak: needs $tool" >&2; exit 2; }; done
work=$(mktemp -d /tmp/tusk-soak.XXXXXX)
reports=$work/reports
# shellcheck source=scripts/demo/common.sh
source scripts/demo/common.sh

export TUSK_LAB_ID="soak$(($$ % 100000))"
demo_certs lab-a lab-b
bash tests/lab/netns-lab.sh up --switch >/dev/null
demo_at_exit "TUSK_LAB_ID=$TUSK_LAB_ID bash tests/lab/netns-lab.sh down"
demo_dpdk_agent lab-a "$(bash tests/lab/netns-lab.sh port a)"
demo_dpdk_agent lab-b "$(bash tests/lab/netns-lab.sh port b)"

# 80 Mbit/s each way. No flap is allowed (max_flaps: 0), so the window that holds it fails, and so
# does the test as a whole; every other window must pass. Its throughput cannot tell: a 2 s gap
# takes 3 % from a minute's, less than the windows' own spread under a busy 2-core lab.
cat >"$work/soak.yaml" <<EOF
name: dpdk-soak
agents: {hosts: [lab-a, lab-b], wait: 20s}
tests:
  - name: soak
    engine: dpdk
    duration: $duration
    sample_interval: $interval
    topology: pairs
    rate: 10kpps
    frame_size: 1000B
    pattern: prbs31
    thresholds: {window: $window, max_flaps: 0, max_lost_frames: 0, min_throughput: 75Mbps}
EOF

"$controller" run "$work/soak.yaml" --listen "127.0.0.1:$port" --ca "$work/certs/ca.pem" \
  --cert "$work/certs/controller.pem" --key "$work/certs/controller.key" --out "$reports/soak" --no-progress \
  --no-history >"$work/controller.log" 2>&1 &
pid=$!
demo_at_exit "kill $pid"
for _ in $(seq 600); do grep -q "test 0 started" "$work/agent-lab-a.log" && break; sleep 0.1; done
started=$(date +%s)
clock_ticks=$(getconf CLK_TCK)
agent_a=$(pgrep -f -- "--name lab-a --ca $work/" | head -1 || true)
agent_b=$(pgrep -f -- "--name lab-b --ca $work/" | head -1 || true)
rss_of() { awk '/VmRSS/ { printf "%.1f", $2 / 1024 }' "/proc/$1/status" 2>/dev/null || echo -; }
printf '%8s %10s %12s %14s %14s\n' "time (s)" "RSS (MiB)" "CPU (s)" "lab-a RSS" "lab-b RSS"
flapped=0 next_print=0
while kill -0 "$pid" 2>/dev/null; do
  now=$(($(date +%s) - started))
  if ((!flapped && now >= flap_at)); then
    bash tests/lab/netns-lab.sh flap a "$flap_ms" &
    flapped=1
    echo "  flap of $flap_ms ms at $now s"
  fi
  if ((now >= next_print)) && [[ -r /proc/$pid/status ]]; then
    next_print=$((next_print + 30))
    cpu=$(awk -v hz="$clock_ticks" '{ printf "%.1f", ($14 + $15) / hz }' "/proc/$pid/stat" 2>/dev/null || echo -)
    printf '%8d %10s %12s %14s %14s\n' "$now" "$(rss_of "$pid")" "$cpu" "$(rss_of "$agent_a")" "$(rss_of "$agent_b")"
  fi
  sleep 1
done
status=0
wait "$pid" || status=$?
echo "controller exit $status (1: windows failed, as the flap should make them)"

dir=$reports/soak
rx='.tests[0].streams[] | select(.kind == "rx")'
streams=$(jq "[$rx] | length" "$dir/report.json")
all_streams=$(jq '.tests[0].streams | length' "$dir/report.json")
samples=$(jq '[.tests[0].agents[].samples_made] | max' "$dir/report.json")
rows=$(sqlite3 "$dir/series.sqlite" 'SELECT count(*) FROM samples')
series_streams=$(sqlite3 "$dir/series.sqlite" 'SELECT count(*) FROM streams')
echo "windows of the receiving streams:"
jq -r "$rx | \"  \\(.stream_id) at \\(.agent): \\(.windows.failed) of \\(.windows.judged) failed (\\(.windows.failed_by_threshold | tojson)), first at +\\(.windows.first_failed.start_s) s \\(.windows.first_failed.start), throughput cv \\(.windows.throughput_cv)\"" "$dir/report.json"
echo "series.sqlite: $rows rows for $series_streams streams x $samples samples ($((series_streams * samples)) expected), $(du -k "$dir/series.sqlite" | cut -f1) KiB"
echo "report.json: $(($(stat -c %s "$dir/report.json") / 1024)) KiB for $all_streams streams"

window_s=$(jq '.tests[0].window_s' "$dir/report.json")
ok=1
# The flap's windows: the one it starts in and, if it runs over, the next.
first=$(awk -v at="$flap_at" -v w="$window_s" 'BEGIN { print int(at / w) * w }')
last=$(awk -v at="$flap_at" -v ms="$flap_ms" -v w="$window_s" 'BEGIN { print int((at + ms / 1000) / w) * w }')
while read -r start failed; do
  if ((failed < 1 || failed > 2)) || awk -v s="$start" -v a="$first" -v b="$last" 'BEGIN { exit (s >= a && s <= b) }'; then
    echo "NOT as expected: $failed windows failed, the first at +$start s (the flap was at +$flap_at s)"
    ok=0
  fi
done < <(jq -r "$rx | \"\\(.windows.first_failed.start_s // -1) \\(.windows.failed)\"" "$dir/report.json")
((rows == series_streams * samples)) || { echo "NOT as expected: samples missing from the series"; ok=0; }
((status == 1)) || ok=0
((streams > 0)) || ok=0
if ((ok)); then echo "dpdk_soak: the flap failed only its windows, and every sample is in the series file"; fi
((ok))
