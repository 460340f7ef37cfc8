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
# The switches serve what real switches serve a controller beyond the probes: each runs snmpd
# (IF-MIB: its ports' counters) with lldpd as its AgentX subagent (LLDP-MIB: who is cabled to
# which port), reached over a management network of its own.
#
#   fabric-lab.sh up [--spines N] [--leaves N] [--hosts N]
#                                     make the lab (defaults 2, 2, 2; at most 8 each)
#   fabric-lab.sh topology            print switches (with their management addresses), links,
#                                     hosts: every name, device and address
#   fabric-lab.sh topology-file [--snmp v2c|v3]
#                                     print the lab as a Tusk topology file (tusk-controller run
#                                     --topology): devices, their management address with the name
#                                     of their SNMP credentials (lab, or lab-v3 with --snmp v3),
#                                     their ports' addresses, and cables named C-l1-s2 (leaf 1 to
#                                     spine 2) and C-l1h2 (host to leaf)
#   fabric-lab.sh snmp-credentials    print the SNMP credentials file that names lab and lab-v3
#                                     (tusk-controller run --snmp-credentials FILE)
#   fabric-lab.sh port HOST           print the root-namespace port of HOST (e.g. l1h2)
#   fabric-lab.sh attach LEAF DEVICE  move DEVICE (e.g. a VM's tap) onto LEAF's host bridge
#   fabric-lab.sh swap HOST1 HOST2    swap two hosts' cables, as in a miswired rack: the
#                                     root-namespace port of HOST1 (<id>-l1h1) is then cabled to
#                                     HOST2's leaf port and the other way round, each port keeping
#                                     its own MAC (its NIC's, which goes with the agent that opens
#                                     it); on one leaf or across leaves; swap again to undo. Before
#                                     the agents open their ports: an open port stays on the device
#                                     it opened
#   fabric-lab.sh host-lldp-socket    print the control socket of the hosts' lldpd (receive-only, on
#                                     every host port in the root namespace): tusk-agent
#                                     --lldpcli-socket asks it who its port is cabled to
#   fabric-lab.sh path SRC DST SPORT DPORT
#                                     print the uplink (e.g. l1-s2) the source's leaf hashes the UDP
#                                     flow SRC:SPORT > DST:DPORT onto (the kernel's own choice)
#   fabric-lab.sh counter LINK DIR    frames that crossed LINK (e.g. l1-s2) in DIR: "up" is leaf to
#                                     spine, "down" spine to leaf (the sending end's tx_packets)
#   fabric-lab.sh impair LINK DIR [loss=P] [drop=P] [corrupt=P] [duplicate=P] [dscp=N]
#                             [mark_ce_above=MBPS]
#                                     impair LINK in DIR (P in percent). loss on an inter-switch
#                                     link: frames arrive damaged, and the receiving port discards
#                                     and counts them (rx_dropped: IF-MIB ifInDiscards), as a bad
#                                     cable's; loss on a host's link, and drop on any: frames vanish
#                                     at the sender, where no counter sees them (a cut). corrupt
#                                     flips one bit after the IPv4 and UDP headers of IPv4 frames,
#                                     where a BERT checks (never LLDP's: a real port's FCS check
#                                     would discard them rather than deliver a wrong neighbour);
#                                     dscp=N rewrites every IPv4 frame's DSCP; mark_ce_above marks
#                                     ECN-capable frames CE beyond that rate (a token bucket, since
#                                     this kernel has no RED), as a switch's congested port does.
#                                     LINK may be a host (l2h1) with DIR down: the leaf's port to
#                                     that host
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
#   fabric-lab.sh icmp-limit MS|off   every switch polices the ICMP errors it sends (the
#                                     time-exceeded answers path probes get), as real switches'
#                                     control planes do: to each destination a burst of 6, then one
#                                     per MS milliseconds (icmp_ratelimit), and at most 1000 a
#                                     second in all, burst 50 (icmp_msgs_per_sec, icmp_msgs_burst),
#                                     for time exceeded, destination unreachable, source quench and
#                                     parameter problem (icmp_ratemask 6168); MS 0 leaves only the
#                                     1000 a second. off: no limit at all, the lab's default
#   fabric-lab.sh down                remove everything (idempotent; safe after a failed test)
#
# TUSK_LAB_ID (default "tusk", at most 6 characters) prefixes every namespace and root port.
# Addresses: leaf i's hosts are 192.168.(100+i).0/24, gateway .1, host h at .(10+h); link
# li-sj is 172.16.i.(2j)/31 on the leaf and 172.16.i.(2j+1)/31 on the spine, with fixed MACs and
# neighbour entries at both ends (no ARP between switches).
# Management: the bridge <id>-mgmt in the root namespace holds 198.18.N.1/24, N = (cksum of the
# lab id) mod 200 + 1 (tusk: 35, lh: 142), or the next N free of routes when another lab holds
# that one (topology prints the addresses), and has a port to every switch, whose end in the
# switch is "mgmt": spine j at 198.18.N.(10+j), leaf i at 198.18.N.(20+i). The switches forward
# nothing that comes in on mgmt and send no LLDP there. Each switch's snmpd listens on
# udp:<its address>:161 alone, for SNMP v2c, community tusk-lab (read-only, from 198.18.N.0/24),
# and v3, user tusk (SHA, tusk-lab-auth; authNoPriv, or authPriv with AES-128, tusk-lab-priv),
# and serves its own namespace's ports (IF-MIB; net-snmp caches the counters for 3 s, as a real
# switch's lag its ports) and, through its lldpd, LLDP-MIB. lldpd sends LLDP every second (TTL
# 4 s) on every fabric port (a leaf's s<j>, h<h> and attached taps; a spine's l<i>), with the
# switch's lab name (l1, s2) as system name, port names as port ids and its management address,
# so neighbours are known a second or two after up, and an agent's port in the root namespace
# hears which leaf port it is cabled to. The daemons' files are under
# /run/tusk-fabric-lab/.<id>/<switch>/ (a dot directory: the state dir lists the labs that are up).
set -euo pipefail

