#!/usr/bin/env bash
# The DPDK lab: two "hosts" whose lab ports are the ends of veth links, either cabled directly or
# through a third network namespace acting as the switch (a Linux bridge). The host ports stay in
# the root namespace, so agents there reach a controller on 127.0.0.1 and open the ports with
# DPDK's net_af_packet. Faults are real: frames are dropped, corrupted or duplicated in the kernel
# on their way to a host, and links go down. Traffic never leaves the links this script made.
#
#   netns-lab.sh up [--switch]        make the lab; host ports are $ID-a and $ID-b
#   netns-lab.sh port HOST            print HOST's port name
#   netns-lab.sh impair HOST [loss=P] [corrupt=P] [duplicate=P] [after=BYTES] [within=BYTES]
#                                     impair frames on their way to HOST (P in percent), with a tc
#                                     BPF program; works on kernels without netem. A corrupted
#                                     frame has one bit flipped after its first `after` bytes (14,
#                                     the Ethernet header) and within `within` bytes from there
#   netns-lab.sh mtu BYTES            set every lab link's MTU (jumbo frames: 9000)
#   netns-lab.sh fault HOST ARGS...   netem on the way to HOST, e.g. fault b reorder 25% delay 1ms
#                                     (needs a kernel with sch_netem)
#   netns-lab.sh reorder HOST P DEPTH frames on their way to HOST (P in percent) held back until DEPTH
#                                     later frames have passed; needs --switch, and TUSK_LAB_RELAY set
#                                     to the tusk-lab-relay binary, which takes the bridge's place
#   netns-lab.sh clear HOST           remove impairments, netem and reordering on the way to HOST
#   netns-lab.sh flap HOST MS         cut HOST's cable for MS milliseconds, then restore it: the
#                                     switch's port to HOST stops forwarding, so every frame either
#                                     way is lost, as a failing optic loses them. Carrier stays up:
#                                     an af_packet sender whose port loses carrier holds what it
#                                     sent in its TX ring and flushes it as one burst when carrier
#                                     returns, which no real NIC does, and the burst overran the
#                                     receiver's ring. Without --switch, HOST's port goes down
#   netns-lab.sh link HOST up|down    cut HOST's cable (it stays cut) or restore it
#   netns-lab.sh has-netem            exit 0 when this kernel has netem (some, e.g. Firecracker's, do not)
#   netns-lab.sh down                 remove everything (idempotent; safe after a failed test)
#
# TUSK_LAB_ID (default "tusk", at most 10 characters) prefixes every name.
# Without --switch, the way to HOST is the other host's port: a DPDK sender there must not bypass
# the qdisc layer (net_af_packet devarg qdisc_bypass=0), or impairments never see its frames.
set -euo pipefail

id=${TUSK_LAB_ID:-tusk}
switch_ns="$id-sw"
here=$(cd "$(dirname "$0")" && pwd)

port_of() {
  case $1 in
    a|b) echo "$id-$1" ;;
    *) echo "netns-lab: unknown host '$1' (expected a or b)" >&2; exit 2 ;;
  esac
}

# The device whose egress carries frames to HOST, as "namespace device" (namespace "-" = root).
way_to() {
  local host=$1 other
  if ip netns list 2>/dev/null | grep -q "^$switch_ns\b"; then
    echo "$switch_ns sw-$host"
  else
    [[ $host == a ]] && other=b || other=a
    echo "- $(port_of "$other")"
  fi
}

# The far end of HOST's cable, as "namespace device": the switch's port to HOST, or HOST's own
# port when the hosts are cabled directly.
cable_end() {
  if ip netns list 2>/dev/null | grep -q "^$switch_ns\b"; then
    echo "$switch_ns sw-$1"
  else
    echo "- $(port_of "$1")"
  fi
}

in_ns() {
  local ns=$1; shift
  if [[ $ns == - ]]; then "$@"; else ip netns exec "$ns" "$@"; fi
}

