#!/usr/bin/env bash
# Installs the dependencies, builds everything and runs every test (the README's test command).
#   scripts/test.sh              Release build in build/
#   scripts/test.sh --sanitize   AddressSanitizer + UndefinedBehaviorSanitizer build in build-sanitize/,
#                                with clang, so it also builds the libFuzzer targets (fuzz/) and runs each
#                                for a short fixed number of inputs (docs/fuzzing.md), then the short soak
#                                (docs/soak.md: two minutes of churn against the sanitized server)
# Both builds compile with -Werror (SHIFTCAST_WERROR, cmake/build_flags.cmake) and both run the pinned
# determinism hash test (tests/world/simulation_test.cpp), so gcc and clang must agree on it.
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
cmake_args=(-DCMAKE_BUILD_TYPE=Release -DSHIFTCAST_WERROR=ON)
if [ "${1:-}" = "--sanitize" ]; then
  build_dir=build-sanitize
  cmake_args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DSHIFTCAST_SANITIZE=ON -DSHIFTCAST_BENCH=OFF -DSHIFTCAST_FUZZ=ON
              -DSHIFTCAST_WERROR=ON)
  export CC=clang CXX=clang++
  # A build directory configured with another compiler keeps it in its cache: start that one afresh.
  if [ -f "$build_dir/CMakeCache.txt" ] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang' "$build_dir/CMakeCache.txt"; then
    rm -rf "$build_dir"
  fi
fi

# Each phase's wall time, so CI's log says where its minutes go (the 45-minute guideline).
phase_start=$SECONDS
phase() {
  echo "== $1: $((SECONDS - phase_start)) s"
  phase_start=$SECONDS
}

scripts/install-deps.sh
scripts/fetch-openarena-maps.sh
phase "dependencies and maps"
# Compiler output cached by content: paths are taken relative to this checkout, so a fresh clone (each CI
# run) reuses what the previous one compiled. Two full builds on two cores are most of CI's time.
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$PWD"
  cmake_args+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$build_dir" "${cmake_args[@]}" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
phase "build ($build_dir)"
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)"
phase "tests ($build_dir)"
if [ "$build_dir" = build-sanitize ]; then
  # The short soak: no leak, flat memory, no event lost under two minutes of churn (the first is warm-up).
  # The load is the Release shiftcast-sim when scripts/test.sh built one (as .ci/run does first), else
  # the sanitized one.
  sim_build=build
  [ -x build/client-sim/shiftcast-sim ] || sim_build=build-sanitize
  scripts/soak.sh --seconds 120 --clients 32 --build build-sanitize --sim-build "$sim_build" \
    --profile configs/load/soak-short.toml --out build-sanitize/soak
  phase "short soak"
fi