id=${TUSK_LAB_ID:-tusk}
here=$(cd "$(dirname "$0")" && pwd)
state_dir=/run/tusk-fabric-lab
state=$state_dir/$id
switches_dir=$state_dir/.$id  # each switch's snmpd and lldpd: configuration, pid files, sockets

die() { echo "fabric-lab: $*" >&2; exit 2; }
[[ ${#id} -le 6 ]] || die "TUSK_LAB_ID '$id' is longer than 6 characters (interface names are at most 15)"

ns_of() { echo "$id-$1"; }  # l1, s2 -> namespace
# The management network's first three octets (up picks them, load_shape reads them).
mgmt_net=
mgmt_addr() { if [[ $1 == s* ]]; then echo "$mgmt_net.$((10 + ${1#s}))"; else echo "$mgmt_net.$((20 + ${1#l}))"; fi; }
# Runs a command in namespace NS: ip and tc by their own -n, which spares `ip netns exec`'s
# mounts (up runs a hundred of them).
in_ns() {
  local ns=$1
  shift
  case $1 in
    ip|tc) "$1" -n "$ns" "${@:2}" ;;
    *) ip netns exec "$ns" "$@" ;;
  esac
}

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

# A switch's namespace, with its management port on the lab's management bridge (made first, so
# that the settings, all in one sysctl, reach it too).
make_router() {
  local sw=$1 ns
  ns=$(ns_of "$sw")
  ip netns add "$ns"
  ip link add "$id-m$sw" type veth peer mgmt netns "$ns"
  sysctl -qw "net.ipv6.conf.$id-m$sw.disable_ipv6=1" 2>/dev/null || true
  ip link set "$id-m$sw" master "$id-mgmt" up
  local settings=(
    net.ipv4.ip_forward=1
    net.ipv4.fib_multipath_hash_policy=1
    # Paths are asymmetric by design: a reply may come back over another spine.
    net.ipv4.conf.all.rp_filter=0
    net.ipv4.conf.default.rp_filter=0
    # A link without carrier takes its routes out of use, as a routing protocol would.
    net.ipv4.conf.all.ignore_routes_with_linkdown=1
    # Path probes are answered with ICMP time-exceeded at every hop: no per-peer limit, and none
    # of the global 1000/s (burst 50) either, which a leaf answering two hosts' probes reaches in
    # bursts on a busy machine and which then reads as probe loss at that hop (icmp-limit).
    net.ipv4.icmp_ratelimit=0
    net.ipv4.icmp_ratemask=0
    net.ipv6.conf.all.disable_ipv6=1
    net.ipv6.conf.default.disable_ipv6=1
    # The management port is a host's, not a router's: what comes in on it is not forwarded
    # into the fabric (after ip_forward, which sets every port's forwarding).
    net.ipv4.conf.mgmt.forwarding=0
    net.ipv6.conf.mgmt.disable_ipv6=1
  )
  in_ns "$ns" sysctl -qw "${settings[@]}"
  ip -n "$ns" -batch - <<EOF
link set lo up
addr add $(mgmt_addr "$sw")/24 dev mgmt
link set mgmt up
EOF
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


# shellcheck source=tests/lab/fabric-lab-switches.sh
source "$here/fabric-lab-switches.sh"

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
  local tool
  for tool in snmpd lldpd lldpcli; do
    command -v "$tool" >/dev/null ||
      die "no $tool: the switches serve SNMP and LLDP (scripts/install-deps.sh installs snmpd and lldpd)"
  done
  down
  mkdir -p "$state_dir"
  local i j h
  make_mgmt_bridge
  for ((j = 1; j <= spines; j++)); do make_router "s$j"; done
  for ((i = 1; i <= leaves; i++)); do
    local leaf
    leaf=$(ns_of "l$i")
    make_router "l$i"
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
  printf 'spines=%d\nleaves=%d\nhosts=%d\nmgmt_net=%s\n' "$spines" "$leaves" "$hosts" "$mgmt_net" >"$state"
  for ((i = 1; i <= leaves; i++)); do leaf_routes "$i"; done
  local switches=()
  for ((j = 1; j <= spines; j++)); do switches+=("s$j"); done
  for ((i = 1; i <= leaves; i++)); do switches+=("l$i"); done
  start_switches "${switches[@]}"
  echo "fabric-lab: up: $leaves leaves, $spines spines, $hosts DPDK hosts per leaf (fabric-lab.sh topology)"
}

topology() {
  load_shape
  local i j h
  for ((j = 1; j <= spines; j++)); do echo "spine s$j namespace $(ns_of "s$j") management $(mgmt_addr "s$j")"; done
  for ((i = 1; i <= leaves; i++)); do
    echo "leaf l$i namespace $(ns_of "l$i") hosts $(subnet "$i").0/24 gateway $(subnet "$i").1 gateway_mac 02:74:6b:0$i:00:01 bridge hosts management $(mgmt_addr "l$i")"
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

# receiver_of LINK DIR -> "namespace device" of the switch port that receives LINK's frames in DIR,
# or nothing for a host's link (its receiver is the host's port).
receiver_of() {
  [[ $1 =~ ^l[1-8]h[1-8]$ ]] && return
  parse_link "$1"
  case $2 in
    up) echo "$(ns_of "s$spine_n") l$leaf_n" ;;
    down) echo "$(ns_of "l$leaf_n") s$spine_n" ;;
  esac
}