# Offloads would let the kernel merge or split frames behind DPDK's back; a BERT must see every
# frame as sent. IPv6 off: no router solicitations or MLD reports on a test link.
quiet() {
  local ns=$1 dev=$2
  in_ns "$ns" sysctl -qw "net.ipv6.conf.$dev.disable_ipv6=1" 2>/dev/null || true
  in_ns "$ns" ethtool -K "$dev" tso off gso off gro off tx off rx off >/dev/null 2>&1 || true
}

up() {
  down
  local a b
  a=$(port_of a); b=$(port_of b)
  if [[ ${1:-} == --switch ]]; then
    ip netns add "$switch_ns"
    ip link add "$a" type veth peer name sw-a netns "$switch_ns"
    ip link add "$b" type veth peer name sw-b netns "$switch_ns"
    ip netns exec "$switch_ns" ip link add br0 type bridge
    for port in sw-a sw-b; do
      ip netns exec "$switch_ns" ip link set "$port" master br0
      quiet "$switch_ns" "$port"
      ip netns exec "$switch_ns" ip link set "$port" up
    done
    # Forward at once: no learning delay, and no ageing surprises mid-test.
    ip netns exec "$switch_ns" ip link set br0 type bridge forward_delay 0 ageing_time 0
    quiet "$switch_ns" br0
    ip netns exec "$switch_ns" ip link set br0 up
  else
    ip link add "$a" type veth peer name "$b"
  fi
  for port in "$a" "$b"; do
    quiet - "$port"
    ip link set "$port" up
  done
  echo "lab up: host ports $a and $b${1:+ (through a bridge in namespace $switch_ns)}"
}

relay_pidfile() { echo "/run/tusk-lab-$id-relay.pid"; }
relay_log() { echo "/tmp/tusk-lab-$id-relay.log"; }

# The relay forwards frames between the switch ports in place of the bridge, holding some back.
start_relay() {
  local host=$1 percent=$2 depth=$3 other
  [[ -x ${TUSK_LAB_RELAY:-} ]] || { echo "netns-lab: reorder needs TUSK_LAB_RELAY=<tusk-lab-relay binary>" >&2; exit 2; }
  ip netns list 2>/dev/null | grep -q "^$switch_ns\b" || { echo "netns-lab: reorder needs 'up --switch'" >&2; exit 2; }
  [[ $host == a ]] && other=b || other=a
  stop_relay
  for port in sw-a sw-b; do ip netns exec "$switch_ns" ip link set "$port" nomaster; done
  ip netns exec "$switch_ns" "$TUSK_LAB_RELAY" "sw-$other" "sw-$host" "$percent" "$depth" >"$(relay_log)" 2>&1 &
  echo $! >"$(relay_pidfile)"
  sleep 0.2
  kill -0 "$(cat "$(relay_pidfile)")" 2>/dev/null || { cat "$(relay_log)" >&2; exit 1; }
}

# Stops the relay (its counts go to the log, shown here) and gives the ports back to the bridge.
stop_relay() {
  local pidfile pid
  pidfile=$(relay_pidfile)
  [[ -f $pidfile ]] || return 0
  pid=$(cat "$pidfile")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.02; done
  rm -f "$pidfile"
  cat "$(relay_log)" 2>/dev/null || true
  for port in sw-a sw-b; do ip netns exec "$switch_ns" ip link set "$port" master br0 2>/dev/null || true; done
}

down() {
  stop_relay >/dev/null
  ip link del "$(port_of a)" 2>/dev/null || true
  ip link del "$(port_of b)" 2>/dev/null || true
  ip netns del "$switch_ns" 2>/dev/null || true
}

