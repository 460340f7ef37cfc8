#!/usr/bin/env bash
# The fabric lab: a routed leaf-spine (Clos) network of network namespaces, as the fabrics Tusk
# burns in are built. Every leaf is cabled to every spine by a point-to-point /31 link; leaves
# route to each other's host subnets over all spines with equal-cost multipath routes hashed on
# the 5-tuple (net.ipv4.fib_multipath_hash_policy=1), so a flow's UDP source port picks its
# spine, as RoCEv2's does on real switches. Hosts hang off their leaf's host bridge, whose
# address is their gateway:
#   - DPDK hosts: one veth per host; the host end stays in the root namespace without an address,
#     for an agent there to open with net_af_packet (it answers ARP for its own address itself);
#   - RDMA hosts: a Soft-RoCE VM's tap device is enslaved to the leaf's host bridge (attach).
# Faults are real and sit on one inter-switch link in one direction: frames are dropped,
# corrupted or duplicated by a tc BPF program (this kernel has no netem), or the link goes down
# and the leaves route around it. Traffic never leaves the links this script made.
#
#   fabric-lab.sh up [--spines N] [--leaves N] [--hosts N]
#                                     make the lab (defaults 2, 2, 2; at most 8 each)
#   fabric-lab.sh topology            print switches, links, hosts: every name, device and address
#   fabric-lab.sh topology-file       print the lab as a Tusk topology file (tusk-controller run
#                                     --topology): devices, their ports' addresses, and cables
#                                     named C-l1-s2 (leaf 1 to spine 2) and C-l1h2 (host to leaf)
#   fabric-lab.sh port HOST           print the root-namespace port of HOST (e.g. l1h2)
#   fabric-lab.sh attach LEAF DEVICE  move DEVICE (e.g. a VM's tap) onto LEAF's host bridge
#   fabric-lab.sh path SRC DST SPORT DPORT
#                                     print the uplink (e.g. l1-s2) the source's leaf hashes the UDP
#                                     flow SRC:SPORT > DST:DPORT onto (the kernel's own choice)
#   fabric-lab.sh counter LINK DIR    frames that crossed LINK (e.g. l1-s2) in DIR: "up" is leaf to
#                                     spine, "down" spine to leaf (the sending end's tx_packets)
#   fabric-lab.sh impair LINK DIR [loss=P] [corrupt=P] [duplicate=P] [dscp=N] [mark_ce_above=MBPS]
#                                     impair LINK in DIR (P in percent); corruption flips one bit
#                                     after the IPv4 and UDP headers, where a BERT checks; dscp=N
#                                     rewrites every IPv4 frame's DSCP; mark_ce_above marks ECN-capable
#                                     frames CE beyond that rate (a token bucket, since this kernel
#                                     has no RED), as a switch's congested port does. LINK may be a
#                                     host (l2h1) with DIR down: the leaf's port to that host
#   fabric-lab.sh shape LINK DIR MBPS [queue=MS]
#                                     hold LINK in DIR to MBPS Mbit/s of frames (a tbf, counting
#                                     each frame's bytes without FCS, as Tusk's bit rates do) with
#                                     a queue of MS milliseconds (default 20) before it drops: a
#                                     switch port slower than what is offered to it
#   fabric-lab.sh clear LINK [DIR]    remove impairments and shaping from LINK (both directions by
#                                     default)
#   fabric-lab.sh link LINK up|down   take LINK down (both ends lose carrier; leaves route around
#                                     it, as BFD and BGP would) or bring it back
#   fabric-lab.sh flap LINK MS        LINK down for MS milliseconds, then up
#   fabric-lab.sh fail LINK [MS]      LINK down, and every other leaf routes around its spine for
#                                     LINK's leaf (the spine withdrew its hosts, as BGP would); with
#                                     MS, the link first drops everything for MS milliseconds (a
#                                     cut the routers take that long to notice)
#   fabric-lab.sh restore LINK        LINK up, and every leaf's routes as they were
#   fabric-lab.sh hash-policy 0|1     what every router's ECMP hashes: 1 the 5-tuple (default),
#                                     0 the addresses only (L3)
#   fabric-lab.sh down                remove everything (idempotent; safe after a failed test)
#
# TUSK_LAB_ID (default "tusk", at most 6 characters) prefixes every namespace and root port.
# Addresses: leaf i's hosts are 192.168.(100+i).0/24, gateway .1, host h at .(10+h); link
# li-sj is 172.16.i.(2j)/31 on the leaf and 172.16.i.(2j+1)/31 on the spine, with fixed MACs and
# neighbour entries at both ends (no ARP between switches).
set -euo pipefail

