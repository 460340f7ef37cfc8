#!/usr/bin/env bash
# The Soft-RoCE VM lab: N qemu VMs (TCG, no KVM needed) running Debian's 6.1 kernel with rdma_rxe,
# cabled as a full mesh of point-to-point Ethernet links, so real RDMA verbs (RC QPs, rdma_cm) run
# between "hosts" on a machine whose own kernel has no RDMA. Each guest chroots into the host's
# root filesystem (9p, read-only), so it runs the binaries built on the host (tusk-agent, perftest,
# iproute2) unchanged. Data links are unix datagram sockets between the qemu processes: traffic
# never leaves this machine and needs no port numbers. The control NIC is qemu user networking;
# a guest reaches the host's 127.0.0.1:PORT at 10.0.2.2:PORT.
#
#   rxe-vm-lab.sh has-qemu                      exit 0 when qemu-system-x86_64 and busybox-static are installed
#   rxe-vm-lab.sh prepare                       fetch the kernel, build the initramfs (cached; up does it too)
#   rxe-vm-lab.sh up ID [N] [--fabric LAB | --rails R]
#                                               boot N VMs (2..9, default 2) for lab ID, wait until ready;
#                                               --rails: R links (1..4) between every two VMs, one per
#                                               rail (a host's NIC i on rail i, as in GPU racks);
#                                               --fabric: instead of the mesh, one data NIC per VM on a
#                                               leaf of the fabric lab LAB (tests/lab/fabric-lab.sh, up
#                                               first): VM i on leaf ((i-1) % leaves)+1, addressed
#                                               192.168.(100+leaf).(20+i)/24, routed to the other leaves'
#                                               hosts via the leaf, MTU 1500 as the fabric's links
#   rxe-vm-lab.sh down ID                       kill the lab's VMs, remove its state (idempotent)
#   rxe-vm-lab.sh dir ID                        print the lab's state directory (shared, writable)
#   rxe-vm-lab.sh status ID                     per VM: "vm=I pid=P alive=yes|no ready=yes|no"
#   rxe-vm-lab.sh addresses ID                  per NIC: "vm=I nic=N mac=M ip=A prefix=P ..." (below)
#   rxe-vm-lab.sh exec ID VM [opts] -- CMD...   run CMD in VM with stdin /dev/null; when it ends, print
#                                               its stdout and stderr and exit with its exit code
#       --timeout S    kill it after S seconds (default 300, 0 = never) and exit 124
#       --cwd DIR      working directory in the guest (default: the caller's)
#       --background   return once it runs, printing "job=NAME pid=PID log=PATH" (PID: guest pid,
#                      leader of the job's session); stdout and stderr go to PATH
#       --name NAME    job name for --background (default: generated)
#       --log PATH     log file for --background (default STATEDIR/vmI/jobs/NAME.log)
#   rxe-vm-lab.sh wait ID VM NAME [--timeout S] wait for a background job; exit with its exit code
#   rxe-vm-lab.sh stop ID VM NAME [SIGNAL]      signal a background job's session (default TERM),
#                                               SIGKILL after 10 s; print its exit code
#   rxe-vm-lab.sh diag ID VM                    what a stuck guest is doing: every tusk process's threads
#                                               (state, kernel wait channel and stack), the kernel's
#                                               blocked tasks (sysrq w) and its last messages; and the
#                                               serial console's tail, read on the host (a guest too
#                                               stuck to answer still shows its lockup warnings there)
#   rxe-vm-lab.sh impair ID VM NIC NETEM-ARGS   netem on NIC's egress in VM: impair lab 1 data0 loss 1%
#   rxe-vm-lab.sh impair-ports ID VM NIC MASK VALUE NETEM-ARGS
#                                               netem only on UDP packets whose source port & MASK is
#                                               VALUE (RoCEv2's port: the packets an ECMP hash would
#                                               put on one path): impair-ports lab 1 data0 1 1 loss 5%
#   rxe-vm-lab.sh clear ID VM NIC               remove NIC's root qdisc (back to the default)
#   rxe-vm-lab.sh link ID VM NIC down|up        set NIC administratively down or up (rxe port follows)
#
# VMs are numbered 1..N. NIC is a data NIC name (dataK) or "peerJ", VM's data NIC facing VM J.
# Addressing (independent of N): the link between VMs i < j is 10.99.<i><j>.0/24; VM i is .i and
# VM j is .j (link 1-2: 10.99.12.1 <-> 10.99.12.2). VM i's data NICs are data0, data1, ... in order
# of peer number, each with Soft-RoCE device rxeK on dataK (in a 2-VM lab: data0/rxe0 on both).
# With --rails R, rail r's links are 10.(99-r).<i><j>.0/24 and its NICs come after rail r-1's:
# VM i's NIC to VM j on rail r is data(r*(N-1) + K), K as above ("peerJ" is rail 0's); in a 2-VM
# lab data0/rxe0 is rail 0 and data1/rxe1 rail 1 on both VMs.
# IPv6 is off on lab NICs, so each rxe GID table holds the link-local default GID at 0 and the
# IPv4 (RoCE v2) GID at 1. Control NIC "ctl": 10.0.2.15/24, default route via 10.0.2.2, the host.
# `addresses` prints, per VM, a line for ctl ("vm=I nic=ctl mac=M ip=10.0.2.15 prefix=24
# host_ip=10.0.2.2") and one per data NIC ("vm=I nic=dataK mac=M ip=A prefix=24 rxe=rxeK
# gid_index=G peer_vm=J peer_nic=dataL peer_ip=B peer_rxe=rxeL").
#
# Guests see the host's root read-only and live (host /tmp included), with the lab's state
# directory mounted writable at the same path as on the host; /run, /var/tmp and /dev/shm are
# guest-private tmpfs. Commands get TMPDIR=/run/tmp, HOME=/run/root, TUSK_VMLAB_ID, TUSK_VMLAB_VM.
# Hostnames are vm1..vmN; guest clocks are set from the host's at boot.
#
# Environment: TUSK_VMLAB_CACHE (kernel + initramfs, default /var/cache/tusk-vmlab),
# TUSK_VMLAB_STATE_ROOT (default /tmp; state is $TUSK_VMLAB_STATE_ROOT/tusk-vmlab-ID),
# TUSK_VMLAB_MEM (MiB per VM, default 1024), TUSK_VMLAB_MTU (data NIC MTU, default 9000: rxe's
# active MTU is then 4096, a quarter of the packets of MTU 1500 (rxe 1024), so fewer spurious ACK
# timeouts under TCG), TUSK_VMLAB_ROOT_CACHE (9p cache mode of the host root, default none, so
# guests see host files change at once), TUSK_VMLAB_BOOT_TIMEOUT (s, default 300),
# TUSK_VMLAB_EXEC_TIMEOUT (s, default 300).
# Exit codes: exec/wait: the command's own; 124 timeout; 125 the lab itself failed; 2 usage.
set -euo pipefail