case ${1:-} in
  up) shift; up "$@" ;;
  down) down ;;
  port) port_of "$2" ;;
  impair)
    read -r ns dev < <(way_to "$2"); shift 2
    defines=()
    for setting in "$@"; do
      key=${setting%%=*}; percent=${setting#*=}
      case $key in
        loss|corrupt|duplicate) ;;
        after|within)
          [[ $percent =~ ^[0-9]+$ && $percent -gt 0 ]] || { echo "netns-lab: '$setting': expected a byte count" >&2; exit 2; }
          [[ $key == after ]] && defines+=("-DPAYLOAD_OFFSET=$percent") || defines+=("-DCORRUPT_WITHIN=${percent}u")
          continue ;;
        *) echo "netns-lab: unknown impairment '$key'" >&2; exit 2 ;;
      esac
      ppm=$(awk -v p="$percent" 'BEGIN { if (p !~ /^[0-9.]+$/ || p > 100) exit 1; printf "%d", p * 10000 }') ||
        { echo "netns-lab: '$setting': expected a percentage 0..100" >&2; exit 2; }
      defines+=("-D${key^^}_PPM=$ppm")
    done
    object=$(mktemp /tmp/tusk-impair-XXXXXX.o)
    trap 'rm -f "$object"' EXIT
    clang -O2 -target bpf -I"/usr/include/$(gcc -print-multiarch)" "${defines[@]}" -c "$here/impair.bpf.c" -o "$object"
    in_ns "$ns" tc qdisc replace dev "$dev" clsact
    in_ns "$ns" tc filter replace dev "$dev" egress pref 1 bpf direct-action obj "$object" sec tc
    ;;
  mtu)
    [[ ${2:-} =~ ^[0-9]+$ ]] || { echo "netns-lab.sh: mtu BYTES" >&2; exit 2; }
    for port in "$(port_of a)" "$(port_of b)"; do ip link set "$port" mtu "$2"; done
    if ip netns list 2>/dev/null | grep -q "^$switch_ns\b"; then
      for dev in sw-a sw-b br0; do ip netns exec "$switch_ns" ip link set "$dev" mtu "$2"; done
    fi
    ;;
  fault)
    read -r ns dev < <(way_to "$2"); shift 2
    if ! in_ns "$ns" tc qdisc replace dev "$dev" root netem "$@"; then
      echo "netns-lab: netem failed; if tc said 'qdisc kind is unknown', this kernel lacks CONFIG_NET_SCH_NETEM" >&2
      exit 3
    fi
    ;;
  reorder) start_relay "$2" "$3" "$4" ;;
  clear)
    stop_relay
    read -r ns dev < <(way_to "$2")
    in_ns "$ns" tc qdisc del dev "$dev" root 2>/dev/null || true
    in_ns "$ns" tc qdisc del dev "$dev" clsact 2>/dev/null || true
    ;;
  flap)
    port_of "$2" >/dev/null
    read -r ns dev <<<"$(cable_end "$2")"
    seconds=$(awk "BEGIN { print $3 / 1000 }")
    if [[ $ns == - ]]; then
      ip link set "$dev" down
      sleep "$seconds"
      ip link set "$dev" up
    else
      # One change cuts both directions at once: a disabled bridge port neither takes nor gives frames.
      ip netns exec "$ns" bridge link set dev "$dev" state 0
      sleep "$seconds"
      ip netns exec "$ns" bridge link set dev "$dev" state 3
    fi
    ;;
  link)
    [[ ${3:-} == up || ${3:-} == down ]] || { echo "netns-lab.sh: link HOST up|down" >&2; exit 2; }
    port_of "$2" >/dev/null
    read -r ns dev <<<"$(cable_end "$2")"
    in_ns "$ns" ip link set "$dev" "$3"
    ;;
  has-netem)
    probe="$id-netem-probe"
    ip link add "$probe" type veth peer name "$probe-p"
    trap 'ip link del "$probe" 2>/dev/null || true' EXIT
    tc qdisc add dev "$probe" root netem delay 1ms 2>/dev/null
    ;;
  *) sed -n '2,32p' "$0" >&2; exit 2 ;;
esac
