#!/usr/bin/env bash
# The fabric lab's switch daemons and management network, sourced by fabric-lab.sh (which defines
# id, state_dir, switches_dir, mgmt_net, die, in_ns, ns_of, mgmt_addr, load_shape): every switch's
# snmpd (IF-MIB, and LLDP-MIB through its lldpd as AgentX subagent) on the management bridge, the
# hosts' receive-only lldpd, their start and stop, the topology file's management keys and SNMP
# credentials, and the switches' ICMP policing. Not a command of its own.
# The management network's bridge in the root namespace (make_router cables each switch to it), on
# 198.18.N.0/24, N from the id's sum, or the next that no other lab's bridge (nor anything else)
# holds when two ids' sums meet.
make_mgmt_bridge() {
  local n first routed
  first=$(($(printf '%s' "$id" | cksum | cut -d' ' -f1) % 200 + 1))
  routed=$(ip -4 route show | awk '$1 ~ /^198\.18\./ { print $1 }')
  for ((n = first; ; n = n % 200 + 1)); do
    grep -qxF "198.18.$n.0/24" <<<"$routed" || break
    ((n % 200 + 1 != first)) || die "no management network left in 198.18.1.0/24 to 198.18.200.0/24"
  done
  mgmt_net=198.18.$n
  ip link add "$id-mgmt" type bridge
  sysctl -qw "net.ipv6.conf.$id-mgmt.disable_ipv6=1" 2>/dev/null || true
  ip addr add "$mgmt_net.1/24" dev "$id-mgmt"
  ip link set "$id-mgmt" up
}

# snmpd of switch SW (l1, s2) on its management address alone, serving its namespace's ports
# (IF-MIB) and, as AgentX master on a socket of its own, its lldpd's LLDP-MIB. Each has its own
# persistent directory: the v3 user's keys are localized to each agent's own engine ID.
start_snmpd() {
  local sw=$1 dir=$switches_dir/$1 role=leaf
  [[ $sw == s* ]] && role=spine
  mkdir -p "$dir/persistent"
  cat >"$dir/snmpd.conf" <<EOF
# snmpd of switch $sw of the fabric lab '$id' (tests/lab/fabric-lab.sh)
[snmp] persistentDir $dir/persistent
agentAddress udp:$(mgmt_addr "$sw"):161
rocommunity tusk-lab $mgmt_net.0/24
createUser tusk SHA "tusk-lab-auth" AES "tusk-lab-priv"
rouser tusk auth
master agentx
agentXSocket $dir/agentx
sysName $sw
sysDescr Tusk fabric lab $id, $role $sw
sysLocation fabric lab $id
sysServices 6
dontLogTCPWrappersConnects yes
EOF
  # -C: this file, not /etc/snmp's; -I -smux: no SMUX peers, AgentX on that socket is the only
  # way in. MIBS empty: the agent serves numbers and needs no MIB files.
  MIBS='' in_ns "$(ns_of "$sw")" snmpd -C -c "$dir/snmpd.conf" -p "$dir/snmpd.pid" -Lf "$dir/snmpd.log" -I -smux
}

# lldpd of switch SW as its snmpd's subagent: LLDP on the fabric ports alone (every port but lo,
# the leaf's bridge and mgmt, so taps attached later too), the switch's lab name as system name
# (the namespaces share the machine's hostname), ports' names as port ids as real switches send
# them, and every second, so neighbours are known a second or two after up. Its privileged half
# opens the AgentX socket, so the chroot that every instance shares (/run/lldpd) is no bar.
start_lldpd() {
  local sw=$1 dir=$switches_dir/$1 role=leaf ports='*,!lo,!hosts,!mgmt'
  [[ $sw == s* ]] && role=spine
  cat >"$dir/lldpd.conf" <<EOF
configure system hostname $sw
configure system description "Tusk fabric lab $id, $role $sw"
configure lldp portidsubtype ifname
configure lldp tx-interval 1
configure lldp status rx-only
EOF
  # -C: the chassis ID is the first fabric port's fixed MAC, never mgmt's random one.
  in_ns "$(ns_of "$sw")" lldpd -u "$dir/lldpd.sock" -p "$dir/lldpd.pid" -X "$dir/agentx" \
    -I "$ports" -C "$ports" -m "$(mgmt_addr "$sw")" -O "$dir/lldpd.conf"
}

