#!/usr/bin/env bash
# Builds the benchmarks in Release and runs them: the command behind every speed figure in the README,
# which quotes the medians of 5 repetitions. Extra arguments go to the benchmark binary, e.g.
#   scripts/bench.sh --benchmark_filter=cylinder
#   scripts/bench.sh --benchmark_format=json --benchmark_out=bench.json
set -euo pipefail
cd "$(dirname "$0")/.."

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j2 --target shiftcast_bench
build/bench/shiftcast_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true "$@"
