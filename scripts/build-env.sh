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

# The trees that only CI and the sanitizer scripts build (Release, TSan, fuzz) are unity builds:
# CMake compiles a target's .cpp files four to a file, so Asio, JSON, protobuf and GoogleTest are
# parsed once per four. A cold Release build takes 228 s instead of 512 s at eight to a file, and
# four keeps most of that while a one-line change recompiles half as much. A .cpp's
# anonymous-namespace names must then differ from those of its target's other files
# (CODING_STYLE.md). build/, the tree people work in, stays one object per .cpp.
tusk_unity_build=(-DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=4)

# The warning gate: on in CI (CI=true) and wherever TUSK_WARNINGS_AS_ERRORS=ON is set, off otherwise.
tusk_warnings_as_errors() {
  if [[ ${TUSK_WARNINGS_AS_ERRORS:-} == ON || ${CI:-} == true ]]; then echo ON; else echo OFF; fi
}

# build/, configured and built one way for README's two commands (scripts/lab-demo.sh and
# scripts/test.sh), so the second compiles nothing the first did.
# -g1: line tables and function names (every backtrace and sanitizer stack), no local variables;
# a cold build takes about a quarter less time (controller/run/agent_registry.cpp: 17.9 s at -O2
# -g, 13.1 s at -O2 -g1). Configure a tree of your own for a debugger.
tusk_build_main() {
  tusk_configure "$tusk_repo_root/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
    -DTUSK_WARNINGS_AS_ERRORS="$(tusk_warnings_as_errors)"
  cmake --build "$tusk_repo_root/build" -j "$(nproc)"
}
