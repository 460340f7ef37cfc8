#!/usr/bin/env bash
# Runs one GoogleTest suite of a lab binary as one ctest test (cmake/gtest_suites.cmake), so the
# suite makes its lab (VMs, namespaces) once for all its tests (scripts/tsan.sh registers its unit
# suites through it too, so each suite is one process):
#   gtest_suite.sh BINARY SUITE
# Exit: the binary's own; 77 (ctest: skipped) when it passed with every test skipped. A suite
# that died before its TearDownTestSuite (a crash) leaves its labs up: those that appeared while
# it ran are taken down here, so the next suite starts on a clean machine. ctest's TIMEOUT kills
# this script as well, so a suite that hangs past it still leaves its labs behind.
# TUSK_LAB_RETRY=1 (CI sets it): the tests that failed run once more, on labs made anew, and each
# that passes then is printed as "gtest_suite: FLAKY: <test>": the suite passes, and .ci/run's
# stage table lists it. The lab tests run real traffic through emulated VMs on a 2-core host; a
# retry keeps one starved VM from failing everyone's change, and the line keeps it visible.
set -uo pipefail
binary=$1 suite=$2
here=$(cd "$(dirname "$0")" && pwd)

labs() {
  ls -1d /tmp/tusk-vmlab-* 2>/dev/null | sed 's|^/tmp/tusk-vmlab-|vm |'
  ls -1 /run/tusk-fabric-lab 2>/dev/null | sed 's|^|fabric |'
}
before=$(labs)
output=$(mktemp)
trap 'rm -f "$output"' EXIT

take_down_new_labs() {
  while read -r kind id; do
    [[ -n $id ]] || continue
    grep -qxF "$kind $id" <<<"$before" && continue
    echo "gtest_suite: $suite left the $kind lab '$id' up; taking it down"
    case $kind in
      vm) bash "$here/rxe-vm-lab.sh" down "$id" ;;
      fabric) TUSK_LAB_ID=$id bash "$here/fabric-lab.sh" down ;;
    esac
  done <<<"$(labs)"
}

"$binary" --gtest_filter="$suite.*" --gtest_color=no 2>&1 | tee "$output"
status=${PIPESTATUS[0]}
take_down_new_labs

if [[ $status -ne 0 && ${TUSK_LAB_RETRY:-0} == 1 ]]; then
  # The summary's lines, "[  FAILED  ] Suite.Test" with no time after them; none when the
  # binary died before its summary, and then the whole suite runs again.
  mapfile -t failed < <(sed -nE 's/^\[  FAILED  \] ([A-Za-z0-9_]+\.[A-Za-z0-9_/]+)$/\1/p' "$output" | sort -u)
  filter="$suite.*"
  ((${#failed[@]})) && filter=$(IFS=:; echo "${failed[*]}")
  echo "gtest_suite: $suite failed; running $filter once more"
  "$binary" --gtest_filter="$filter" --gtest_color=no 2>&1 | tee "$output"
  status=${PIPESTATUS[0]}
  take_down_new_labs
  if [[ $status -eq 0 ]]; then
    for test in "${failed[@]:-$suite.*}"; do echo "gtest_suite: FLAKY: $test failed, then passed on its retry"; done
  fi
fi

if [[ $status -eq 0 ]] && grep -q '^\[  PASSED  \] 0 tests\.' "$output" && grep -q '^\[  SKIPPED \]' "$output"; then
  exit 77
fi
exit "$status"
