#!/usr/bin/env bash
# RDMA WRITE throughput of Tusk's engine against perftest's ib_write_bw between the same two
# Soft-RoCE VMs (tests/lab/rxe-vm-lab.sh), same message size, QP count and writes in flight, back
# to back, several rounds; prints each round, the medians and their ratio (goal: >= 0.95).
# Root and qemu only. Boots its own lab unless TUSK_BENCH_LAB names one that is up.
#   bench/rdma_vs_perftest.sh [BUILD_DIR] [SECONDS] [ROUNDS] [SIZE] [QPS] [DEPTH]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-build}" && pwd)
seconds=${2:-5}
rounds=${3:-3}
size=${4:-65536}
qps=${5:-1}
depth=${6:-128}
lab="bash $here/tests/lab/rxe-vm-lab.sh"
id=${TUSK_BENCH_LAB:-}
if [[ -z $id ]]; then
  id="bench$$"
  trap '$lab down "$id" >/dev/null 2>&1 || true' EXIT
  $lab up "$id" 2 >/dev/null
fi
server_ip=$($lab addresses "$id" | awk '$1 == "vm=2" && $2 == "nic=data0" { sub("ip=", "", $4); print $4 }')
[[ -n $server_ip ]] || { echo "no data address for vm2 in lab $id" >&2; exit 1; }

# perftest: server in vm2, client in vm1; -u 18 is the ACK timeout Tusk's bench uses too.
perftest_gbps() {
  local args=(-d rxe0 -x 1 -s "$size" -q "$qps" -t "$depth" -D "$seconds" -u 18 --report_gbits -F)
  $lab exec "$id" 2 --background --name "perf$1" -- ib_write_bw "${args[@]}" >/dev/null
  for _ in $(seq 50); do
    $lab exec "$id" 2 -- ss -ltn 2>/dev/null | grep -q ':18515 ' && break
    sleep 0.2
  done
  $lab exec "$id" 1 --timeout $((seconds + 60)) -- ib_write_bw "${args[@]}" "$server_ip" |
    awk '/BW average/ { getline; print $4 }'
  $lab wait "$id" 2 "perf$1" --timeout 30 >/dev/null 2>&1 || true
}

tusk_gbps() {
  $lab exec "$id" 2 --background --name "tusk$1" -- "$build/bench/rdma_write_bench" receive $((seconds + 40)) >/dev/null
  $lab exec "$id" 1 --timeout $((seconds + 60)) -- "$build/bench/rdma_write_bench" send "$server_ip" "$seconds" \
    "$size" "$qps" "$depth" | awk '/tusk rdma write/ { print $(NF - 1) }'
  $lab stop "$id" 2 "tusk$1" >/dev/null 2>&1 || true
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

perftest_runs=(); tusk_runs=()
for ((round = 1; round <= rounds; ++round)); do
  perftest_runs+=("$(perftest_gbps "$round")")
  tusk_runs+=("$(tusk_gbps "$round")")
  echo "round $round: ib_write_bw ${perftest_runs[-1]:-?} Gb/s, tusk ${tusk_runs[-1]:-?} Gb/s ($size B, $qps QP, $depth in flight)"
done
perftest=$(printf '%s\n' "${perftest_runs[@]}" | median)
tusk=$(printf '%s\n' "${tusk_runs[@]}" | median)
awk -v t="$tusk" -v p="$perftest" 'BEGIN {
  printf "median: ib_write_bw %.4f Gb/s, tusk %.4f Gb/s, ratio tusk/ib_write_bw = %.2f\n", p, t, (p > 0 ? t / p : 0) }'
