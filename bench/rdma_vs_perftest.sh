#!/usr/bin/env bash
# RDMA WRITE throughput of Tusk's engine against perftest's ib_write_bw between the same two
# Soft-RoCE VMs (tests/lab/rxe-vm-lab.sh), same message size, QP count and writes in flight, back
# to back, several rounds; prints each round, the medians and their ratio (goal: >= 0.95).
#
# Both are measured with one meter: the sending VM's data NIC byte counter, sampled inside the guest
# with the guest's clock, over SECONDS of steady state: 3 s after the tool's traffic started on the
# wire (not after its launch: rdma_cm takes seconds to connect under TCG). A round in which either
# tool carried nothing is refused, not counted; the bench exits 1 if any was.
# A tool's own figure is printed beside it, for information: ib_write_bw converts TSC cycles with
# the CPU frequency it reads, which an emulated guest's TSC need not match.
# Tusk runs as the labs run its agents, with --idle-sleep-us 100 (IDLE_SLEEP_US): each guest has one
# vCPU on a host of two cores shared with the other VM's, so a guest that busy-polls takes the host
# core its peer's NIC emulation needs (0 busy-polls, as on a host with cores to spare: measured
# about 0.87 of ib_write_bw here).
# Root and qemu only. Boots its own lab unless TUSK_BENCH_LAB names one that is up.
#   bench/rdma_vs_perftest.sh [BUILD_DIR] [SECONDS] [ROUNDS] [SIZE] [QPS] [DEPTH] [IDLE_SLEEP_US]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-build}" && pwd)
seconds=${2:-5}
rounds=${3:-3}
size=${4:-65536}
qps=${5:-1}
depth=${6:-128}
idle_sleep_us=${7:-100}
warmup=3
runtime=$((warmup + seconds + 3))  # each tool sends past the metered window, counted from its first traffic
lab="bash $here/tests/lab/rxe-vm-lab.sh"
id=${TUSK_BENCH_LAB:-}
if [[ -z $id ]]; then
  id="bench$$"
  trap '$lab down "$id" >/dev/null 2>&1 || true' EXIT
  $lab up "$id" 2 >/dev/null
fi
server_ip=$($lab addresses "$id" | awk '$1 == "vm=2" && $2 == "nic=data0" { sub("ip=", "", $4); print $4 }')
[[ -n $server_ip ]] || { echo "no data address for vm2 in lab $id" >&2; exit 1; }

# The meter: a job in vm1 that writes "SECONDS.NANOS BYTES" (the guest's clock and its data NIC's
# transmit counter) every 0.1 s while a tool runs (rdma_write_bench meter). Asking the guest from
# here instead took seconds a reading once a tool kept its one vCPU busy, and windows missed the
# traffic: that, not Tusk's own figure, was the 0.24 "ratio" of an earlier version.
start_meter() {
  $lab exec "$id" 1 --background --name "meter$1" --log "$work/meter$1.log" -- \
    "$build/bench/rdma_write_bench" meter data0 $((runtime + 90)) >/dev/null
}
stop_meter() { $lab stop "$id" 1 "meter$1" >/dev/null 2>&1 || true; }

source "$here/bench/wire_meter.sh"

# perftest: server in vm2, client in vm1; -u 18 is the ACK timeout Tusk's bench uses too.
perftest_round() {
  local args=(-d rxe0 -x 1 -s "$size" -q "$qps" -t "$depth" -D "$runtime" -u 18 --report_gbits -F)
  $lab exec "$id" 2 --background --name "perf$1" -- ib_write_bw "${args[@]}" >/dev/null
  for _ in $(seq 50); do
    $lab exec "$id" 2 -- ss -ltn 2>/dev/null | grep -q ':18515 ' && break
    sleep 0.2
  done
  start_meter "p$1"
  $lab exec "$id" 1 --background --name "perfc$1" --log "$work/perfc$1.log" -- ib_write_bw "${args[@]}" "$server_ip" \
    >/dev/null
  $lab wait "$id" 1 "perfc$1" --timeout $((runtime + 60)) >/dev/null 2>&1 || true
  stop_meter "p$1"
  wire_gbps "$warmup" "$seconds" "$work/meterp$1.log"
  echo -n " "
  awk '/BW average/ { getline; printf "%s", $4 }' "$work/perfc$1.log"
  $lab wait "$id" 2 "perf$1" --timeout 30 >/dev/null 2>&1 || true
}

tusk_round() {
  $lab exec "$id" 2 --background --name "tusk$1" -- "$build/bench/rdma_write_bench" receive $((runtime + 40)) "$qps" \
    "$idle_sleep_us" >/dev/null
  start_meter "t$1"
  $lab exec "$id" 1 --background --name "tuskc$1" --log "$work/tuskc$1.log" -- "$build/bench/rdma_write_bench" send \
    "$server_ip" "$runtime" "$size" "$qps" "$depth" "$idle_sleep_us" >/dev/null
  $lab wait "$id" 1 "tuskc$1" --timeout $((runtime + 60)) >/dev/null 2>&1 || true
  stop_meter "t$1"
  wire_gbps "$warmup" "$seconds" "$work/metert$1.log"
  echo -n " "
  awk '/tusk rdma write/ { printf "%s", $(NF - 1) }' "$work/tuskc$1.log"
  $lab stop "$id" 2 "tusk$1" >/dev/null 2>&1 || true
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# The guests write the tools' logs here: the lab's state directory is theirs to write.
work="$($lab dir "$id")/bench"
mkdir -p "$work"
perftest_runs=(); tusk_runs=(); refused=0
for ((round = 1; round <= rounds; ++round)); do
  read -r p_wire p_own < <(perftest_round "$round"; echo)
  read -r t_wire t_own < <(tusk_round "$round"; echo)
  echo "round $round: on the wire ib_write_bw $p_wire Gb/s, tusk $t_wire Gb/s" \
    "(their own figures: ${p_own:-?} and ${t_own:-?}; $size B, $qps QP, $depth in flight, tusk idle sleep" \
    "$idle_sleep_us us)"
  # A round in which either tool carried nothing measures the lab, not the tools: refused.
  if [[ $p_wire == none || $t_wire == none ]]; then
    idle=()
    [[ $p_wire != none ]] || idle+=(ib_write_bw)
    [[ $t_wire != none ]] || idle+=(tusk)
    echo "round $round refused: ${idle[*]} carried nothing on the wire" >&2
    ((++refused))
    continue
  fi
  perftest_runs+=("$p_wire"); tusk_runs+=("$t_wire")
done
if ((${#perftest_runs[@]} == 0)); then
  echo "no round carried traffic for both tools ($refused refused): no ratio" >&2
  exit 1
fi
perftest=$(printf '%s\n' "${perftest_runs[@]}" | median)
tusk=$(printf '%s\n' "${tusk_runs[@]}" | median)
awk -v t="$tusk" -v p="$perftest" -v n="${#tusk_runs[@]}" -v r="$refused" 'BEGIN {
  printf "median on the wire of %d round(s) (%d refused): ib_write_bw %.4f Gb/s, tusk %.4f Gb/s, ratio tusk/ib_write_bw = %.2f\n", n, r, p, t, t / p }'
((refused == 0)) || exit 1
