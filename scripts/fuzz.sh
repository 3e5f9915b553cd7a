#!/usr/bin/env bash
# Runs the libFuzzer targets (fuzz/, docs/fuzzing.md) for long: each for SECONDS, starting from its
# committed corpus and from what earlier runs found, and prints executions per target and in total.
#   scripts/fuzz.sh                     every target, 60 s each
#   scripts/fuzz.sh TARGET [SECONDS]    one target ("envelope" or "fuzz_envelope")
#   scripts/fuzz.sh all SECONDS         every target, SECONDS each
# Builds build-sanitize/ (clang, ASan + UBSan, SHIFTCAST_FUZZ=ON: the same build as scripts/test.sh
# --sanitize, so CI's build is reused). New inputs go to build-sanitize/fuzz/long/<target>/ (kept between
# runs; merge the useful ones into fuzz/corpus/<target>/ with -merge=1 by hand). A crash, leak or timeout
# is written to build-sanitize/fuzz/findings/ and makes the script fail. The figures go to
# build-sanitize/fuzz/long-run.txt as well.
set -euo pipefail
cd "$(dirname "$0")/.."

target="${1:-all}"
seconds="${2:-60}"
build_dir=build-sanitize

if [ -f "$build_dir/CMakeCache.txt" ] && ! grep -q '^CMAKE_CXX_COMPILER:[A-Z]*=.*clang' "$build_dir/CMakeCache.txt"; then
  echo "fuzz.sh: $build_dir was configured with another compiler than clang; remove it first" >&2
  exit 2
fi
CC=clang CXX=clang++ cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSHIFTCAST_SANITIZE=ON \
  -DSHIFTCAST_BENCH=OFF -DSHIFTCAST_FUZZ=ON >/dev/null

if [ "$target" = all ]; then
  targets=$(ls fuzz/corpus)
else
  targets="${target#fuzz_}"
fi
# shellcheck disable=SC2086
cmake --build "$build_dir" -j "$(nproc)" --target $(for t in $targets; do echo "fuzz_$t"; done)

mkdir -p "$build_dir/fuzz/findings"
report="$build_dir/fuzz/long-run.txt"
{
  echo "# scripts/fuzz.sh $target $seconds   ($(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, clang ASan+UBSan)"
  printf '%-18s %14s %10s %8s  %s\n' target executions exec/s new result
} | tee "$report"
total=0
failed=0
for t in $targets; do
  long="$build_dir/fuzz/long/$t"
  mkdir -p "$long"
  dict=()
  [ -f "fuzz/dict/$t.dict" ] && dict=(-dict="fuzz/dict/$t.dict")
  log="$build_dir/fuzz/long/$t.log"
  result=ok
  "$build_dir/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2560 -print_final_stats=1 \
    -artifact_prefix="$build_dir/fuzz/findings/$t-" "${dict[@]}" "$long" "fuzz/corpus/$t" >"$log" 2>&1 ||
    result="FINDING (see $log)"
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  new=$(sed -n 's/^stat::new_units_added: *//p' "$log" | tail -1)
  if [ -z "$runs" ]; then  # a crash ends the run before the final stats: take the last status line
    runs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#')
  fi
  [ "$result" = ok ] || failed=1
  total=$((total + ${runs:-0}))
  printf '%-18s %14s %10s %8s  %s\n' "$t" "${runs:-0}" "${rate:--}" "${new:--}" "$result" | tee -a "$report"
done
printf '%-18s %14s\n' total "$total" | tee -a "$report"
exit "$failed"