counter() {
  [[ $# -eq 2 ]] || die "usage: counter LINK up|down"
  local ns dev where
  where=$(sender_of "$1" "$2")
  read -r ns dev <<<"$where"
  in_ns "$ns" cat "/sys/class/net/$dev/statistics/tx_packets"
}

# Where `impair` hangs its egress program on the sender's port NS DEV: at the port's tcx hook,
# through tusk-lab-tcx (TUSK_LAB_TCX, or this checkout's build/), where the kernel has one (Linux
# 6.6 and later). There a clsact qdisc would also make the port's tcx ingress hook, and with it the
# kernel counts every frame that only a packet socket takes (the LLDP lldpd reads, one a second)
# as dropped by the port: discards, at the sender's end of the direction nobody impaired
# (tests/lab/tcx_egress.cpp). A clsact qdisc elsewhere, where it has no such effect.
tcx_tool=${TUSK_LAB_TCX:-$here/../../build/tests/tusk-lab-tcx}
egress_pin() { echo "$switches_dir/bpf/$1-$2"; }
detach_egress() {
  local ns=$1 dev=$2
  rm -f "$(egress_pin "$ns" "$dev")"
  in_ns "$ns" tc qdisc del dev "$dev" clsact 2>/dev/null || true
}
attach_egress() {
  local ns=$1 dev=$2 object=$3 status=0
  detach_egress "$ns" "$dev"
  if [[ -x $tcx_tool ]]; then
    local bpffs=$switches_dir/bpf
    if ! mountpoint -q "$bpffs"; then
      mkdir -p "$bpffs"
      mount -t bpf bpf "$bpffs"
    fi
    "$tcx_tool" "$ns" "$dev" "$object" "$(egress_pin "$ns" "$dev")" || status=$?
    [[ $status -ne 0 ]] || return 0
    [[ $status -eq 3 ]] || die "$tcx_tool could not attach the impairment to $dev in $ns"
  fi
  in_ns "$ns" tc qdisc replace dev "$dev" clsact
  in_ns "$ns" tc filter replace dev "$dev" egress pref 1 bpf direct-action obj "$object" sec tc
}

impair() {
  [[ $# -ge 3 ]] || die "usage: impair LINK up|down loss=P|drop=P|corrupt=P|duplicate=P|dscp=N|mark_ce_above=MBPS..."
  local ns dev rns rdev where
  where=$(sender_of "$1" "$2")
  read -r ns dev <<<"$where"
  where=$(receiver_of "$1" "$2")
  read -r rns rdev <<<"$where"
  shift 2
  # Ethernet 14 + IPv4 20 + UDP 8: corrupt what a BERT checks, in IPv4 frames alone.
  local defines=(-DPAYLOAD_OFFSET=42 -DCORRUPT_IPV4_ONLY)
  local spec key value ppm discard=0
  for spec in "$@"; do
    key=${spec%%=*}
    value=${spec#*=}
    case $key in
      loss|drop|corrupt|duplicate)
        [[ $value =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "$key=$value: give a percentage, e.g. $key=2 or $key=0.5"
        ppm=$(awk -v p="$value" 'BEGIN { printf "%d", p * 10000 + 0.5 }')
        [[ $ppm -le 1000000 ]] || die "$key=$value: more than 100 percent"
        # loss: discarded and counted by the receiving switch port; on a host's link (whose
        # receiver, an agent's packet socket, would see the damaged frame), and drop: lost at the
        # sender.
        if [[ $key == loss && -n $rns ]]; then
          key=discard
          [[ $ppm -eq 0 ]] || discard=1
        fi
        [[ $key == drop ]] && key=loss
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
      *) die "unknown impairment '$key' (loss, drop, corrupt, duplicate, dscp, mark_ce_above)" ;;
    esac
  done
  local object
  object=$(mktemp /tmp/tusk-fabric-impair-XXXXXX.o)
  # -g: BTF, which the marker's map needs.
  clang -O2 -g -target bpf -I"/usr/include/$(gcc -print-multiarch)" "${defines[@]}" -c "$here/impair.bpf.c" -o "$object"
  # The receiving port discards before the sender damages anything (and not after the last loss).
  if ((discard)); then
    ip -n "$rns" link set dev "$rdev" xdpdrv obj "$object" sec xdp
  elif [[ -n $rns ]]; then
    ip -n "$rns" link set dev "$rdev" xdp off
  fi
  # A new impairment replaces the last one.
  attach_egress "$ns" "$dev" "$object"
  rm -f "$object"
}

shape() {
  [[ $# -ge 3 ]] || die "usage: shape LINK up|down MBPS [queue=MS]"
  local ns dev where
  where=$(sender_of "$1" "$2")
  read -r ns dev <<<"$where"
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
  local dirs=(up down) ns dev where
  [[ $1 =~ ^l[1-8]h[1-8]$ ]] && dirs=(down)  # a host's link has one switch port
  [[ $# -ge 2 ]] && dirs=("$2")
  for dir in "${dirs[@]}"; do
    where=$(sender_of "$1" "$dir")
    read -r ns dev <<<"$where"
    detach_egress "$ns" "$dev"
    in_ns "$ns" tc qdisc del dev "$dev" root 2>/dev/null || true
    # The receiving port's discarding half of loss (impair).
    where=$(receiver_of "$1" "$dir")
    if [[ -n $where ]]; then
      read -r ns dev <<<"$where"
      ip -n "$ns" link set dev "$dev" xdp off
    fi
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
    impair "$1" up drop=100
    impair "$1" down drop=100
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

# Swaps two hosts' cables: the root-namespace ends of their veths trade names (through a
# temporary one; a device is renamed only while down), so the agent that opens HOST1's port is
# cabled to HOST2's leaf port. MACs trade back: a port keeps its MAC, which is its NIC's.
swap() {
  [[ $# -eq 2 && $1 != "$2" ]] || die "usage: swap HOST1 HOST2 (two different hosts)"
  local a b mac_a mac_b
  a=$(port "$1")
  b=$(port "$2")
  ! ip link show dev "$id-swap" >/dev/null 2>&1 || die "$id-swap is there: a swap was cut short (down and up again)"
  mac_a=$(<"/sys/class/net/$a/address")
  mac_b=$(<"/sys/class/net/$b/address")
  ip -batch - <<EOF
link set dev $a down
link set dev $b down
link set dev $a name $id-swap
link set dev $b name $a
link set dev $id-swap name $b
link set dev $a address $mac_a
link set dev $b address $mac_b
link set dev $a up
link set dev $b up
EOF
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


# The root namespace's devices of the lab (hosts' ports, management ports and bridge, a swap's
# temporary name) that are still there, other than the management bridge with --ports.
lab_devices() {
  local path dev
  for path in /sys/class/net/"$id"-*; do
    dev=${path##*/}
    [[ $dev =~ ^$id-(l[1-8]h[1-8]|m[ls][1-8]|mgmt|swap)$ ]] || continue
    [[ ${1:-} == --ports && $dev == "$id-mgmt" ]] || echo "$dev"
  done
}

down() {
  stop_switches
  local path dev t
  # Deleting a namespace deletes the veths in it, and with them their root-namespace ends: the
  # kernel does so for all of them at once as soon as the namespace's last process is gone,
  # sooner than deleting them one by one would.
  for path in /run/netns/"$id"-[ls][1-8]; do
    if [[ -e $path ]]; then ip netns del "${path##*/}" || true; fi
  done
  # Meanwhile (each waits on the kernel or the disk): the bridge, the daemons' files.
  local jobs=()
  { ip link del "$id-mgmt" 2>/dev/null || true; } &
  jobs+=($!)
  wait_stopped
  # The impairments' pinned links (attach_egress): their ports went with the namespaces.
  if mountpoint -q "$switches_dir/bpf"; then umount "$switches_dir/bpf" || true; fi
  { rm -rf "$switches_dir"; } &
  jobs+=($!)
  for ((t = 0; t < 100; t++)); do
    [[ -n $(lab_devices --ports) ]] || break
    sleep 0.01
  done
  wait "${jobs[@]}"
  for dev in $(lab_devices); do ip link del "$dev" 2>/dev/null || true; done
  rm -f "$state"
  return 0
}

command=${1:-}
[[ -n $command ]] ||
  die "usage: fabric-lab.sh up|topology|topology-file|snmp-credentials|port|attach|swap|path|counter|impair|shape|clear|link|flap|fail|restore|hash-policy|icmp-limit|down ..."
shift
case $command in
  up) up "$@" ;;
  topology) topology ;;
  topology-file) topology_file "$@" ;;
  snmp-credentials) snmp_credentials "$@" ;;
  port) port "$@" ;;
  attach) attach "$@" ;;
  swap) swap "$@" ;;
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
  host-lldp-socket) load_shape; echo "$switches_dir/hosts/lldpd.sock" ;;
  icmp-limit) icmp_limit "$@" ;;
  down) down ;;
  *) die "unknown command '$command'" ;;
esac