cache=${TUSK_VMLAB_CACHE:-/var/cache/tusk-vmlab}
state_root=${TUSK_VMLAB_STATE_ROOT:-/tmp}

die() { echo "rxe-vm-lab: $*" >&2; exit 125; }
usage() { sed -n '10,47p' "${BASH_SOURCE[0]}" >&2; exit 2; }

# ---------------------------------------------------------------------------------------------
# Addressing, shared by host and guest.

check_id() {
  [[ ${1:-} =~ ^[A-Za-z0-9_-]{1,32}$ ]] || { echo "rxe-vm-lab: bad lab ID '${1:-}' (1-32 of A-Za-z0-9_-)" >&2; exit 2; }
}
state_of() { echo "$state_root/tusk-vmlab-$1"; }

# Index of VM i's data NIC that faces VM j: peers in ascending order, skipping i itself.
nic_index() { local i=$1 j=$2; if ((j < i)); then echo $((j - 1)); else echo $((j - 2)); fi; }
link_net() { local i=$1 j=$2 r=${3:-0}; ((i < j)) && echo "10.$((99 - r)).$i$j" || echo "10.$((99 - r)).$j$i"; }
fabric_tap() { echo "$1-v$2"; }  # at most 6 + 3 characters
fabric_leaves() { awk '/^leaf /' < <(TUSK_LAB_ID=$1 bash "$(dirname "${BASH_SOURCE[0]}")/fabric-lab.sh" topology) | wc -l; }
data_mac() { printf '52:54:%02x:99:%02x:%02x' "${3:-0}" "$1" "$2"; }  # VM, peer, rail
ctl_mac() { printf '52:54:00:00:00:%02x' "$1"; }

# The per-VM network plan the guest applies, one line per NIC:
#   ctl MAC 10.0.2.15/24 - - -
#   data NIC MAC IP/24 PEER_VM PEER_NIC PEER_IP
write_net_conf() {
  local i=$1 n=$2 fabric_leaves=${3:-0} rails=${4:-1} j r net leaf
  echo "ctl ctl $(ctl_mac "$i") 10.0.2.15/24 - - -"
  if ((fabric_leaves > 0)); then
    # On a routed fabric: one NIC on the VM's leaf; "peer" is the leaf and its gateway address.
    leaf=$(((i - 1) % fabric_leaves + 1))
    echo "fabric data0 $(data_mac "$i" 0) 192.168.$((100 + leaf)).$((20 + i))/24 - l$leaf 192.168.$((100 + leaf)).1"
    return
  fi
  for ((r = 0; r < rails; r++)); do
    for ((j = 1; j <= n; j++)); do
      ((j == i)) && continue
      net=$(link_net "$i" "$j" "$r")
      echo "data data$((r * (n - 1) + $(nic_index "$i" "$j"))) $(data_mac "$i" "$j" "$r") $net.$i/24 $j" \
        "data$((r * (n - 1) + $(nic_index "$j" "$i"))) $net.$j"
    done
  done
}

# ---------------------------------------------------------------------------------------------
# prepare: kernel + initramfs in the cache.

# Modules the guest loads at boot, dependencies resolved by modprobe. rxe's ICRC needs a "crc32"
# shash or `rdma link add` fails: crc32_generic always works, crc32_pclmul (preferred by the crypto
# API when the CPU has PCLMULQDQ, as TCG's -cpu max does) is cheaper to emulate. The tc modules
# allow netem and shaping tests.
guest_modules=(
  virtio_pci virtio_net virtio_rng 9pnet_virtio 9p
  crc32_generic crc32_pclmul rdma_rxe ib_uverbs rdma_ucm ib_umad
  sch_netem sch_tbf sch_htb sch_prio sch_ingress sch_fq_codel cls_u32 cls_matchall act_gact
)

# The initramfs's /init (busybox sh): load modules, mount the host root and the lab share, then
# hand over to busybox init, which respawns the guest service and reaps orphans.
initramfs_init() {
  cat <<'EOF'
#!/bin/sh
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
say() { echo "tusk-vmlab: $*" >/dev/console; }
fail() { say "FAILED: $*"; sleep 2; poweroff -f; }
while read -r m; do insmod "/modules/$m" || say "insmod $m failed"; done </modules.list
for w in $(cat /proc/cmdline); do
  case $w in
    tusklab.state=*) state=${w#*=} ;;
    tusklab.vm=*) vm=${w#*=} ;;
    tusklab.rootcache=*) rootcache=${w#*=} ;;
  esac
done
[ -n "$state" ] && [ -n "$vm" ] || fail "no tusklab.state/tusklab.vm on the kernel command line"
r=/newroot
mkdir -p $r
opts=trans=virtio,version=9p2000.L,msize=262144
mount -t 9p -o $opts,cache=${rootcache:-none},ro hostroot $r || fail "mount of the host root (9p hostroot)"
for d in run var/tmp; do mount -t tmpfs -o mode=1777 tmpfs $r/$d || fail "tmpfs on /$d"; done
mount -t proc proc $r/proc && mount -t sysfs sysfs $r/sys && mount -t devtmpfs devtmpfs $r/dev ||
  fail "proc/sys/dev in the chroot"
mkdir -p $r/dev/pts $r/dev/shm
ln -s /proc/self/fd $r/dev/fd # bash's <(...) needs it; devtmpfs has no such links
ln -s fd/0 $r/dev/stdin && ln -s fd/1 $r/dev/stdout && ln -s fd/2 $r/dev/stderr
mount -t devpts devpts $r/dev/pts
mount -t tmpfs -o mode=1777 tmpfs $r/dev/shm
mount -t 9p -o $opts,cache=none labshare $r$state || fail "mount of the lab share at $state"
say "stage 1 done, starting the guest service"
echo "::respawn:/bin/chroot $r /bin/bash $state/lab.sh __guest $vm" >/etc/inittab
exec /bin/init
EOF
}