# The hosts' lldpd: one for all the lab's host ports in the root namespace, receive-only (-r: it
# sends nothing, so no switch learns a host from it), so an agent asks it which leaf port its port
# is cabled to (tusk-agent --lldpcli-socket, the path `host-lldp-socket` prints).
start_host_lldpd() {
  local dir=$switches_dir/hosts
  mkdir -p "$dir"
  lldpd -r -u "$dir/lldpd.sock" -p "$dir/lldpd.pid" -I "$id-l*h*"
}

# Every switch's daemons, all switches at once: snmpd, and lldpd once its AgentX socket is there
# (an lldpd that misses its master tries again only many seconds later). Each lldpd starts
# receive-only and sends once every lldpd listens on all of its ports (and the hosts' lldpd has
# started): a frame that reaches a port where nothing takes LLDP yet is counted in that port's
# discards, and the first counter reading of a test that starts at once (snmpd caches them for
# 3 s) may still predate it.
start_switches() {
  local sw pid pids=()
  mkdir -p /run/lldpd
  for sw in "$@"; do
    {
      start_snmpd "$sw"
      local t ports=$((spines + hosts))
      [[ $sw == s* ]] && ports=$leaves
      for ((t = 0; t < 300; t++)); do [[ -S $switches_dir/$sw/agentx ]] && break; sleep 0.01; done
      [[ -S $switches_dir/$sw/agentx ]] || die "snmpd of $sw opened no AgentX socket (log: $switches_dir/$sw/snmpd.log)"
      start_lldpd "$sw"
      for ((t = 0; t < 300; t++)); do
        (($(lldpcli -u "$switches_dir/$sw/lldpd.sock" show interfaces 2>/dev/null | grep -c '^Interface:') >= ports)) &&
          break
        sleep 0.01
      done
      ((t < 300)) || die "lldpd of $sw did not take its $ports ports"
    } &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || die "a switch's snmpd or lldpd did not start"; done
  start_host_lldpd
  for sw in "$@"; do lldpcli -u "$switches_dir/$sw/lldpd.sock" configure lldp status rx-and-tx >/dev/null; done
}

# A switch's management in the topology file: where the controller reads its SNMP agent, and the
# name of the credentials it uses there (snmp-credentials).
management() {
  echo "    management:"
  echo "      address: $(mgmt_addr "$1")"
  echo "      snmp: $2"
}

topology_file() {
  local snmp=lab
  case "$*" in
    ''|'--snmp v2c') ;;
    '--snmp v3') snmp=lab-v3 ;;
    *) die "usage: topology-file [--snmp v2c|v3]" ;;
  esac
  load_shape
  local i j h
  echo "# The fabric lab '$id': $leaves leaves, $spines spines, $hosts hosts per leaf."
  echo "devices:"
  for ((j = 1; j <= spines; j++)); do
    echo "  s$j:"
    management "s$j" "$snmp"
    echo "    interfaces:"
    for ((i = 1; i <= leaves; i++)); do echo "      l$i: $(spine_addr "$i" "$j")"; done
  done
  for ((i = 1; i <= leaves; i++)); do
    echo "  l$i:"
    management "l$i" "$snmp"
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

