#!/usr/bin/env bash
# The newcomer's demo as a lab test: scripts/lab-demo.sh SCENARIO with the binaries under test
# must find what it injects (exit 0), and for `ber` README.md's example must have the shape of
# what it prints (scripts/readme-example.sh --check). Root only, and qemu for the VM scenarios;
# skips (77) otherwise.
#   tests/lab/lab_demo_test.sh BUILD_DIR SCENARIO
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "$1" && pwd)
scenario=$2
[[ $(id -u) -eq 0 ]] || { echo "skipped: the labs need root"; exit 77; }
if [[ $scenario == rdma || $scenario == training ]] && ! bash "$here/tests/lab/rxe-vm-lab.sh" has-qemu; then
  echo "skipped: qemu-system-x86_64 or busybox-static is not installed"
  exit 77
fi
log=$(mktemp /tmp/tusk-lab-demo-test-XXXXXX.log)
status=0
# A few seconds a run instead of the profiles' 20-30 s: the same scenario, proofs and README
# shape, about 80 s less of CI (a user's `lab-demo.sh` runs the profiles as they ship). ber: 4 s
# at 20 kpps is some 800 flipped frames, a BER bound 260 times the clean run's (the demo proves
# more than 100); rdma: 6 s, as long as RdmaVmLab's own 1 % loss test runs to see
# the same retransmits and out-of-sequence packets.
duration=6s
[[ $scenario == ber ]] && duration=4s
bash "$here/scripts/lab-demo.sh" "$scenario" --build-dir "$build" --duration "$duration" >"$log" 2>&1 || status=$?
# The controller's log lines are long and many; what the demo says is enough.
grep -v ' tusk-controller info: ' "$log"
if ((status != 0)); then
  echo "FAIL: lab-demo.sh $scenario exited $status: it did not find what it injected"
  exit 1
fi
if [[ $scenario == ber ]]; then
  bash "$here/scripts/readme-example.sh" --check "$log" || exit 1
fi
rm -f "$log"