kernel_package() {
  local pkg
  # apt-cache takes a second of every `up`; its answer changes only when apt's lists do.
  if [[ -s $cache/package && $cache/package -nt /var/lib/apt/lists ]]; then
    cat "$cache/package"
    return
  fi
  pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
  if [[ -z $pkg ]]; then
    apt-get update -q >/dev/null 2>&1 || true
    pkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ { print $2; exit }')
  fi
  [[ -n $pkg ]] || die "apt-cache does not know linux-image-amd64 (is Debian's archive reachable? apt-get update)"
  echo "$pkg" >"$cache/package"
  echo "$pkg"
}

# Download and unpack the kernel package into $cache/kernel (once); run depmod, which the package
# leaves to its postinst.
fetch_kernel() {
  local pkg=$1 work=$cache/download
  if [[ -e $cache/kernel/.done && $(cat "$cache/kernel/.done") == "$pkg" ]]; then return; fi
  rm -rf "$work" "$cache/kernel"
  mkdir -p "$work"
  chmod 777 "$work" # apt drops to user _apt for downloads when it can
  (cd "$work" && apt-get download -q "$pkg" >download.log 2>&1) ||
    die "apt-get download $pkg failed: $(tail -3 "$work/download.log")"
  dpkg -x "$work"/"$pkg"_*.deb "$cache/kernel"
  local kver
  kver=$(ls "$cache/kernel/lib/modules")
  depmod -b "$cache/kernel" -F "$cache/kernel/boot/System.map-$kver" "$kver"
  echo "$pkg" >"$cache/kernel/.done"
  rm -rf "$work"
}

# Copy the modules (and their dependencies, in load order) into the initramfs tree, decompressed:
# busybox insmod does not read .ko.xz/.ko.zst.
stage_modules() {
  local kver=$1 tree=$2 m deps line path base
  local -A seen=()
  mkdir -p "$tree/modules"
  : >"$tree/modules.list"
  for m in "${guest_modules[@]}"; do
    deps=$(modprobe -d "$cache/kernel" -S "$kver" --show-depends "$m" 2>&1) || die "kernel $kver: $deps"
    while read -r line; do
      case $line in
        builtin*) continue ;;
        insmod*) path=${line#insmod } ; path=${path%% *} ;;
        *) continue ;;
      esac
      base=$(basename "$path")
      base=${base%.xz}; base=${base%.zst}; base=${base%.gz}
      [[ -n ${seen[$base]:-} ]] && continue
      seen[$base]=1
      case $path in
        *.xz) xz -dc "$path" >"$tree/modules/$base" ;;
        *.zst) zstd -qdc "$path" >"$tree/modules/$base" ;;
        *.gz) gzip -dc "$path" >"$tree/modules/$base" ;;
        *) cp "$path" "$tree/modules/$base" ;;
      esac
      echo "$base" >>"$tree/modules.list"
    done <<<"$deps"
  done
}

build_initramfs() {
  local kver=$1 tree=$cache/initramfs.tree
  rm -rf "$tree"
  mkdir -p "$tree"/{bin,dev,proc,sys,etc,newroot}
  cp /bin/busybox "$tree/bin/busybox"
  # busybox --install at build time: every applet as a link, so /init needs no set-up.
  local applet
  for applet in $(/bin/busybox --list); do [[ $applet == busybox ]] || ln -sf busybox "$tree/bin/$applet"; done
  stage_modules "$kver" "$tree"
  initramfs_init >"$tree/init"
  chmod 755 "$tree/init"
  (cd "$tree" && find . | LC_ALL=C sort | busybox cpio -o -H newc -R 0:0 2>/dev/null) | gzip -1 >"$cache/initramfs.tmp"
  mv "$cache/initramfs.tmp" "$cache/initramfs.cpio.gz"
  cp "$cache/kernel/boot/vmlinuz-$kver" "$cache/vmlinuz"
  extract_vmlinux "$kver"
  rm -rf "$tree"
}

# The kernel uncompressed, an ELF that qemu enters at its PVH entry point: under TCG, unpacking the
# bzImage's 8 MB of xz and its real-mode set-up took 2 s of every boot (14.7 s -> 12.4 s for two
# VMs; with qboot instead of SeaBIOS, which only a PVH boot uses here, 10.7 s). Only for a kernel
# built with CONFIG_PVH whose payload is xz (Debian's); any other boots its bzImage as before.
extract_vmlinux() {
  local kver=$1 image offset
  image=$cache/kernel/boot/vmlinuz-$kver
  rm -f "$cache/vmlinux"
  grep -qx 'CONFIG_PVH=y' "$cache/kernel/boot/config-$kver" 2>/dev/null || return 0
  offset=$(LC_ALL=C grep -obUaP '\xfd\x37\x7a\x58\x5a\x00' "$image" | head -1 | cut -d: -f1)
  [[ -n $offset ]] || return 0
  # (Not a pipe: xz stops at the stream's end, and tail's SIGPIPE would fail it under pipefail.)
  xz -dc --single-stream < <(tail -c +$((offset + 1)) "$image") >"$cache/vmlinux.tmp" 2>/dev/null || {
    rm -f "$cache/vmlinux.tmp"
    return 0
  }
  [[ $(head -c 4 "$cache/vmlinux.tmp" | od -An -tx1 | tr -d ' ') == 7f454c46 ]] || {
    rm -f "$cache/vmlinux.tmp"
    return 0
  }
  mv "$cache/vmlinux.tmp" "$cache/vmlinux"
}

