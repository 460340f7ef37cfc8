#!/usr/bin/env bash
# TX rate of Tusk's DPDK engine against dpdk-testpmd --forward-mode=txonly on the same
# net_af_packet port over a veth pair, 64 B and 1500 B frames, back to back, several rounds.
# (--stats-period keeps testpmd from waiting on stdin.) Both are measured the same way: frames the kernel counted leaving the veth (tx_packets) over a
# window that starts after a warm-up, so neither tool's start-up or own arithmetic is trusted.
# Prints each round, the medians and their ratio (goal: Tusk >= 0.9x testpmd while filling PRBS).
# Root only; makes and removes the veth.
#   bench/tx_vs_testpmd.sh [BUILD_DIR] [SECONDS] [ROUNDS]
set -euo pipefail
build=${1:-build}
seconds=${2:-4}
rounds=${3:-3}
warmup=1
a="tuskbench$$"; b="tuskbenchp$$"
a=${a:0:15}; b=${b:0:15}
cleanup() { ip link del "$a" 2>/dev/null || true; }
trap cleanup EXIT
ip link add "$a" type veth peer name "$b"
for dev in "$a" "$b"; do
  sysctl -qw "net.ipv6.conf.$dev.disable_ipv6=1"
  ip link set "$dev" up
done

tx_packets() { cat "/sys/class/net/$a/statistics/tx_packets"; }

# Runs "$@" in the background, measures frames/s leaving the veth over the window, stops it.
measure_pps() {
  "$@" >/dev/null 2>&1 &
  local pid=$!
  sleep "$warmup"
  local before after
  before=$(tx_packets)
  sleep "$seconds"
  after=$(tx_packets)
  kill -INT "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  echo $(((after - before) / seconds))
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

for size in 64 1500; do
  testpmd_runs=(); tusk_runs=()
  for ((round = 1; round <= rounds; ++round)); do
    # testpmd counts frames without the 4-byte FCS in --txpkts, as Tusk's frame_size does.
    testpmd_runs+=("$(measure_pps dpdk-testpmd -l 0-1 --no-huge -m 256 --no-pci --no-shconf \
      --file-prefix "testpmd$$" --vdev "net_af_packet0,iface=$a" -- \
      --forward-mode=txonly --txpkts="$size" --total-num-mbufs=8192 --stats-period 1)")
    tusk_runs+=("$(measure_pps "$build/bench/dpdk_tx_bench" "net_af_packet0,iface=$a" \
      "$((warmup + seconds + 2))" "$size")")
    echo "$size B round $round: testpmd ${testpmd_runs[-1]} pps, tusk ${tusk_runs[-1]} pps"
  done
  testpmd_pps=$(printf '%s\n' "${testpmd_runs[@]}" | median)
  tusk_pps=$(printf '%s\n' "${tusk_runs[@]}" | median)
  awk -v t="$tusk_pps" -v r="$testpmd_pps" -v s="$size" 'BEGIN {
    printf "%s B: median testpmd %d pps, tusk %d pps, ratio tusk/testpmd = %.2f\n", s, r, t, (r > 0 ? t / r : 0) }'
done
