#!/usr/bin/env bash
# The shipped systemd unit (deploy/systemd/tusk-agent.service) passes `systemd-analyze verify`
# without a single message, and keeps the directives the deployment relies on.
#
#   tests/deploy/systemd_unit_test.sh SOURCE_DIR
#
# verify resolves ExecStart= and the units named in After=/Wants=/WantedBy=. The file is checked
# unchanged, in a scratch root laid out as the package installs it (--root): the unit in
# usr/lib/systemd/system beside a copy of the host's units (for network-online.target and
# friends), and an executable at usr/bin/tusk-agent. --man=no: the man page named in
# Documentation= comes with the package, not with the source tree.
# Exit 77 (skipped) when systemd-analyze is not installed.
set -euo pipefail

source_dir=${1:?usage: $0 SOURCE_DIR}
unit=$source_dir/deploy/systemd/tusk-agent.service
[[ -f $unit ]] || { echo "FAIL: $unit is missing"; exit 1; }

if ! command -v systemd-analyze >/dev/null; then
  echo "SKIP: systemd-analyze is not installed (Debian: apt-get install systemd)"
  exit 77
fi

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/usr/bin" "$root/usr/lib/systemd/system"
for dir in /usr/lib/systemd/system /lib/systemd/system; do
  [[ -d $dir ]] && cp -a "$dir/." "$root/usr/lib/systemd/system/"
done
printf '#!/bin/sh\nexit 0\n' > "$root/usr/bin/tusk-agent"
chmod 755 "$root/usr/bin/tusk-agent"
cp "$unit" "$root/usr/lib/systemd/system/tusk-agent.service"

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# verify prints a line per problem (unknown key, bad value, missing command or unit) and often
# still exits 0: any output at all is a failure.
status=0
output=$(systemd-analyze verify --man=no --root="$root" tusk-agent.service 2>&1) || status=$?
if [[ $status -ne 0 || -n $output ]]; then
  fail "systemd-analyze verify (exit $status):"
  printf '%s\n' "$output" | sed 's/^/    /'
fi

# A broken unit must be reported, or the check above proves nothing.
printf 'NoSuchDirective=1\n' >> "$root/usr/lib/systemd/system/tusk-agent.service"
canary=$(systemd-analyze verify --man=no --root="$root" tusk-agent.service 2>&1 || true)
grep -q NoSuchDirective <<<"$canary" || fail "systemd-analyze verify did not report an unknown directive: $canary"

expect() {  # expect SECTION KEY VALUE: the unit sets KEY=VALUE in [SECTION]
  local section=$1 key=$2 value=$3
  local found
  found=$(awk -v s="[$section]" -v k="$key" '
    /^\[/ { in_section = ($0 == s); next }
    in_section && index($0, k "=") == 1 { print substr($0, length(k) + 2) }' "$unit")
  grep -qxF -- "$value" <<<"$found" || fail "[$section] $key=$value is missing (found: ${found:-nothing})"
}
expect Unit ConditionPathExists /etc/tusk/agent.yaml
expect Unit After network-online.target
expect Unit Wants network-online.target
expect Service ExecStart "/usr/bin/tusk-agent --config /etc/tusk/agent.yaml"
expect Service Restart always
expect Service LimitMEMLOCK infinity
expect Service NoNewPrivileges yes
expect Install WantedBy multi-user.target
grep -q '^RestartSec=' "$unit" || fail "RestartSec= is missing"
# Not root (before: uid 0 with three capabilities): the package's postinst makes _tusk
# (tests/deploy/package_install_test.sh checks it there).
expect Service User _tusk
expect Service Group _tusk
expect Service Environment "XDG_RUNTIME_DIR=%t/tusk"
# Exactly the capabilities the engines need to open their ports, each shown needed by the DPDK lab
# (DpdkRun.TheAgentRunsAsItsUnitsUserAndEachCapabilityTheUnitGrantsIsNeeded, which reads them
# from this file); ambient, so that they survive the switch to _tusk. Pinning memory needs none:
# LimitMEMLOCK=infinity above.
bounding=$(awk -F= '/^CapabilityBoundingSet=/ { print $2 }' "$unit" | tr ' ' '\n' | sort | xargs)
ambient=$(awk -F= '/^AmbientCapabilities=/ { print $2 }' "$unit" | tr ' ' '\n' | sort | xargs)
[[ $bounding == "CAP_NET_ADMIN CAP_NET_RAW" ]] || fail "CapabilityBoundingSet is '$bounding'"
[[ $ambient == "$bounding" ]] || fail "AmbientCapabilities '$ambient' is not the bounding set '$bounding'"
# systemd's own measure of what the service could do if taken over (0 none .. 10 all): 2.1 with
# the directives above; 3.2 as root with CAP_IPC_LOCK. --threshold is in tenths.
exposure=$(systemd-analyze security --offline=yes "$unit" 2>&1 | tail -n 1 || true)
systemd-analyze security --offline=yes --threshold=21 "$unit" >/dev/null 2>&1 ||
  fail "systemd-analyze security rates the unit above 2.1: $exposure"
# A system-call filter that denies what no engine calls (before: none at all).
filter=$(awk -F= '/^SystemCallFilter=/ { print $2 }' "$unit")
for group in @module @mount @reboot @raw-io @debug @clock; do
  [[ $filter == "~"*"$group"* ]] || fail "SystemCallFilter does not deny $group: '$filter'"
done
[[ $filter != *@resources* ]] || fail "SystemCallFilter denies @resources, which DPDK's NUMA memory needs"
# PrivateDevices= would hide /dev/infiniband and /dev/vfio from DPDK and verbs.
grep -q '^PrivateDevices=yes' "$unit" && fail "PrivateDevices=yes hides the RDMA and VFIO devices"

if [[ $failures -gt 0 ]]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "PASS: $unit"
