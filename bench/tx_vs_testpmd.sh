#!/usr/bin/env bash
# TX rate of Tusk's DPDK engine against dpdk-testpmd --forward-mode=txonly on the same
# net_af_packet port over a veth pair, 64 B and 1500 B frames, back to back. Prints both rates and
# the ratio (goal: Tusk >= 0.9x testpmd while filling PRBS). Root only; makes and removes the veth.
#   bench/tx_vs_testpmd.sh [BUILD_DIR] [SECONDS]
set -euo pipefail
build=${1:-build}
seconds=${2:-5}
a="tuskbench$$"; b="tuskbenchp$$"
a=${a:0:15}; b=${b:0:15}
cleanup() { ip link del "$a" 2>/dev/null || true; }
trap cleanup EXIT
ip link add "$a" type veth peer name "$b"
for dev in "$a" "$b"; do
  sysctl -qw "net.ipv6.conf.$dev.disable_ipv6=1"
  ip link set "$dev" up
done

for size in 64 1500; do
  # testpmd counts frames without the 4-byte FCS in --txpkts, as Tusk's frame_size does.
  out=$(timeout -s INT "$((seconds + 2))" dpdk-testpmd -l 0-1 --no-huge -m 256 --no-pci --no-shconf \
    --file-prefix "testpmd$$" --vdev "net_af_packet0,iface=$a" -- \
    --forward-mode=txonly --txpkts="$size" --total-num-mbufs=8192 --stats-period "$seconds" 2>&1 || true)
  testpmd_pps=$(grep -oE "Tx-pps: +[0-9]+" <<<"$out" | awk '{print $2}' | sort -n | tail -1 || true)
  tusk_line=$("$build/bench/dpdk_tx_bench" "net_af_packet0,iface=$a" "$seconds" "$size" 2>/dev/null | grep "tusk tx" || true)
  tusk_pps=$(grep -oE "= [0-9]+ pps" <<<"$tusk_line" | awk '{print $2}' || true)
  echo "$size B: testpmd txonly ${testpmd_pps:-?} pps; $tusk_line"
  if [[ -n ${testpmd_pps:-} && ${testpmd_pps:-0} -gt 0 ]]; then
    awk -v t="$tusk_pps" -v r="$testpmd_pps" -v s="$size" 'BEGIN { printf "%s B: ratio tusk/testpmd = %.2f\n", s, t / r }'
  fi
done
