#!/usr/bin/env bash
# The whole test suite on a fresh Debian machine: install dependencies, build, run every test.
# Extra arguments go to ctest, e.g. `scripts/test.sh -L unit` or `scripts/test.sh -L e2e`.
# It builds build/ exactly as scripts/lab-demo.sh does (same type, same flags, same compiler
# cache), so after the demo it compiles nothing again. Warnings are errors in CI (CI=true) or with
# TUSK_WARNINGS_AS_ERRORS=ON; elsewhere they are printed and the build goes on.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/build-env.sh

bash scripts/install-deps.sh
tusk_build_main
ctest --test-dir build --output-on-failure "$@"
