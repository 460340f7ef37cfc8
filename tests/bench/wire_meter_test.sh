#!/usr/bin/env bash
# bench/wire_meter.sh: the RDMA bench's reading of its meter. A round that carried nothing, or
# stopped before the window ended, reads "none" (and the bench refuses it); a steady round reads
# its rate over the window after the warm-up, not from the tool's launch.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
source "$here/bench/wire_meter.sh"
log=$(mktemp /tmp/tusk-wire-meter-XXXXXX)
trap 'rm -f "$log"' EXIT
failed=0
expect() {  # NAME EXPECTED WARMUP SECONDS
  local got
  got=$(wire_gbps "$3" "$4" "$log")
  if [[ $got == "$2" ]]; then echo "ok: $1 ($got)"; else echo "FAIL: $1: expected $2, got $got"; failed=1; fi
}
# 10 readings a second for T seconds: idle for IDLE s (a tool connecting), then RATE bytes/s.
readings() {  # SECONDS IDLE RATE [STOP_AT]
  awk -v n="$1" -v idle="$2" -v rate="$3" -v stop="${4:-1e9}" 'BEGIN {
    bytes = 5000
    for (i = 0; i <= n * 10; ++i) {
      t = i / 10
      if (t > idle && t <= stop) bytes += rate / 10
      printf "%d.%09d %d\n", 1000 + int(t), (t - int(t)) * 1e9, bytes
    }
  }'
}
readings 20 0 0 >"$log"
expect "nothing moved" none 3 5
readings 20 4 25000000 >"$log"
expect "0.2 Gb/s after 4 s of connecting: the window follows the traffic, not the launch" 0.2000 3 5
readings 20 4 25000000 9 >"$log"
expect "traffic that stopped inside the window" none 3 5
: >"$log"
expect "an empty log" none 3 5
exit $failed
