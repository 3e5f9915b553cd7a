#!/usr/bin/env bash
# Installs the dependencies, builds everything and runs every test (the README's test command).
#   scripts/test.sh              Release build in build/
#   scripts/test.sh --sanitize   AddressSanitizer + UndefinedBehaviorSanitizer build in build-sanitize/,
#                                with clang, so it also builds the libFuzzer targets (fuzz/) and runs each
#                                for a short fixed number of inputs (docs/fuzzing.md)
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
cmake_args=(-DCMAKE_BUILD_TYPE=Release)
if [ "${1:-}" = "--sanitize" ]; then
  build_dir=build-sanitize
  cmake_args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DSHIFTCAST_SANITIZE=ON -DSHIFTCAST_BENCH=OFF -DSHIFTCAST_FUZZ=ON)
  export CC=clang CXX=clang++
  # A build directory configured with another compiler keeps it in its cache: start that one afresh.
  if [ -f "$build_dir/CMakeCache.txt" ] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang' "$build_dir/CMakeCache.txt"; then
    rm -rf "$build_dir"
  fi
fi

scripts/install-deps.sh
scripts/fetch-openarena-maps.sh
cmake -S . -B "$build_dir" "${cmake_args[@]}" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
ctest --test-dir "$build_dir" --output-on-failure -j "$(nproc)"
