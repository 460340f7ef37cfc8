#!/usr/bin/env bash
# TX rate of Tusk's DPDK engine with IPv4/UDP frames (8 flows, header checksum per frame) against
# its Ethernet frames, on the same net_af_packet port over a veth pair, 128 B (64 B cannot hold
# the IPv4 and UDP headers with Tusk's) and 1500 B, in alternating rounds. Measured as tx_vs_testpmd.sh measures: frames the kernel counted leaving the
# veth over a window after a warm-up. Prints each round, the medians and the ratio
# ipv4_udp/ethernet (goal: at least 0.9). Root only; makes and removes the veth.
#   bench/tx_ipv4_vs_ethernet.sh [BUILD_DIR] [SECONDS] [ROUNDS]
set -euo pipefail
build=${1:-build}
seconds=${2:-4}
rounds=${3:-3}
warmup=1
a="tuskip$$"; b="tuskipp$$"
a=${a:0:15}; b=${b:0:15}
cleanup() { ip link del "$a" 2>/dev/null || true; }
trap cleanup EXIT
ip link add "$a" type veth peer name "$b"
for dev in "$a" "$b"; do
  sysctl -qw "net.ipv6.conf.$dev.disable_ipv6=1"
  ip link set "$dev" up
done

tx_packets() { cat "/sys/class/net/$a/statistics/tx_packets"; }

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
