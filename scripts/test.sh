#!/usr/bin/env bash
# The whole test suite on a fresh Debian machine: install dependencies, build, run every test.
# Extra arguments go to ctest, e.g. `scripts/test.sh -L unit` or `scripts/test.sh -L e2e`.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTUSK_WARNINGS_AS_ERRORS=ON
cmake --build build -j "$(nproc)"
ctest --test-dir build --output-on-failure "$@"
