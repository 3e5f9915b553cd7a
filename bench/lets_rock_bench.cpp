// shiftcast_lets_rock_bench: Blow's "Let's Rock" measurement (CGDC 1997) rerun on shiftcast's grid and
// filter cascade (bench/lets_rock_scene.hpp describes the scene).
//
// First prints Blow's table twice, with the plane cache (stage 3) on and off, each beside his 1997
// figures: tests, definitive answers, their share, mean µs per test (timed with steady_clock around
// every stage, FilterOptions::measure_time). Then the Google Benchmark runs, untimed inside:
//   LetsRock/run/plane_cache:{1,0}   the whole scene: grid updates, pair walk, cascade; per tick and pair
//   LetsRock/cascade/plane_cache:{1,0}  the cascade alone on the pairs the grid gave each tick
//   LetsRock/tank_pad/...            the landed tank against the pad: the hard case alone, the cascade
//
//   build-dev-mover/tests/dev_lets_rock_bench                  table, then benchmarks
//   build-dev-mover/tests/dev_lets_rock_bench --table_only     table only
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench/lets_rock_scene.hpp"
#include "world/match/filters.hpp"

namespace {

using namespace shiftcast;
using namespace shiftcast::bench;

// Timed runs behind each table; the table shows per-stage medians. Odd, so the median is a run's.
constexpr int kTableRuns = 7;

void bm_run(benchmark::State& state, const LetsRockScene* scene) {
  const FilterOptions options{.reach = kLetsRockReach, .use_plane_cache = state.range(0) != 0};
  LetsRockRun last;
  for (auto _ : state) {
    last = run_lets_rock(*scene, options);
    benchmark::DoNotOptimize(last.touching);
  }
  state.counters["tick"] = benchmark::Counter(
      double(last.ticks), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["pair"] = benchmark::Counter(
      double(last.tested_pairs), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["pairs/tick"] = double(last.tested_pairs) / double(last.ticks);
}

void bm_cascade(benchmark::State& state, const LetsRockScene* scene, const PairsByTick* pairs) {
  const FilterOptions options{.reach = kLetsRockReach, .use_plane_cache = state.range(0) != 0};
  std::vector<Entity> entities(scene->entities().begin(), scene->entities().end());
  std::size_t pair_count = 0;
  for (const auto& p : *pairs)
    pair_count += p.size();
  std::uint64_t touching = 0;
  for (auto _ : state) {
    // A fresh cascade per pass: the plane cache starts empty, as in a new match.
    FilterCascade cascade(options);
    FilterStats stats;
    for (int tick = 0; tick < scene->tick_count(); ++tick) {
      const std::span<const Pose> poses = scene->poses(tick);
      for (std::size_t i = 0; i < entities.size(); ++i)
        entities[i].pose = poses[i];
      for (const auto& [a, b] : (*pairs)[std::size_t(tick)]) {
        PairContact contact;
        touching += cascade.test(entities[a - 1], entities[b - 1], contact, stats) ? 1 : 0;
      }
    }
  }
  benchmark::DoNotOptimize(touching);
  state.counters["pair"] = benchmark::Counter(
      double(pair_count), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// The landed tank and the pad at the middle of the touchdown: Blow's 450.98 µs case.
std::pair<Entity, Entity> landed_pair(const LetsRockScene& scene) {
  int tick = 0;
  while (tick < scene.tick_count() && !scene.touchdown(tick))
    ++tick;
  int last = tick;
  while (last + 1 < scene.tick_count() && scene.touchdown(last + 1))
    ++last;
  const int middle = (tick + last) / 2;
  Entity tank = scene.entities()[scene.tank() - 1];
  Entity pad = scene.entities()[scene.pad() - 1];
  tank.pose = scene.poses(middle)[scene.tank() - 1];
  pad.pose = scene.poses(middle)[scene.pad() - 1];
  return {tank, pad};
}

void bm_tank_pad_hard_case(benchmark::State& state, const LetsRockScene* scene) {
  const auto [tank, pad] = landed_pair(*scene);
  PairContact contact;
  for (auto _ : state) {
    benchmark::DoNotOptimize(hard_case(tank, pad, kLetsRockReach, contact));
  }
  state.counters["separation"] = contact.separation;
}

void bm_tank_pad_cascade(benchmark::State& state, const LetsRockScene* scene) {
  const auto [tank, pad] = landed_pair(*scene);
  FilterCascade cascade({.reach = kLetsRockReach});
  FilterStats stats;
  PairContact contact;
  for (auto _ : state) {
    benchmark::DoNotOptimize(cascade.test(tank, pad, contact, stats));
  }
}

// Removes --table_only from argv (Google Benchmark rejects flags it does not know).
bool take_flag(int& argc, char** argv, const char* flag) {
  bool found = false;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], flag) == 0) {
      found = true;
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  return found;
}

}  // namespace

int main(int argc, char** argv) {
  const bool table_only = take_flag(argc, argv, "--table_only");
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

  std::string error;
  const std::unique_ptr<LetsRockScene> scene = LetsRockScene::make({}, &error);
  if (!scene) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 1;
  }
  for (bool cache : {true, false}) {
    const LetsRockRun run = run_lets_rock_median(
        *scene, {.reach = kLetsRockReach, .use_plane_cache = cache, .measure_time = true}, kTableRuns);
    std::printf("%s\n", format_blow_table(run, *scene, cache ? "plane cache on" : "plane cache off").c_str());
  }
  std::fflush(stdout);
  if (table_only) return 0;

  PairsByTick pairs;
  run_lets_rock(*scene, {.reach = kLetsRockReach}, &pairs);

  benchmark::RegisterBenchmark("LetsRock/run", bm_run, scene.get())
      ->ArgName("plane_cache")
      ->Arg(1)
      ->Arg(0)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("LetsRock/cascade", bm_cascade, scene.get(), &pairs)
      ->ArgName("plane_cache")
      ->Arg(1)
      ->Arg(0)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("LetsRock/tank_pad/hard_case", bm_tank_pad_hard_case, scene.get());
  benchmark::RegisterBenchmark("LetsRock/tank_pad/cascade", bm_tank_pad_cascade, scene.get());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
