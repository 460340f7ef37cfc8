#!/usr/bin/env bash
# Checks the DPDK lab script itself: the hosts exist and see each other's frames, netem faults and
# flaps take effect, and `down` leaves nothing behind. Skips (77) where namespaces cannot be made.
set -euo pipefail
here=$(dirname "$0")
export TUSK_LAB_ID="tusk-t$$"
lab() { bash "$here/netns-lab.sh" "$@"; }

if [[ $(id -u) -ne 0 ]] || ! ip netns add "$TUSK_LAB_ID-probe" 2>/dev/null; then
  echo "SKIP: needs root and network namespaces"
  exit 77
fi
ip netns del "$TUSK_LAB_ID-probe"
trap 'lab down' EXIT

fail() { echo "FAIL: $*"; exit 1; }

for mode in "" --switch; do
  lab up $mode >/dev/null
  # A frame from a reaches b: link-local IPv6 ping over lab0.
  lab exec a ip addr add fe80::a/64 dev lab0 nodad
  lab exec b ip addr add fe80::b/64 dev lab0 nodad
  lab exec a ping -6 -c 2 -W 2 -i 0.2 fe80::b%lab0 >/dev/null || fail "a cannot reach b ${mode:-direct}"

  if lab has-netem; then
    lab fault a loss 100%
    lab exec a tc qdisc show dev lab0 | grep -q "netem.*loss 100%" || fail "netem not applied"
    if lab exec a ping -6 -c 2 -W 1 -i 0.2 fe80::b%lab0 >/dev/null 2>&1; then fail "100% loss let pings through"; fi
    lab clear a
    lab exec a ping -6 -c 2 -W 2 -i 0.2 fe80::b%lab0 >/dev/null || fail "clear did not remove the fault"
  else
    echo "note: this kernel has no netem (CONFIG_NET_SCH_NETEM): netem checks skipped"
    if lab fault a loss 1% 2>/dev/null; then fail "fault claimed success without netem"; fi
  fi
  # The BPF impairment works on every kernel with clsact and BPF.
  lab impair b loss=100
  if lab exec a ping -6 -c 2 -W 1 -i 0.2 fe80::b%lab0 >/dev/null 2>&1; then fail "impair loss=100 let pings through"; fi
  lab impair b duplicate=100
  replies=$(lab exec a ping -6 -c 3 -W 2 -i 0.2 fe80::b%lab0 || true)
  grep -q "DUP!" <<<"$replies" || fail "impair duplicate=100 made no duplicates"
  lab clear b
  replies=$(lab exec a ping -6 -c 2 -W 2 -i 0.2 fe80::b%lab0 || true)
  grep -q "DUP!" <<<"$replies" && fail "clear left the impairment in place"
  if lab impair b loss=150 2>/dev/null; then fail "impair accepted 150%"; fi

  lab flap a 300 &
  sleep 0.1
  lab exec a ip -br link show lab0 | grep -q DOWN || fail "flap did not take the port down"
  wait
  lab exec a ip -br link show lab0 | grep -qv DOWN || fail "flap did not bring the port back"
  lab down
  if ip netns list | grep -q "^$TUSK_LAB_ID-"; then fail "down left namespaces behind"; fi
done
echo "1 passed, 0 failed"