id=${TUSK_LAB_ID:-tusk}
here=$(cd "$(dirname "$0")" && pwd)
state_dir=/run/tusk-fabric-lab
state=$state_dir/$id

die() { echo "fabric-lab: $*" >&2; exit 2; }
[[ ${#id} -le 6 ]] || die "TUSK_LAB_ID '$id' is longer than 6 characters (interface names are at most 15)"

ns_of() { echo "$id-$1"; }  # l1, s2 -> namespace
in_ns() { local ns=$1; shift; ip netns exec "$ns" "$@"; }

load_shape() {
  [[ -f $state ]] || die "no fabric lab '$id' is up (run: fabric-lab.sh up)"
  # shellcheck disable=SC1090
  source "$state"
}

# Offloads would let the kernel merge or split frames behind DPDK's back; IPv6 off: no router
# solicitations or MLD reports on a test link.
quiet() {
  local ns=$1 dev=$2
  if [[ $ns == - ]]; then
    sysctl -qw "net.ipv6.conf.$dev.disable_ipv6=1" 2>/dev/null || true
    ethtool -K "$dev" tso off gso off gro off tx off rx off >/dev/null 2>&1 || true
  else
    in_ns "$ns" sysctl -qw "net.ipv6.conf.$dev.disable_ipv6=1" 2>/dev/null || true
    in_ns "$ns" ethtool -K "$dev" tso off gso off gro off tx off rx off >/dev/null 2>&1 || true
  fi
}

make_router() {
  local ns=$1
  ip netns add "$ns"
  in_ns "$ns" ip link set lo up
  in_ns "$ns" sysctl -qw net.ipv4.ip_forward=1
  in_ns "$ns" sysctl -qw net.ipv4.fib_multipath_hash_policy=1
  # Paths are asymmetric by design: a reply may come back over another spine.
  in_ns "$ns" sysctl -qw net.ipv4.conf.all.rp_filter=0
  in_ns "$ns" sysctl -qw net.ipv4.conf.default.rp_filter=0
  # A link without carrier takes its routes out of use, as a routing protocol would.
  in_ns "$ns" sysctl -qw net.ipv4.conf.all.ignore_routes_with_linkdown=1
  # Path probes are answered with ICMP time-exceeded at every hop: no per-peer limit, and none of
  # the global 1000/s (burst 50) either, which a leaf answering two hosts' probes reaches in bursts
  # on a busy machine and which then reads as probe loss at that hop.
  in_ns "$ns" sysctl -qw net.ipv4.icmp_ratelimit=0
  in_ns "$ns" sysctl -qw net.ipv4.icmp_ratemask=0
  in_ns "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
  in_ns "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
}

leaf_addr() { echo "172.16.$1.$((2 * $2))"; }       # leaf i's end of li-sj
spine_addr() { echo "172.16.$1.$((2 * $2 + 1))"; }  # spine j's end of li-sj
subnet() { echo "192.168.$((100 + $1))"; }          # leaf i's hosts

# What link li-sj needs besides its addresses, set again whenever it comes up (taking a device
# down removes its neighbour entries and the routes through it): fixed neighbours between the
# switches (a fault in one direction hits that direction's traffic, not the ARP replies the other
# direction would need) and the spine's route to the leaf's hosts.
link_routes() {
  local i=$1 j=$2 leaf spine
  leaf=$(ns_of "l$i")
  spine=$(ns_of "s$j")
  in_ns "$leaf" ip neigh replace "$(spine_addr "$i" "$j")" lladdr "02:74:6c:0$i:0$j:01" dev "s$j" nud permanent
  in_ns "$spine" ip neigh replace "$(leaf_addr "$i" "$j")" lladdr "02:74:6c:0$i:0$j:00" dev "l$i" nud permanent
  in_ns "$spine" ip route replace "$(subnet "$i").0/24" via "$(leaf_addr "$i" "$j")" dev "l$i"
}

# Leaf i reaches every other leaf's hosts over all spines whose links are up, at equal cost: its
# own link to the spine, and the spine's to the other leaf (a spine that lost leaf k withdraws
# k's hosts, as BGP would; `fail` asks the other leaves to learn it).
leaf_routes() {
  local i=$1 j k
  for ((k = 1; k <= leaves; k++)); do
    [[ $k -ne $i ]] || continue
    local hops=()
    for ((j = 1; j <= spines; j++)); do
      # Administratively up (a route cannot name a device that is down).
      if in_ns "$(ns_of "l$i")" ip -o link show dev "s$j" | grep -q '[<,]UP[,>]' &&
        in_ns "$(ns_of "s$j")" ip -o link show dev "l$k" | grep -q '[<,]UP[,>]'; then
        hops+=(nexthop via "$(spine_addr "$i" "$j")" dev "s$j")
      fi
    done
    [[ ${#hops[@]} -gt 0 ]] || continue
    # src: the leaf's own traffic (ping, probes) comes from its gateway address, which every
    # switch can route back to.
    in_ns "$(ns_of "l$i")" ip route replace "$(subnet "$k").0/24" src "$(subnet "$i").1" "${hops[@]}"
  done
}

up() {
  local spines=2 leaves=2 hosts=2
  while [[ $# -gt 0 ]]; do
    case $1 in
      --spines|--leaves|--hosts)
        [[ $# -ge 2 && $2 =~ ^[1-8]$ ]] || die "$1 needs a count from 1 to 8"
        printf -v "${1#--}" '%s' "$2"; shift 2 ;;
      *) die "unknown option '$1'" ;;
    esac
  done
  [[ $leaves -ge 2 ]] || die "--leaves must be at least 2: traffic has to cross the spines"
  down
  mkdir -p "$state_dir"
  local i j h
  for ((j = 1; j <= spines; j++)); do make_router "$(ns_of "s$j")"; done
  for ((i = 1; i <= leaves; i++)); do
    local leaf
    leaf=$(ns_of "l$i")
    make_router "$leaf"
    in_ns "$leaf" ip link add hosts type bridge
    in_ns "$leaf" ip link set hosts address "02:74:6b:0$i:00:01"
    in_ns "$leaf" ip addr add "$(subnet "$i").1/24" dev hosts
    in_ns "$leaf" ip link set hosts up
    for ((j = 1; j <= spines; j++)); do
      local spine
      spine=$(ns_of "s$j")
      ip link add "s$j" netns "$leaf" type veth peer "l$i" netns "$spine"
      in_ns "$leaf" ip addr add "$(leaf_addr "$i" "$j")/31" dev "s$j"
      in_ns "$spine" ip addr add "$(spine_addr "$i" "$j")/31" dev "l$i"
      quiet "$leaf" "s$j"
      quiet "$spine" "l$i"
      in_ns "$leaf" ip link set "s$j" address "02:74:6c:0$i:0$j:00"
      in_ns "$spine" ip link set "l$i" address "02:74:6c:0$i:0$j:01"
      in_ns "$leaf" ip link set "s$j" up
      in_ns "$spine" ip link set "l$i" up
      link_routes "$i" "$j"
    done
    for ((h = 1; h <= hosts; h++)); do
      local port="$id-l${i}h$h"
      ip link add "$port" type veth peer "h$h" netns "$leaf"
      ip link set "$port" address "02:74:6b:0$i:0$h:10"
      quiet - "$port"
      quiet "$leaf" "h$h"
      in_ns "$leaf" ip link set "h$h" master hosts up
      ip link set "$port" up
    done
  done
  printf 'spines=%d\nleaves=%d\nhosts=%d\n' "$spines" "$leaves" "$hosts" >"$state"
  for ((i = 1; i <= leaves; i++)); do leaf_routes "$i"; done
  echo "fabric-lab: up: $leaves leaves, $spines spines, $hosts DPDK hosts per leaf (fabric-lab.sh topology)"
}

topology() {
  load_shape
  local i j h
  for ((j = 1; j <= spines; j++)); do echo "spine s$j namespace $(ns_of "s$j")"; done
  for ((i = 1; i <= leaves; i++)); do
    echo "leaf l$i namespace $(ns_of "l$i") hosts $(subnet "$i").0/24 gateway $(subnet "$i").1 gateway_mac 02:74:6b:0$i:00:01 bridge hosts"
  done
  for ((i = 1; i <= leaves; i++)); do
    for ((j = 1; j <= spines; j++)); do
      echo "link l$i-s$j leaf l$i dev s$j $(leaf_addr "$i" "$j")/31 spine s$j dev l$i $(spine_addr "$i" "$j")/31"
    done
  done
  for ((i = 1; i <= leaves; i++)); do
    for ((h = 1; h <= hosts; h++)); do
      echo "host l${i}h$h port $id-l${i}h$h mac 02:74:6b:0$i:0$h:10 address $(subnet "$i").$((10 + h))/24 gateway $(subnet "$i").1 leaf l$i"
    done
  done
}

topology_file() {
  load_shape
  local i j h
  echo "# The fabric lab '$id': $leaves leaves, $spines spines, $hosts hosts per leaf."
  echo "devices:"
  for ((j = 1; j <= spines; j++)); do
    echo "  s$j:"
    echo "    interfaces:"
    for ((i = 1; i <= leaves; i++)); do echo "      l$i: $(spine_addr "$i" "$j")"; done
  done
  for ((i = 1; i <= leaves; i++)); do
    echo "  l$i:"
    echo "    interfaces:"
    echo "      hosts: $(subnet "$i").1"
    for ((j = 1; j <= spines; j++)); do echo "      s$j: $(leaf_addr "$i" "$j")"; done
    for ((h = 1; h <= hosts; h++)); do echo "      h$h: ~"; done
    for ((h = 1; h <= hosts; h++)); do
      echo "  l${i}h$h:"
      echo "    interfaces:"
      echo "      port: $(subnet "$i").$((10 + h))"
    done
  done
  echo "links:"
  for ((i = 1; i <= leaves; i++)); do
    for ((j = 1; j <= spines; j++)); do
      echo "  - ends: l$i:s$j <-> s$j:l$i"
      echo "    cable: C-l$i-s$j"
    done
    for ((h = 1; h <= hosts; h++)); do
      echo "  - ends: l${i}h$h:port <-> l$i:h$h"
      echo "    cable: C-l${i}h$h"
    done
  done
}

# parse_link LINK -> sets leaf_n, spine_n after checking LINK exists
parse_link() {
  load_shape
  [[ $1 =~ ^l([1-8])-s([1-8])$ ]] || die "link '$1' is not of the form l<leaf>-s<spine>, e.g. l1-s2"
  leaf_n=${BASH_REMATCH[1]}
  spine_n=${BASH_REMATCH[2]}
  [[ $leaf_n -le $leaves && $spine_n -le $spines ]] || die "no link '$1' in this lab ($leaves leaves, $spines spines)"
}

# sender_of LINK DIR -> "namespace device" whose egress carries LINK's frames in DIR. A host's
# link (l2h1) has one switch port: the leaf's, "down" to the host.
sender_of() {
  if [[ $1 =~ ^l([1-8])h([1-8])$ ]]; then
    load_shape
    [[ ${BASH_REMATCH[1]} -le $leaves && ${BASH_REMATCH[2]} -le $hosts ]] || die "no host '$1' in this lab"
    [[ $2 == down ]] || die "host link '$1': only 'down' (the leaf's port to the host) is a switch port"
    echo "$(ns_of "l${BASH_REMATCH[1]}") h${BASH_REMATCH[2]}"
    return
  fi
  parse_link "$1"
  case $2 in
    up) echo "$(ns_of "l$leaf_n") s$spine_n" ;;
    down) echo "$(ns_of "s$spine_n") l$leaf_n" ;;
    *) die "direction '$2' is neither up (leaf to spine) nor down (spine to leaf)" ;;
  esac
}

counter() {
  [[ $# -eq 2 ]] || die "usage: counter LINK up|down"
  local ns dev
  read -r ns dev < <(sender_of "$1" "$2")
  in_ns "$ns" cat "/sys/class/net/$dev/statistics/tx_packets"
}

impair() {
  [[ $# -ge 3 ]] || die "usage: impair LINK up|down loss=P|corrupt=P|duplicate=P|dscp=N|mark_ce_above=MBPS..."
  local ns dev
  read -r ns dev < <(sender_of "$1" "$2")
  shift 2
  local defines=(-DPAYLOAD_OFFSET=42)  # Ethernet 14 + IPv4 20 + UDP 8: corrupt what a BERT checks
  local spec key value ppm
  for spec in "$@"; do
    key=${spec%%=*}
    value=${spec#*=}
    case $key in
      loss|corrupt|duplicate)
        [[ $value =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "$key=$value: give a percentage, e.g. $key=2 or $key=0.5"
        ppm=$(awk -v p="$value" 'BEGIN { printf "%d", p * 10000 + 0.5 }')
        [[ $ppm -le 1000000 ]] || die "$key=$value: more than 100 percent"
        defines+=("-D${key^^}_PPM=$ppm")
        ;;
      dscp)
        [[ $value =~ ^[0-9]+$ && $value -le 63 ]] || die "dscp=$value: give a DSCP, 0..63"
        defines+=("-DREMARK_DSCP=$value")
        ;;
      mark_ce_above)
        [[ $value =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "mark_ce_above=$value: give a rate in Mbit/s, e.g. 6 or 0.5"
        defines+=("-DMARK_CE_ABOVE_BPS=$(awk -v r="$value" 'BEGIN { printf "%d", r * 1000000 + 0.5 }')")
        ;;
      *) die "unknown impairment '$key' (loss, corrupt, duplicate, dscp, mark_ce_above)" ;;
    esac
  done
  local object
  object=$(mktemp /tmp/tusk-fabric-impair-XXXXXX.o)
  # -g: BTF, which the marker's map needs.
  clang -O2 -g -target bpf -I"/usr/include/$(gcc -print-multiarch)" "${defines[@]}" -c "$here/impair.bpf.c" -o "$object"
  # A new impairment replaces the last one: `filter replace` without a handle would add a second.
  in_ns "$ns" tc qdisc del dev "$dev" clsact 2>/dev/null || true
  in_ns "$ns" tc qdisc replace dev "$dev" clsact
  in_ns "$ns" tc filter replace dev "$dev" egress pref 1 bpf direct-action obj "$object" sec tc
  rm -f "$object"
}

shape() {
  [[ $# -ge 3 ]] || die "usage: shape LINK up|down MBPS [queue=MS]"
  local ns dev
  read -r ns dev < <(sender_of "$1" "$2")
  local rate=$3 queue_ms=20
  [[ $rate =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v r="$rate" 'BEGIN { exit !(r > 0) }' ||
    die "shape: rate '$rate': give Mbit/s above 0, e.g. 8 or 0.5"
  shift 3
  local spec
  for spec in "$@"; do
    case $spec in
      queue=*)
        queue_ms=${spec#queue=}
        [[ $queue_ms =~ ^[0-9]+$ && $queue_ms -ge 1 ]] || die "shape: queue=$queue_ms: give whole milliseconds, at least 1"
        ;;
      *) die "shape: unknown option '$spec' (queue=MS)" ;;
    esac
  done
  # The bucket holds 10 ms of the rate, and at least two jumbo frames: less than the kernel's tick
  # (4 ms at HZ=250) of tokens would hold the port below its rate.
  local bits burst
  bits=$(awk -v r="$rate" 'BEGIN { printf "%d", r * 1000000 + 0.5 }')
  burst=$(awk -v b="$bits" 'BEGIN { x = b / 8 / 100; if (x < 18432) x = 18432; printf "%d", x }')
  in_ns "$ns" tc qdisc replace dev "$dev" root tbf rate "${bits}bit" burst "$burst" latency "${queue_ms}ms"
}

clear_link() {
  [[ $# -ge 1 ]] || die "usage: clear LINK [up|down]"
  local dirs=(up down) ns dev
  [[ $1 =~ ^l[1-8]h[1-8]$ ]] && dirs=(down)  # a host's link has one switch port
  [[ $# -ge 2 ]] && dirs=("$2")
  for dir in "${dirs[@]}"; do
    read -r ns dev < <(sender_of "$1" "$dir")
    in_ns "$ns" tc qdisc del dev "$dev" clsact 2>/dev/null || true
    in_ns "$ns" tc qdisc del dev "$dev" root 2>/dev/null || true
  done
}

set_link() {
  [[ $# -eq 2 && ($2 == up || $2 == down) ]] || die "usage: link LINK up|down"
  parse_link "$1"
  in_ns "$(ns_of "l$leaf_n")" ip link set "s$spine_n" "$2"
  in_ns "$(ns_of "s$spine_n")" ip link set "l$leaf_n" "$2"
  if [[ $2 == up ]]; then
    link_routes "$leaf_n" "$spine_n"
    leaf_routes "$leaf_n"
  fi
}

# A link failure as a routed fabric converges on it: LINK down, and every other leaf stops sending
# to LINK's leaf through LINK's spine (the spine withdrew the leaf's hosts); `restore` undoes it.
fail() {
  [[ $# -ge 1 && $# -le 2 ]] || die "usage: fail LINK [MS]"
  if [[ $# -eq 2 ]]; then
    # A cut the routers take MS to notice (BFD's detection time): the link drops everything first.
    [[ $2 =~ ^[0-9]+$ ]] || die "fail: MS '$2' is not a whole number of milliseconds"
    impair "$1" up loss=100
    impair "$1" down loss=100
    sleep "$(awk -v ms="$2" 'BEGIN { printf "%.3f", ms / 1000 }')"
  fi
  set_link "$1" down
  [[ $# -eq 2 ]] && clear_link "$1"
  load_shape
  local i
  for ((i = 1; i <= leaves; i++)); do leaf_routes "$i"; done
}

restore() {
  [[ $# -eq 1 ]] || die "usage: restore LINK"
  set_link "$1" up
  local i
  for ((i = 1; i <= leaves; i++)); do leaf_routes "$i"; done
}

# Which header fields every router hashes to pick an equal-cost path: 1 the 5-tuple (the lab's
# default, as RoCEv2 fabrics are set), 0 the addresses alone (L3).
hash_policy() {
  [[ $# -eq 1 && ($1 == 0 || $1 == 1) ]] || die "usage: hash-policy 0|1"
  load_shape
  local i j
  for ((i = 1; i <= leaves; i++)); do in_ns "$(ns_of "l$i")" sysctl -qw net.ipv4.fib_multipath_hash_policy="$1"; done
  for ((j = 1; j <= spines; j++)); do in_ns "$(ns_of "s$j")" sysctl -qw net.ipv4.fib_multipath_hash_policy="$1"; done
}

flap() {
  [[ $# -eq 2 && $2 =~ ^[0-9]+$ ]] || die "usage: flap LINK MS"
  set_link "$1" down
  sleep "$(awk -v ms="$2" 'BEGIN { printf "%.3f", ms / 1000 }')"
  set_link "$1" up
}

attach() {
  [[ $# -eq 2 ]] || die "usage: attach LEAF DEVICE"
  load_shape
  [[ $1 =~ ^l([1-8])$ && ${BASH_REMATCH[1]} -le $leaves ]] || die "no leaf '$1' in this lab"
  local leaf
  leaf=$(ns_of "$1")
  ip link set "$2" netns "$leaf"
  quiet "$leaf" "$2"
  in_ns "$leaf" ip link set "$2" master hosts up
}

port() {
  [[ $# -eq 1 ]] || die "usage: port HOST"
  load_shape
  [[ $1 =~ ^l([1-8])h([1-8])$ && ${BASH_REMATCH[1]} -le $leaves && ${BASH_REMATCH[2]} -le $hosts ]] ||
    die "no host '$1' in this lab (hosts are l<leaf>h<n>)"
  echo "$id-$1"
}

path() {
  [[ $# -eq 4 && $3 =~ ^[0-9]+$ && $4 =~ ^[0-9]+$ ]] || die "usage: path SRC DST SPORT DPORT"
  load_shape
  [[ $1 =~ ^192\.168\.1([0-9][0-9])\.[0-9]+$ ]] || die "$1 is no host address of this lab"
  local leaf=$((10#${BASH_REMATCH[1]}))
  [[ $leaf -ge 1 && $leaf -le $leaves ]] || die "$1 is no host address of this lab"
  local route
  route=$(in_ns "$(ns_of "l$leaf")" ip route get "$2" from "$1" iif hosts ipproto udp sport "$3" dport "$4")
  [[ $route =~ dev\ s([1-8]) ]] || die "leaf l$leaf does not route $1 > $2 over a spine: $route"
  echo "l$leaf-s${BASH_REMATCH[1]}"
}

down() {
  local ns
  # Deleting a namespace deletes the veths in it, and with them their root-namespace ends.
  for ns in $(ip netns list 2>/dev/null | awk '{print $1}'); do
    if [[ $ns =~ ^$id-[ls][1-8]$ ]]; then ip netns del "$ns" || true; fi
  done
  local dev
  for dev in $(ip -o link show 2>/dev/null | awk -F': ' '{print $2}' | cut -d@ -f1); do
    if [[ $dev =~ ^$id-l[1-8]h[1-8]$ ]]; then ip link del "$dev" 2>/dev/null || true; fi
  done
  rm -f "$state"
  return 0
}

command=${1:-}
[[ -n $command ]] || die "usage: fabric-lab.sh up|topology|topology-file|port|path|attach|counter|impair|shape|clear|link|flap|down ..."
shift
case $command in
  up) up "$@" ;;
  topology) topology ;;
  topology-file) topology_file ;;
  port) port "$@" ;;
  attach) attach "$@" ;;
  counter) counter "$@" ;;
  path) path "$@" ;;
  impair) impair "$@" ;;
  shape) shape "$@" ;;
  clear) clear_link "$@" ;;
  link) set_link "$@" ;;
  flap) flap "$@" ;;
  fail) fail "$@" ;;
  restore) restore "$@" ;;
  hash-policy) hash_policy "$@" ;;
  down) down ;;
  *) die "unknown command '$command'" ;;
esac
