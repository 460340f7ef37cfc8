#!/usr/bin/env bash
# Tusk on its built-in labs, no hardware needed: one command per capability. Each scenario
# installs what it needs, builds, makes its lab, runs tusk-controller with mutual TLS against one
# tusk-agent per lab host, injects a fault, checks that the report found it where it was put, tears
# the lab down and leaves the run directories in tusk-reports/. It exits 0 only when it found
# what it injected. Needs root (the labs' namespaces and VMs).
#
#   scripts/lab-demo.sh [SCENARIO] [--keep] [--build-dir DIR] [--duration LENGTH]
#   scripts/lab-demo.sh --list
#
#   SCENARIO      ber (default), rdma, training or fabric (--list says what each does)
#   --keep        leave the lab up afterwards, and say how to take it down
#   --build-dir   use the binaries already built in DIR instead of building into build/
#   --duration    run each test for LENGTH (e.g. 8s) instead of its profile's duration: a quicker
#                 look, with a weaker BER bound
set -euo pipefail
cd "$(dirname "$0")/.."

scenarios=(ber rdma training fabric)
list() {
  cat <<'LIST'
ber       (default, 2 min) the cable BER test between two DPDK lab hosts, clean, then with 1 % of the
          frames one way hit by a one-bit flip: the verdict names that direction, the BER bound moves
rdma      (2-3 min) two Soft-RoCE VMs, checked RDMA WRITEs both ways, then 1 % loss on one link:
          retransmits and out-of-sequence packets on that link's ports, and the run fails on them
training  (2-3 min) three Soft-RoCE VMs replay a GPT-2-small gradient all-reduce, its bytes from
          models/gpt2-small-lab.yaml through `tusk-controller model`: busbw and the slowest rank
fabric    (1-2 min) the routed leaf-spine lab, every host to every other over both spines, one
          uplink losing 2 %: the run names that link, and its cable, as the suspect
The first run of any of them also installs the dependencies and builds Tusk (about 20 min on 2 cores).
LIST
}

scenario=ber keep=0 build="" duration=""
while (($#)); do
  case $1 in
    --list) list; exit 0 ;;
    --keep) keep=1; shift ;;
    --build-dir) build=${2:?--build-dir needs a directory}; shift 2 ;;
    --duration)
      duration=${2:?--duration needs a length, e.g. 8s}
      [[ $duration =~ ^[0-9]+(ms|s|m|h)$ ]] || { echo "lab-demo: --duration '$duration' is not a length such as 8s or 2m" >&2; exit 2; }
      shift 2
      ;;
    -h | --help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "lab-demo: unknown option '$1' (--list, --keep, --build-dir DIR, --duration LENGTH)" >&2; exit 2 ;;
    *)
      [[ " ${scenarios[*]} " == *" $1 "* ]] || { echo "lab-demo: no scenario '$1' (${scenarios[*]})" >&2; exit 2; }
      scenario=$1
      shift
      ;;
  esac
done
[[ $(id -u) -eq 0 ]] || { echo "lab-demo: the labs need root (network namespaces, VMs): run it with sudo" >&2; exit 2; }

bash scripts/install-deps.sh
if [[ -z $build ]]; then
  # build/ as scripts/test.sh makes it, so the README's second command compiles nothing again.
  source scripts/build-env.sh
  build=build
  tusk_build_main
fi
[[ -x $build/agent/tusk-agent && -x $build/controller/tusk-controller ]] ||
  { echo "lab-demo: no tusk-agent and tusk-controller in $build" >&2; exit 2; }

reports=$PWD/tusk-reports
mkdir -p "$reports"
# Certificates and logs. VMs read their certificates from here: guests see the host's /tmp, read-only.
work=$(mktemp -d /tmp/tusk-demo-XXXXXX)
# shellcheck source=scripts/demo/common.sh
source scripts/demo/common.sh
# shellcheck disable=SC1090 # one scenario file per scenario
source "scripts/demo/$scenario.sh"
"scenario_$scenario"
