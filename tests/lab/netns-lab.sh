#!/usr/bin/env bash
# The DPDK lab: two "hosts" as network namespaces joined by a veth pair, optionally through a
# third namespace acting as the switch (a Linux bridge), with faults injected for real by netem
# and by taking links down. Traffic never leaves the namespaces this script made.
#
#   netns-lab.sh up [--switch]        make the lab; prints the names to use
#   netns-lab.sh fault HOST ARGS...   netem on HOST's lab port, e.g.: fault a loss 2%
#   netns-lab.sh impair HOST [loss=P] [corrupt=P] [duplicate=P]
#                                     impair frames arriving at HOST with a tc BPF program (for
#                                     kernels without netem); P in percent, e.g. impair b loss=2
#   netns-lab.sh clear HOST           remove HOST's netem and impairment
#   netns-lab.sh flap HOST MS         take HOST's lab port down for MS milliseconds, then up
#   netns-lab.sh exec HOST CMD...     run CMD inside HOST's namespace
#   netns-lab.sh down                 remove everything (idempotent; safe after a failed test)
#   netns-lab.sh has-netem            exit 0 when this kernel has netem (some, e.g. Firecracker's, do not)
#
# TUSK_LAB_ID (default "tusk") prefixes every name, so parallel labs do not collide.
# Hosts are "a" and "b"; each has one lab port named "lab0" inside its namespace.
set -euo pipefail

id=${TUSK_LAB_ID:-tusk}
ns_a="$id-a"; ns_b="$id-b"; ns_sw="$id-sw"

ns_of() {
  case $1 in
    a) echo "$ns_a" ;;
    b) echo "$ns_b" ;;
    *) echo "netns-lab: unknown host '$1' (expected a or b)" >&2; exit 2 ;;
  esac
}

# Offloads would let the kernel merge or split frames behind DPDK's af_packet port; a BERT must see
# every frame as sent.
quiet_offloads() {
  local ns=$1 dev=$2
  if command -v ethtool >/dev/null; then
    ip netns exec "$ns" ethtool -K "$dev" tso off gso off gro off tx off rx off >/dev/null 2>&1 || true
  fi
}

up() {
  down >/dev/null 2>&1 || true
  ip netns add "$ns_a"
  ip netns add "$ns_b"
  if [[ ${1:-} == --switch ]]; then
    ip netns add "$ns_sw"
    ip link add lab0 netns "$ns_a" type veth peer name p-a netns "$ns_sw"
    ip link add lab0 netns "$ns_b" type veth peer name p-b netns "$ns_sw"
    ip netns exec "$ns_sw" ip link add br0 type bridge
    for port in p-a p-b; do
      ip netns exec "$ns_sw" ip link set "$port" master br0
      ip netns exec "$ns_sw" ip link set "$port" up
      quiet_offloads "$ns_sw" "$port"
    done
    ip netns exec "$ns_sw" ip link set br0 up
  else
    ip link add lab0 netns "$ns_a" type veth peer name lab0 netns "$ns_b"
  fi
  for ns in "$ns_a" "$ns_b"; do
    ip netns exec "$ns" ip link set lo up
    ip netns exec "$ns" ip link set lab0 up
    quiet_offloads "$ns" lab0
  done
  echo "lab up: hosts $ns_a and $ns_b, port lab0 in each${1:+ (through bridge in $ns_sw)}"
}

down() {
  for ns in "$ns_a" "$ns_b" "$ns_sw"; do
    ip netns pids "$ns" 2>/dev/null | xargs -r kill 2>/dev/null || true
    ip netns del "$ns" 2>/dev/null || true
  done
}

case ${1:-} in
  up) shift; up "$@" ;;
  down) down ;;
  fault)
    ns=$(ns_of "$2"); shift 2
    if ! ip netns exec "$ns" tc qdisc replace dev lab0 root netem "$@"; then
      echo "netns-lab: netem failed; if tc said 'qdisc kind is unknown', this kernel lacks CONFIG_NET_SCH_NETEM" >&2
      exit 3
    fi
    ;;
  has-netem)
    # Exit 0 when this kernel can run netem (checked on a throwaway veth pair in a scratch namespace).
    probe="$id-netem-probe"
    ip netns add "$probe"
    trap 'ip netns del "$probe" 2>/dev/null || true' EXIT
    ip netns exec "$probe" ip link add p0 type veth peer name p1
    ip netns exec "$probe" tc qdisc add dev p0 root netem delay 1ms 2>/dev/null
    ;;
  impair)
    ns=$(ns_of "$2"); shift 2
    defines=()
    for setting in "$@"; do
      key=${setting%%=*}; percent=${setting#*=}
      case $key in loss|corrupt|duplicate) ;; *) echo "netns-lab: unknown impairment '$key'" >&2; exit 2 ;; esac
      ppm=$(awk -v p="$percent" 'BEGIN { if (p !~ /^[0-9.]+$/ || p > 100) exit 1; printf "%d", p * 10000 }') ||
        { echo "netns-lab: '$setting': expected a percentage 0..100" >&2; exit 2; }
      defines+=("-D${key^^}_PPM=$ppm")
    done
    object=$(mktemp /tmp/tusk-impair-XXXXXX.o)
    clang -O2 -target bpf -I"/usr/include/$(gcc -print-multiarch)" "${defines[@]}" \
      -c "$(dirname "$0")/impair.bpf.c" -o "$object"
    ip netns exec "$ns" tc qdisc replace dev lab0 clsact
    ip netns exec "$ns" tc filter replace dev lab0 ingress pref 1 bpf direct-action obj "$object" sec tc
    rm -f "$object"
    ;;
  clear)
    ns=$(ns_of "$2")
    ip netns exec "$ns" tc qdisc del dev lab0 root 2>/dev/null || true
    ip netns exec "$ns" tc qdisc del dev lab0 clsact 2>/dev/null || true
    ;;
  flap)
    ns=$(ns_of "$2")
    ip netns exec "$ns" ip link set lab0 down
    sleep "$(awk "BEGIN { print $3 / 1000 }")"
    ip netns exec "$ns" ip link set lab0 up
    ;;
  exec) ns=$(ns_of "$2"); shift 2; ip netns exec "$ns" "$@" ;;
  *) sed -n '2,20p' "$0" >&2; exit 2 ;;
esac
