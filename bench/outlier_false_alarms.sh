#!/usr/bin/env bash
# The false-alarm rate of the fleet-relative outlier verdict (profile `outliers`, `outlier_k`) on
# clean runs: the fabric lab's four hosts in a DPDK mesh (24 flows), nothing impaired, RUNS times
# (default 20); prints per run how many streams lay beyond 2 spreads, then for k 3..10 how many
# streams of all would have been flagged. The README's figure for the default k comes from it.
# Root only (the lab's namespaces); about 15 s a run. Not in CI: it measures, it does not judge.
#   bench/outlier_false_alarms.sh [BUILD_DIR] [RUNS]
set -euo pipefail
build=${1:-build}
TUSK_OUTLIER_RUNS=${2:-20} "$build/tests/fabric_run_test" --gtest_also_run_disabled_tests \
  --gtest_filter='FabricRun.DISABLED_OutlierFalseAlarmsOnCleanRuns'