# The credentials that topology-file names, for the controller's --snmp-credentials.
snmp_credentials() {
  [[ $# -eq 0 ]] || die "usage: snmp-credentials"
  cat <<EOF
# SNMP credentials of the fabric lab '$id' (tusk-controller run --snmp-credentials FILE)
lab:
  version: 2c
  community: tusk-lab
lab-v3:
  version: 3
  user: tusk
  auth_protocol: sha
  auth_passphrase: tusk-lab-auth
  privacy_protocol: aes
  privacy_passphrase: tusk-lab-priv
EOF
}

# Every switch's policing of the ICMP errors it sends (header comment): per destination
# (icmp_ratelimit) and in all (icmp_msgs_per_sec, icmp_msgs_burst), for the types in icmp_ratemask.
icmp_limit() {
  [[ $# -eq 1 && ($1 == off || $1 =~ ^[0-9]+$) ]] || die "usage: icmp-limit MS|off"
  load_shape
  # 6168: destination unreachable (3), source quench (4), time exceeded (11), parameter problem
  # (12), the kernel's own default; 0, 0: no limit, as make_router leaves it.
  local settings=(net.ipv4.icmp_ratelimit=0 net.ipv4.icmp_ratemask=0)
  [[ $1 == off ]] || settings=(net.ipv4.icmp_ratelimit="$1" net.ipv4.icmp_ratemask=6168)
  settings+=(net.ipv4.icmp_msgs_per_sec=1000 net.ipv4.icmp_msgs_burst=50)
  local i j
  for ((j = 1; j <= spines; j++)); do in_ns "$(ns_of "s$j")" sysctl -qw "${settings[@]}"; done
  for ((i = 1; i <= leaves; i++)); do in_ns "$(ns_of "l$i")" sysctl -qw "${settings[@]}"; done
}
# Stops every snmpd and lldpd of the lab at once (SIGKILL: nothing of theirs outlives the lab):
# everything in the lab's namespaces, the daemons of its pid files, and leftovers whose namespace
# is gone: an snmpd or lldpcli whose command line names the lab's files, an lldpd (it rewrites its
# command line) whose namespace holds its socket there. Sets `stopping` to their pids.
stop_switches() {
  local pid file comm inodes daemons=() lldpds=() candidates=()
  stopping=()
  for file in "$switches_dir"/*/*.pid; do
    [[ -f $file ]] && read -r pid <"$file" && candidates+=("/proc/$pid/comm")
  done
  for file in /proc/[0-9]*/comm; do
    read -r comm 2>/dev/null <"$file" || continue
    case $comm in
      snmpd|lldpcli) daemons+=("${file%comm}cmdline") ;;
      lldpd) lldpds+=("${file%comm}net/unix") ;;
    esac
  done
  [[ ${#daemons[@]} -eq 0 ]] || mapfile -t -O "${#candidates[@]}" candidates < <(grep -lsF -- "$switches_dir/" "${daemons[@]}")
  [[ ${#lldpds[@]} -eq 0 ]] || mapfile -t -O "${#candidates[@]}" candidates < <(grep -lsF -- "$switches_dir/" "${lldpds[@]}")
  for file in "${candidates[@]}"; do
    pid=${file#/proc/}
    pid=${pid%%/*}
    # A stale pid file may name a process that has nothing to do with the lab now.
    if [[ $pid =~ ^[0-9]+$ ]] && read -r comm 2>/dev/null <"/proc/$pid/comm"; then
      [[ $comm == snmpd || $comm == lldpd || $comm == lldpcli ]] && stopping+=("$pid")
    fi
  done
  inodes=$(stat -L -c 'net:[%i]' /run/netns/"$id"-[ls][1-8] 2>/dev/null) || true
  if [[ -n $inodes ]]; then
    mapfile -t -O "${#stopping[@]}" stopping < <(stat -c '%N' /proc/[0-9]*/ns/net 2>/dev/null | tr -d "'" |
      awk 'NR == FNR { lab[$1] = 1; next } $3 in lab { split($1, path, "/"); print path[3] }' <(echo "$inodes") -)
  fi
  [[ ${#stopping[@]} -eq 0 ]] || kill -KILL "${stopping[@]}" 2>/dev/null || true
}

# Waits up to 3 s for what stop_switches stopped to be gone (a zombie is: init reaps it in its own
# time).
wait_stopped() {
  local pid state t alive
  for ((t = 0; t < 300; t++)); do
    alive=
    for pid in "${stopping[@]}"; do
      if read -r _ _ state _ 2>/dev/null <"/proc/$pid/stat" && [[ $state != Z ]]; then alive=$pid; break; fi
    done
    [[ -n $alive ]] || return 0
    sleep 0.01
  done
}
