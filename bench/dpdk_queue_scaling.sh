#!/usr/bin/env bash
# How the DPDK engine scales from 1 to 2 queues per port on a veth pair (net_af_packet qpairs=,
# the kernel's fanout hash spreading 8 IPv4/UDP flows), several rounds each:
#   TX: dpdk_tx_bench alone, frames the kernel counted leaving the veth (as tx_vs_testpmd.sh);
#   RX: dpdk_rx_bench on the far end checking every frame and bit while dpdk_tx_bench sends as
#       fast as it can with as many queues, frames checked per second (host drops beside them).
# Prints each round, the medians and the ratio 2 queues / 1 queue. On a 2-core machine the sender,
# the receiver and the kernel's veth path share the cores, so the ratio shows the engine's
# overhead per queue here, not a NIC's scaling. Root only; makes and removes the veth.
#   bench/dpdk_queue_scaling.sh [BUILD_DIR] [SECONDS] [ROUNDS] [FRAME_SIZE]
set -euo pipefail
build=${1:-build}
seconds=${2:-4}
rounds=${3:-3}
size=${4:-512}
# shellcheck source=bench/veth_tx_window.sh
source "$(dirname "$0")/veth_tx_window.sh"

declare -A tx rx
for ((round = 1; round <= rounds; ++round)); do
  for queues in 1 2; do
    sent=$(measure_pps "$build/bench/dpdk_tx_bench" "net_af_packet0,iface=$a" \
      "$((warmup + seconds + 2))" "$size" ipv4_udp 8 "$queues")
    tx[$queues]+="$sent "
    out=$(mktemp)
    "$build/bench/dpdk_rx_bench" "net_af_packet0,iface=$b" "$seconds" "$queues" >"$out" 2>/dev/null &
    receiver=$!
    sleep 0.5
    "$build/bench/dpdk_tx_bench" "net_af_packet0,iface=$a" "$((seconds + 3))" "$size" ipv4_udp 8 "$queues" \
      >/dev/null 2>&1 &
    sender=$!
    wait "$receiver" || true
    kill -INT "$sender" 2>/dev/null || true
    wait "$sender" 2>/dev/null || true
    line=$(cat "$out"); rm -f "$out"
    rx[$queues]+="$(awk '{ for (i = 1; i <= NF; ++i) if ($i == "pps") print int($(i - 1)) }' <<<"$line") "
    echo "$size B round $round, $queues queue(s): tusk tx $sent pps alone; $line"
  done
done
for kind in tx rx; do
  declare -n runs=$kind
  one=$(tr ' ' '\n' <<<"${runs[1]}" | grep . | median)
  two=$(tr ' ' '\n' <<<"${runs[2]}" | grep . | median)
  awk -v k="$kind" -v o="$one" -v t="$two" -v s="$size" 'BEGIN {
    printf "%s B %s: median 1 queue %d pps, 2 queues %d pps, scaling 2/1 = %.2f\n", s, k, o, t, (o > 0 ? t / o : 0) }'
done
