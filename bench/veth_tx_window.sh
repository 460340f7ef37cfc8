# Sourced by the TX benchmarks (tx_vs_testpmd.sh, tx_ipv4_vs_ethernet.sh): a veth pair of their
# own, removed on exit, and the one measurement they all use, frames the kernel counted leaving
# the veth (tx_packets) over a window after a warm-up, so no tool's own arithmetic is trusted.
# Expects $seconds; sets $a (the veth an engine opens) and $b (its far end).
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