need_tools() {
  command -v qemu-system-x86_64 >/dev/null ||
    die "qemu-system-x86_64 not found: apt-get install qemu-system-x86 (or scripts/install-deps.sh)"
  # The initramfs has no libc: busybox must be the static build.
  if [[ ! -x /bin/busybox ]] || ldd /bin/busybox >/dev/null 2>&1; then
    die "/bin/busybox is missing or not static: apt-get install busybox-static"
  fi
  local t
  for t in apt-get dpkg depmod modprobe gzip xz flock; do
    command -v "$t" >/dev/null || die "$t not found (packages kmod, xz-utils, util-linux)"
  done
}

prepare() {
  need_tools
  mkdir -p "$cache"
  exec 8>"$cache/.lock"
  flock 8 # two tests may prepare at once
  local pkg kver stamp
  pkg=$(kernel_package)
  # The stamp covers everything the initramfs is made of, so editing this script rebuilds it.
  stamp=$( { echo "$pkg"; echo "${guest_modules[*]}"; declare -f initramfs_init stage_modules build_initramfs
    declare -f extract_vmlinux; sha256sum /bin/busybox; } | sha256sum | cut -c1-16)
  if [[ -f $cache/stamp && $(cat "$cache/stamp") == "$stamp" && -f $cache/vmlinuz && -f $cache/initramfs.cpio.gz ]]; then
    exec 8>&- # unlocks; qemu must not inherit the descriptor
    return
  fi
  echo "rxe-vm-lab: preparing $pkg in $cache" >&2
  fetch_kernel "$pkg"
  kver=$(ls "$cache/kernel/lib/modules")
  build_initramfs "$kver"
  echo "$stamp" >"$cache/stamp"
  exec 8>&-
  echo "rxe-vm-lab: kernel $kver, initramfs $(du -h "$cache/initramfs.cpio.gz" | cut -f1)" >&2
}

# ---------------------------------------------------------------------------------------------
# up / down

qemu_args() {
  local id=$1 i=$2 n=$3 st=$4 fabric=${5:-} rails=${6:-1} j r
  local vmdir=$st/vm$i boot=(-kernel "$cache/vmlinuz")
  if [[ -s $cache/vmlinux ]]; then # see extract_vmlinux
    boot=(-kernel "$cache/vmlinux")
    [[ -f /usr/share/qemu/qboot.rom ]] && boot+=(-bios /usr/share/qemu/qboot.rom)
  fi
  # shellcheck disable=SC2054 # commas inside qemu option values
  args=(
    -name "tusk-vmlab-$id-vm$i" -accel tcg -cpu max -smp "${TUSK_VMLAB_SMP:-1}" -m "${TUSK_VMLAB_MEM:-1024}"
    -nodefaults -no-user-config -display none -no-reboot
    "${boot[@]}" -initrd "$cache/initramfs.cpio.gz"
    -append "console=ttyS0 panic=-1 quiet random.trust_cpu=on tusklab.state=$st tusklab.vm=$i tusklab.rootcache=${TUSK_VMLAB_ROOT_CACHE:-none}"
    -serial "file:$vmdir/serial.log"
    -pidfile "$vmdir/qemu.pid" -daemonize
    -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap
    -virtfs "local,path=$st,mount_tag=labshare,security_model=none,multidevs=remap"
    -device virtio-rng-pci
    # Control NIC. romfile= : no iPXE option ROM, which only slows the boot.
    -netdev user,id=ctl,net=10.0.2.0/24,host=10.0.2.2
    -device "virtio-net-pci,netdev=ctl,mac=$(ctl_mac "$i"),romfile="
  )
  if [[ -n $fabric ]]; then
    # A tap in the root namespace, which `fabric-lab.sh attach` moves onto the VM's leaf.
    args+=(
      -netdev "tap,id=fabric,ifname=$(fabric_tap "$fabric" "$i"),script=no,downscript=no"
      -device "virtio-net-pci,netdev=fabric,mac=$(data_mac "$i" 0),romfile="
    )
    return
  fi
  # One unix datagram socket pair per link: no ports to collide, and either end may start first
  # (datagrams to an end not yet bound are dropped, like on a cable not yet plugged in).
  for ((r = 0; r < rails; r++)); do
    for ((j = 1; j <= n; j++)); do
      ((j == i)) && continue
      args+=(
        -netdev "dgram,id=to${j}r$r,local.type=unix,local.path=$st/sock/$i-$j-$r,remote.type=unix,remote.path=$st/sock/$j-$i-$r"
        -device "virtio-net-pci,netdev=to${j}r$r,mac=$(data_mac "$i" "$j" "$r"),romfile="
      )
    done
  done
}

vm_pid() { local f=$1/vm$2/qemu.pid; [[ -s $f ]] && cat "$f" || true; }
vm_alive() { local p; p=$(vm_pid "$1" "$2"); [[ -n $p ]] && kill -0 "$p" 2>/dev/null; }
lab_n() { [[ -f $1/lab.conf ]] || die "no lab at $1 (up first)"; awk '{ print $2 }' "$1/lab.conf"; }

show_failure() {
  local st=$1 i=$2
  echo "rxe-vm-lab: --- vm$i: ${3:-failed}; last lines of $st/vm$i/serial.log:" >&2
  tail -n 40 "$st/vm$i/serial.log" >&2 2>/dev/null || true
  [[ -s $st/vm$i/qemu.log ]] && { echo "rxe-vm-lab: --- vm$i qemu.log:" >&2; tail -n 20 "$st/vm$i/qemu.log" >&2; }
  [[ -s $st/vm$i/failed ]] && { echo "rxe-vm-lab: --- vm$i guest service said:" >&2; cat "$st/vm$i/failed" >&2; }
  return 0
}

