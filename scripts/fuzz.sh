#!/usr/bin/env bash
# Builds the libFuzzer targets under fuzz/ with clang, AddressSanitizer and UndefinedBehavior-
# Sanitizer, and runs each on its corpus.
#   scripts/fuzz.sh [seconds per target, default 60] [target ...]
#   FUZZ_RUNS=10000000 scripts/fuzz.sh 0 frame_decoder   # a fixed number of executions instead
#   scripts/fuzz.sh --build-only                         # compile the targets, run none
# New inputs libFuzzer finds go to build-fuzz/corpus/<target> (the checked-in seeds stay as they
# are); a crash leaves its input in build-fuzz/crashes/ and fails the script.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/build-env.sh

build_only=false
if [[ ${1:-} == --build-only ]]; then
  build_only=true
  shift
fi
seconds="${1:-60}"
shift || true
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(frame_decoder controller_session agent_messages profile_loader model_loader dpdk_frames report_files agent_plan lldp_frame)

sanitizers="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
# -O1 -gline-tables-only: the sanitizers' usual build, with file and line in every report. A unity
# build, eight files to a batch (tusk_unity_build in build-env.sh).
tusk_configure build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo "${tusk_unity_build[@]}" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
  -DCMAKE_CXX_COMPILER=clang++ -DTUSK_BUILD_TESTS=OFF -DTUSK_BUILD_BENCH=OFF -DTUSK_BUILD_FUZZ=ON \
  -DCMAKE_CXX_FLAGS="$sanitizers -fsanitize=fuzzer-no-link -fno-omit-frame-pointer" \
  -DCMAKE_EXE_LINKER_FLAGS="$sanitizers" >/dev/null
cmake --build build-fuzz -j "$(nproc)" --target "${targets[@]/%/_fuzz}"
$build_only && exit 0

# Where each target's seeds are: the binary ones made by make_seeds, the shipped YAML files.
seeds_of() {
  case "$1" in
    profile_loader) echo "profiles" ;;
    model_loader) echo "models" ;;
    *) echo "fuzz/corpus/$1" ;;
  esac
}

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
mkdir -p build-fuzz/crashes

# One target's run; its log is build-fuzz/<target>.log.
fuzz_one() {
  local target=$1 work="build-fuzz/corpus/$1" dir
  mkdir -p "$work"
  local seeds=()
  for dir in $(seeds_of "$target"); do [[ -d "$dir" ]] && seeds+=("$dir"); done
  local limit=(-max_total_time="$seconds")
  [[ -n "${FUZZ_RUNS:-}" ]] && limit=(-runs="$FUZZ_RUNS")
  # -timeout: one input that takes 10 s is a hang; -rss_limit_mb: one that needs 2 GiB is a leak
  # of the bounds this target checks.
  "build-fuzz/fuzz/${target}_fuzz" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=1048576 \
    -print_final_stats=1 -artifact_prefix="build-fuzz/crashes/${target}-" "$work" "${seeds[@]}" \
    >"build-fuzz/${target}.log" 2>&1
}

# Targets run side by side, one per core: each is single-threaded, and a time limit is wall time.
parallel="${FUZZ_JOBS:-$(nproc)}"
declare -A pid_of
for target in "${targets[@]}"; do
  while (( $(jobs -rp | wc -l) >= parallel )); do wait -n || true; done
  fuzz_one "$target" &
  pid_of[$target]=$!
done
failed=()
for target in "${targets[@]}"; do
  status=0
  wait "${pid_of[$target]}" || status=$?
  log="build-fuzz/${target}.log"
  echo "== $target: ${FUZZ_RUNS:-$seconds s} ${FUZZ_RUNS:+executions}"
  grep -aE '^(#[0-9]+.*(DONE|INITED)|stat::(number_of_executed_units|average_exec_per_sec|new_units_added|peak_rss_mb)|==[0-9]+==ERROR|SUMMARY|.*Test unit written)' "$log" || true
  if [[ $status -ne 0 ]]; then
    tail -40 "$log" >&2
    echo "fuzz: $target failed (exit $status); the input is in build-fuzz/crashes/, the log in $log" >&2
    failed+=("$target")
  fi
done
[[ ${#failed[@]} -eq 0 ]] || { echo "fuzz: failed: ${failed[*]}" >&2; exit 1; }
echo "fuzz: ${targets[*]}: no crash, hang, leak or undefined behaviour"
