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
# shellcheck source=bench/veth_tx_window.sh
source "$(dirname "$0")/veth_tx_window.sh"

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