up() {
  local id=$1 n=${2:-2} fabric="" leaves=0 rails=1 mtu=${TUSK_VMLAB_MTU:-9000} st i started ready_count deadline
  check_id "$id"
  [[ $n =~ ^[2-9]$ ]] || { echo "rxe-vm-lab: N must be 2..9" >&2; exit 2; }
  if [[ ${3:-} == --rails ]]; then
    rails=${4:-}
    [[ $rails =~ ^[1-4]$ ]] || { echo "rxe-vm-lab: --rails needs 1..4" >&2; exit 2; }
  elif [[ ${3:-} == --fabric ]]; then
    fabric=${4:-}
    [[ $fabric =~ ^[A-Za-z0-9]{1,6}$ ]] || { echo "rxe-vm-lab: --fabric needs the fabric lab's id" >&2; exit 2; }
    leaves=$(fabric_leaves "$fabric")
    ((leaves > 0)) || die "no fabric lab '$fabric' (fabric-lab.sh up first)"
    mtu=${TUSK_VMLAB_MTU:-1500}
  fi
  prepare
  st=$(state_of "$id")
  down "$id"
  mkdir -p "$st/sock"
  # On any failure below, or Ctrl-C, take the half-made lab down again.
  trap 'down "'"$id"'"' EXIT
  trap 'exit 130' INT TERM
  cp "${BASH_SOURCE[0]}" "$st/lab.sh"
  echo "$id $n $mtu $fabric" >"$st/lab.conf"
  started=$(date +%s.%N)
  for ((i = 1; i <= n; i++)); do
    mkdir -p "$st/vm$i/spool" "$st/vm$i/jobs"
    write_net_conf "$i" "$n" "$leaves" "$rails" >"$st/vm$i/net.conf"
    qemu_args "$id" "$i" "$n" "$st" "$fabric" "$rails"
    if ! qemu-system-x86_64 "${args[@]}" >"$st/vm$i/qemu.log" 2>&1; then
      show_failure "$st" "$i" "qemu did not start"
      exit 125
    fi
    if [[ -n $fabric ]]; then
      TUSK_LAB_ID=$fabric bash "$(dirname "${BASH_SOURCE[0]}")/fabric-lab.sh" attach "l$(((i - 1) % leaves + 1))" \
        "$(fabric_tap "$fabric" "$i")" || die "cannot attach vm$i to fabric lab $fabric"
    fi
  done
  deadline=$(($(date +%s) + ${TUSK_VMLAB_BOOT_TIMEOUT:-300}))
  while :; do
    ready_count=0
    for ((i = 1; i <= n; i++)); do
      if [[ -f $st/vm$i/failed ]]; then show_failure "$st" "$i" "guest set-up failed"; exit 125; fi
      if ! vm_alive "$st" "$i"; then show_failure "$st" "$i" "qemu exited"; exit 125; fi
      [[ -f $st/vm$i/ready ]] && ((++ready_count))
    done
    ((ready_count == n)) && break
    if (($(date +%s) > deadline)); then
      for ((i = 1; i <= n; i++)); do [[ -f $st/vm$i/ready ]] || show_failure "$st" "$i" "not ready in time"; done
      exit 125
    fi
    sleep 0.5
  done
  trap - EXIT INT TERM
  echo "rxe-vm-lab: lab $id up: $n VMs in $(awk -v s="$started" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }') s, state $st"
}

