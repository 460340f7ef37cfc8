# Sourced by every script that builds Tusk (test.sh, lab-demo.sh, tsan.sh, fuzz.sh, .ci/run), so
# that they configure their build directories one way and share one compiler cache.
#
#   tusk_configure BUILD_DIR [CMAKE_ARGS ...]
#
# ccache (Debian's, from install-deps.sh) is the compiler launcher where it is installed. Its base
# directory is the checkout and it does not hash the working directory, so two clones at different
# paths (CI builds in a fresh clone) hit each other's objects; the debug info of a hit then names
# the first clone's paths, which only a debugger reads. CCACHE_DIR and CCACHE_MAXSIZE can be set
# by the caller; the cache is bounded at 8 GiB otherwise (the four build trees CI makes take
# about 0.5 GiB of it, compressed).
# A user's own `cmake` build is left as it is: only these scripts add the launcher and lld.

tusk_repo_root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$tusk_repo_root}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
# The unity trees' -fmacro-prefix-map=<checkout>/= (CMakeLists.txt) names the checkout; what it
# changes, __FILE__, is in the preprocessed text ccache hashes, so the option itself is left out.
export CCACHE_IGNOREOPTIONS="${CCACHE_IGNOREOPTIONS:+$CCACHE_IGNOREOPTIONS }-fmacro-prefix-map=*"

tusk_configure() {
  local dir=$1
  shift
  local launcher=()
  if command -v ccache >/dev/null 2>&1; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  # lld where it is installed (install-deps.sh installs it): linking is most of a rebuild
  # after a small change, and lld links a test binary five times faster than GNU ld.
  local linker=()
  if command -v ld.lld >/dev/null 2>&1; then
    linker=(-DTUSK_LINKER=lld)
  fi
  cmake -S "$tusk_repo_root" -B "$dir" -G Ninja "${launcher[@]}" "${linker[@]}" "$@"
}

# The sanitizer trees (TSan, fuzz), which only CI and their scripts build, are unity builds: CMake
# compiles eight of a target's .cpp files as one, so Asio, JSON, protobuf and GoogleTest are
# parsed, and their templates instantiated, once per eight. At -O1 that is most of a file's time:
# two batches of the controller's run/ files compiled in 22 s as one against 35 s as two under
# TSan, 45 s against 64 s under ASan+UBSan (2026-12-06; four to a file before). A .cpp's
# anonymous-namespace names must then differ from those of its target's other files
# (CODING_STYLE.md). build/'s libraries, the tree people work in, stay one object per .cpp, so a
# missing include fails there.
tusk_unity_build=(-DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=8)

# The warning gate: on in CI (CI=true) and wherever TUSK_WARNINGS_AS_ERRORS=ON is set, off otherwise.
tusk_warnings_as_errors() {
  if [[ ${TUSK_WARNINGS_AS_ERRORS:-} == ON || ${CI:-} == true ]]; then echo ON; else echo OFF; fi
}

# build/, configured and built one way for README's two commands (scripts/lab-demo.sh and
# scripts/test.sh), so the second compiles nothing the first did. A Release build (-O3), as a
# user's package is, with -g1: line tables and function names (every backtrace and sanitizer
# stack), no local variables, a quarter less time per compile than -g. With CI's warnings as
# errors it is also the check that -O3's warnings (flow-based: array bounds, string overflow) do
# not creep into the product, which a Release tree of its own did before at 340 s of a cold run:
# -O3 costs 7-13 % more per file than -O2 (run_orchestrator.cpp 16.2 s against 14.3 s). The tests
# compile at -O2 (tests/CMakeLists.txt). Configure a tree of your own for a debugger.
tusk_build_main() {
  tusk_configure "$tusk_repo_root/build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_FLAGS_RELEASE="-O3 -g1 -DNDEBUG" \
    -DTUSK_WARNINGS_AS_ERRORS="$(tusk_warnings_as_errors)"
  cmake --build "$tusk_repo_root/build" -j "$(nproc)"
}
