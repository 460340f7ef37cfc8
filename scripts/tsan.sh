#!/usr/bin/env bash
# The unit and end-to-end tests (real controller and agent processes over TLS on 127.0.0.1) under
# ThreadSanitizer: any data race fails the run. The lab tests stay out: their real traffic needs
# the idle, uninstrumented machine that scripts/test.sh gives them.
# Warnings are not errors here: GCC warns about what TSan cannot see (atomic fences), and the
# warning-clean build is scripts/test.sh's.
#   scripts/tsan.sh [--build-only]   # --build-only: compile the tree, run nothing (.ci/run builds
#                                    # it while the waiting e2e tests run, and tests it later)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/build-env.sh

# -O1 -g1: what TSan's reports need (line numbers in every stack), and a cold build of this tree
# in two thirds of the time -O2 -g takes (controller/commands.cpp: 30 s against 44 s).
# A unity build, eight files to a batch (tusk_unity_build in build-env.sh).
# One ctest test per GoogleTest suite for the unit tests (TUSK_UNIT_TESTS_PER_SUITE): a process
# under ThreadSanitizer starts slower than most unit tests run.
tusk_configure build-tsan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTUSK_BUILD_BENCH=OFF "${tusk_unity_build[@]}" \
  -DTUSK_UNIT_TESTS_PER_SUITE=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DCMAKE_CXX_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" \
  -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread
cmake --build build-tsan -j "$(nproc)" --target common_test controller_test method_test agent_test e2e_test tusk-docs
[[ ${1:-} == --build-only ]] && exit 0
export TSAN_OPTIONS="halt_on_error=1 abort_on_error=0 exitcode=66 second_deadlock_stack=1 ${TSAN_OPTIONS:-}"
# HostileScale: single-threaded cases sized to show a quadratic cost, which TSan would only slow.
# clang_format, doc_links, bench_wire_meter: scripts that run no instrumented code.
ctest --test-dir build-tsan -L '^unit$' -E '^(HostileScale\.|clang_format$|doc_links$|bench_wire_meter$)' \
  -j "$(nproc)" --output-on-failure
# The e2e tests mostly wait (leases, timeouts): three per core (68 s at -j2, 32 s at -j6 here).
ctest --test-dir build-tsan -L '^e2e$' -j "$((3 * $(nproc)))" --output-on-failure
echo "tsan: unit and e2e tests race-free"
