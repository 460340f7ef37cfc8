#!/usr/bin/env bash
# TX rate of Tusk's DPDK engine with IPv4/UDP frames (8 flows, header checksum per frame) against
# its Ethernet frames, on the same net_af_packet port over a veth pair, 128 B (64 B cannot hold
# the IPv4 and UDP headers with Tusk's) and 1500 B, in alternating rounds, measured as
# veth_tx_window.sh says. Prints each round, the medians and the ratio ipv4_udp/ethernet (goal: at
# least 0.9). Root only; makes and removes the veth.
#   bench/tx_ipv4_vs_ethernet.sh [BUILD_DIR] [SECONDS] [ROUNDS]
set -euo pipefail
build=${1:-build}
seconds=${2:-4}
rounds=${3:-3}
# shellcheck source=bench/veth_tx_window.sh
source "$(dirname "$0")/veth_tx_window.sh"

for size in 128 1500; do
  ethernet_runs=(); ipv4_runs=()
  for ((round = 1; round <= rounds; ++round)); do
    for encapsulation in ethernet ipv4_udp; do
      pps=$(measure_pps "$build/bench/dpdk_tx_bench" "net_af_packet0,iface=$a" "$((warmup + seconds + 2))" "$size" \
        "$encapsulation")
      if [[ $encapsulation == ethernet ]]; then ethernet_runs+=("$pps"); else ipv4_runs+=("$pps"); fi
    done
    echo "$size B round $round: ethernet ${ethernet_runs[-1]} pps, ipv4_udp ${ipv4_runs[-1]} pps"
  done
  ethernet_pps=$(printf '%s\n' "${ethernet_runs[@]}" | median)
  ipv4_pps=$(printf '%s\n' "${ipv4_runs[@]}" | median)
  awk -v i="$ipv4_pps" -v e="$ethernet_pps" -v s="$size" 'BEGIN {
    printf "%s B: median ethernet %d pps, ipv4_udp %d pps, ratio ipv4_udp/ethernet = %.2f\n", s, e, i, (e > 0 ? i / e : 0) }'
done