# Kill the lab's qemus, found by their exact -name rather than by pidfile: a pidfile may be missing
# (qemu killed before writing it) or stale (its pid reused by an unrelated process).
down() {
  local id=$1 st p pids=() cmd
  check_id "$id"
  st=$(state_of "$id")
  for p in /proc/[0-9]*; do
    cmd=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
    [[ $cmd == *qemu-system-x86_64*" -name tusk-vmlab-$id-vm"[0-9]" "* ]] && pids+=("${p#/proc/}")
  done
  if ((${#pids[@]})); then
    kill "${pids[@]}" 2>/dev/null || true
    local tries
    for ((tries = 0; tries < 50; tries++)); do
      kill -0 "${pids[@]}" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "${pids[@]}" 2>/dev/null || true
  fi
  rm -rf "$st"
}

status() {
  local id=$1 st n i
  check_id "$id"
  st=$(state_of "$id")
  n=$(lab_n "$st")
  for ((i = 1; i <= n; i++)); do
    echo "vm=$i pid=$(vm_pid "$st" "$i") alive=$(vm_alive "$st" "$i" && echo yes || echo no) ready=$([[ -f $st/vm$i/ready ]] && echo yes || echo no)"
  done
}

diag() {
  local id=$1 vm=$2 st
  check_id "$id"
  st=$(state_of "$id")
  check_vm "$st" "$vm"
  echo "== vm$vm: tusk threads, blocked tasks, kernel messages"
  # Shell built-ins over /proc: a fork per task takes long in a TCG guest.
  # shellcheck disable=SC2016,SC2086 # expanded in the guest; $stat split into its fields
  exec_in_vm "$id" "$vm" --timeout 60 --cwd / -- sh -c '
    for pid in $(pgrep tusk); do
      for task in /proc/$pid/task/*; do
        read -r stat <"$task/stat" || continue
        wchan=?
        read -r wchan <"$task/wchan"  # no newline at its end: read fails, yet sets it
        set -- $stat
        echo "-- $task $2 $3 wchan=$wchan"
        while read -r line; do echo "   $line"; done <"$task/stack"
      done
    done
    echo w >/proc/sysrq-trigger 2>/dev/null
    sleep 1
    dmesg | tail -n 80' || echo "(vm$vm did not answer within 60 s)"
  echo "== vm$vm: serial console, last lines"
  tail -n 40 "$st/vm$vm/serial.log" 2>/dev/null
}

addresses() {
  local id=$1 st n i
  check_id "$id"
  st=$(state_of "$id")
  n=$(lab_n "$st")
  for ((i = 1; i <= n; i++)); do
    [[ -f $st/vm$i/addresses ]] || die "vm$i is not ready"
    cat "$st/vm$i/addresses"
  done
}

# ---------------------------------------------------------------------------------------------
# exec: a spool in the shared directory. The host writes STATEDIR/vmI/spool/SEQ.{fg,bg}.job by
# rename (a background job's SEQ.bg.meta first: its name and log path); the guest service runs it
# in a session of its own and writes SEQ.pid, SEQ.out, SEQ.err and finally SEQ.rc for a foreground
# job, jobs/NAME.pid at start and jobs/NAME.rc at exit for a background one. SEQ.cancel asks the
# guest to kill a foreground job's session.

check_vm() {
  local st=$1 vm=$2 n
  n=$(lab_n "$st")
  [[ $vm =~ ^[0-9]+$ ]] && ((vm >= 1 && vm <= n)) || { echo "rxe-vm-lab: VM must be 1..$n" >&2; exit 2; }
  [[ -f $st/vm$vm/ready ]] || die "vm$vm is not ready"
}

exec_in_vm() {
  local id=$1 vm=$2; shift 2
  local timeout=${TUSK_VMLAB_EXEC_TIMEOUT:-300} cwd=$PWD background=0 name="" log=""
  while (($#)); do
    case $1 in
      --timeout) timeout=$2; shift 2 ;;
      --cwd) cwd=$2; shift 2 ;;
      --background) background=1; shift ;;
      --name) name=$2; shift 2 ;;
      --log) log=$2; shift 2 ;;
      --) shift; break ;;
      *) echo "rxe-vm-lab: exec: unknown option '$1' (options go before --)" >&2; exit 2 ;;
    esac
  done
  (($#)) || { echo "rxe-vm-lab: exec: no command" >&2; exit 2; }
  check_id "$id"
  local st; st=$(state_of "$id")
  check_vm "$st" "$vm"
  local spool=$st/vm$vm/spool seq
  seq=$(date +%s%N)-$$-$RANDOM
  local script
  script=$(printf 'export TUSK_VMLAB_ID=%q TUSK_VMLAB_VM=%q\ncd %q 2>/dev/null || cd /\nexec' "$id" "$vm" "$cwd"
    printf ' %q' "$@"; echo)

  if ((background)); then
    [[ -z $name ]] && name=job-$seq
    [[ $name =~ ^[A-Za-z0-9_.-]+$ ]] || { echo "rxe-vm-lab: bad job name '$name'" >&2; exit 2; }
    local jobs=$st/vm$vm/jobs
    if [[ -e $jobs/$name.pid ]]; then
      [[ -s $jobs/$name.rc ]] || die "vm$vm already runs a job named $name"
      rm -f "$jobs/$name.pid" "$jobs/$name.rc" # a finished job's name may be reused
    fi
    [[ -z $log ]] && log=$jobs/$name.log
    printf '%s\n' "$name" "$log" >"$spool/$seq.bg.meta"
    printf '%s\n' "$script" >"$spool/$seq.tmp"
    mv "$spool/$seq.tmp" "$spool/$seq.bg.job"
    wait_for_file "$st" "$vm" "$jobs/$name.pid" 60 || { rm -f "$spool/$seq.bg.job"; die "vm$vm did not start job $name within 60 s"; }
    echo "job=$name pid=$(cat "$jobs/$name.pid") log=$log"
    return 0
  fi

  printf '%s\n' "$script" >"$spool/$seq.tmp"
  mv "$spool/$seq.tmp" "$spool/$seq.fg.job"
  if ! wait_for_file "$st" "$vm" "$spool/$seq.rc" "$timeout"; then
    : >"$spool/$seq.cancel"
    cat "$spool/$seq.out" 2>/dev/null || true
    cat "$spool/$seq.err" >&2 2>/dev/null || true
    if vm_alive "$st" "$vm"; then
      echo "rxe-vm-lab: exec in vm$vm timed out after $timeout s: $*" >&2
      wait_for_file "$st" "$vm" "$spool/$seq.rc" 5 && rm -f "$spool/$seq".*
      exit 124
    fi
    die "vm$vm died while running: $*"
  fi
  local rc
  rc=$(cat "$spool/$seq.rc")
  cat "$spool/$seq.out"
  cat "$spool/$seq.err" >&2
  rm -f "$spool/$seq".*
  return "$rc"
}

# Wait for FILE to exist (non-empty) while the VM lives; TIMEOUT 0 waits forever.
wait_for_file() {
  local st=$1 vm=$2 file=$3 timeout=$4 k=0 deadline
  deadline=$((${EPOCHREALTIME/./} + timeout * 1000000))
  while [[ ! -s $file ]]; do
    if ((++k % 20 == 0)); then vm_alive "$st" "$vm" || return 1; fi
    ((timeout > 0 && ${EPOCHREALTIME/./} >= deadline)) && return 1
    sleep 0.05
  done
  return 0
}

wait_job() {
  local id=$1 vm=$2 name=$3 timeout=0
  [[ ${4:-} == --timeout ]] && timeout=$5
  check_id "$id"
  local st; st=$(state_of "$id")
  check_vm "$st" "$vm"
  [[ -e $st/vm$vm/jobs/$name.pid ]] || die "vm$vm has no job named $name"
  if ! wait_for_file "$st" "$vm" "$st/vm$vm/jobs/$name.rc" "$timeout"; then
    vm_alive "$st" "$vm" || die "vm$vm died"
    echo "rxe-vm-lab: job $name in vm$vm still running after $timeout s" >&2
    exit 124
  fi
  return "$(cat "$st/vm$vm/jobs/$name.rc")"
}

stop_job() {
  local id=$1 vm=$2 name=$3 sig=${4:-TERM}
  check_id "$id"
  local st; st=$(state_of "$id")
  check_vm "$st" "$vm"
  local jobs=$st/vm$vm/jobs pid
  [[ -s $jobs/$name.pid ]] || die "vm$vm has no job named $name"
  pid=$(cat "$jobs/$name.pid")
  if [[ ! -s $jobs/$name.rc ]]; then
    # The job is a session leader (setsid), so -PID reaches everything it started.
    exec_in_vm "$id" "$vm" --timeout 60 -- kill "-$sig" -- "-$pid" 2>/dev/null || true
    if ! wait_for_file "$st" "$vm" "$jobs/$name.rc" 10; then
      exec_in_vm "$id" "$vm" --timeout 60 -- kill -KILL -- "-$pid" 2>/dev/null || true
      wait_for_file "$st" "$vm" "$jobs/$name.rc" 20 || die "job $name in vm$vm survived SIGKILL"
    fi
  fi
  cat "$jobs/$name.rc"
}

# NIC argument: dataK, or peerJ = the data NIC facing VM J.
resolve_nic() {
  local vm=$1 nic=$2
  if [[ $nic =~ ^peer([0-9])$ ]]; then
    ((BASH_REMATCH[1] != vm)) || { echo "rxe-vm-lab: vm$vm has no link to itself" >&2; exit 2; }
    echo "data$(nic_index "$vm" "${BASH_REMATCH[1]}")"
  elif [[ $nic =~ ^(data[0-9]+|ctl)$ ]]; then
    echo "$nic"
  else
    echo "rxe-vm-lab: NIC must be dataK or peerJ, not '$nic'" >&2; exit 2
  fi
}

# ---------------------------------------------------------------------------------------------
# Guest side: runs in the chroot as the service that busybox init respawns.

guest_log() { echo "tusk-vmlab guest: $*" >/dev/console; }

guest_dev_by_mac() {
  local mac=$1 d
  for d in /sys/class/net/*; do
    [[ $(<"$d/address") == "$mac" ]] && { echo "${d##*/}"; return 0; }
  done
  return 1
}

# Apply net.conf: rename NICs by MAC, address them, add one rxe device per data NIC.
guest_net() {
  local st=$1 vm=$2 mtu=$3 kind name mac addr peer_vm peer_nic peer_ip dev
  ip link set lo up
  while read -r kind name mac addr peer_vm peer_nic peer_ip; do
    dev=$(guest_dev_by_mac "$mac") || { echo "no NIC with MAC $mac"; return 1; }
    if [[ $dev != "$name" ]]; then ip link set dev "$dev" down; ip link set dev "$dev" name "$name"; fi
    # No IPv6 on lab NICs: no router solicitations or MLD on test links, and a GID table that
    # holds only the link-local default GID and the IPv4 one.
    echo 1 >"/proc/sys/net/ipv6/conf/$name/disable_ipv6"
    ip addr add "$addr" dev "$name"
    if [[ $kind == ctl ]]; then
      ip link set dev "$name" up
      ip route add default via 10.0.2.2
    else
      ip link set dev "$name" mtu "$mtu"
      ip link set dev "$name" up
      rdma link add "rxe${name#data}" type rxe netdev "$name"
      # The other leaves' hosts are behind this VM's leaf; everything else stays on ctl.
      if [[ $kind == fabric ]]; then ip route add 192.168.0.0/16 via "$peer_ip" dev "$name"; fi
    fi
  done <"$st/vm$vm/net.conf"
}

# The GID index holding IPv4 address IP on rxe device DEV (RoCE v2: ::ffff:a.b.c.d).
guest_gid_index() {
  local dev=$1 ip=$2 want g f
  # shellcheck disable=SC2086 # split the address into its four bytes
  want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${ip//./ })
  for f in /sys/class/infiniband/"$dev"/ports/1/gids/*; do
    g=$(<"$f") 2>/dev/null || continue
    [[ $g == "$want" ]] && { echo "${f##*/}"; return 0; }
  done
  return 1
}

# Wait until every rxe port is ACTIVE with its IPv4 GID, then write vmI/addresses and vmI/ready.
guest_ready() {
  local st=$1 vm=$2 kind name mac addr peer_vm peer_nic peer_ip rxe gid tries out
  for ((tries = 0; tries < 100; tries++)); do
    ((tries)) && read -r -t 0.1 -u 9
    out=""
    while read -r kind name mac addr peer_vm peer_nic peer_ip; do
      if [[ $kind == ctl ]]; then
        out+="vm=$vm nic=ctl mac=$mac ip=${addr%/*} prefix=${addr#*/} host_ip=10.0.2.2"$'\n'
        continue
      fi
      rxe=rxe${name#data}
      [[ $(<"/sys/class/infiniband/$rxe/ports/1/state") == *ACTIVE* ]] 2>/dev/null || continue 2
      gid=$(guest_gid_index "$rxe" "${addr%/*}") || continue 2
      out+="vm=$vm nic=$name mac=$mac ip=${addr%/*} prefix=${addr#*/} rxe=$rxe gid_index=$gid"
      if [[ $kind == fabric ]]; then
        out+=" leaf=$peer_nic gateway=$peer_ip"$'\n'
      else
        out+=" peer_vm=$peer_vm peer_nic=$peer_nic peer_ip=$peer_ip peer_rxe=rxe${peer_nic#data}"$'\n'
      fi
    done <"$st/vm$vm/net.conf"
    printf '%s' "$out" >"$st/vm$vm/addresses"
    rdma link show >/dev/console 2>&1
    : >"$st/vm$vm/ready"
    return 0
  done 2>/dev/null
  echo "rxe ports not ACTIVE with IPv4 GIDs after 10 s:"; rdma link show; ip -br addr
  return 1
}

# Guest clock minus host clock, in microseconds: the host's time is the mtime of a file that the
# host's qemu creates for us, the guest's the midpoint of that create (error ±half its duration).
guest_clock_error_us() {
  local f=$1 a b h
  a=${EPOCHREALTIME/./}
  : >"$f"
  b=${EPOCHREALTIME/./}
  h=$(stat -c %.6Y "$f")
  echo $(((a + b) / 2 - ${h/./}))
}

# The RTC gives whole seconds: step the clock by the measured error. A relative `date -s` applies
# the step to the time at which date parses it, so date's own start-up time does not count.
guest_set_clock() {
  local dir=$1 e i
  for i in 1 2; do
    e=$(guest_clock_error_us "$dir/clock$i")
    date -s "$(awk -v e="$e" 'BEGIN { printf "%+.6f seconds", -e / 1e6 }')" >/dev/null
  done
  e=$(guest_clock_error_us "$dir/clock3")
  echo "tusk-vmlab guest: clock set from the host's, error ${e} us"
}

guest_main() {
  local vm=$1 st=${BASH_SOURCE[0]%/*}
  export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
  export HOME=/run/root TMPDIR=/run/tmp LANG=C.UTF-8
  mkdir -p /run/root /run/tmp /run/lock
  set +e +o pipefail
  [[ -p /run/tusk-tick ]] || mkfifo /run/tusk-tick
  exec 9<>/run/tusk-tick # read -t on it sleeps without a fork, which matters under TCG
  if [[ ! -e /run/tusk-net-done ]]; then # busybox init may respawn us; set up once per boot
    hostname "vm$vm"
    guest_set_clock "$st/vm$vm" >/dev/console 2>&1
    local mtu
    mtu=$(awk '{ print $3 }' "$st/lab.conf")
    # A bash of its own, so that set -e stops at the first failing step.
    if ! bash "$st/lab.sh" __guest_net "$vm" "$mtu" >/run/net.log 2>&1 ||
      ! guest_ready "$st" "$vm" >>/run/net.log 2>&1; then
      cp /run/net.log "$st/vm$vm/failed"
      guest_log "set-up failed: $(cat /run/net.log)"
    else
      guest_log "vm$vm ready"
    fi
    : >/run/tusk-net-done
  fi
  guest_spool "$st" "$vm"
}

# Results are written with a single write() each, which the host sees whole: no rename needed.
guest_run_fg() {
  local base=$1
  setsid bash "$base.fg.job" >"$base.out" 2>"$base.err" </dev/null &
  echo $! >"$base.pid"
  wait $!
  echo $? >"$base.rc"
}

guest_run_bg() {
  local base=$1 jobs=$2 name log
  { read -r name; read -r log; } <"$base.bg.meta"
  setsid bash "$base.bg.job" >"$log" 2>&1 </dev/null &
  local pid=$!
  echo "$pid" >"$jobs/$name.pid"
  # Remove the job files once bash has surely read its script (it reads it incrementally).
  { sleep 5; rm -f "$base.bg.job" "$base.bg.meta"; } &
  wait "$pid"
  echo $? >"$jobs/$name.rc"
}

# Poll the spool five times a second. Jobs started are remembered in memory, not renamed, to save
# a fork per job; after a respawn of this service, jobs with a .pid file count as started.
guest_spool() {
  local st=$1 vm=$2 f base pid
  local spool=$st/vm$vm/spool jobs=$st/vm$vm/jobs
  local -A started=()
  shopt -s nullglob
  for f in "$spool"/*.job; do [[ -e ${f%.*.job}.pid ]] && started[$f]=1; done
  while :; do
    for f in "${!started[@]}"; do [[ -e $f ]] || unset "started[$f]"; done
    for f in "$spool"/*.job; do
      [[ -n ${started[$f]:-} ]] && continue
      started[$f]=1
      base=${f%.*.job}
      case $f in
        *.fg.job) guest_run_fg "$base" & ;;
        *.bg.job) guest_run_bg "$base" "$jobs" & ;;
      esac
    done
    for f in "$spool"/*.cancel; do
      base=${f%.cancel}
      if [[ -s $base.pid ]]; then
        read -r pid <"$base.pid" && kill -KILL -- "-$pid" 2>/dev/null
        rm -f "$f"
      elif [[ ! -e $base.fg.job ]]; then
        rm -f "$f"
      fi
    done
    read -r -t 0.2 -u 9 || true
  done
}

# ---------------------------------------------------------------------------------------------

cmd=${1:-}
(($#)) && shift
case $cmd in
  has-qemu) command -v qemu-system-x86_64 >/dev/null && [[ -x /bin/busybox ]] && ! ldd /bin/busybox >/dev/null 2>&1 ;;
  prepare) prepare ;;
  up) (($# >= 1)) || usage; up "$@" ;;
  down) (($# == 1)) || usage; down "$1" ;;
  dir) (($# == 1)) || usage; check_id "$1"; state_of "$1" ;;
  status) (($# == 1)) || usage; status "$1" ;;
  addresses) (($# == 1)) || usage; addresses "$1" ;;
  diag) (($# == 2)) || usage; diag "$1" "$2" ;;
  exec) (($# >= 3)) || usage; exec_in_vm "$@" ;;
  wait) (($# >= 3)) || usage; wait_job "$@" ;;
  stop) (($# >= 3)) || usage; stop_job "$@" ;;
  impair)
    (($# >= 4)) || usage
    nic=$(resolve_nic "$2" "$3")
    exec_in_vm "$1" "$2" --cwd / -- tc qdisc replace dev "$nic" root netem "${@:4}"
    ;;
  impair-ports)
    (($# >= 6)) && [[ $4 =~ ^[0-9]+$ && $5 =~ ^[0-9]+$ ]] || usage
    nic=$(resolve_nic "$2" "$3")
    # prio: every packet to band 2 but the filter's, which go to band 3 and its netem. u32 offsets
    # count from the IPv4 header (20 bytes on RoCE packets), so the UDP source port is at 20.
    exec_in_vm "$1" "$2" --cwd / -- sh -c '
      set -e
      tc qdisc replace dev "$1" root handle 1: prio bands 3 priomap 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1
      tc qdisc add dev "$1" parent 1:3 handle 30: netem ${4}
      tc filter add dev "$1" parent 1: protocol ip prio 1 u32 match ip protocol 17 0xff \
        match u16 "$3" "$2" at 20 flowid 1:3' sh "$nic" "$4" "$5" "${*:6}"
    ;;
  clear)
    (($# == 3)) || usage
    nic=$(resolve_nic "$2" "$3")
    exec_in_vm "$1" "$2" --cwd / -- sh -c 'tc qdisc del dev "$1" root 2>/dev/null || true' sh "$nic"
    ;;
  link)
    (($# == 4)) && [[ $4 == up || $4 == down ]] || usage
    nic=$(resolve_nic "$2" "$3")
    exec_in_vm "$1" "$2" --cwd / -- ip link set dev "$nic" "$4"
    ;;
  __guest) guest_main "$1" ;;
  __guest_net) guest_net "${BASH_SOURCE[0]%/*}" "$1" "$2" ;;
  *) usage ;;
esac
